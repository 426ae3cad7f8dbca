#include "cli/cmd_mindie.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <iostream>

#include "base/file.hpp"
#include "base/file_mode.hpp"
#include "base/json_writer.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "cli/args.hpp"
#include "cli/common.hpp"
#include "cli/help.hpp"
#include "cli/model_arg.hpp"
#include "deploy/deployment.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/mindie.hpp"
#include "estimate/speed.hpp"
#include "plan/mindie_config.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

const char* k_fit_usage =
    "usage: preflight fit MODEL --device D --engine mindie [--npu-mem-size N] [--world-size N] [--max-seq-len N]\n"
    "         [--max-input-token-len N] [--max-prefill-tokens N] [--max-prefill-batch-size N] [--max-batch-size N]\n"
    "         [--max-iter-times N] [--cache-block-size N] [--npu-memory-fraction F] [--kv-cache-int8] [--num-speculative-tokens N] [--json]";
const char* k_plan_usage =
    "usage: preflight plan MODEL --devices D --engine mindie [--context L] [--concurrency C] [--world-size N]\n"
    "         [--npu-mem-size N] [--cache-block-size N] [--max-iter-times N] [--npu-memory-fraction F] [--num-speculative-tokens N]\n"
    "         [--model-name NAME] [--weight-path DIR] [--config-out DIR] [--json]";

// MindIE's config.json keys as flags; each left unset keeps the catalogue default.
struct MindieFlags {
  std::optional<std::string> device, devices, engine, model_name, weight_path, config_out;
  std::optional<int64_t> npu_mem_size, world_size, max_seq_len, max_input_token_len, max_prefill_tokens, max_prefill_batch_size, max_batch_size,
      max_iter_times, cache_block_size, context, concurrency, num_speculative_tokens;
  std::optional<double> npu_memory_fraction;
  bool kv_cache_int8 = false, json = false;
  ModelFlags model;
};

// ux28: a vLLM user comparing engines types vLLM's flags; each is refused with MindIE's own (exit 2), rather than
// "unknown flag --tensor-parallel-size; did you mean --npu-mem-size".
Option vllm_spelling(const std::string& name, const std::string& value, const std::string& mindie) {
  Option o;
  o.name = name;
  o.value = value;
  o.help = "vLLM's flag: refused, use " + mindie;
  o.set = [name, mindie](const std::string&) -> Status {
    return make_error(ErrorKind::invalid_argument, "--" + name + " is vLLM's flag; with --engine mindie use " + mindie, "--" + name);
  };
  return o;
}

