#include "cli/cmd_plan.hpp"

#include <fnmatch.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <span>

#include "base/file.hpp"
#include "base/json_writer.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/cmd_llama.hpp"
#include "cli/cmd_mindie.hpp"
#include "cli/common.hpp"
#include "cli/engine_flags.hpp"
#include "cli/model_arg.hpp"
#include "cli/plan_speculative.hpp"
#include "cli/serve_line_flags.hpp"
#include "deploy/deployment.hpp"
#include "deploy/engine_core.hpp"
#include "deploy/engine_settings.hpp"
#include "deploy/model_dtype.hpp"
#include "device/device_spec.hpp"
#include "engine/attention_backends.hpp"
#include "engine/engine_profile.hpp"
#include "engine/flag_versions.hpp"
#include "engine/speculative_methods.hpp"
#include "engine/launch_rules.hpp"
#include "engine/speed_profile.hpp"
#include "model/architecture_traits.hpp"
#include "model/model_catalog.hpp"
#include "model/model_source.hpp"
#include "plan/dp_ep.hpp"
#include "plan/kubernetes.hpp"
#include "plan/launch.hpp"
#include "model/quant_variant.hpp"
#include "plan/planner.hpp"
#include "plan/speculative.hpp"
#include "report/render_plan.hpp"
#include "report/yaml.hpp"

