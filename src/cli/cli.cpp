#include "cli/cli.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/args.hpp"
#include "cli/cmd_bw.hpp"
#include "cli/cmd_plan.hpp"
#include "cli/common.hpp"
#include "cli/help.hpp"
#include "cli/cmd_doctor.hpp"
#include "cli/cmd_llama.hpp"
#include "cli/cmd_logs.hpp"
#include "cli/model_arg.hpp"
#include "cli/cmd_bench.hpp"
#include "cli/cmd_calibrate.hpp"
#include "cli/cmd_report.hpp"
#include "deploy/deployment.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "model/model_catalog.hpp"
#include "model/model_source.hpp"
#include "plan/fit_search.hpp"
#include "report/render.hpp"
#include "report/render_plan.hpp"
#include "validate/validation.hpp"

namespace preflight::cli {

namespace {

const char* k_usage = R"(preflight: will this model run on this accelerator, with this engine, and how?

usage: preflight <command> [args] [--json]

commands:
  inspect MODEL            exact model facts: layers, parameters, weight bytes, KV bytes per token
  fit MODEL --device D     what vLLM / vLLM-Ascend will print at start-up, the verdict, and the speed
  plan --device D          what this hardware runs: every catalogue model that fits, ranked, with its start command
  plan MODEL [--devices ..] what this model needs: the cheapest device count, layout and quantization per device
  validate FILE.jsonl...   compare predictions with recorded deployments
  models                   the embedded model catalogue
  logs FILE                an engine log: versions, args, printed vs predicted, root cause and fix (alias: explain)
  doctor                   check the CANN / driver / Python stack, lock files and deploy script (--root, --script, --fix)
  devices                  the device catalogue (with your measured overrides)
  engines                  the engine catalogue (versions, defaults, accepted quantization)
  bw [--target host|cuda|npu] [--save --device D]   measure memory bandwidth (copy counted read + write)
  bench --url URL --model NAME [--concurrency 1,4,16,64 | --request-rate R] [--save]
                           measure a live OpenAI-compatible server (TTFT, TPOT, ITL, throughput)
  calibrate [--db FILE]    refit speed-model efficiency from stored bench runs; error before/after
  report --html FILE [--from-db FILE] [--run ID]
                           one self-contained HTML report of a stored bench sweep
  version

MODEL is a catalogue id (Qwen/Qwen3-8B), a local directory or config.json, a .gguf file, or a hub
reference: hf:org/name[@rev] (Hugging Face, HF_ENDPOINT), ms:org/name[@rev] (ModelScope, MODELSCOPE_DOMAIN),
with /file.gguf after the name for one GGUF file. A hub model is read from the Hugging Face / ModelScope
cache when present, else only its metadata is fetched (config, safetensors headers by range request,
never weights) into $XDG_CACHE_HOME/preflight/hub; --offline uses that cache only, --refresh refetches.

examples:
  preflight inspect Qwen/Qwen3-8B
  preflight fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768
  preflight fit Qwen/Qwen3-32B --device H100 --tensor-parallel-size 2 --json
  preflight fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --skip-mm-profiling   # no vision encoder in the profile run
  preflight plan --device 910B3 --context 32768
  preflight plan Qwen/Qwen3.6-27B --devices 910B4,910B3,H100 --markdown
  preflight validate ../shared/validation/seed-cases.jsonl --models ../shared/models

exit codes: 0 success (fit: it fits), 1 it does not fit / target not met (bw: the measurement failed),
  2 bad input or usage, 3 environment or network failure (hub or server unreachable, timeout).
environment: NO_COLOR disables colour; PREFLIGHT_DEVICE_OVERRIDES names a measured-device file;
  PREFLIGHT_CUDART_LIB / PREFLIGHT_ACL_LIB name the CUDA / AscendCL runtime library for bw;
  HF_TOKEN / HUGGING_FACE_HUB_TOKEN / ~/.cache/huggingface/token and MODELSCOPE_API_TOKEN authenticate
  hub requests (never printed or cached).
)";

Expected<ModelArgOptions> model_arg_options(const Args& args) {
  ModelArgOptions o;
  if (auto d = args.get("models")) o.extra_model_dirs.push_back(*d);
  if (args.has("offline") && args.has("refresh")) return make_error(ErrorKind::invalid_argument, "--offline and --refresh exclude each other");
  if (args.has("offline")) o.cache = HubCacheMode::offline;
  if (args.has("refresh")) o.cache = HubCacheMode::refresh;
  return o;
}

int cmd_inspect(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, command_flags("inspect"));
  if (!args) return report_error(args.error());
  if (args->positional.size() != 1) return report_error(make_error(ErrorKind::invalid_argument, command_usage("inspect")));
  auto ro = model_arg_options(*args);
  if (!ro) return report_error(ro.error());
  auto spec = resolve_model_arg(args->positional[0], *ro);
  if (!spec) return report_error(spec.error());
  if (args->has("json")) print_json(report::inspect_to_json(*spec));
  else std::cout << report::render_inspect(*spec, {use_color()});
  return k_exit_ok;
}

