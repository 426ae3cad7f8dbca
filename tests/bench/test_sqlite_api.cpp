// bench/sqlite_api: libsqlite3 is opened with dlopen on first use (issue 19, start-up time). The
// table binds every function the store calls; a missing library or symbol is an environment error
// naming both.
#include "bench/sqlite_api.hpp"

#include <gtest/gtest.h>

#include <string>

using preflight::ErrorKind;

TEST(SqliteApi, Issue19_LoadsAndCallsSqlite) {
  auto api = preflight::bench::load_sqlite_api();
  ASSERT_TRUE(api) << api.error().describe();
  const preflight::bench::SqliteApi& s = **api;
  sqlite3* db = nullptr;
  ASSERT_EQ(s.open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(s.prepare_v2(db, "SELECT 6 * 7, 'x'", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(s.step(stmt), SQLITE_ROW);
  EXPECT_EQ(s.column_int64(stmt, 0), 42);
  EXPECT_STREQ(reinterpret_cast<const char*>(s.column_text(stmt, 1)), "x");
  s.finalize(stmt);
  EXPECT_EQ(s.close(db), SQLITE_OK);
  auto again = preflight::bench::load_sqlite_api();
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *api);
}

TEST(SqliteApi, Issue19_MissingLibraryOrSymbolIsEnvironment) {
  struct Case {
    const char* soname;
    const char* fragment;
  };
  const Case cases[] = {
      {"libpreflight-no-such-sqlite.so.0", "cannot load libpreflight-no-such-sqlite.so.0"},
      {"libc.so.6", "libc.so.6: symbol sqlite3_open_v2 not found"},
  };
  for (const auto& c : cases) {
    auto api = preflight::bench::bind_sqlite_api(c.soname);
    ASSERT_FALSE(api) << c.soname;
    EXPECT_EQ(api.error().kind, ErrorKind::environment) << c.soname;
    EXPECT_NE(api.error().message.find(c.fragment), std::string::npos) << api.error().message;
  }
}