namespace preflight::cli {

namespace {

// What `preflight plan` takes, written by its flag declarations.
struct PlanRequest {
  std::optional<std::string> device, devices, engine, workload, model_filter;
  std::optional<std::string> engine_version;  // misc21: --engine E@V's version, as fit takes it
  std::optional<std::string> kubernetes, image;
  std::optional<int64_t> data_parallel;
  bool expert_parallel = false;
  std::optional<std::string> device_memory, platform;  // issue 15: a card outside the catalogue
  std::optional<std::string> variant;
  std::optional<int64_t> context, concurrency, max_devices, decode_context;
  std::optional<int64_t> host_cores;  // llamacpp30: llama-server's -t on a CPU row
  std::optional<deploy::Given<int64_t>> num_devices;
  std::optional<deploy::Given<double>> gpu_memory_utilization;
  std::optional<deploy::Given<std::string>> speculative_config;  // issue 15
  // Issue 15: --compilation-config (-cc, dotted), --optimization-level (-O), --attention-backend, --interconnect, -dcp;
  // issue 15/16 (plan28): the engine settings fit takes (cli/engine_flags), applied to every row.
  deploy::Flags flags;
  std::optional<std::string> engine_build;
  std::optional<double> min_tok_s, bandwidth_gb_s;
  bool all = false, markdown = false, json = false;
  bool commands = false;
  ModelFlags model;
  ServeLineFlags serve_line;  // planq32: the rest of a pasted `vllm serve` line, carried into every start command
};

// `plan --model GLOB`: shell-style, case-insensitive, against the id and every alias.
bool matches_glob(const model::CatalogModel& m, const std::string& pattern) {
  if (fnmatch(pattern.c_str(), m.id.c_str(), FNM_CASEFOLD) == 0) return true;
  return std::any_of(m.aliases.begin(), m.aliases.end(), [&](const std::string& a) { return fnmatch(pattern.c_str(), a.c_str(), FNM_CASEFOLD) == 0; });
}

// Issue 15 (hyb): a catalogue record of a speculative drafter (traits.json speculative_drafter: DFlash heads), which
// vLLM serves only beside a target (--speculative-config), never as a model of its own.
bool speculative_drafter(const model::CatalogModel& m) {
  const Json& config = m.config;
  if (!config.is_object() || !config.contains("architectures")) return false;
  const Json& a = config["architectures"];
  if (!a.is_array() || a.empty() || !a[0].is_string()) return false;
  const model::ArchitectureTraits* t = model::find_builtin_traits(a[0].get<std::string>());
  return t && t->speculative_drafter;
}

// The catalogue models `plan --device` sizes: every one, or those --model GLOB matches (drafter heads left out).
std::vector<model::ModelSpec> catalogue_models(const PlanRequest& r) {
  std::function<bool(const model::CatalogModel&)> keep = [&](const model::CatalogModel& m) {
    return !speculative_drafter(m) && (!r.model_filter || matches_glob(m, *r.model_filter));
  };
  return model::builtin_model_specs(keep, 0);  // issue 19: record by record, on every core
}

const RealRange k_bandwidth_range{.most = 100000, .unit = "GB/s"};
// fit's and plan's --engine-version (issue 15/16, misc21): one meaning with --engine E@V.
constexpr const char* k_engine_version_help =
    "the engine's version, as --engine E@V gives it: selects the memory profile and the speed\nrules (vllm-ascend before 0.9.0 decodes eager); "
    "with --engine E@V it must name the same version";

// --device, or --device-memory (with --device, or alone as a generic card of --platform), resolved as fit
// resolves it (deploy::resolve_device); the assumptions it makes go into the plan's (issue 15).
Expected<device::DeviceSpec> plan_device(const PlanRequest& r, const device::DeviceCatalog& devices, std::vector<std::string>& assumptions) {
  // Issue 15 (pp35): a list of cards is fit's heterogeneous pipeline (one card per stage); plan's rows put every rank on
  // one kind of card, so it says where the list is taken instead of calling it an unknown device.
  if (const auto names = split(r.device.value_or(""), ','); names.size() > 1)
    return make_error(ErrorKind::invalid_argument,
                      fmt::format("--device: '{}' names {} cards; plan sizes every layout on one kind of card (plan MODEL --devices {} compares them "
                                  "one by one); pipeline stages on different cards are sized by fit, logs and validate: preflight fit MODEL --device {} "
                                  "--pipeline-parallel-size {}",
                                  one_line(*r.device, 120), names.size(), one_line(*r.device, 120), one_line(*r.device, 120), names.size()));
  deploy::DeviceInput input{r.device.value_or(""), "--device", deploy::DeviceForm::name, std::nullopt, r.platform.value_or("")};
  if (r.device_memory) {
    PF_TRY(bytes, device::parse_memory_size(*r.device_memory, "--device-memory"));
    input.memory_bytes = bytes;
  }
  return deploy::resolve_device(input, devices, assumptions);
}

// Issue 16 (llamacpp30): the host CPU's memory is what this host has free now (MemAvailable), as fit --device cpu reads it,
// not the catalogue's 16 GiB placeholder; --device-memory replaces it as for any device.
void host_memory(device::DeviceSpec& d, const PlanRequest& r, std::vector<std::string>& assumptions) {
  if (d.id != "cpu" || r.device_memory) return;
  const auto available = meminfo_bytes("MemAvailable");
  if (!available) return;
  d.memory_bytes = *available;
  d.runtime_total_bytes = *available;
  assumptions.push_back(fmt::format("cpu: host memory {:.2f} GiB, MemAvailable in /proc/meminfo now (--device-memory replaces it)", *available / 1073741824.0));
}

// The devices `plan MODEL` sizes for: --devices, --device / --device-memory, else every catalogue accelerator with a
// bandwidth; the host CPU's memory as this host has it free (host_memory).
Expected<std::vector<device::DeviceSpec>> plan_devices(const PlanRequest& r, const device::DeviceCatalog& devices, std::vector<std::string>& device_assumptions) {
  std::vector<device::DeviceSpec> list;
  if (r.devices) {
    std::vector<std::string> given;
    for (const auto& name : split(*r.devices, ',')) {
      // user36: each name resolved as --device resolves it, so that an ambiguous one ("H100", "910B") says which card it
      // stands for and a sized one ("Ascend 910B 32GB") or a total ("29.49 GiB total capacity") is taken as fit takes it.
      auto dev = deploy::resolve_device({trim(name), "--devices", deploy::DeviceForm::name}, devices, device_assumptions);
      if (!dev) return dev.error();
      // Issue 19 (attack37): a card named twice ("H100,H100", "H100,H100-SXM") was planned twice, every row repeated:
      // 10,000 copies of one name took 6 s and printed 10,000 identical rows, exit 0.
      for (size_t i = 0; i < list.size(); ++i)
        if (list[i].id == dev->id)
          return make_error(ErrorKind::invalid_argument,
                            fmt::format("--devices: '{}' (entry {}) names {}, as '{}' (entry {}) does; list each card once", one_line(trim(name), 80), given.size() + 1,
                                        dev->id, one_line(given[i], 80), i + 1));
      host_memory(*dev, r, device_assumptions);
      list.push_back(*dev);
      given.push_back(trim(name));
    }
  } else if (r.device || r.device_memory) {
    auto dev = plan_device(r, devices, device_assumptions);
    if (!dev) return dev.error();
    host_memory(*dev, r, device_assumptions);
    list.push_back(*dev);
  } else {
    for (const auto& d : devices.devices)
      if ((d.platform == "npu" || d.platform == "cuda" || d.platform == "rocm") && (d.hbm_bandwidth_bytes_per_s || d.measured_copy_bandwidth_bytes_per_s)) list.push_back(d);
  }
  return list;
}

std::vector<Option> plan_options(PlanRequest& r) {
  return join({{text_flag("device", "D", r.device, "the device of the first form (catalogue id or alias)"),
                text_flag("devices", "D1,D2", r.devices, "devices to size the model for (default: every catalogue accelerator)"),
                text_flag("device-memory", "SIZE", r.device_memory, "memory as the runtime reports it (24GiB): replaces --device's, or alone a\ngeneric card of --platform"),
                text_flag("platform", "P", r.platform, "with --device-memory alone: cuda (default), npu, rocm or cpu", {"cuda", "npu", "rocm", "cpu"}),
                given_int("num-devices", "N", r.num_devices, "devices of the first form (default 1)"),
                int_flag("max-devices", "N", r.max_devices, {1, 1024}, "the most devices tried per layout (default 16)"),
                text_flag("model", "GLOB", r.model_filter, "with --device: only the catalogue models whose id or an alias matches ('Qwen/Qwen3*')"),
                text_flag("variant", "NAME", r.variant, "only this quantized variant (the names fit --variant takes; bf16 = as published)")},
               under("targets:", {int_flag("context", "L", r.context, {1, INT64_MAX},
                                           "context per request (default: 32768, or the model's maximum if smaller); above\n"
                                           "vLLM's derived max_model_len refused as fit refuses it, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"),
                                  int_flag("concurrency", "C", r.concurrency, {1, INT64_MAX}, "streams at once (default 1)"),
                                  int_flag("host-cores", "N", r.host_cores, {1, 4096}, "the host's physical cores: a CPU row's llama-server passes -t N\n(default: none, llama.cpp's own count of this host's cores)"),
                                  real_flag("min-tok-s", "S", r.min_tok_s, {}, "slowest acceptable per-stream decode"),
                                  text_flag("engine", "E[@VERSION]", r.engine, "vllm, vllm-ascend, llama.cpp or mindie, optionally a version"),
                                  text_flag("engine-version", "V", r.engine_version, k_engine_version_help),
                                  given_real("gpu-memory-utilization", "U", r.gpu_memory_utilization, "fraction of device memory the engine may use, in (0, 1]"),
                                  given_json_text("speculative-config", "JSON", r.speculative_config,
                                             "vLLM's, as fit takes it: every row sized with the drafter, started with the flag;\n"
                                             "a drafter \"model\" with --device needs --model selecting one catalogue model"),
                                  given_text("dtype", "D", r.flags.dtype,
                                             "as fit takes it (auto|half|float16|bfloat16|float|float32): every row's model in that dtype,\n"
                                             "started with --dtype D; a card without it refused as fit refuses it"),
                                  compilation_config_option(r.flags), optimization_level_option(r.flags), decode_context_parallel_option(r.flags),
                                  given_text("attention-backend", "B", r.flags.attention_backend, "as fit takes it (FLASHINFER with speculative decoding: PIECEWISE graphs)"),
                                  given_text("interconnect", "I", r.flags.interconnect,
                                             "as fit takes it: nvswitch|nvlink-direct|pcie|network for every row (unset: each card's\nform factor decides; sizes the NCCL buffers vLLM < 0.11 counts)"),
                                  int_flag("decode-context", "C", r.decode_context, {1, INT64_MAX}, "context at which speed is quoted (default: the context target)"),
                                  real_flag("bandwidth", "GB/s", r.bandwidth_gb_s, k_bandwidth_range,
                                            "measured copy bandwidth (else `preflight bw --save`, else the catalogue)"),
                                  text_flag("workload", "chat|agent", r.workload, "agent: the start command adds the model family's tool-call and\nreasoning parsers",
                                            {"chat", "agent"})}),
               under("engine settings, as fit takes them (every row sized and started with them; the layout, --tensor-parallel-size,\n"
                     "--pipeline-parallel-size, --data-parallel-size, nodes and --quantization, is what plan chooses):",
                     engine_setting_options({r.flags, r.engine_build})),
               under("output:", {switch_flag("all", r.all, "also list the candidates that were rejected, with the reason"),
                                 switch_flag("markdown", r.markdown, "the table as Markdown"), json_flag(r.json),
                                 text_flag("kubernetes", "FILE", r.kubernetes, "write Kubernetes manifests of the first candidate: Deployment + Service,\nor a LeaderWorkerSet + Service when it spans nodes"),
                                 text_flag("image", "IMAGE", r.image, "with --kubernetes: the container image (default: the engine's published one)"),
                                 int_flag("data-parallel", "N", r.data_parallel, {1, 4096}, "start the first candidate as N replicas with vLLM's native data parallel\n(per-node commands, no Ray)"),
                                 switch_flag("expert-parallel", r.expert_parallel, "with --data-parallel: --enable-expert-parallel (MoE)"),
                                 switch_flag("commands", r.commands, "the start commands of every row shown, not only the first (--json: every row's \"launch\",\nnull on a rejected row, whose \"reason\" says why it does not run)")}),
               model_options(r.model), serve_line_options(r.serve_line)});
}

const CommandText k_plan_text{
    R"(usage: preflight plan --device D [--num-devices N] [targets] [--markdown|--json] [--all]
       preflight plan MODEL [--devices 910B4,910B3,H100] [--max-devices 16] [targets] [--markdown|--json])",
    R"(What a device runs (every catalogue model that fits, ranked biggest first), or what a model needs (the
cheapest device count, layout and quantization per device), each with its KV tokens, concurrency, decode
speed and a ready-to-run start command (environment, vLLM flags, multi-node Ray lines). MoE models also get a
DP+EP row (replicas with --enable-expert-parallel) where it is cheaper: fewer devices, or more requests at once.)",
    R"(MODEL: as fit takes it; the hub id of a published quantized checkpoint (vllm-ascend/Qwen3-32B-W8A8) with no copy here
