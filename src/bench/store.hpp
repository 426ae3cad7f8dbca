// bench/store: benchmark results in SQLite. WAL journal; each finished request is its own
// transaction, so a run killed at any moment keeps every request that finished before it.
// Tables: runs (one row per load level: URL, model, load plan, prediction, summary once finished)
// and requests (raw per-request timings relative to the run start, token arrival offsets, usage,
// failure class and reason). Records read back are the same RequestRecord the client produced, so
// statistics can be recomputed from the database (also for an interrupted run).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "bench/measurement.hpp"

struct sqlite3;

namespace preflight::bench {

struct RunInfo {
  std::string sweep_id;        // runs of one command share it (one run per concurrency level)
  std::string started_at;      // RFC 3339 UTC
  std::string url, model, endpoint;
  std::string mode;            // "concurrency" or "request_rate"
  int64_t concurrency = 0;
  double request_rate = 0, burstiness = 1;
  int64_t num_prompts = 0, input_len = -1, output_len = -1;
  std::string device, engine, spec;  // the deployment (labels; may be empty)
  Json config = Json::object();      // every flag that shaped the run
  Json prediction;                   // predicted values, null when none
  std::string build;                 // preflight version, commit and build type
};

struct StoredRun {
  int64_t id = 0;
  RunInfo info;
  std::string finished_at;     // empty when the run was interrupted
  Json summary;                // RunStats JSON, null when interrupted
  int64_t t0_ns = 0;
};

class BenchStore {
 public:
  // Opens (creating if needed) the database; the parent directory must exist. io when SQLite cannot
  // open it, environment when libsqlite3 (opened with dlopen on first use) cannot be loaded.
  static Expected<BenchStore> open(const std::string& path);
  BenchStore(BenchStore&& other) noexcept;
  BenchStore& operator=(BenchStore&& other) noexcept;
  BenchStore(const BenchStore&) = delete;
  BenchStore& operator=(const BenchStore&) = delete;
  ~BenchStore();

  // t0_ns: the clock reading all stored times of this run are relative to.
  Expected<int64_t> begin_run(const RunInfo& info, int64_t t0_ns);
  Status add_request(int64_t run_id, const RequestRecord& record);
  Status finish_run(int64_t run_id, const Json& summary, const std::string& finished_at);

  Expected<std::vector<StoredRun>> runs();                  // newest first
  Expected<StoredRun> run(int64_t run_id);
  Expected<std::vector<RequestRecord>> requests(int64_t run_id);
  Expected<int64_t> request_count(int64_t run_id);
  const std::string& path() const { return m_path; }

 private:
  BenchStore(std::string path, sqlite3* db);
  Status exec(const char* sql);
  Error sql_error(const char* what) const;
  std::string m_path;
  sqlite3* m_db = nullptr;
};

// Commits finished requests on its own thread, each in its own transaction, so database writes
// never delay the client thread's reads (and so its timestamps). A record is queued within
// microseconds of finishing and committed right after.
class StoreWriter {
 public:
  StoreWriter(BenchStore& store, int64_t run_id);
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;
  void push(const RequestRecord& record);
  // Commits what is queued, stops the thread; the first commit error, if any.
  Status close();
  int64_t committed() const { return m_committed; }

 private:
  void loop();
  BenchStore& m_store;
  int64_t m_run_id;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<RequestRecord> m_queue;
  bool m_stop = false;
  Status m_status = Ok{};
  int64_t m_committed = 0;
  std::thread m_thread;
};

// $XDG_DATA_HOME/preflight/bench.db, else ~/.local/share/preflight/bench.db.
std::string default_db_path();

}  // namespace preflight::bench
