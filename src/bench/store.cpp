#include "bench/store.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <utility>

#include "base/file.hpp"
#include "base/json_writer.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "bench/sqlite_api.hpp"

namespace preflight::bench {

namespace {

const char* k_schema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sweep_id TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT,
  url TEXT NOT NULL, model TEXT NOT NULL, endpoint TEXT NOT NULL, mode TEXT NOT NULL,
  concurrency INTEGER, request_rate REAL, burstiness REAL, num_prompts INTEGER, input_len INTEGER, output_len INTEGER,
  device TEXT, engine TEXT, spec TEXT, config_json TEXT, prediction_json TEXT, summary_json TEXT, build TEXT, t0_ns INTEGER);
CREATE TABLE IF NOT EXISTS requests (
  run_id INTEGER NOT NULL REFERENCES runs(id), idx INTEGER NOT NULL,
  ok INTEGER NOT NULL, failure TEXT NOT NULL, error TEXT, http_status INTEGER,
  t_sched_ns INTEGER, t_send_ns INTEGER, t_first_byte_ns INTEGER, t_first_chunk_ns INTEGER, t_first_token_ns INTEGER,
  t_first_content_ns INTEGER, t_last_token_ns INTEGER, t_done_ns INTEGER, t_end_ns INTEGER,
  ttft_ms REAL, e2e_ms REAL, tpot_ms REAL,
  requested_output_tokens INTEGER, requested_input_tokens INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER,
  reasoning_tokens INTEGER, token_events INTEGER, content_chars INTEGER, reasoning_chars INTEGER, events INTEGER,
  response_bytes INTEGER, finish_reason TEXT, token_offsets_us TEXT,
  PRIMARY KEY (run_id, idx));
)sql";

// The SQLite table. Only called with a database handle in hand, and BenchStore::open, the one way to
// get one, loads the table first.
const SqliteApi& sqlite() {
  auto api = load_sqlite_api();
  assert(api);
  return **api;
}

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { m_rc = sqlite().prepare_v2(db, sql, -1, &m_stmt, nullptr); }
  ~Stmt() { sqlite().finalize(m_stmt); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return m_rc == SQLITE_OK; }
  sqlite3_stmt* get() { return m_stmt; }
  void text(int i, const std::string& v) { sqlite().bind_text(m_stmt, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void i64(int i, int64_t v) { sqlite().bind_int64(m_stmt, i, v); }
  void real(int i, double v) { sqlite().bind_double(m_stmt, i, v); }
  void opt(int i, const std::optional<double>& v) {
    if (v) real(i, *v);
    else sqlite().bind_null(m_stmt, i);
  }
  int step() { return sqlite().step(m_stmt); }
  std::string col_text(int i) {
    const auto* p = sqlite().column_text(m_stmt, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int64_t col_i64(int i) { return sqlite().column_int64(m_stmt, i); }
  double col_real(int i) { return sqlite().column_double(m_stmt, i); }

 private:
  sqlite3_stmt* m_stmt = nullptr;
  int m_rc = SQLITE_ERROR;
};

int64_t rel(int64_t t_ns, int64_t t0_ns) { return t_ns < 0 ? -1 : t_ns - t0_ns; }

Json parse_or_null(const std::string& text) {
  if (text.empty()) return Json();
  auto j = parse_json(text, "bench.db");
  return j ? *j : Json();
}

}  // namespace

std::string default_db_path() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/preflight/bench.db";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/preflight/bench.db";
}

BenchStore::BenchStore(std::string path, sqlite3* db) : m_path(std::move(path)), m_db(db) {}
BenchStore::BenchStore(BenchStore&& other) noexcept : m_path(std::move(other.m_path)), m_db(other.m_db) { other.m_db = nullptr; }
BenchStore& BenchStore::operator=(BenchStore&& other) noexcept {
  if (this != &other) {
    if (m_db) sqlite().close(m_db);
    m_path = std::move(other.m_path);
    m_db = other.m_db;
    other.m_db = nullptr;
  }
  return *this;
}
BenchStore::~BenchStore() {
  if (m_db) sqlite().close(m_db);
}

Error BenchStore::sql_error(const char* what) const {
  return make_error(ErrorKind::io, format("%s: %s", what, m_db ? sqlite().errmsg(m_db) : "no database"), m_path);
}

Status BenchStore::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite().exec(m_db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    Error e = make_error(ErrorKind::io, format("sqlite: %s", message ? message : "error"), m_path);
    sqlite().free(message);
    return e;
  }
  return Ok{};
}

