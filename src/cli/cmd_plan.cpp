#include "cli/cmd_plan.hpp"

#include <iostream>

#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/common.hpp"
#include "cli/help.hpp"
#include "cli/model_arg.hpp"
#include "deploy/deployment.hpp"
#include "engine/launch_rules.hpp"
#include "engine/speed_profile.hpp"
#include "model/model_catalog.hpp"
#include "model/model_source.hpp"
#include "plan/planner.hpp"
#include "report/render_plan.hpp"

namespace preflight::cli {

namespace {

Expected<std::vector<int64_t>> int_list(const std::string& flag, const std::string& text) {
  std::vector<int64_t> out;
  for (const auto& part : split(text, ',')) {
    const std::string p = trim(part);
    char* end = nullptr;
    const long long v = std::strtoll(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || v < 1 || v > 1000000)
      return make_error(ErrorKind::invalid_argument, format("--%s: '%s' is not a positive integer", flag.c_str(), p.c_str()));
    out.push_back(v);
  }
  return out;
}

// --bandwidth in GB/s (decimal), the copy figure `preflight bw` prints.
Expected<std::optional<double>> bandwidth_flag(const Args& args) {
  PF_TRY(bw, args.get_double("bandwidth"));
  if (!bw) return std::optional<double>{};
  if (*bw <= 0 || *bw > 100000) return make_error(ErrorKind::invalid_argument, "--bandwidth: expected GB/s in (0, 100000]");
  return std::optional<double>{*bw * 1e9};
}

}  // namespace

std::vector<FlagSpec> speed_flags() { return {{"concurrency", true}, {"input-len", true}, {"decode-context", true}, {"bandwidth", true}}; }

Expected<estimate::SpeedEstimate> speed_for_fit(const Args& args, const model::ModelSpec& model, const device::DeviceSpec& device,
                                                const engine::EngineProfile& engine, const estimate::Deployment& d, const estimate::FitEstimate& fit) {
  PF_TRY(speeds, engine::load_speed_catalog());
  const engine::SpeedProfile* sp = speeds.find(engine.engine, device.platform, device.id);
  if (!sp) return make_error(ErrorKind::not_found, "no speed profile for " + engine.engine + " on " + device.platform + " in data/engines/speed.json");
  estimate::SpeedWorkload w;
  if (auto c = args.get("concurrency")) {
    PF_TRY(list, int_list("concurrency", *c));
    w.concurrency = list;
  } else {
    w.concurrency = {1};
    for (int64_t n = 4; n <= std::max<int64_t>(1, static_cast<int64_t>(fit.max_concurrency * 1.0001)) && n <= fit.max_num_seqs; n *= 4) w.concurrency.push_back(n);
  }
  PF_TRY(in, args.get_int("input-len"));
  PF_TRY(ctx, args.get_int("decode-context"));
  if ((in && *in < 1) || (ctx && *ctx < 1)) return make_error(ErrorKind::invalid_argument, "--input-len and --decode-context must be positive");
  w.input_tokens = in.value_or(1024);
  w.context_tokens = ctx.value_or(std::min<int64_t>(1024, std::max<int64_t>(1, fit.max_model_len)));
  PF_TRY(bw, bandwidth_flag(args));
  w.bandwidth_bytes_per_s = bw;
  return estimate::estimate_speed(model, device, *sp, speeds, d, fit, w);
}

int cmd_plan(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, command_flags("plan"));
  if (!args) return report_error(args.error());
  const std::string usage = command_usage("plan");
  if (args->positional.size() > 1 || (args->positional.empty() && !args->has("device")))
    return report_error(make_error(ErrorKind::invalid_argument, usage));
  auto devices = device::load_device_catalog();
  if (!devices) return report_error(devices.error());
  auto engines = engine::load_engine_catalog();
  if (!engines) return report_error(engines.error());
  auto speeds = engine::load_speed_catalog();
  if (!speeds) return report_error(speeds.error());
  auto rules = engine::load_launch_rules();
  if (!rules) return report_error(rules.error());
  plan::PlanInputs in{&*engines, &*speeds, &*rules, args->get("engine").value_or("")};
  plan::PlanTargets t;
  auto ctx = args->get_int("context");
  auto conc = args->get_int("concurrency");
  auto nd = args->get_int("num-devices");
  auto maxd = args->get_int("max-devices");
  auto dctx = args->get_int("decode-context");
  for (const auto* e : {&ctx, &conc, &nd, &maxd, &dctx}) {
    if (!*e) return report_error(e->error());
    if (e->value().has_value() && **e < 1) return report_error(make_error(ErrorKind::invalid_argument, "counts and lengths must be at least 1"));
  }
  auto mts = args->get_double("min-tok-s");
  auto util = args->get_double("gpu-memory-utilization");
  if (!mts) return report_error(mts.error());
  if (!util) return report_error(util.error());
  {
    // The same checks as fit, logs and validate (deploy::check_flags), for the flags plan shares with them.
    deploy::Flags shared;
    if (*util) shared.gpu_memory_utilization = deploy::Given<double>{**util, "--gpu-memory-utilization"};
    if (*nd) shared.num_devices = deploy::Given<int64_t>{**nd, "--num-devices"};
    if (auto checked = deploy::check_flags(shared); !checked) return report_error(checked.error());
  }
  auto bw = bandwidth_flag(*args);
  if (!bw) return report_error(bw.error());
  t.context_tokens = *ctx;
  t.concurrency = conc->value_or(1);
  t.min_tokens_per_s = *mts;
  t.decode_context_tokens = dctx->value_or(1024);
  t.bandwidth_bytes_per_s = *bw;
  t.gpu_memory_utilization = *util;
  const size_t rows = args->has("all") ? static_cast<size_t>(-1) : 15;
  const auto fmt = args->has("markdown") ? report::PlanFormat::markdown : report::PlanFormat::text;

