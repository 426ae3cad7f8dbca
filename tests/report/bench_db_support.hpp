// A bench database written through BenchStore for the report tests: finished runs of successful requests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "base/json_util.hpp"
#include "bench/store.hpp"

namespace pftest {

// A successful request: first token after ttft_ms, then four more every 20 ms.
inline preflight::bench::RequestRecord request(int64_t index, double ttft_ms) {
  preflight::bench::RequestRecord r;
  const auto ns = [](double ms) { return static_cast<int64_t>(ms * 1e6); };
  const double start_ms = 1000.0 * static_cast<double>(index);
  r.index = index;
  r.t_sched_ns = r.t_send_ns = ns(start_ms);
  r.t_first_byte_ns = ns(start_ms + 1);
  r.t_first_chunk_ns = r.t_first_token_ns = r.t_first_content_ns = ns(start_ms + ttft_ms);
  for (int i = 0; i < 5; ++i) r.token_event_ns.push_back(ns(start_ms + ttft_ms + 20.0 * i));
  r.t_last_token_ns = r.token_event_ns.back();
  r.t_done_ns = r.t_end_ns = r.t_last_token_ns + 1000;
  r.http_status = 200;
  r.requested_output_tokens = r.completion_tokens = r.token_events = 5;
  r.prompt_tokens = 12;
  r.finish_reason = "length";
  return r;
}

// Two finished runs (ids 1 and 2) at concurrency 1 whose model name is `model`.
inline std::string make_db(const std::string& dir, const std::string& model) {
  const std::string path = dir + "/bench.db";
  auto store = preflight::bench::BenchStore::open(path);
  EXPECT_TRUE(store) << store.error().describe();
  for (const char* sweep : {"s1", "s2"}) {
    preflight::bench::RunInfo info;
    info.sweep_id = sweep;
    info.started_at = "2026-12-06T00:00:00Z";
    info.url = "http://127.0.0.1:8000";
    info.model = model;
    info.endpoint = "chat";
    info.mode = "concurrency";
    info.concurrency = 1;
    auto id = store->begin_run(info, 0);
    EXPECT_TRUE(id);
    for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(store->add_request(*id, request(i, 100.0 + 10.0 * static_cast<double>(i))));
    EXPECT_TRUE(store->finish_run(*id, preflight::Json::object(), "2026-12-06T00:01:00Z"));
  }
  return path;
}

}  // namespace pftest