std::vector<Option> mindie_options(MindieFlags& f) {
  const IntRange positive{1, int64_t{1} << 31};
  std::vector<Option> vllm_flags = under("vLLM's spellings (refused with MindIE's own):",
                                         {vllm_spelling("tensor-parallel-size", "N", "--world-size N (ModelConfig.worldSize)"),
                                          vllm_spelling("num-devices", "N", "--world-size N (ModelConfig.worldSize)"),
                                          vllm_spelling("max-model-len", "N", "--max-seq-len N (ModelDeployConfig.maxSeqLen)"),
                                          vllm_spelling("gpu-memory-utilization", "U", "--npu-memory-fraction F (env NPU_MEMORY_FRACTION)"),
                                          vllm_spelling("max-num-seqs", "N", "--max-batch-size N (ScheduleConfig.maxBatchSize)"),
                                          vllm_spelling("max-num-batched-tokens", "N", "--max-prefill-tokens N (ScheduleConfig.maxPrefillTokens)"),
                                          vllm_spelling("kv-cache-dtype", "T", "--kv-cache-int8 (int8 KV) or nothing (model dtype)")});
  return join({{text_flag("device", "D", f.device, "the NPU (catalogue id or alias)"), text_flag("devices", "D", f.devices, "plan: the NPU"),
                text_flag("engine", "mindie", f.engine, "mindie"),
                int_flag("npu-mem-size", "N", f.npu_mem_size, {-1, 2147483647}, "ModelConfig.npuMemSize: GB of KV per card, -1 auto (default -1)"),
                int_flag("world-size", "N", f.world_size, {1, 4096}, "ModelConfig.worldSize: cards of the instance (fit default 1; plan: smallest that fits)"),
                int_flag("max-seq-len", "N", f.max_seq_len, positive, "ModelDeployConfig.maxSeqLen (default 2560)"),
                int_flag("max-input-token-len", "N", f.max_input_token_len, positive, "ModelDeployConfig.maxInputTokenLen (default 2048)"),
                int_flag("max-prefill-tokens", "N", f.max_prefill_tokens, positive, "ScheduleConfig.maxPrefillTokens (default 8192)"),
                int_flag("max-prefill-batch-size", "N", f.max_prefill_batch_size, {0, 5000}, "ScheduleConfig.maxPrefillBatchSize (default 50)"),
                int_flag("max-batch-size", "N", f.max_batch_size, positive, "ScheduleConfig.maxBatchSize (default 200)"),
                int_flag("max-iter-times", "N", f.max_iter_times, positive, "ScheduleConfig.maxIterTimes (default 512)"),
                int_flag("cache-block-size", "N", f.cache_block_size, positive, "ScheduleConfig.cacheBlockSize (default 128)"),
                real_flag("npu-memory-fraction", "F", f.npu_memory_fraction, {.most = 1}, "env NPU_MEMORY_FRACTION (default 0.8)"),
                switch_flag("kv-cache-int8", f.kv_cache_int8, "KV cache int8 (1 byte per element)"),
                int_flag("num-speculative-tokens", "N", f.num_speculative_tokens, {0, 2},
                         "ModelConfig.plugin_params {\"plugin_type\":\"mtp\",\"num_speculative_tokens\":N}: MTP (default 0, off)"),
                int_flag("context", "L", f.context, positive, "plan: maxSeqLen (default min(32768, model max))"),
                int_flag("concurrency", "C", f.concurrency, positive, "plan: full-length requests the KV pool must hold (default 1)"),
                text_flag("model-name", "NAME", f.model_name, "plan: ModelConfig.modelName (default: from the model id)"),
                text_flag("weight-path", "DIR", f.weight_path, "plan: ModelConfig.modelWeightPath (default /home/weight/NAME)"),
                text_flag("config-out", "DIR", f.config_out, "plan: write config.json and start.sh there"), json_flag(f.json)},
               model_options(f.model), vllm_flags});
}

estimate::MindieOptions options_from(const MindieFlags& f, const estimate::MindieCatalog& catalog) {
  auto o = estimate::mindie_default_options(catalog);
  for (const auto& [value, field] : std::vector<std::pair<const std::optional<int64_t>*, int64_t*>>{
           {&f.npu_mem_size, &o.npu_mem_size}, {&f.world_size, &o.world_size}, {&f.max_seq_len, &o.max_seq_len},
           {&f.max_input_token_len, &o.max_input_token_len}, {&f.max_prefill_tokens, &o.max_prefill_tokens},
           {&f.max_prefill_batch_size, &o.max_prefill_batch_size}, {&f.max_batch_size, &o.max_batch_size}, {&f.max_iter_times, &o.max_iter_times},
           {&f.cache_block_size, &o.cache_block_size}, {&f.num_speculative_tokens, &o.num_speculative_tokens}}) {
    if (*value) *field = **value;
  }
  if (f.npu_memory_fraction) o.npu_memory_fraction = *f.npu_memory_fraction;
  if (f.kv_cache_int8) o.kv_cache_dtype_bytes = 1;
  return o;
}

Json estimate_json(const estimate::MindieEstimate& e, const estimate::MindieOptions& o) {
  return {{"npuMemSize", o.npu_mem_size},
          {"worldSize", o.world_size},
          {"cacheBlockSize", o.cache_block_size},
          {"maxSeqLen", o.max_seq_len},
          {"maxBatchSize", o.max_batch_size},
          {"npu_memory_fraction", o.npu_memory_fraction},
          {"input_tokens", e.input_tokens},
          {"output_tokens", e.output_tokens},
          {"card_bytes", e.card_bytes},
          {"runtime_total_bytes", e.runtime_total_bytes},
          {"fraction_bytes", e.fraction_bytes},
          {"system_bytes", e.system_bytes},
          {"weight_bytes_per_card", e.weight_bytes},
          {"runtime_bytes", {e.runtime_bytes_low, e.runtime_bytes_high}},
          {"kv_pool_bytes", {e.kv_pool_bytes_low, e.kv_pool_bytes_high}},
          {"kv_bytes_per_token_per_card", e.kv_bytes_per_token},
          {"block_bytes", e.block_bytes},
          {"total_blocks", {e.total_blocks_low, e.total_blocks_high}},
          {"blocks_per_request", e.blocks_per_request},
          {"full_length_requests", {e.batch_low, e.batch_high}},
          {"verdict", estimate::mindie_verdict_name(e.verdict)},
          {"reason", e.reason},
          {"formulas", e.formulas},
          {"warnings", e.warnings},
          {"assumptions", e.assumptions}};
}