int cmd_fit(const std::vector<std::string>& argv) {
  if (llama_cpp_engine_requested(argv)) return cmd_fit_llama_cpp(argv);  // llama.cpp's own memory model (cli/cmd_llama)
  auto args = parse_args(argv, command_flags("fit"));
  if (!args) return report_error(args.error());
  if (args->positional.size() != 1 || !args->has("device")) {
    return report_error(make_error(ErrorKind::invalid_argument, command_usage("fit")));
  }
  auto flags = deployment_flags(*args);
  if (!flags) return report_error(flags.error());
  if (auto checked = deploy::check_flags(*flags); !checked) return report_error(checked.error());
  auto ro = model_arg_options(*args);
  if (!ro) return report_error(ro.error());
  auto spec = resolve_model_arg(args->positional[0], *ro);
  if (!spec) return report_error(spec.error());
  auto devices = device::load_device_catalog();
  if (!devices) return report_error(devices.error());
  auto engines = engine::load_engine_catalog();
  if (!engines) return report_error(engines.error());
  deploy::Inputs in{*spec, {*args->get("device"), "--device", deploy::DeviceForm::name}, {args->get("engine").value_or(""), "", "--engine", "", "", deploy::UnknownVersion::error}, *flags};
  auto resolved = deploy::resolve_deployment(in, {&*devices, &*engines});
  if (!resolved) return report_error(resolved.error());
  const model::ModelSpec& model = resolved->model;
  const device::DeviceSpec* dev = &resolved->device;
  const engine::EngineProfile* eng = &resolved->engine;
  const engine::Overheads* oh = &resolved->overheads;
  estimate::Deployment d = resolved->deployment;
  const bool auto_len = !d.max_model_len;
  auto est = estimate::estimate_fit(model, *dev, *eng, *oh, d);
  auto search = plan::search_fixes(model, *dev, *eng, *oh, d, est);
  // Without --max-model-len, report the largest context the card holds (vLLM's -1 / auto).
  if (auto_len && !est.fits && est.failure == estimate::Failure::max_model_len_too_large && search.largest_context > 0) {
    d.max_model_len = search.largest_context;
    est = estimate::estimate_fit(model, *dev, *eng, *oh, d);
    est.assumptions.push_back(format("max_model_len reduced to %lld, the largest context the KV budget holds (like --max-model-len auto)",
                                     static_cast<long long>(search.largest_context)));
    search = plan::search_fixes(model, *dev, *eng, *oh, d, est);
  }
  est.assumptions.insert(est.assumptions.end(), resolved->assumptions.begin(), resolved->assumptions.end());
  est.provenance.insert(est.provenance.end(), resolved->provenance.begin(), resolved->provenance.end());
  auto speed = speed_for_fit(*args, model, *dev, *eng, d, est);
  if (!speed && speed.error().kind == ErrorKind::invalid_argument) return report_error(speed.error());
  if (args->has("json")) {
    Json j = report::fit_to_json(model, est, search.largest_context);
    j["fixes"] = search.fixes;
    j["speed"] = speed ? report::speed_to_json(*speed) : Json({{"error", speed.error().describe()}});
    print_json(j);
  } else {
    std::cout << report::render_fit(model, est, search.largest_context, search.fixes, {use_color()});
    if (est.fits && speed) std::cout << "\n" << report::render_speed(*speed, {use_color()});
  }
  return est.fits ? k_exit_ok : k_exit_fail;
}

