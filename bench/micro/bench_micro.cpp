// Microbenchmarks of preflight's own code (Google Benchmark). Build with -DPREFLIGHT_MICROBENCH=ON;
// run scripts/bench.sh, which reports medians over repetitions.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "base/units.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/launch_rules.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/fit.hpp"
#include "model/model_catalog.hpp"
#include "model/model_source.hpp"
#include "model/safetensors_header.hpp"
#include "plan/fit_search.hpp"
#include "plan/planner.hpp"

using namespace preflight;

namespace {

struct World {
  device::DeviceCatalog devices = *device::load_device_catalog();
  engine::EngineCatalog engines = *engine::load_engine_catalog();
  engine::SpeedCatalog speeds = *engine::load_speed_catalog();
  engine::LaunchRules rules = *engine::load_launch_rules(*device::load_device_families());
  std::vector<model::ModelSpec> models = [] {
    std::vector<model::ModelSpec> out;
    for (const auto& e : model::builtin_model_catalog().models)
      if (auto s = model::model_spec_from_catalog(e)) out.push_back(*s);
    return out;
  }();
};

const World& world() {
  static const World w;
  return w;
}

// A 1,000-tensor header like a 70B shard index: names, dtypes, shapes, offsets.
std::string header_json(int tensors) {
  std::string j = "{\"__metadata__\":{\"format\":\"pt\"}";
  uint64_t offset = 0;
  for (int i = 0; i < tensors; ++i) {
    const uint64_t bytes = 8192ull * 8192 * 2;
    j += format(",\"model.layers.%d.mlp.down_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[8192,8192],\"data_offsets\":[%llu,%llu]}", i,
                static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset + bytes));
    offset += bytes;
  }
  return j + "}";
}

}  // namespace

static void BM_SafetensorsHeader1000Tensors(benchmark::State& state) {
  const std::string h = header_json(1000);
  const uint64_t data = 1000ull * 8192 * 8192 * 2;
  for (auto _ : state) benchmark::DoNotOptimize(model::parse_safetensors_header(h, data, "bench.safetensors"));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * h.size()));
}
BENCHMARK(BM_SafetensorsHeader1000Tensors)->Unit(benchmark::kMicrosecond);

// Issue 19 item 3: a 100,000-tensor header (about 13 MB of JSON) must parse in linear time.
static void BM_SafetensorsHeader100000Tensors(benchmark::State& state) {
  const std::string h = header_json(100000);
  const uint64_t data = 100000ull * 8192 * 8192 * 2;
  for (auto _ : state) benchmark::DoNotOptimize(model::parse_safetensors_header(h, data, "bench.safetensors"));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * h.size()));
}
BENCHMARK(BM_SafetensorsHeader100000Tensors)->Unit(benchmark::kMillisecond);

// One model on one 910B3 under vllm-ascend 0.23 with the embedded catalogues.
struct NpuCase {
  model::ModelSpec model;
  device::DeviceSpec device;
  engine::EngineProfile engine;
  const engine::Overheads* overheads;
};
static NpuCase npu_case(const std::string& model_id) {
  const auto& w = world();
  return {*model::resolve_model(model_id), *device::find_device(w.devices, "910B3"), *engine::select_engine(w.engines, "vllm-ascend", "0.23"),
          w.engines.overheads_for("npu")};
}

static void BM_FitOneDeployment(benchmark::State& state) {
  const auto c = npu_case("Qwen/Qwen3-VL-8B-Instruct");
  estimate::Deployment dep;
  dep.max_model_len = 32768;
  for (auto _ : state) benchmark::DoNotOptimize(estimate::estimate_fit(c.model, c.device, c.engine, *c.overheads, dep));
}
BENCHMARK(BM_FitOneDeployment)->Unit(benchmark::kMicrosecond);