is planned as its base model in the variant it is published in, every row starting that checkpoint.)",
    R"(exit: 0 something fits, 1 nothing fits (every row rejected: too large, the engine rejects the
      variant on that card, or no command produces its checkpoint; each rejected row says why, see --all),
      2 bad input (as fit: a flag out of range names the flag, a flag given twice; plan MODEL --context above the model's derived
      length, vLLM's ValueError, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; --hccl-buffsize or
      --npu-driver-version with no NPU to plan on; a vLLM engine setting with --engine llama.cpp; a FIFO or directory
      named by --kubernetes), 3 network or environment failure (hub unreachable, timeout, a --kubernetes file that
      cannot be written))"};

}  // namespace

CommandHelp plan_help() {
  static PlanRequest scratch;
  return {k_plan_text, plan_options(scratch)};
}

std::vector<Option> speed_options(SpeedFlags& f) {
  return under("speed:", {int_list_flag("concurrency", "1,4,16", f.concurrency, {1, 1000000}, "streams to predict"),
                          int_flag("input-len", "I", f.input_len, {1, INT64_MAX}, "prompt length for TTFT (default 1024)"),
                          int_flag("decode-context", "C", f.decode_context, {1, INT64_MAX}, "context during decode"),
                          real_flag("bandwidth", "GB/s", f.bandwidth_gb_s, k_bandwidth_range, "measured copy bandwidth"),
                          int_flag("nodes", "N", f.nodes, {1, 4096}, "nodes the devices span (devices per node = TP x PP / N)"),
                          text_flag("engine-version", "V", f.engine_version, k_engine_version_help)});
}

Expected<estimate::SpeedEstimate> speed_for_fit(const SpeedFlags& f, const model::ModelSpec& model, const device::DeviceSpec& device,
                                                const engine::EngineProfile& engine, const estimate::Deployment& d, const estimate::FitEstimate& fit) {
  PF_TRY(speeds, engine::load_speed_catalog());
  const engine::SpeedProfile* sp = speeds.find(engine.engine, device.platform, device.id);
  if (!sp) return make_error(ErrorKind::not_found, "no speed profile for " + engine.engine + " on " + device.platform + " in data/engines/speed.json");
  estimate::SpeedWorkload w;
  if (f.concurrency) {
    w.concurrency = *f.concurrency;
  } else {
    w.concurrency = {1};
    for (int64_t n = 4; n <= std::max<int64_t>(1, static_cast<int64_t>(fit.max_concurrency * 1.0001)) && n <= fit.max_num_seqs; n *= 4) w.concurrency.push_back(n);
  }
  // ux31: a 1,024-token prompt where max_model_len is shorter is one vLLM refuses: the prefill is min(1,024, max_model_len).
  w.input_tokens = f.input_len.value_or(std::min<int64_t>(1024, std::max<int64_t>(1, fit.max_model_len)));
  // Issue 20: decode at the context asked for (--max-model-len), else 1,024 tokens (no context was asked for).
  w.context_tokens = f.decode_context.value_or(d.max_model_len ? std::max<int64_t>(1, *d.max_model_len) : std::min<int64_t>(1024, std::max<int64_t>(1, fit.max_model_len)));
  // Issue 19 (hard35): no request vLLM serves is longer than max_model_len (vllm/v1/engine/processor.py refuses a longer
  // prompt: "The decoder prompt (length N) is longer than the maximum model length of M."): `--input-len 2^62` printed
  // a TTFT of 10^31 ms, `--decode-context 2^62` a decode step of 2.6 x 10^14 ms, both exit 0.
  if (fit.max_model_len > 0)
    for (const auto& [flag, value] : {std::pair{"--input-len", f.input_len}, std::pair{"--decode-context", f.decode_context}})
      if (value && *value > fit.max_model_len)
        return make_error(ErrorKind::invalid_argument,
                          fmt::format("{} {}: longer than max_model_len {}, and no request is (vLLM refuses a longer prompt: 'The decoder prompt (length {}) is "
                                      "longer than the maximum model length of {}.'); give at most {}, or a longer --max-model-len",
                                      flag, *value, fit.max_model_len, *value, fit.max_model_len, fit.max_model_len),
                          flag);
  if (f.bandwidth_gb_s) w.bandwidth_bytes_per_s = *f.bandwidth_gb_s * 1e9;
  w.devices_per_node = device.node_devices();  // ux29: the card's server (an Atlas 800 A3 holds 16 dies)
  if (f.nodes) {  // issue 20: the ranks split evenly over the nodes named; past one node the NIC carries the collectives
    const int64_t ranks = std::max<int64_t>(1, fit.tensor_parallel_size) * std::max<int64_t>(1, fit.pipeline_parallel_size);
    // Issue 15 (ux29): a node count the ranks do not fill evenly, or more nodes than ranks, sized a layout nobody can
    // start (32 ranks over 3 nodes became nodes of 11 devices; 64 nodes for 32 ranks, nodes of one device), exit 0.
    if (*f.nodes > ranks || ranks % *f.nodes != 0)
      return make_error(ErrorKind::invalid_argument,
                        fmt::format("--nodes {}: {} the {} ranks (TP {} x PP {}); give a node count that divides them (each node runs the same number of ranks)",
                                    *f.nodes, *f.nodes > ranks ? "more nodes than" : "does not divide", ranks, std::max<int64_t>(1, fit.tensor_parallel_size),
                                    std::max<int64_t>(1, fit.pipeline_parallel_size)),
                        "--nodes");
    w.devices_per_node = ranks / *f.nodes;
  }
  if (f.engine_version) w.engine_version = *f.engine_version;
  return estimate::estimate_speed(model, device, *sp, speeds, d, fit, w);
}

