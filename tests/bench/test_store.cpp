#include "bench/store.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "../test_support.hpp"

using namespace preflight::bench;

namespace {

RequestRecord record(int64_t index, int64_t base_ns) {
  RequestRecord r;
  r.index = index;
  r.t_sched_ns = r.t_send_ns = base_ns;
  r.t_first_byte_ns = base_ns + 1'000'000;
  r.t_first_chunk_ns = r.t_first_token_ns = r.t_first_content_ns = base_ns + 100'000'000;
  for (int i = 0; i < 5; ++i) r.token_event_ns.push_back(base_ns + 100'000'000 + i * 20'000'000);
  r.t_last_token_ns = r.token_event_ns.back();
  r.t_done_ns = r.t_end_ns = r.t_last_token_ns + 1'000;
  r.http_status = 200;
  r.requested_output_tokens = 5;
  r.prompt_tokens = 12;
  r.completion_tokens = 5;
  r.token_events = 5;
  r.finish_reason = "length";
  return r;
}

int64_t count_rows(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), SQLITE_OK);
  int64_t n = -1;
  if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

}  // namespace

TEST(BenchStore, RoundTripsRecordsAndUsesWal) {
  const auto dir = pftest::scratch_dir("bench-store");
  const std::string path = dir + "/bench.db";
  auto store = BenchStore::open(path);
  ASSERT_TRUE(store) << store.error().describe();
  RunInfo info;
  info.sweep_id = "s1";
  info.started_at = "2026-12-02T00:00:00Z";
  info.url = "http://127.0.0.1:1";
  info.model = "m";
  info.endpoint = "chat";
  info.mode = "concurrency";
  info.concurrency = 2;
  info.prediction = {{"decode_tok_s", 50.0}};
  const int64_t t0 = 5'000'000'000;
  auto id = store->begin_run(info, t0);
  ASSERT_TRUE(id) << id.error().describe();
  auto a = record(0, t0 + 10'000'000);
  auto b = record(1, t0 + 20'000'000);
  fail_record(b, FailureClass::truncated, "stream truncated after 3 events", t0 + 90'000'000);
  ASSERT_TRUE(store->add_request(*id, a));
  ASSERT_TRUE(store->add_request(*id, b));
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "wal");
    sqlite3_finalize(s);
    sqlite3_close(db);
  }
  auto back = store->requests(*id);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 2u);
  const auto& r0 = (*back)[0];
  EXPECT_TRUE(r0.ok());
  EXPECT_DOUBLE_EQ(*r0.ttft_ms(), *a.ttft_ms());
  EXPECT_DOUBLE_EQ(*r0.tpot_ms(), 20.0);
  ASSERT_EQ(r0.token_event_ns.size(), 5u);
  EXPECT_EQ(r0.token_event_ns[4] - r0.token_event_ns[0], 80'000'000);
  EXPECT_EQ((*back)[1].failure, FailureClass::truncated);
  EXPECT_EQ((*back)[1].error, "stream truncated after 3 events");
  auto run = store->run(*id);
  ASSERT_TRUE(run);
  EXPECT_TRUE(run->finished_at.empty());
  EXPECT_EQ(run->info.prediction["decode_tok_s"], 50.0);
  ASSERT_TRUE(store->finish_run(*id, {{"requests", 2}}, "2026-12-02T00:01:00Z"));
  EXPECT_EQ(store->run(*id)->summary["requests"], 2);
  EXPECT_FALSE(store->run(999));
  EXPECT_FALSE(BenchStore::open(dir + "/no/such/dir/bench.db"));
}

TEST(BenchStore, KilledWriterKeepsEveryCommittedRequest) {
  const auto dir = pftest::scratch_dir("bench-store-kill");
  const std::string path = dir + "/bench.db";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    auto store = BenchStore::open(path);
    RunInfo info;
    info.sweep_id = "k";
    info.mode = "concurrency";
    auto id = store->begin_run(info, 0);
    for (int i = 0; i < 7; ++i) store->add_request(*id, record(i, i * 1'000'000));
    (void)!write(ready[1], "x", 1);
    pause();  // killed here, mid-run, without finish_run
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(count_rows(path, "SELECT COUNT(*) FROM requests"), 7);
  EXPECT_EQ(count_rows(path, "SELECT COUNT(*) FROM runs WHERE finished_at IS NULL"), 1);
}

// Issue 19 item 7: the store itself keeps no URL password, whatever its caller passes (runs.url and
// the config JSON were the two copies).
TEST(BenchStore, Issue19_UrlCredentialsAreNotStored) {
  const auto dir = pftest::scratch_dir("store-userinfo");
  auto store = BenchStore::open(dir + "/b.db");
  ASSERT_TRUE(store);
  RunInfo info;
  info.sweep_id = "s";
  info.started_at = "2026-12-03T00:00:00Z";
  info.url = "http://bob:pw-Kx93@127.0.0.1:8000/v1";
  info.model = "m";
  info.endpoint = "chat";
  info.mode = "concurrency";
  info.config = {{"url", info.url}, {"note", "see https://u:pw-Kx93@example.org/x"}};
  auto id = store->begin_run(info, 0);
  ASSERT_TRUE(id) << id.error().describe();
  auto run = store->run(*id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->info.url, "http://***@127.0.0.1:8000/v1");
  EXPECT_EQ(run->info.config["url"], "http://***@127.0.0.1:8000/v1");
  EXPECT_EQ(run->info.config["note"], "see https://***@example.org/x");
  EXPECT_EQ(run->info.config.dump().find("pw-Kx93"), std::string::npos);
}