// #19: the same estimate as plan's candidate search makes it: numbers and verdict, no explanatory text.
static void BM_FitOneDeploymentNoText(benchmark::State& state) {
  const auto c = npu_case("Qwen/Qwen3-VL-8B-Instruct");
  estimate::Deployment dep;
  dep.max_model_len = 32768;
  dep.explain = false;
  for (auto _ : state) benchmark::DoNotOptimize(estimate::estimate_fit(c.model, c.device, c.engine, *c.overheads, dep));
}
BENCHMARK(BM_FitOneDeploymentNoText)->Unit(benchmark::kMicrosecond);

// Issue 3: the largest-context search and the cheapest fixes around a failing deployment (Qwen3.5-27B
// asking for its full 262,144-token context on one 910B3: the KV budget holds ~55k, so every fix is tried).
static void BM_LargestContextAndFixesSearch(benchmark::State& state) {
  const auto c = npu_case("Qwen/Qwen3.5-27B");
  estimate::Deployment dep;
  dep.max_model_len = 262144;
  const auto base = estimate::estimate_fit(c.model, c.device, c.engine, *c.overheads, dep);
  for (auto _ : state) benchmark::DoNotOptimize(plan::search_fixes(c.model, c.device, c.engine, *c.overheads, dep, base));
}
BENCHMARK(BM_LargestContextAndFixesSearch)->Unit(benchmark::kMicrosecond);

// Issue 4: plan over the whole catalogue x all devices x device counts 1..16 x quantization variants,
// one evaluate_candidate call at a time (nothing shared between candidates, one thread).
static void BM_PlanWholeCatalogueAllDevices(benchmark::State& state) {
  const auto& w = world();
  const plan::PlanInputs in{&w.engines, &w.speeds, &w.rules, ""};
  plan::PlanTargets t;
  t.context_tokens = 8192;
  int64_t evaluated = 0;
  for (auto _ : state) {
    for (const auto& dev : w.devices.devices) {
      const auto eng = engine::select_engine(w.engines, dev.platform == "npu" ? "vllm-ascend" : "vllm", "");
      for (const auto& m : w.models) {
        const auto variants = eng ? plan::quantization_variants(m, *eng) : std::vector<std::string>{""};
        for (const int64_t n : {1, 2, 4, 8, 16})
          for (const auto& q : variants) {
            benchmark::DoNotOptimize(plan::evaluate_candidate(m, dev, in, q, n, t));
            ++evaluated;
          }
      }
    }
  }
  state.counters["candidates_per_iteration"] = static_cast<double>(evaluated) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PlanWholeCatalogueAllDevices)->Unit(benchmark::kMillisecond)->Iterations(1);

// #19: the same plan as `preflight plan` computes it for many devices: plan_for_devices (parameter
// counts and engine shared, one device's counts one model and variant at a time, the devices shared
// among the workers). Results equal the one-at-a-time loop above (tests/plan). Arguments: the rows'
// detail (0: every row's start commands and speed text, as --json writes them; 1: the table's) and the
// number of workers (0: every core).
static void BM_PlanForDevicesWholeCatalogue(benchmark::State& state) {
  const auto& w = world();
  plan::PlanInputs in{&w.engines, &w.speeds, &w.rules, ""};
  in.detail = state.range(0) == 0 ? plan::RowDetail::every_row : plan::RowDetail::table;
  plan::PlanTargets t;
  t.context_tokens = 8192;
  int64_t evaluated = 0;
  for (auto _ : state) {
    auto plans = plan::plan_for_devices(w.models, w.devices.devices, {1, 2, 4, 8, 16}, in, t, static_cast<int>(state.range(1)));
    for (const auto& p : plans) evaluated += static_cast<int64_t>(p.result.recommended.size() + p.result.rejected.size());
    benchmark::DoNotOptimize(plans.data());
    // Planfast7b: the result is freed inside the timed region, on the plan's workers (release_plans: ~146,000 row
    // blocks, 40-50 ms on one thread).
    plan::release_plans(plans, static_cast<int>(state.range(1)));
  }
  state.counters["candidates_per_iteration"] = static_cast<double>(evaluated) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PlanForDevicesWholeCatalogue)
    ->ArgNames({"table", "threads"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