std::string render_estimate(const estimate::MindieEstimate& e, const estimate::MindieOptions& o) {
  std::string s;
  s += fmt::format("  npuMemSize {}: KV pool {:.2f} to {:.2f} GiB per card\n", o.npu_mem_size != -1 ? std::to_string(o.npu_mem_size) : e.npu_mem_auto ? std::string("-1 (auto)") : std::string("-1 (multimodal: sized from the config)"),
                   bytes_to_gib(e.kv_pool_bytes_low), bytes_to_gib(e.kv_pool_bytes_high));
  s += fmt::format("  per card: runtime total {:.2f} GiB (card {:.2f}) x NPU_MEMORY_FRACTION {} = {:.2f}; weights {:.2f}; runtime {:.2f} to {:.2f} GiB\n",
                   bytes_to_gib(e.runtime_total_bytes), bytes_to_gib(e.card_bytes), o.npu_memory_fraction, bytes_to_gib(e.fraction_bytes),
                   bytes_to_gib(e.weight_bytes), bytes_to_gib(e.runtime_bytes_low), bytes_to_gib(e.runtime_bytes_high));
  s += fmt::format("  cacheBlockSize {}: block {:.2f} MiB, Total Block Num {} to {}\n", o.cache_block_size, e.block_bytes / k_mib, e.total_blocks_low,
                   e.total_blocks_high);
  s += fmt::format("  maxSeqLen {} (input {}, output {}): {} blocks per request; {} to {} full-length requests (maxBatchSize {})\n", o.max_seq_len, e.input_tokens,
                   e.output_tokens, e.blocks_per_request, e.batch_low, e.batch_high, o.max_batch_size);
  for (const auto& f : e.formulas) s += "    " + f + "\n";
  for (const auto& w : e.warnings) s += "  warning: " + w + "\n";
  for (const auto& a : e.assumptions) s += "  assumption: " + a + "\n";
  return s;
}

struct Resolved {
  model::ModelSpec model;
  device::DeviceSpec device;
  estimate::MindieCatalog catalog;
};

// Issue 16 (mindie34): MindIE's decode speed on the speed catalogue's mindie/npu profile (ATB graph kernels; its own
// constants, data/engines/speed.json), at one stream and at the full-length requests the pessimistic pool holds (at
// most maxBatchSize), decoding at the middle of a full-length request's output. nullopt when the pool holds none.
// mindie35 (the first seed's "MindIE beside vLLM-Ascend on the same model"): the same workload on vLLM-Ascend's profile
// (`vllm-ascend` for `engine`): the same model, cards (TP = worldSize), context and stream counts.
Expected<std::optional<estimate::SpeedEstimate>> decode_speed(const Resolved& r, const estimate::MindieOptions& o, const estimate::MindieEstimate& e,
                                                              const std::string& engine) {
  if (e.verdict == estimate::MindieVerdict::does_not_fit) return std::optional<estimate::SpeedEstimate>();
  PF_TRY(speeds, engine::load_speed_catalog());
  const engine::SpeedProfile* sp = speeds.find(engine, r.device.platform, r.device.id);
  if (!sp) return make_error(ErrorKind::corrupt, "no speed profile for " + engine + " on " + r.device.platform + " in data/engines/speed.json");
  estimate::Deployment d;
  d.tensor_parallel_size = o.world_size;
  d.max_model_len = o.max_seq_len;
  d.kv_cache_dtype = o.kv_cache_dtype_bytes == 1 ? "int8" : "auto";
  estimate::SpeedWorkload w;
  w.context_tokens = e.input_tokens + e.output_tokens / 2;
  w.input_tokens = e.input_tokens;
  w.devices_per_node = r.device.node_devices();
  const int64_t full = std::min(e.batch_low, o.max_batch_size);
  w.concurrency = {1};
  if (full > 1) w.concurrency.push_back(full);
  return std::optional<estimate::SpeedEstimate>(estimate::estimate_speed(r.model, r.device, *sp, speeds, d, w));
}

