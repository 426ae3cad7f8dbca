// Test helper: the in-repo fake OpenAI server (tests/fake_server) started on a free loopback port.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/clock.hpp"
#include "bench/runner.hpp"
#include "bench/store.hpp"
#include "service.hpp"
#include "../test_support.hpp"

namespace pftest {

struct Fake {
  std::unique_ptr<Service> process;
  std::string url;
};

inline Fake start_fake(std::vector<std::string> args) {
  args.insert(args.begin(), FAKE_SERVER_BINARY);
  Fake f;
  f.process = std::make_unique<Service>(args);
  const std::string line = f.process->wait_for_line("PORT ");
  EXPECT_FALSE(line.empty()) << "fake server did not start";
  if (!line.empty()) f.url = "http://127.0.0.1:" + line.substr(5);
  return f;
}

// Runs a load against url, committing each finished request to a fresh database.
struct LiveRun {
  preflight::bench::RunResult result;
  std::string db_path;
  int64_t run_id = 0;
};

inline LiveRun run_against(const std::string& url, const std::string& name, preflight::bench::LoadPlan plan, int64_t output_tokens,
                           preflight::bench::TransportLimits limits = {}, preflight::bench::Api api = preflight::bench::Api::chat,
                           const std::string& model = "fake-model") {
  using namespace preflight::bench;
  LiveRun live;
  live.db_path = scratch_dir(name) + "/bench.db";
  auto store = BenchStore::open(live.db_path);
  EXPECT_TRUE(store);
  SteadyClock clock;
  RunInfo info;
  info.sweep_id = name;
  info.mode = plan.mode == LoadMode::concurrency ? "concurrency" : "request_rate";
  info.concurrency = plan.concurrency;
  auto id = store->begin_run(info, clock.now_ns());
  EXPECT_TRUE(id);
  live.run_id = *id;
  RunTarget target{url, {}};
  target.request.model = model;
  target.request.api = api;
  target.request.eos = RequestOptions::Eos::ignore;
  const auto prompts = synthetic_prompts(plan.num_prompts, 16, output_tokens, 1);
  StoreWriter writer(*store, *id);
  auto r = run_load(target, prompts, plan, limits, clock, [&](const RequestRecord& rec) { writer.push(rec); });
  EXPECT_TRUE(writer.close());
  EXPECT_TRUE(r) << (r ? "" : r.error().describe());
  if (r) live.result = std::move(*r);
  return live;
}

inline preflight::bench::LoadPlan fixed(int64_t concurrency, int64_t n) {
  preflight::bench::LoadPlan p;
  p.concurrency = concurrency;
  p.num_prompts = n;
  p.warmup_requests = concurrency;
  return p;
}

}  // namespace pftest