  plan::PlanResult result;
  std::string question;
  if (args->positional.empty()) {
    auto dev = device::find_device(*devices, *args->get("device"));
    if (!dev) return report_error(dev.error());
    std::vector<model::ModelSpec> models;
    for (const auto& m : model::builtin_model_catalog().models) {
      auto spec = model::model_spec_from_catalog(m);
      if (spec) models.push_back(std::move(*spec));
    }
    const int64_t n = nd->value_or(1);
    std::fprintf(stderr, "%s", isatty(STDERR_FILENO) ? format("planning %zu catalogue models on %lld x %s...\n", models.size(), static_cast<long long>(n), dev->id.c_str()).c_str() : "");
    result = plan::plan_for_device(models, *dev, n, in, t);
    question = format("what %lld x %s runs (context %s, concurrency %lld%s)", static_cast<long long>(n), dev->id.c_str(),
                      t.context_tokens ? with_thousands(*t.context_tokens).c_str() : "min(32,768, model max)", static_cast<long long>(t.concurrency),
                      t.min_tokens_per_s ? format(", at least %.1f tok/s per stream", *t.min_tokens_per_s).c_str() : "");
  } else {
    ModelArgOptions ro;
    if (auto d = args->get("models")) ro.extra_model_dirs.push_back(*d);
    if (args->has("offline")) ro.cache = HubCacheMode::offline;
    auto spec = resolve_model_arg(args->positional[0], ro);
    if (!spec) return report_error(spec.error());
    std::vector<device::DeviceSpec> list;
    if (auto names = args->get("devices")) {
      for (const auto& name : split(*names, ',')) {
        auto dev = device::find_device(*devices, trim(name));
        if (!dev) return report_error(dev.error());
        list.push_back(*dev);
      }
    } else if (auto one = args->get("device")) {
      auto dev = device::find_device(*devices, *one);
      if (!dev) return report_error(dev.error());
      list.push_back(*dev);
    } else {
      for (const auto& d : devices->devices)
        if ((d.platform == "npu" || d.platform == "cuda" || d.platform == "rocm") && (d.hbm_bandwidth_bytes_per_s || d.measured_copy_bandwidth_bytes_per_s)) list.push_back(d);
    }
    result = plan::plan_for_model(*spec, list, in, t, maxd->value_or(16));
    question = format("what %s needs (context %s, concurrency %lld%s)", spec->id.c_str(),
                      t.context_tokens ? with_thousands(*t.context_tokens).c_str() : "min(32,768, model max)", static_cast<long long>(t.concurrency),
                      t.min_tokens_per_s ? format(", at least %.1f tok/s per stream", *t.min_tokens_per_s).c_str() : "");
  }
  if (args->has("json")) print_json(report::plan_to_json(result, question));
  else std::cout << report::render_plan(result, question, fmt, rows);
  return result.recommended.empty() ? k_exit_fail : k_exit_ok;
}

}  // namespace preflight::cli