struct Speeds {
  std::optional<estimate::SpeedEstimate> mindie, vllm_ascend;
};

Expected<Speeds> mindie_speeds(const Resolved& r, const estimate::MindieOptions& o, const estimate::MindieEstimate& e) {
  PF_TRY(m, decode_speed(r, o, e, "mindie"));
  PF_TRY(v, decode_speed(r, o, e, "vllm-ascend"));
  return Speeds{std::move(m), std::move(v)};
}

Json speed_json(const estimate::SpeedEstimate& s) {
  Json points = Json::array();
  for (const auto& p : s.points)
    points.push_back({{"concurrency", p.concurrency}, {"per_stream_tokens_per_s", p.per_stream_tokens_per_s}, {"aggregate_tokens_per_s", p.aggregate_tokens_per_s},
                      {"per_stream_band", {p.per_stream_low, p.per_stream_high}}, {"bound", p.terms.bound}});
  Json assumptions = Json::array();
  for (const auto& a : s.assumptions) assumptions.push_back(a.str());
  return {{"profile", s.engine.str() + "/" + s.platform.str()}, {"context_tokens", s.context_tokens}, {"bandwidth_source", s.bandwidth_source.str()},
          {"points", points}, {"assumptions", assumptions}};
}

// mindie35: vLLM-Ascend's memory for the same model, card and context, as `fit MODEL --device D --engine vllm-ascend
// --tensor-parallel-size worldSize --max-model-len L` gives it, L being MindIE's full-length request (input + output as
// MindIE clamps them: maxSeqLen with its defaults), newest profile, --gpu-memory-utilization at that profile's default. An error (a length above the model's, a layout vLLM-Ascend refuses) is the line's text, not the
// command's failure: MindIE's own answer stands alone.
Expected<estimate::FitEstimate> vllm_ascend_fit(const Resolved& r, const estimate::MindieOptions& o, const estimate::MindieEstimate& e) {
  PF_TRY(devices, device::load_device_catalog());
  PF_TRY(engines, engine::load_engine_catalog());
  deploy::Inputs in;
  in.model = r.model;
  in.device = {r.device.id, "--device", deploy::DeviceForm::name};
  in.engine = {"vllm-ascend", "", "--engine", "", "", deploy::UnknownVersion::error};
  in.flags.tensor_parallel_size = deploy::Given<int64_t>{o.world_size, "--world-size"};
  in.flags.max_model_len = deploy::Given<int64_t>{e.input_tokens + e.output_tokens, "MindIE's full-length request (input + output)"};
  PF_TRY(resolved, deploy::resolve_deployment(in, {&devices, &engines}));
  return estimate::estimate_fit(resolved.model, resolved.device, resolved.engine, resolved.overheads, resolved.deployment);
}

// A catalogue that does not load is the command's error; the deployment's own refusal is the line's text.
bool beside_failed_hard(const Expected<estimate::FitEstimate>& v) {
  return !v && (v.error().kind == ErrorKind::corrupt || v.error().kind == ErrorKind::io || v.error().kind == ErrorKind::environment);
}

Json beside_memory_json(const Expected<estimate::FitEstimate>& v) {
  if (!v) return {{"error", v.error().message}};
  return {{"engine", v->engine_id}, {"fits", v->fits}, {"failure", estimate::failure_name(v->failure)}, {"gpu_memory_utilization", v->gpu_memory_utilization},
          {"available_kv_gib", bytes_to_gib(v->available_kv_bytes)}, {"kv_cache_tokens", v->kv_tokens}, {"max_concurrency", v->max_concurrency}};
}