std::optional<std::string> graph_mode_note(const estimate::SpeedEstimate& speed, const SpeedFlags& f, const model::ModelSpec& model,
                                           const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& overheads,
                                           const estimate::Deployment& d, const estimate::FitEstimate& fit) {
  if (d.mode != estimate::ExecutionMode::eager || speed.single_stream_tokens_per_s <= 0) return std::nullopt;
  estimate::Deployment graph = d;
  graph.mode = estimate::ExecutionMode::graph;
  // cudagraph_mode NONE or -O0 is what made it eager: the graph run takes the version's capture defaults.
  if (graph.graph_capture.mode == estimate::CudagraphMode::none) graph.graph_capture.mode.reset();
  if (graph.graph_capture.optimization_level == 0) graph.graph_capture.optimization_level.reset();
  auto graph_fit = estimate::try_estimate_fit(model, device, engine, overheads, graph);
  if (!graph_fit || !graph_fit->fits) return std::nullopt;
  auto graph_speed = speed_for_fit(f, model, device, engine, graph, *graph_fit);
  if (!graph_speed || graph_speed->mode != "graph" || graph_speed->single_stream_tokens_per_s <= 0) return std::nullopt;
  return fmt::format(
      "eager: every decode step dispatches its operators one by one from Python; in graph mode (the engine's default: drop --enforce-eager, cudagraph_mode NONE or -O0) the same deployment "
      "decodes {:.1f} tok/s single stream ({:.1f}x) for {:.2f} GiB of graph capture memory, KV cache {} tokens (eager: {}); a figure measured eager says little "
      "about the card (shared/seeds/001 section 5: Qwen3-VL-8B on a 910B3 decoded 10.3 tok/s eager and 58.9 in graph mode)",
      graph_speed->single_stream_tokens_per_s, graph_speed->single_stream_tokens_per_s / speed.single_stream_tokens_per_s, graph_fit->graph_bytes / k_gib,
      with_thousands(graph_fit->kv_tokens), with_thousands(fit.kv_tokens));
}

