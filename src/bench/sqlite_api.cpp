#include "bench/sqlite_api.hpp"

#include <mutex>

#include "base/dynamic_library.hpp"

namespace preflight::bench {

Expected<SqliteApi> bind_sqlite_api(const char* soname) {
  PF_TRY(lib, DynamicLibrary::open(soname));
  SqliteApi api;
  Status status = Ok{};
  auto bind = [&](const char* name, auto& out) {
    if (status) status = lib.bind(name, out);
  };
  bind("sqlite3_open_v2", api.open_v2);
  bind("sqlite3_close", api.close);
  bind("sqlite3_errmsg", api.errmsg);
  bind("sqlite3_exec", api.exec);
  bind("sqlite3_free", api.free);
  bind("sqlite3_busy_timeout", api.busy_timeout);
  bind("sqlite3_last_insert_rowid", api.last_insert_rowid);
  bind("sqlite3_prepare_v2", api.prepare_v2);
  bind("sqlite3_finalize", api.finalize);
  bind("sqlite3_step", api.step);
  bind("sqlite3_bind_text", api.bind_text);
  bind("sqlite3_bind_int64", api.bind_int64);
  bind("sqlite3_bind_double", api.bind_double);
  bind("sqlite3_bind_null", api.bind_null);
  bind("sqlite3_column_text", api.column_text);
  bind("sqlite3_column_int64", api.column_int64);
  bind("sqlite3_column_double", api.column_double);
  if (!status) return status.error();
  return api;
}

Expected<const SqliteApi*> load_sqlite_api() {
  // Filled once; the outcome, success or error, is kept so that every caller sees the same answer.
  static std::once_flag once;
  static SqliteApi api;
  static Error error;
  static bool loaded = false;
  std::call_once(once, [] {
    auto bound = bind_sqlite_api(k_sqlite_soname);
    if (!bound) {
      error = bound.error();
      return;
    }
    api = *bound;
    loaded = true;
  });
  if (!loaded) return error;
  return &api;
}

}  // namespace preflight::bench