std::string render_beside_memory(const Expected<estimate::FitEstimate>& v, const estimate::MindieOptions& o, const estimate::MindieEstimate& e) {
  const int64_t request = e.input_tokens + e.output_tokens;
  std::string out = fmt::format("  beside vLLM-Ascend (TP {}, max_model_len {}):", o.world_size, request);
  if (!v) return out + " not estimated (" + v.error().message + ")\n";
  out += fmt::format(" {} at gpu_memory_utilization {:.2f}: ", v->engine_id, v->gpu_memory_utilization);
  if (!v->fits) return out + fmt::format("does not fit ({}); MindIE: {}\n", estimate::failure_name(v->failure), estimate::mindie_verdict_name(e.verdict));
  return out + fmt::format("KV cache {} tokens ({:.2f} GiB), {:.2f}x requests of {} tokens; MindIE: {} to {} full-length requests\n", v->kv_tokens,
                           bytes_to_gib(v->available_kv_bytes), v->max_concurrency, request, e.batch_low, e.batch_high);
}

// One line: vLLM-Ascend's decode speed at MindIE's points, and MindIE's speed as a multiple of it.
std::string render_beside(const estimate::SpeedEstimate& m, const estimate::SpeedEstimate& v) {
  std::string out = fmt::format("  beside vLLM-Ascend ({}/{} speed profile, same cards, context and streams):", v.engine.str(), v.platform.str());
  for (size_t i = 0; i < v.points.size(); ++i) {
    const auto& p = v.points[i];
    const double ratio = i < m.points.size() && p.per_stream_tokens_per_s > 0 ? m.points[i].per_stream_tokens_per_s / p.per_stream_tokens_per_s : 0;
    out += fmt::format(" {:.1f} tok/s per stream at {} stream{} (MindIE {:.2f}x);", p.per_stream_tokens_per_s, p.concurrency, p.concurrency == 1 ? "" : "s", ratio);
  }
  out.back() = '\n';
  return out;
}

std::string render_speed(const estimate::SpeedEstimate& s) {
  std::string out = fmt::format("  decode ({}/{} speed profile, at context {}):", s.engine.str(), s.platform.str(), s.context_tokens);
  for (const auto& p : s.points)
    out += fmt::format(" {:.1f} tok/s per stream ({:.1f} to {:.1f}) at {} stream{}{};", p.per_stream_tokens_per_s, p.per_stream_low, p.per_stream_high,
                       p.concurrency, p.concurrency == 1 ? "" : "s", p.concurrency == 1 ? std::string() : fmt::format(", {:.0f} in all", p.aggregate_tokens_per_s));
  out.back() = '\n';
  out += "    bandwidth: " + s.bandwidth_source.str() + "\n";
  return out;
}

Expected<Resolved> resolve(const std::string& model_arg, const std::string& device_arg, const MindieFlags& f) {
  PF_TRY(ro, model_arg_options(f.model));
  PF_TRY(devices, device::load_device_catalog());
  PF_TRY(dev, device::find_device(devices, device_arg));
  if (dev.platform != "npu") return make_error(ErrorKind::unsupported, fmt::format("--engine mindie runs on Ascend NPUs; {} is a {} device", dev.id, dev.platform));
  PF_TRY(catalog, estimate::load_mindie_catalog());
  PF_TRY(spec, resolve_model_arg(model_arg, ro));
  return Resolved{std::move(spec), std::move(dev), std::move(catalog)};
}