namespace {

// --data-parallel N: the first candidate's start as N native data-parallel replicas over its card's nodes (ux29: a node
// is the card's server, devices.json devices_per_node; it was 8 for every card).
Expected<plan::Launch> data_parallel_start(const plan::Candidate& top, const device::DeviceCatalog& devices, const PlanRequest& r) {
  PF_TRY(dev, device::find_device(devices, top.device_id));
  return plan::with_data_parallel(top, dev.node_devices(), {.size = *r.data_parallel, .expert_parallel = r.expert_parallel});
}

// --data-parallel N [--expert-parallel]: plan's own DP+EP rows step aside and the first TP/PP row is started as N
// replicas (issue 15). Issue 15 (dpep33): the row is then the layout those commands start, N x TP x PP devices, each
// rank sized as fit sizes `--data-parallel-size N [--enable-expert-parallel]` (experts over DP x TP ranks, every replica
// its own KV cache and printed lines; plan::data_parallel_row); it printed one replica without EP. A start the row cannot
// have (a replica across nodes, N not filling the nodes) is bad input; N replicas that do not meet the targets leave no
// recommended row, that one rejected with its reason.
Status start_data_parallel(plan::PlanResult& result, std::span<const model::ModelSpec> models, std::span<const device::DeviceSpec> planned,
                           const device::DeviceCatalog& devices, const plan::PlanInputs& in, const plan::PlanTargets& t, const PlanRequest& r) {
  std::erase_if(result.recommended, [](const plan::Candidate& c) { return c.data_parallel_size > 1; });
  result.assumptions.push_back("--data-parallel: the start is replicas of the first TP/PP row; plan's own DP+EP rows are not listed");
  if (result.recommended.empty()) return Ok{};
  const plan::Candidate& top = result.recommended.front();
  PF_TRY(start, data_parallel_start(top, devices, r));
  const auto m = std::find_if(models.begin(), models.end(), [&](const model::ModelSpec& x) { return x.id == top.model_id; });
  const auto dev = std::find_if(planned.begin(), planned.end(), [&](const device::DeviceSpec& x) { return x.id == top.device_id; });
  if (m == models.end() || dev == planned.end()) {  // not reached: every row is of a planned model and device
    result.recommended.front().launch = std::move(start);
    return Ok{};
  }
  const int64_t dp = *r.data_parallel;
  plan::Candidate sized = plan::data_parallel_row(*m, *dev, in, top,
                                                  {.num_devices = dp * top.tensor_parallel_size * top.pipeline_parallel_size,
                                                   .data_parallel_size = dp,
                                                   .tensor_parallel_size = top.tensor_parallel_size,
                                                   .pipeline_parallel_size = top.pipeline_parallel_size,
                                                   .expert_parallel = r.expert_parallel},
                                                  t);
  if (sized.meets) {
    sized.launch = std::move(start);
    result.recommended.front() = std::move(sized);
    return Ok{};
  }
  result.assumptions.push_back(fmt::format("--data-parallel {}: the first row ({}, {} on {} x {}) started as {} replicas does not meet the targets; no other row is "
                                           "started as replicas, so none is recommended",
                                           dp, top.model_id.str(), top.variant.str(), top.num_devices, top.device_id.str(), dp));
  result.rejected.push_back(std::move(sized));
  result.recommended.clear();
  return Ok{};
}

// --kubernetes: the first candidate's manifests as YAML in `path`; what was written, for --json.
Expected<Json> write_kubernetes(const plan::Candidate& top, const device::DeviceCatalog& devices, const std::string& path, const std::string& image,
                                int64_t data_parallel) {
  PF_TRY(dev, device::find_device(devices, top.device_id));
  const auto m = plan::build_kubernetes(top, {.image = image, .platform = dev.platform, .devices_per_node = dev.node_devices(), .data_parallel_size = data_parallel});
  // Issue 19: replaced whole or not at all, never through a FIFO (an ofstream waited on one forever).
  PF_TRY(written, write_text_file_atomically(path, report::render_yaml_documents(m.objects, m.notes)));
  (void)written;
  std::string kinds;
  for (const auto& o : m.objects) kinds += (kinds.empty() ? "" : " + ") + o["kind"].get<std::string>();
  return Json{{"file", path}, {"kinds", kinds}, {"objects", m.objects}, {"notes", m.notes}};
}

// Issue 15: --speculative-config, parsed and its drafter resolved as fit resolves them (deploy::deployment_from_flags;
// the drafter's config from the catalogue, --models or the hub cache): the targets size every candidate with it and
// the start commands carry the text exactly. llama.cpp takes no such flag.
Status apply_speculative(const PlanRequest& r, const ModelArgOptions& ro, plan::PlanInputs& in, plan::PlanTargets& t) {
  // Issue 15: the capture settings, checked and parsed as fit does (one set of messages); the JSON goes into the commands.
  // Issue 15/16 (nccl): --interconnect, checked as fit checks it.
  if (r.flags.interconnect) {
    PF_TRY(g, deploy::deployment_from_flags(r.flags));
    t.interconnect = g.interconnect;
  }
  if (r.flags.compilation_config || r.flags.optimization_level || r.flags.attention_backend) {
    // Issue 19: a name vLLM's attention-backend enum lacks, refused as fit refuses it (the engine named, else vLLM).
    if (const auto& b = r.flags.attention_backend) {
      PF_TRY(names, engine::load_attention_backends());
      const auto [engine_name, version_text] =
          !trim(in.engine).empty() ? engine::split_engine_text(in.engine, in.engine_version) : std::pair<std::string, std::string>{"vllm", in.engine_version};
      // Issue 15 (eng31): the names of the version plan runs (the version given, else the newest).
      const std::optional<engine::Version> version = trim(version_text).empty() ? std::nullopt : engine::parse_version(version_text, engine_name);
      PF_TRY(known, engine::check_attention_backend_of(names, engine_name, version, b->value, b->origin));
      (void)known;
    }
    PF_TRY(g, deploy::deployment_from_flags(r.flags));
    t.graph_capture = g.graph_capture;
    if (r.flags.compilation_config) in.compilation_config = r.flags.compilation_config->value;
  }
  if (!r.speculative_config) return Ok{};
  if (r.engine && starts_with(to_lower(*r.engine), "llama.cpp"))
    return make_error(ErrorKind::invalid_argument, "--speculative-config: vLLM's flag; llama-server takes its draft model as --model-draft, which plan does not size");
  deploy::Flags f;
  f.speculative_config = r.speculative_config;
  f.drafter_model_dirs = ro.extra_model_dirs;
  PF_TRY(d, deploy::deployment_from_flags(f));
  t.speculative = d.speculative;
  in.speculative_config = r.speculative_config->value;
  return Ok{};
}

// Why `dev` cannot take the engine settings asked for, as fit refuses them, or "": a setting only an Ascend NPU reads
// (plan28), a --kv-cache-dtype the engine plan selects for the card takes but cannot run (issue 15, v0eng29).
std::string setting_refusal(const plan::PlanInputs& in, const plan::PlanTargets& t, const device::DeviceSpec& dev) {
  if (std::string why = deploy::npu_only_setting_refusal(t.engine_settings, dev); !why.empty()) return why;
  if (std::string why = deploy::model_dtype_refusal(t.model_dtype, "--dtype", dev); !why.empty()) return why;  // planq32
  if (t.engine_settings.kv_cache_dtype.empty()) return {};
  const auto eng = plan::plan_engine(in, dev);
  return eng ? deploy::kv_cache_dtype_refusal(*eng, dev, t.engine_settings.kv_cache_dtype, "--kv-cache-dtype") : std::string();
}

// Issue 16 (planq32): plan --dtype D, as fit's deploy::resolve_deployment applies it: the model is built in D (weights a
// quantization method does not pack, activations, an auto KV cache); the cast said once in the assumptions.
void with_model_dtype(model::ModelSpec& m, const plan::PlanTargets& t, std::vector<std::string>& assumptions) {
  const auto dtype = t.model_dtype.empty() ? std::nullopt : deploy::model_dtype_flag(t.model_dtype);
  if (!dtype || *dtype == m.dtype) return;
  const std::string note = fmt::format("--dtype {}: the model is cast to {} (weights a quantization method does not pack, activations, an auto KV cache)",
                                       t.model_dtype, model::dtype_name(*dtype));
  if (std::find(assumptions.begin(), assumptions.end(), note) == assumptions.end()) assumptions.push_back(note);
  m.dtype = *dtype;
}

// Issue 15/16 (plan28): the engine settings fit takes, read as fit reads them: --engine-build parsed onto the engine,
// the settings turned into every row's deployment (deploy::deployment_from_flags) and into its start command
// (engine_setting_args); VLLM_ALLOW_LONG_MAX_MODEL_LEN from the environment, as fit reads it.
Status apply_engine_settings(const PlanRequest& r, plan::PlanInputs& in, plan::PlanTargets& t) {
  if (r.engine_build) {
    PF_TRY(build, engine::parse_engine_build(*r.engine_build, "--engine-build"));
    in.engine_build = build;
    in.engine_build_origin = "--engine-build";
  }
  in.engine_args = engine_setting_args(r.flags);
  // Issue 16 (planq32): --dtype (checked by deploy::check_flags); auto is the config's, as without the flag.
  if (r.flags.dtype && deploy::model_dtype_flag(r.flags.dtype->value)) {
    t.model_dtype = to_lower(trim(r.flags.dtype->value));
    in.engine_args.serve_args.push_back("--dtype " + t.model_dtype);
  }
  // planq32: --host, --port, --served-model-name, --trust-remote-code, --additional-config as given (no number changes).
  in.engine_args.serve_args.insert(in.engine_args.serve_args.end(), r.serve_line.serve_args.begin(), r.serve_line.serve_args.end());
  PF_TRY(settings, deploy::deployment_from_flags(r.flags));
  t.engine_settings = std::move(settings);
  in.kv_cache_dtype = t.engine_settings.kv_cache_dtype;  // issue 15 (eng31): what vLLM's V1 oracle reads on each card
  if (r.flags.attention_backend) in.attention_backend = r.flags.attention_backend->value;
  t.long_max_model_len = deploy::long_max_model_len_from_env(std::getenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN"));
  return Ok{};
}


// quant34 (issue 16): plan's MODEL, resolved as fit's (cli/model_arg): a published quantized checkpoint's hub id is its base
// model planned in the variant it is published in (`in.variant`), whose rows start that checkpoint; said in `assumptions`.
Expected<ModelArgResolution> plan_model(const std::string& arg, const PlanRequest& r, const ModelArgOptions& ro, plan::PlanInputs& in,
                                        std::vector<std::string>& assumptions) {
  PF_TRY(resolved, resolve_model_or_checkpoint(arg, ro));
  if (const auto& published = resolved.published) {
    PF_TRY(own, published_checkpoint_variant(*published, arg, r.variant, std::nullopt));
    const auto& catalog = model::load_variant_catalog();
    if (!catalog) return catalog.error();
    PF_TRY(v, model::find_variant(*catalog, own));
    in.variant = v->id;
    assumptions.push_back(published->assumption);
  }
  return resolved;
}

}  // namespace

// --kubernetes: the manifests of the first recommended row, written to the file (null when not asked or nothing fits).
Expected<Json> plan_manifests(const PlanRequest& r, const plan::PlanResult& result, const device::DeviceCatalog& devices) {
  if (!r.kubernetes) return Json();
  if (result.recommended.empty()) {  // issue 19: said, so that an older file there is not taken for this plan's manifests
    std::fprintf(stderr, "preflight: --kubernetes: no candidate fits, nothing written to %s (a file there is left as it was)\n", strip_terminal_controls(*r.kubernetes).c_str());
    return Json();
  }
  const auto& top = result.recommended.front();  // a DP+EP row: its replica and its DP size (issue 15)
  return top.data_parallel_size > 1 ? write_kubernetes(plan::dp_replica(top), devices, *r.kubernetes, r.image.value_or(""), top.data_parallel_size)
                                    : write_kubernetes(top, devices, *r.kubernetes, r.image.value_or(""), r.data_parallel.value_or(1));
}

namespace {

// The two forms of plan (plan --device D, plan MODEL --devices A,B) mixed up: which flag belongs to which, not only the
// usage lines (issue 16, session 30).
Status check_plan_form(const PlanRequest& r, const std::vector<std::string>& positional) {
  if (positional.size() > 1) {
    std::string given;
    for (const auto& p : positional) given += (given.empty() ? "" : " ") + p;
    return make_error(ErrorKind::invalid_argument, fmt::format("plan takes one MODEL, found {} ({}); several cards: plan MODEL --devices A,B; several models on "
                                                               "one card: plan --device D --model 'Qwen/Qwen3*'\n{}",
                                                               positional.size(), one_line(given, 200), command_usage("plan")));
  }
  if (positional.empty() && !r.device && !r.device_memory && r.devices)
    return make_error(ErrorKind::invalid_argument, fmt::format("--devices sizes one MODEL on several cards (plan MODEL --devices {0}); what one card runs is plan "
                                                               "--device D (with --model 'Qwen/Qwen3*' to keep some models)\n{1}",
                                                               one_line(*r.devices, 120), command_usage("plan")));
  if (positional.empty() && !r.device && !r.device_memory) return make_error(ErrorKind::invalid_argument, command_usage("plan"));
  if (r.device && r.devices)
    return make_error(ErrorKind::invalid_argument, positional.empty() ? "--devices belongs to plan MODEL (the cards to size one model on); plan --device D lists what D runs"
                                                                      : "--device and --devices name the same thing in plan MODEL: give the cards once, as --devices A,B");
  return Ok{};
}

}  // namespace

namespace {

// ux31: "nothing meets the targets" named no count that would: the fewest devices up to 64 that do ("16 x H100-SXM
// (--max-devices 16)"), or "" when none does. Run only when a plan found nothing.
std::string fewest_that_meet(const model::ModelSpec& spec, const std::vector<device::DeviceSpec>& list, const plan::PlanInputs& in, const plan::PlanTargets& t,
                             int64_t max_devices) {
  plan::PlanInputs wider_in = in;
  wider_in.detail = plan::RowDetail::table;
  const plan::PlanResult wider = plan::plan_for_model(spec, list, wider_in, t, 64);
  const plan::Candidate* fewest = nullptr;
  for (const auto& c : wider.recommended)
    if (c.num_devices > max_devices && (!fewest || c.num_devices < fewest->num_devices)) fewest = &c;
  return fewest ? fmt::format("{} x {} (--max-devices {})", fewest->num_devices, std::string(fewest->device_id), fewest->num_devices) : std::string();
}

// ux31: a version no profile covers is bad input for every row (exit 2, the flag and the known range named), as in fit;
// arch31: so is a suffixed token count ("4K") the named version's parser takes as a plain integer.
Status check_named_engine(const engine::EngineCatalog& engines, const std::string& engine, const std::string& origin, const deploy::Flags& flags,
                          const ServeLineFlags& serve_line) {
  if (engine.find('@') == std::string::npos) return Ok{};
  auto named = engine::select_engine(engines, engine, "");
  if (!named && named.error().kind == ErrorKind::not_found) {
    Error err = named.error();
    err.context = origin + " " + engine;
    return err;
  }
  if (named) {
    if (const std::string why = human_readable_flag_refusal(flags, *named); !why.empty()) return make_error(ErrorKind::invalid_argument, why);
    if (const std::string why = speculative_flag_version_refusal(flags, *named); !why.empty()) return make_error(ErrorKind::invalid_argument, why);
    if (const std::string why = compilation_config_refusal(flags, *named); !why.empty()) return make_error(ErrorKind::invalid_argument, why);  // hard35b
    if (const std::string why = serve_line_version_refusal(serve_line, *named); !why.empty()) return make_error(ErrorKind::invalid_argument, why);  // ux33
  }
  return Ok{};
}

}  // namespace

namespace {

// The targets every row is held to, as the flags state them.
plan::PlanTargets plan_targets(const PlanRequest& r) {
  plan::PlanTargets t;
  t.context_tokens = r.context;
  t.concurrency = r.concurrency.value_or(1);
  t.min_tokens_per_s = r.min_tok_s;
  t.decode_context_tokens = r.decode_context;
  if (r.bandwidth_gb_s) t.bandwidth_bytes_per_s = *r.bandwidth_gb_s * 1e9;
  if (r.gpu_memory_utilization) t.gpu_memory_utilization = r.gpu_memory_utilization->value;
  // Issue 15 (dcp): every row sized and started with it; rows whose TP the engine refuses it at are rejected with its message.
  if (r.flags.decode_context_parallel_size) t.decode_context_parallel_size = r.flags.decode_context_parallel_size->value;
  return t;
}

}  // namespace

// user36: a layout flag of a pasted `vllm serve` line is what plan chooses per row; said so, not "unknown flag
// --tensor-parallel-size; did you mean --expert-parallel".
Status layout_flag_refusal(const std::vector<std::string>& argv) {
  for (const auto& a : argv) {
    const std::string flag = a.substr(0, a.find('='));
    for (const char* layout : {"--tensor-parallel-size", "-tp", "--pipeline-parallel-size", "-pp", "--data-parallel-size", "-dp", "--quantization", "-q"})
      if (flag == layout)
        return make_error(ErrorKind::invalid_argument,
                          fmt::format("{}: plan chooses the layout (TP, PP, DP) and the quantization of each row itself; size one layout with "
                                      "`preflight fit MODEL --device D {} ...`, or steer plan with --num-devices N, --data-parallel N, "
                                      "--expert-parallel or --variant NAME",
                                      flag, flag),
                          flag);
  }
  return Ok{};
}

int cmd_plan(const std::vector<std::string>& argv) {
  if (mindie_engine_requested(argv)) return cmd_plan_mindie(argv);  // MindIE Service config.json (cli/cmd_mindie)
  // Issue 15/16 (plan28): llama-server takes none of vLLM's engine settings (fit's llama.cpp form does not either).
  if (const std::string setting = first_engine_setting(argv); !setting.empty() && llama_cpp_engine_requested(argv))
    return report_error(make_error(ErrorKind::invalid_argument, fmt::format("{}: vLLM's engine setting; llama-server, which --engine llama.cpp starts, takes no such flag", setting),
                                   setting));
  if (auto layout = layout_flag_refusal(argv); !layout) return report_error(layout.error());
  PlanRequest r;
  auto positional = parse_options(argv, plan_options(r));
  if (!positional) return report_error(positional.error());
  if (auto form = check_plan_form(r, *positional); !form) return report_error(form.error());
  {
    // The same checks as fit, logs and validate (deploy::check_flags), for the flags plan shares with them.
    deploy::Flags shared = r.flags;
    shared.gpu_memory_utilization = r.gpu_memory_utilization;
    shared.num_devices = r.num_devices;
    if (auto checked = deploy::check_flags(shared); !checked) return report_error(checked.error());
  }
  // Issue 19: an image reference has no whitespace or control characters (a newline in it reached the manifests).
  if (r.image && (r.image->empty() || std::any_of(r.image->begin(), r.image->end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; })))
    return report_error(make_error(ErrorKind::invalid_argument, "--image: expected an image reference (registry/name:tag), found " + dump_json(Json(clip_text(*r.image, 120))) +
                                                                    " (empty, or holding a space or control character; quoted as JSON, so a newline shows as \\n)"));
  auto ro = model_arg_options(r.model);
  if (!ro) return report_error(ro.error());
  // Issue 19: `plan --device D` needs D's record alone.
  auto devices = positional->empty() && r.device && !r.device_memory ? device::load_device_catalog_for(*r.device) : device::load_device_catalog();
  if (!devices) return report_error(devices.error());
  auto engines = engine::load_engine_catalog();
  if (!engines) return report_error(engines.error());
  auto speeds = engine::load_speed_catalog();
  if (!speeds) return report_error(speeds.error());
  const auto families = device::load_device_families();
  if (!families) return report_error(families.error());
  auto rules = engine::load_launch_rules(*families);
  if (!rules) return report_error(rules.error());
  plan::PlanInputs in{&*engines, &*speeds, &*rules, r.engine.value_or(""), "", r.workload == "agent" ? plan::Workload::agent : plan::Workload::chat};
  {
    // Issue 15/16 (misc21): --engine-version is --engine E@V's version, as in fit (one meaning, one check).
    deploy::EngineInput e{.engine = in.engine, .origin = "--engine"};
    if (auto version = deploy::apply_engine_version(e, r.engine_version, "--engine-version"); !version) return report_error(version.error());
    in.engine = e.engine;
    in.engine_version = e.version;
    // quant34: plan's --speculative-config is not checked as a flag of the named version: each row's command writes it in
    // the form that version takes (V0's flags before vLLM 0.8.2), or the plan refuses it (speculative_form_refusal).
    if (auto ok = check_named_engine(*engines, in.engine, e.origin, r.flags, r.serve_line); !ok) return report_error(ok.error());
  }
  if (r.variant) {
    // An unknown name is bad input (exit 2, the known names listed), as in fit --variant.
    const auto& catalog = model::load_variant_catalog();
    if (!catalog) return report_error(catalog.error());
    auto v = model::find_variant(*catalog, *r.variant);
    if (!v) return report_error(v.error());
    in.variant = (*v)->id;
  }
  // The table prints one start command, no speed text; --json and --commands print every row's (issue 16).
  in.detail = r.json || r.commands ? plan::RowDetail::every_row : plan::RowDetail::table;
  in.threads = 0;
  plan::PlanTargets t = plan_targets(r);
  if (auto s = apply_speculative(r, *ro, in, t); !s) return report_error(s.error());
  if (auto s = apply_engine_settings(r, in, t); !s) return report_error(s.error());
  if (r.data_parallel) in.data_parallel_replicas = *r.data_parallel;
  if (r.host_cores) in.host_cores = *r.host_cores;  // ux28: replicas over nodes export each node's interface
  const size_t rows = r.all ? static_cast<size_t>(-1) : 15;
  const auto table = r.markdown ? report::PlanFormat::markdown : report::PlanFormat::text;
  const std::string context = t.context_tokens ? with_thousands(*t.context_tokens) : "min(32,768, model max)";
  const std::string min_speed = t.min_tokens_per_s ? fmt::format(", at least {:.1f} tok/s per stream", *t.min_tokens_per_s) : "";

