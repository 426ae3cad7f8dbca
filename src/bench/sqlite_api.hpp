// bench/sqlite_api: the part of SQLite the bench store calls, reached through a table of function
// pointers filled on first use by dlopen("libsqlite3.so.0"). Commands that never open the bench
// database do not load libsqlite3 (issue 19, start-up time). Types come from <sqlite3.h> at build
// time; nothing links against libsqlite3.
#pragma once

#include <sqlite3.h>

#include "base/error.hpp"

namespace preflight::bench {

// One member per SQLite function used by bench/store, typed from its own declaration.
struct SqliteApi {
  decltype(&::sqlite3_open_v2) open_v2 = nullptr;
  decltype(&::sqlite3_close) close = nullptr;
  decltype(&::sqlite3_errmsg) errmsg = nullptr;
  decltype(&::sqlite3_exec) exec = nullptr;
  decltype(&::sqlite3_free) free = nullptr;
  decltype(&::sqlite3_busy_timeout) busy_timeout = nullptr;
  decltype(&::sqlite3_last_insert_rowid) last_insert_rowid = nullptr;
  decltype(&::sqlite3_prepare_v2) prepare_v2 = nullptr;
  decltype(&::sqlite3_finalize) finalize = nullptr;
  decltype(&::sqlite3_step) step = nullptr;
  decltype(&::sqlite3_bind_text) bind_text = nullptr;
  decltype(&::sqlite3_bind_int64) bind_int64 = nullptr;
  decltype(&::sqlite3_bind_double) bind_double = nullptr;
  decltype(&::sqlite3_bind_null) bind_null = nullptr;
  decltype(&::sqlite3_column_text) column_text = nullptr;
  decltype(&::sqlite3_column_int64) column_int64 = nullptr;
  decltype(&::sqlite3_column_double) column_double = nullptr;
};

// The soname opened: SQLite 3's ABI has been .so.0 throughout.
inline constexpr const char* k_sqlite_soname = "libsqlite3.so.0";

// Loads libsqlite3 once per process (thread-safe); later calls return the same table or the same
// error. Never null on success. environment naming the library, and the symbol when one is missing.
Expected<const SqliteApi*> load_sqlite_api();

// The loading step of load_sqlite_api() for any soname, without the cache (tests).
Expected<SqliteApi> bind_sqlite_api(const char* soname);

}  // namespace preflight::bench