Expected<BenchStore> BenchStore::open(const std::string& path) {
  PF_TRY(api, load_sqlite_api());
  (void)api;
  // Issue 19: a FIFO, a directory or a device is named as what it is (SQLite said "disk I/O error" for a FIFO).
  if (struct stat st {}; ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return make_error(ErrorKind::invalid_argument, format("%s: expected a SQLite database file, found %s", path.c_str(), file_type_name(st.st_mode)), path);
  sqlite3* db = nullptr;
  if (sqlite().open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    // The place, not the input: a directory that cannot be written, a read-only file system (exit 3).
    Error e = make_error(ErrorKind::environment, format("cannot open database: %s", db ? sqlite().errmsg(db) : "out of memory"), path);
    sqlite().close(db);
    return e;
  }
  BenchStore store(path, db);
  sqlite().busy_timeout(db, 5000);
  // WAL + synchronous=NORMAL: a committed transaction survives a killed process.
  PF_TRY(wal, store.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"));
  PF_TRY(schema, store.exec(k_schema));
  (void)wal;
  (void)schema;
  return store;
}

Expected<int64_t> BenchStore::begin_run(const RunInfo& info, int64_t t0_ns) {
  Stmt s(m_db,
         "INSERT INTO runs (sweep_id, started_at, url, model, endpoint, mode, concurrency, request_rate, burstiness, num_prompts, input_len, "
         "output_len, device, engine, spec, config_json, prediction_json, build, t0_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!s.ok()) return sql_error("cannot prepare run insert");
  s.text(1, info.sweep_id);
  s.text(2, info.started_at);
  s.text(3, redact_url_credentials(info.url));  // a password in the URL never reaches the database
  s.text(4, info.model);
  s.text(5, info.endpoint);
  s.text(6, info.mode);
  s.i64(7, info.concurrency);
  s.real(8, info.request_rate);
  s.real(9, info.burstiness);
  s.i64(10, info.num_prompts);
  s.i64(11, info.input_len);
  s.i64(12, info.output_len);
  s.text(13, info.device);
  s.text(14, info.engine);
  s.text(15, info.spec);
  s.text(16, redact_url_credentials(dump_json(info.config)));
  s.text(17, info.prediction.is_null() ? "" : dump_json(info.prediction));
  s.text(18, info.build);
  s.i64(19, t0_ns);
  if (s.step() != SQLITE_DONE) return sql_error("cannot insert run");
  return static_cast<int64_t>(sqlite().last_insert_rowid(m_db));
}

Status BenchStore::add_request(int64_t run_id, const RequestRecord& r) {
  Stmt t0q(m_db, "SELECT t0_ns FROM runs WHERE id = ?");
  if (!t0q.ok()) return sql_error("cannot prepare run lookup");
  t0q.i64(1, run_id);
  if (t0q.step() != SQLITE_ROW) return make_error(ErrorKind::not_found, format("no run %lld", static_cast<long long>(run_id)), m_path);
  const int64_t t0 = t0q.col_i64(0);
  std::string offsets;
  offsets.reserve(r.token_event_ns.size() * 8);
  for (size_t i = 0; i < r.token_event_ns.size(); ++i) {
    if (i) offsets += ',';
    offsets += std::to_string((r.token_event_ns[i] - r.t_send_ns) / 1000);
  }
  Stmt s(m_db,
         "INSERT INTO requests VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!s.ok()) return sql_error("cannot prepare request insert");
  int i = 1;
  s.i64(i++, run_id);
  s.i64(i++, r.index);
  s.i64(i++, r.ok() ? 1 : 0);
  s.text(i++, failure_class_name(r.failure));
  s.text(i++, r.error);
  s.i64(i++, r.http_status);
  for (int64_t t : {r.t_sched_ns, r.t_send_ns, r.t_first_byte_ns, r.t_first_chunk_ns, r.t_first_token_ns, r.t_first_content_ns, r.t_last_token_ns, r.t_done_ns,
                    r.t_end_ns}) {
    s.i64(i++, rel(t, t0));
  }
  s.opt(i++, r.ttft_ms());
  s.opt(i++, r.e2e_ms());
  s.opt(i++, r.tpot_ms());
  for (int64_t v : {r.requested_output_tokens, r.requested_input_tokens, r.prompt_tokens, r.completion_tokens, r.reasoning_tokens, r.token_events,
                    r.content_chars, r.reasoning_chars, r.events, r.response_bytes}) {
    s.i64(i++, v);
  }
  s.text(i++, r.finish_reason);
  s.text(i++, offsets);
  if (s.step() != SQLITE_DONE) return sql_error("cannot insert request");  // autocommit: one transaction
  return Ok{};
}

Status BenchStore::finish_run(int64_t run_id, const Json& summary, const std::string& finished_at) {
  Stmt s(m_db, "UPDATE runs SET summary_json = ?, finished_at = ? WHERE id = ?");
  if (!s.ok()) return sql_error("cannot prepare run update");
  s.text(1, dump_json(summary));
  s.text(2, finished_at);
  s.i64(3, run_id);
  if (s.step() != SQLITE_DONE) return sql_error("cannot update run");
  return Ok{};
}

namespace {
const char* k_run_columns =
    "SELECT id, sweep_id, started_at, finished_at, url, model, endpoint, mode, concurrency, request_rate, burstiness, num_prompts, input_len, "
    "output_len, device, engine, spec, config_json, prediction_json, summary_json, build, t0_ns FROM runs ";

StoredRun read_run(Stmt& s) {
  StoredRun r;
  int i = 0;
  r.id = s.col_i64(i++);
  r.info.sweep_id = s.col_text(i++);
  r.info.started_at = s.col_text(i++);
  r.finished_at = s.col_text(i++);
  r.info.url = s.col_text(i++);
  r.info.model = s.col_text(i++);
  r.info.endpoint = s.col_text(i++);
  r.info.mode = s.col_text(i++);
  r.info.concurrency = s.col_i64(i++);
  r.info.request_rate = s.col_real(i++);
  r.info.burstiness = s.col_real(i++);
  r.info.num_prompts = s.col_i64(i++);
  r.info.input_len = s.col_i64(i++);
  r.info.output_len = s.col_i64(i++);
  r.info.device = s.col_text(i++);
  r.info.engine = s.col_text(i++);
  r.info.spec = s.col_text(i++);
  r.info.config = parse_or_null(s.col_text(i++));
  r.info.prediction = parse_or_null(s.col_text(i++));
  r.summary = parse_or_null(s.col_text(i++));
  r.info.build = s.col_text(i++);
  r.t0_ns = s.col_i64(i++);
  return r;
}
}  // namespace

Expected<std::vector<StoredRun>> BenchStore::runs() {
  Stmt s(m_db, (std::string(k_run_columns) + "ORDER BY id DESC").c_str());
  if (!s.ok()) return sql_error("cannot list runs");
  std::vector<StoredRun> out;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) out.push_back(read_run(s));
  if (rc != SQLITE_DONE) return sql_error("cannot list runs");
  return out;
}

Expected<StoredRun> BenchStore::run(int64_t run_id) {
  Stmt s(m_db, (std::string(k_run_columns) + "WHERE id = ?").c_str());
  if (!s.ok()) return sql_error("cannot read run");
  s.i64(1, run_id);
  if (s.step() != SQLITE_ROW) return make_error(ErrorKind::not_found, format("no run %lld in the database", static_cast<long long>(run_id)), m_path);
  return read_run(s);
}

Expected<int64_t> BenchStore::request_count(int64_t run_id) {
  Stmt s(m_db, "SELECT COUNT(*) FROM requests WHERE run_id = ?");
  if (!s.ok()) return sql_error("cannot count requests");
  s.i64(1, run_id);
  if (s.step() != SQLITE_ROW) return sql_error("cannot count requests");
  return s.col_i64(0);
}

Expected<std::vector<RequestRecord>> BenchStore::requests(int64_t run_id) {
  Stmt s(m_db,
         "SELECT idx, failure, error, http_status, t_sched_ns, t_send_ns, t_first_byte_ns, t_first_chunk_ns, t_first_token_ns, t_first_content_ns, "
         "t_last_token_ns, t_done_ns, t_end_ns, requested_output_tokens, requested_input_tokens, prompt_tokens, completion_tokens, reasoning_tokens, "
         "token_events, content_chars, reasoning_chars, events, response_bytes, finish_reason, token_offsets_us FROM requests WHERE run_id = ? ORDER BY idx");
  if (!s.ok()) return sql_error("cannot read requests");
  s.i64(1, run_id);
  std::vector<RequestRecord> out;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) {
    RequestRecord r;
    int i = 0;
    r.index = s.col_i64(i++);
    const std::string failure = s.col_text(i++);
    r.error = s.col_text(i++);
    r.failure = FailureClass::client;
    for (int f = 0; f <= static_cast<int>(FailureClass::client); ++f) {
      if (failure == failure_class_name(static_cast<FailureClass>(f))) r.failure = static_cast<FailureClass>(f);
    }
    r.http_status = static_cast<int>(s.col_i64(i++));
    // Issue 19 (hard30): report --db reads any file: a stored time or count no run writes (9.2e18 ns) overflowed the
    // statistics' sums and differences (UBSan: store.cpp, signed overflow). A time is -1 (not reached) or within
    // [0, 2^62] ns, a count -1 or within [0, 2^40], a token offset within [0, 2^40] us; else the database is corrupt.
    const auto outside = [&](const char* field, int64_t v, int64_t max) {
      return make_error(ErrorKind::corrupt, format("%s: run %lld request %lld: %s %lld is outside [-1, %lld]", m_path.c_str(), static_cast<long long>(run_id),
                                                   static_cast<long long>(r.index), field, static_cast<long long>(v), static_cast<long long>(max)), m_path);
    };
    constexpr int64_t k_max_ns = int64_t{1} << 62, k_max_count = int64_t{1} << 40;
    const std::pair<const char*, int64_t*> times[] = {{"t_sched_ns", &r.t_sched_ns}, {"t_send_ns", &r.t_send_ns}, {"t_first_byte_ns", &r.t_first_byte_ns},
                                                      {"t_first_chunk_ns", &r.t_first_chunk_ns}, {"t_first_token_ns", &r.t_first_token_ns},
                                                      {"t_first_content_ns", &r.t_first_content_ns}, {"t_last_token_ns", &r.t_last_token_ns},
                                                      {"t_done_ns", &r.t_done_ns}, {"t_end_ns", &r.t_end_ns}};
    for (const auto& [field, t] : times) {
      *t = s.col_i64(i++);
      if (*t < -1 || *t > k_max_ns) return outside(field, *t, k_max_ns);
    }
    const std::pair<const char*, int64_t*> counts[] = {{"requested_output_tokens", &r.requested_output_tokens}, {"requested_input_tokens", &r.requested_input_tokens},
                                                       {"prompt_tokens", &r.prompt_tokens}, {"completion_tokens", &r.completion_tokens},
                                                       {"reasoning_tokens", &r.reasoning_tokens}, {"token_events", &r.token_events}, {"content_chars", &r.content_chars},
                                                       {"reasoning_chars", &r.reasoning_chars}, {"events", &r.events}, {"response_bytes", &r.response_bytes}};
    for (const auto& [field, v] : counts) {
      *v = s.col_i64(i++);
      if (*v < -1 || *v > k_max_count) return outside(field, *v, k_max_count);
    }
    r.finish_reason = s.col_text(i++);
    const std::string offsets = s.col_text(i++);
    size_t pos = 0;
    while (pos < offsets.size()) {
      const size_t comma = offsets.find(',', pos);
      const std::string item = offsets.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const long long offset_us = std::strtoll(item.c_str(), nullptr, 10);
      if (offset_us < 0 || offset_us > k_max_count) return outside("token_offsets_us", offset_us, k_max_count);
      r.token_event_ns.push_back(std::max<int64_t>(r.t_send_ns, 0) + offset_us * 1000);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return sql_error("cannot read requests");
  return out;
}

StoreWriter::StoreWriter(BenchStore& store, int64_t run_id) : m_store(store), m_run_id(run_id), m_thread([this] { loop(); }) {}

StoreWriter::~StoreWriter() { (void)close(); }

void StoreWriter::push(const RequestRecord& record) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_queue.push_back(record);
  }
  m_cv.notify_one();
}

void StoreWriter::loop() {
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    m_cv.wait(lock, [this] { return m_stop || !m_queue.empty(); });
    if (m_queue.empty() && m_stop) return;
    RequestRecord r = std::move(m_queue.front());
    m_queue.pop_front();
    lock.unlock();
    auto st = m_store.add_request(m_run_id, r);
    lock.lock();
    if (st) ++m_committed;
    else if (m_status) m_status = st;
  }
}

Status StoreWriter::close() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_one();
  if (m_thread.joinable()) m_thread.join();
  return m_status;
}

}  // namespace preflight::bench