Status write_plan_files(const std::string& dir, const plan::MindiePlan& p) {
  if (struct stat st {}; ::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    return make_error(ErrorKind::invalid_argument, fmt::format("--config-out {}: expected a directory, found {}", dir, file_type_name(st.st_mode)), dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(ErrorKind::environment, fmt::format("--config-out {}: cannot create the directory: {}", dir, ec.message()), dir);
  // Issue 19: both refused before either is written (a directory named start.sh left a config.json without its script).
  for (const char* name : {"config.json", "start.sh"}) {
    if (auto checked = check_write_target(join_path(dir, name)); !checked) return checked.error();
  }
  // Each created with its final mode (issue 19: written 0644, then chmod'ed, it was readable by all in between).
  PF_TRY(c, write_text_file_atomically(join_path(dir, "config.json"), dump_json(p.config, 4) + "\n", FileMode{0640}));
  PF_TRY(s, write_text_file_atomically(join_path(dir, "start.sh"), p.start_script, FileMode{0750}));
  (void)c;
  (void)s;
  return Ok{};
}

}  // namespace

bool mindie_engine_requested(const std::vector<std::string>& argv) { return last_engine_argument(argv).rfind("mindie", 0) == 0; }

int cmd_fit_mindie(const std::vector<std::string>& argv) {
  MindieFlags f;
  auto positional = parse_options(argv, mindie_options(f));
  if (!positional) return report_error(positional.error());
  if (positional->size() != 1 || !f.device) return report_error(make_error(ErrorKind::invalid_argument, k_fit_usage));
  auto r = resolve((*positional)[0], *f.device, f);
  if (!r) return report_error(r.error());
  const auto o = options_from(f, r->catalog);
  auto e = estimate::estimate_mindie(r->model, r->device, o, r->catalog);
  if (!e) return report_error(e.error());
  auto speed = mindie_speeds(*r, o, *e);
  if (!speed) return report_error(speed.error());
  const auto beside = vllm_ascend_fit(*r, o, *e);
  if (beside_failed_hard(beside)) return report_error(beside.error());
  if (f.json) {
    Json j = report::envelope("fit");
    j["engine"] = "mindie";
    j["device"] = r->device.id;
    j["model"] = r->model.id;
    j["mindie"] = estimate_json(*e, o);
    j["mindie"]["catalogue"] = r->catalog.origin;
    j["fits"] = e->verdict != estimate::MindieVerdict::does_not_fit;
    j["speed"] = speed->mindie ? speed_json(*speed->mindie) : Json(nullptr);
    j["speed_vllm_ascend"] = speed->vllm_ascend ? speed_json(*speed->vllm_ascend) : Json(nullptr);
    j["vllm_ascend"] = beside_memory_json(beside);
    print_json(j);
  } else {
    std::cout << fmt::format("MindIE Service on {} x {} (worldSize {}), {}\n", o.world_size, r->device.id, o.world_size, r->model.id);
    std::cout << render_estimate(*e, o);
    std::cout << render_beside_memory(beside, o, *e);
    if (speed->mindie) std::cout << render_speed(*speed->mindie);
    if (speed->mindie && speed->vllm_ascend) std::cout << render_beside(*speed->mindie, *speed->vllm_ascend);
    std::cout << fmt::format("verdict: {} ({})\n", estimate::mindie_verdict_name(e->verdict), e->reason);
  }
  return e->verdict == estimate::MindieVerdict::does_not_fit ? k_exit_fail : k_exit_ok;
}

int cmd_plan_mindie(const std::vector<std::string>& argv) {
  MindieFlags f;
  auto positional = parse_options(argv, mindie_options(f));
  if (!positional) return report_error(positional.error());
  const auto device_arg = f.devices ? f.devices : f.device;
  if (positional->size() != 1 || !device_arg || device_arg->find(',') != std::string::npos)
    return report_error(make_error(ErrorKind::invalid_argument, std::string(k_plan_usage) + "\n(--engine mindie plans for one NPU model: --devices D)"));
  auto r = resolve((*positional)[0], *device_arg, f);
  if (!r) return report_error(r.error());
  // Both go into config.json, which is JSON and holds UTF-8 text only: a path in another encoding (GBK) cannot be
  // written there as it is, and a replaced byte would name another directory (issue 19: dump threw type_error 316).
  for (const auto& [flag, value] : {std::pair{"--weight-path", &f.weight_path}, std::pair{"--model-name", &f.model_name}}) {
    if (*value && !is_valid_utf8(**value))
      return report_error(make_error(ErrorKind::invalid_argument,
                                     fmt::format("{}: '{}' is not UTF-8 text, and MindIE's config.json (JSON) holds UTF-8 only", flag, one_line(**value, 200))));
  }
  plan::MindiePlanRequest req;
  req.base = options_from(f, r->catalog);
  req.context_tokens = f.context.value_or(f.max_seq_len.value_or(0));
  req.concurrency = f.concurrency.value_or(1);
  req.world_size = f.world_size;
  req.model_name = f.model_name.value_or("");
  req.weight_path = f.weight_path.value_or("");
  auto p = plan::plan_mindie(r->model, r->device, req, r->catalog);
  // ux28: no worldSize that holds the targets is plan's "nothing meets the targets" (exit 1, as `plan --help` says and the
  // vLLM plan does), not bad input: the answer, with each size's reason, on stdout.
  if (!p && p.error().kind == ErrorKind::not_found) {
    if (f.json) {
      Json j = report::envelope("plan");
      j["engine"] = "mindie";
      j["device"] = r->device.id;
      j["model"] = r->model.id;
      j["mindie"] = nullptr;
      j["nothing_fits"] = p.error().message;
      print_json(j);
    } else {
      std::cout << "MindIE Service plan: nothing fits. " << p.error().message << "\n";
    }
    return k_exit_fail;
  }
  if (!p) return report_error(p.error());
  auto speed = mindie_speeds(*r, p->options, p->estimate);
  if (!speed) return report_error(speed.error());
  const auto beside = vllm_ascend_fit(*r, p->options, p->estimate);
  if (beside_failed_hard(beside)) return report_error(beside.error());
  if (f.config_out) {
    if (auto w = write_plan_files(*f.config_out, *p); !w) return report_error(w.error());
  }
  if (f.json) {
    Json j = report::envelope("plan");
    j["engine"] = "mindie";
    j["device"] = r->device.id;
    j["model"] = r->model.id;
    j["mindie"] = estimate_json(p->estimate, p->options);
    j["mindie"]["nodes"] = p->nodes;
    j["mindie"]["rejected"] = p->rejected;
    j["speed"] = speed->mindie ? speed_json(*speed->mindie) : Json(nullptr);
    j["speed_vllm_ascend"] = speed->vllm_ascend ? speed_json(*speed->vllm_ascend) : Json(nullptr);
    j["vllm_ascend"] = beside_memory_json(beside);
    j["config"] = p->config;
    j["start_script"] = p->start_script;
    if (f.config_out) j["config_out"] = *f.config_out;
    print_json(j);
  } else {
    std::cout << fmt::format("MindIE Service plan for {}: worldSize {} on {} x {}{}\n", r->model.id, p->options.world_size, p->options.world_size, r->device.id,
                             p->nodes > 1 ? fmt::format(" ({} nodes, ranktable)", p->nodes) : "");
    for (const auto& rej : p->rejected) std::cout << "  rejected " << rej << "\n";
    std::cout << render_estimate(p->estimate, p->options);
    std::cout << render_beside_memory(beside, p->options, p->estimate);
    if (speed->mindie) std::cout << render_speed(*speed->mindie);
    if (speed->mindie && speed->vllm_ascend) std::cout << render_beside(*speed->mindie, *speed->vllm_ascend);
    std::cout << fmt::format("verdict: {} ({})\n", estimate::mindie_verdict_name(p->estimate.verdict), p->estimate.reason);
    if (f.config_out) std::cout << fmt::format("wrote {} and {}\n", join_path(*f.config_out, "config.json"), join_path(*f.config_out, "start.sh"));  // ux31: "mie//config.json" for --config-out mie/
    else std::cout << "config.json:\n" << dump_json(p->config, 4) << "\n";
    std::cout << "start.sh:\n" << p->start_script;
  }
  return k_exit_ok;
}

std::string mindie_help_text(const std::string& command) {
  static MindieFlags scratch;  // the setters are never called
  const bool plan = command == "plan";
  CommandText text{plan ? k_plan_usage : k_fit_usage,
                   plan ? "MindIE Service's plan: the smallest worldSize whose static KV pool holds the context and concurrency, with its config.json and\n"
                          "start.sh (--config-out DIR), its decode speed, and vLLM-Ascend beside it on the same cards (KV tokens, decode speed)."
                        : "MindIE Service's static KV pool per card (npuMemSize, NPU_MEMORY_FRACTION, cacheBlockSize), its blocks and full-length requests,\n"
                          "the verdict and the decode speed, with vLLM-Ascend beside it on the same cards (KV tokens, decode speed). Flags are\n"
                          "MindIE's config.json keys in kebab case (--npu-mem-size is ModelConfig.npuMemSize).",
                   "",
                   plan ? "exit: 0 a worldSize fits, 1 none up to the largest tried holds the targets (each size's reason is printed),\n      2 bad input (a flag out of range or given twice, or a vLLM flag: its MindIE spelling is named)"
                        : "exit: 0 fits, 1 does not fit, 2 bad input (a flag out of range or given twice, or a vLLM flag: its MindIE spelling is named)"};
  return render_help({text, mindie_options(scratch)});
}

}  // namespace preflight::cli