int cmd_validate(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, command_flags("validate"));
  if (!args) return report_error(args.error());
  if (args->positional.empty()) return report_error(make_error(ErrorKind::invalid_argument, command_usage("validate")));
  validate::ValidateOptions options;
  if (auto d = args->get("models")) options.model_dirs.push_back(*d);
  auto report = validate::run_validation(args->positional, options);
  if (!report) return report_error(report.error());
  if (args->has("json")) {
    Json j = report::envelope("validate");
    j.update(validate::validation_to_json(*report));
    print_json(j);
  } else {
    std::cout << report::render_validation(*report, {use_color()});
  }
  return k_exit_ok;
}

int cmd_models(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, command_flags("models"));
  if (!args) return report_error(args.error());
  const auto& catalog = model::builtin_model_catalog();
  Json list = Json::array();
  for (const auto& m : catalog.models) {
    auto spec = model::model_spec_from_catalog(m);
    Json row = {{"id", m.id}, {"aliases", m.aliases}, {"source", m.source_url}, {"kind", m.source_kind}};
    if (spec) {
      const auto p = model::count_params(*spec);
      row["architecture"] = spec->architecture;
      row["params"] = p.total;
      row["active_params"] = p.active;
      row["weight_gib"] = bytes_to_gib(model::compute_weight_bytes(*spec).total);
    } else {
      row["error"] = spec.error().describe();
    }
    list.push_back(row);
  }
  if (args->has("json")) {
    Json j = report::envelope("models");
    j["models"] = list;
    print_json(j);
    return k_exit_ok;
  }
  std::printf("%-44s %-36s %10s %10s %9s\n", "id", "architecture", "params(B)", "active(B)", "GiB");
  for (const auto& r : list) {
    if (r.contains("error")) { std::printf("%-44s error: %s\n", r["id"].get<std::string>().c_str(), r["error"].get<std::string>().c_str()); continue; }
    std::printf("%-44s %-36s %10.2f %10.2f %9.2f\n", r["id"].get<std::string>().c_str(), r["architecture"].get<std::string>().c_str(),
                r["params"].get<double>() / 1e9, r["active_params"].get<double>() / 1e9, r["weight_gib"].get<double>());
  }
  return k_exit_ok;
}

int cmd_devices(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, command_flags("devices"));
  if (!args) return report_error(args.error());
  auto catalog = device::load_device_catalog();
  if (!catalog) return report_error(catalog.error());
  Json list = Json::array();
  for (const auto& d : catalog->devices) {
    list.push_back({{"id", d.id}, {"name", d.name}, {"platform", d.platform}, {"memory_gib", bytes_to_gib(d.memory_bytes)},
                    {"runtime_total_gib", d.runtime_total_bytes ? Json(bytes_to_gib(*d.runtime_total_bytes)) : Json()},
                    {"hbm_bandwidth_gb_s", d.hbm_bandwidth_bytes_per_s ? Json(*d.hbm_bandwidth_bytes_per_s / 1e9) : Json()},
                    {"aliases", d.aliases}, {"overrides", d.overrides}, {"origin", d.origin}});
  }
  if (args->has("json")) {
    Json j = report::envelope("devices");
    j["devices"] = list;
    print_json(j);
    return k_exit_ok;
  }
  std::printf("%-16s %-8s %10s %12s %12s  %s\n", "id", "platform", "mem GiB", "runtime GiB", "HBM GB/s", "name");
  for (const auto& d : catalog->devices) {
    std::printf("%-16s %-8s %10.2f %12s %12s  %s%s\n", d.id.c_str(), d.platform.c_str(), bytes_to_gib(d.memory_bytes),
                d.runtime_total_bytes ? fixed(bytes_to_gib(*d.runtime_total_bytes), 2).c_str() : "-",
                d.hbm_bandwidth_bytes_per_s ? fixed(*d.hbm_bandwidth_bytes_per_s / 1e9, 0).c_str() : "-", d.name.c_str(),
                d.overrides.empty() ? "" : " (measured overrides)");
  }
  return k_exit_ok;
}