  plan::PlanResult result;
  std::string question;
  std::vector<model::ModelSpec> planned_models;  // what was planned, for --data-parallel's row (start_data_parallel)
  std::vector<device::DeviceSpec> planned_devices;
  std::vector<std::string> device_assumptions;
  if (positional->empty()) {
    auto dev = plan_device(r, *devices, device_assumptions);
    if (!dev) return report_error(dev.error());
    host_memory(*dev, r, device_assumptions);
    if (const std::string why = setting_refusal(in, t, *dev); !why.empty()) return report_error(make_error(ErrorKind::invalid_argument, why));
    std::vector<model::ModelSpec> models = catalogue_models(r);
    for (auto& m : models) with_model_dtype(m, t, device_assumptions);
    if (r.model_filter && models.empty()) {
      return report_error(make_error(ErrorKind::invalid_argument, fmt::format("--model: '{}' matches no catalogue model (see `preflight models`)", one_line(*r.model_filter, 120))));
    }
    auto refused = refuse_speculative(models, *dev, in, t);
    if (!refused) return report_error(refused.error());
    const int64_t n = r.num_devices ? r.num_devices->value : 1;
    if (isatty(STDERR_FILENO)) fmt::print(stderr, "planning {} catalogue models on {} x {}...\n", models.size(), n, dev->id);
    result = plan::plan_for_device(models, *dev, n, in, t);
    if (n > 1) plan::add_dp_ep_rows_for_device(result, models, *dev, in, t);  // issue 15: MoE DP+EP rows where cheaper
    result.rejected.insert(result.rejected.end(), refused->begin(), refused->end());
    question = fmt::format("what {} x {} runs (context {}, concurrency {}{})", n, dev->id, context, t.concurrency, min_speed);
    if (r.data_parallel) {
      planned_models = std::move(models);
      planned_devices.push_back(std::move(*dev));
    }
  } else {
    if (r.model_filter) return report_error(make_error(ErrorKind::invalid_argument, "--model filters the catalogue in the `plan --device D` form; here MODEL names the model"));
    auto resolved = plan_model((*positional)[0], r, *ro, in, device_assumptions);
    if (!resolved) return report_error(resolved.error());
    model::ModelSpec* spec = &resolved->spec;
    with_model_dtype(*spec, t, device_assumptions);
    if (const auto why = plan::speculative_rejection(*spec, t.speculative); !why.empty()) return report_error(make_error(ErrorKind::invalid_argument, "--speculative-config: " + why));
    // Issue 15/16 (plan28): a --context above the model's derived length is refused as fit refuses --max-model-len
    // (vLLM's ValueError, exit 2), or sized with VLLM_ALLOW_LONG_MAX_MODEL_LEN set, which the assumptions say.
    // Issue 16 (llamacpp31): not for llama.cpp, which warns and starts (plan/llama_rows: llama_ctx_train_warning).
    if (r.context && plan::refuses_long_context(engine::split_engine_text(in.engine, "").first))
      if (auto ok = deploy::check_max_model_len(*spec, deploy::Given<int64_t>{*r.context, "--context"}, t.long_max_model_len, device_assumptions); !ok)
        return report_error(ok.error());
    auto listed = plan_devices(r, *devices, device_assumptions);
    if (!listed) return report_error(listed.error());
    std::vector<device::DeviceSpec>& list = *listed;
    if (auto ok = check_speculative_form(in, *spec, list); !ok) return report_error(ok.error());
    // Issue 15/16 (plan28), 15 (v0eng29): settings no device can take (an Ascend-only setting and no NPU, a KV cache dtype
    // no device's engine runs): they can never apply, as in fit.
    if (!list.empty() && std::none_of(list.begin(), list.end(), [&](const device::DeviceSpec& d) { return setting_refusal(in, t, d).empty(); }))
      return report_error(make_error(ErrorKind::invalid_argument, setting_refusal(in, t, list.front())));
    const int64_t max_devices = r.max_devices.value_or(16);
    result = plan::plan_for_model(*spec, list, in, t, max_devices);
    if (result.recommended.empty() && max_devices < 64) result.fewest_that_meet = fewest_that_meet(*spec, list, in, t, max_devices);
    question = fmt::format("what {} needs (context {}, concurrency {}{})", resolved->published ? resolved->published->repo : spec->id, context, t.concurrency, min_speed);
    if (r.data_parallel) {
      planned_models.push_back(std::move(*spec));
      planned_devices = std::move(list);
    }
  }
  result.assumptions.insert(result.assumptions.end(), device_assumptions.begin(), device_assumptions.end());
  note_speculative(result, t, in.speculative_config);
  if (r.data_parallel)
    if (auto started = start_data_parallel(result, planned_models, planned_devices, *devices, in, t, r); !started) return report_error(started.error());
  auto written = plan_manifests(r, result, *devices);
  if (!written) return report_error(written.error());
  const Json& manifests = *written;
  if (r.json) {
    // Issue 19 (round 11): written row by row, the text dump(2) gives for plan_to_json's tree.
    report::PlanJsonExtras extras;
    if (!manifests.is_null()) extras.top["kubernetes"] = manifests;
    add_speculative_json(extras, result, t, in.speculative_config);
    auto text = report::render_plan_json(result, question, extras);
    if (!text) return report_error(text.error());
    std::cout << *text << "\n";
  } else {
    std::cout << report::render_plan(result, question, table, rows, r.commands ? report::FirstStart::in_commands : report::FirstStart::under_table)
              << (r.commands ? report::render_plan_commands(result, table, rows) : "");
    if (!manifests.is_null()) fmt::print("\nwrote {} ({})\n", *r.kubernetes, manifests["kinds"].get<std::string>());
  }
  return result.recommended.empty() ? k_exit_fail : k_exit_ok;
}

}  // namespace preflight::cli