int cmd_engines(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, command_flags("engines"));
  if (!args) return report_error(args.error());
  auto catalog = engine::load_engine_catalog();
  if (!catalog) return report_error(catalog.error());
  Json list = Json::array();
  for (const auto& p : catalog->profiles) {
    list.push_back({{"id", p.id}, {"engine", p.engine}, {"versions", p.version_min.text() + " - " + p.version_max.text()}, {"platform", p.platform},
                    {"default_gpu_memory_utilization", p.default_gpu_memory_utilization}, {"block_size", p.block_size},
                    {"max_num_seqs", p.max_num_seqs}, {"max_num_batched_tokens", p.max_num_batched_tokens},
                    {"large_device", {{"max_num_seqs", p.max_num_seqs_large_device}, {"max_num_batched_tokens", p.max_num_batched_tokens_large_device}}},
                    {"sampler", {{"logit_copies", p.sampler_logit_copies}, {"logit_copies_if_flashinfer", p.sampler_logit_copies_if_flashinfer},
                                 {"fixed_bytes", p.sampler_fixed_bytes}, {"source", p.sampler_source}}},
                    {"profiles_mm_encoder", p.profiles_mm_encoder}, {"mxfp4_layouts", [&] {
                       Json l = Json::array();
                       for (const auto& x : p.mxfp4_layouts) l.push_back({{"backend", x.backend}, {"devices", x.devices}, {"families", x.families}, {"source", x.source}});
                       return l;
                     }()},
                    {"graph_memory_in_budget", p.graph_memory_in_budget}, {"supported_quantization", p.supported_quantization}, {"source", p.source}});
  }
  if (args->has("json")) {
    Json j = report::envelope("engines");
    j["engines"] = list;
    print_json(j);
    return k_exit_ok;
  }
  std::printf("%-24s %-22s %-5s %5s %6s %11s %8s  %s\n", "id", "versions", "plat", "util", "block", "seqs/tokens", "sampler", "quantization accepted");
  for (const auto& p : catalog->profiles) {
    std::string q;
    for (const auto& s : p.supported_quantization) q += (q.empty() ? "" : ",") + s;
    const std::string batch = std::to_string(p.max_num_seqs) + "/" + std::to_string(p.max_num_batched_tokens);
    std::printf("%-24s %-22s %-5s %5.2f %6lld %11s %7.1fx  %s\n", p.id.c_str(), (p.version_min.text() + " - " + p.version_max.text()).c_str(), p.platform.c_str(),
                p.default_gpu_memory_utilization, static_cast<long long>(p.block_size), batch.c_str(), p.sampler_logit_copies, q.c_str());
  }
  return k_exit_ok;
}

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << k_usage;
    return args.empty() ? k_exit_usage : k_exit_ok;
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const auto& a : rest) {
    if (a == "--help" || a == "-h") {
      const char* own = command_help(command);
      std::cout << (own ? own : k_usage);
      return k_exit_ok;
    }
  }
  if (command == "inspect") return cmd_inspect(rest);
  if (command == "fit") return cmd_fit(rest);
  if (command == "validate") return cmd_validate(rest);
  if (command == "plan") return cmd_plan(rest);
  if (command == "models") return cmd_models(rest);
  if (command == "logs" || command == "explain") return cmd_logs(rest);
  if (command == "doctor") return cmd_doctor(rest);
  if (command == "devices") return cmd_devices(rest);
  if (command == "engines") return cmd_engines(rest);
  if (command == "bw") return cmd_bw(rest);
  if (command == "bench") return cmd_bench(rest);
  if (command == "calibrate") return cmd_calibrate(rest);
  if (command == "report") return cmd_report(rest);
  if (command == "version" || command == "--version") {
    std::cout << "preflight " << PREFLIGHT_VERSION << " (" << PREFLIGHT_COMMIT << ")\n";
    return k_exit_ok;
  }
  std::string message = "unknown command '" + command + "'";
  const auto near = nearest_names(command, {"inspect", "fit", "plan", "validate", "models", "devices", "engines", "bw", "logs", "explain", "doctor", "bench", "calibrate", "report", "version"}, 1);
  if (!near.empty()) message += "; did you mean " + near[0];
  std::fprintf(stderr, "preflight: %s (preflight --help lists commands)\n", message.c_str());
  return k_exit_usage;
}

}  // namespace preflight::cli
