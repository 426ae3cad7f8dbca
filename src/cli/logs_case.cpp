// cli/logs_case: the case `preflight logs --emit-case` writes (split out of cmd_logs.cpp, date37; no change in what
// it writes) and the version lines, notes and failure position it shares with the command.
#include "cli/logs_case.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/file.hpp"
#include "deploy/flag_json.hpp"

namespace preflight::cli {

// The version and build the log's version lines state (issue 15, misc950): on vLLM-Ascend the vLLM and vllm-ascend
// lines go through deploy::take_printed_versions, as a case's engine_version / engine_build and fit's --engine
// vllm-ascend@V --engine-build B do; vllm-ascend releases track vLLM's numbering (reference section 6), so a log that
// names only vLLM still selects the matching vllm-ascend profile.
deploy::EngineInput printed_engine_versions(const logs::EngineLog& log) {
  const bool npu = log.engine == "vllm-ascend";
  auto printed = [](const auto& v, const char* what) {
    return v ? std::optional<deploy::PrintedVersion>({v->value, fmt::format("log line {}: {} version", v->line, what)}) : std::nullopt;
  };
  deploy::EngineInput stated;
  deploy::take_printed_versions(stated, printed(log.versions.vllm, "vllm"), npu ? printed(log.versions.vllm_ascend, "vllm-ascend") : std::nullopt);
  return stated;
}

// The notes of the case --emit-case writes (validate reads them as a version hint, as logs does: log_engine_input).
// Issue 15 (evid29): the line of the failure's first evidence (root-cause line, else the first symptom line); 0 when none.
int64_t failure_line(const logs::Diagnosis& d) {
  if (!d.evidence.empty()) return d.evidence.front().line;
  return d.symptoms.empty() ? 0 : d.symptoms.front().line;
}

// Issue 15 (evid29): an error the log shows only after the server came up ("Application startup complete") is a runtime
// failure -- a request longer than max_model_len, the engine dying hours later -- not a start-up one: the case --emit-case
// writes started (fits true), as validate's "fits" describes the start-up.
bool failed_after_start_up(const logs::EngineLog& log) {
  const int64_t at = failure_line(log.diagnosis);
  return !log.diagnosis.class_id.empty() && log.started && log.started_line > 0 && at > log.started_line;
}

std::string case_notes(const logs::EngineLog& log, const std::string& path) {
  const auto& a = log.args;
  const bool failed = !log.diagnosis.class_id.empty();
  const std::string failure =
      !failed ? std::string()
      : failed_after_start_up(log)
          ? fmt::format("; started (line {}); a later failure (line {}), not a start-up one: {}", log.started_line, failure_line(log.diagnosis), log.diagnosis.title)
          : "; root cause: " + log.diagnosis.title;
  return "emitted by preflight logs from " + base_name(path) + failure +
         (a.skip_mm_profiling && a.skip_mm_profiling->value ? fmt::format("; run with --skip-mm-profiling (line {})", a.skip_mm_profiling->line) : std::string());
}

namespace {

std::string failure_for_case(const std::string& class_id) {
  if (class_id == "kv_alloc_oom") return "kv_negative";
  if (class_id == "kv_too_small") return "max_model_len_too_large";
  return class_id;
}


}  // namespace

Json case_line(const logs::EngineLog& log, const FitOutcome& f, const std::string& path) {
  const auto& a = log.args;
  const auto& p = log.printed;
  auto opt = [](const auto& v) { return v ? Json(v->value) : Json(); };
  const bool failed = !log.diagnosis.class_id.empty() && !failed_after_start_up(log);
  Json j;
  j["id"] = "log-" + base_name(path);
  j["source"] = path;
  j["engine"] = log.engine == "unknown" ? Json() : Json(log.engine);
  // Issue 15 (build, misc950): the version and build as deploy takes them from the log's lines (validate reads both).
  const deploy::EngineInput stated = printed_engine_versions(log);
  j["engine_version"] = stated.version.empty() ? Json() : Json(stated.version);
  if (stated.build) j["engine_build"] = stated.build->text;
  // Issue 15 (v0eng29): the engine core the log shows (validate applies its V0 record as logs does).
  if (log.engine_core) j["engine_core"] = log.engine_core->core == logs::EngineCoreShown::v0 ? "v0" : "v1";
  j["device"] = f.device_id.empty() ? Json() : Json(f.device_id);
  // Issue 15 (pp35): stages on their own cards (--device A,B) as validate reads them: one catalogue id per stage.
  if (f.fit && !f.fit->stages.empty() && std::any_of(f.fit->stages.begin(), f.fit->stages.end(), [&](const auto& st) { return st.device_id != f.device_id; })) {
    Json ids = Json::array();
    for (const auto& st : f.fit->stages) ids.push_back(st.device_id);
    j["stage_devices"] = ids;
  }
  // The deployment's devices, TP x PP x DP, as the evidence's multi-node cases record them (issue 15, multinode32: the
  // node's TP x PP x local ranks, written before, did not divide into DP x TP x PP, so validate refused the case it
  // wrote); data_parallel_size_local says how many of them this node holds.
  // Issue 19 (hard33): multiplied with overflow checked (a logged data_parallel_size of 2^63 - 1 times TP 4 overflowed);
  // past 64 bits it is left out, and validate refuses the case's sizes by name.
  int64_t devices = 1;
  bool overflow = false;
  for (const auto* v : {&a.tensor_parallel_size, &a.pipeline_parallel_size, &a.data_parallel_size})
    if (*v) overflow = overflow || __builtin_mul_overflow(devices, (*v)->value, &devices);
  j["num_devices"] = overflow ? Json() : Json(devices);
  j["model"] = opt(a.model);
  j["config_hint"] = Json();
  j["dtype"] = opt(a.dtype);
  j["quantization"] = opt(a.quantization);
  j["kv_cache_dtype"] = opt(a.kv_cache_dtype);
  j["tensor_parallel_size"] = opt(a.tensor_parallel_size);
  j["pipeline_parallel_size"] = opt(a.pipeline_parallel_size);
  j["gpu_memory_utilization"] = opt(a.gpu_memory_utilization);
  j["max_model_len"] = opt(a.max_model_len);
  j["max_num_seqs"] = opt(a.max_num_seqs);
  j["max_num_batched_tokens"] = opt(a.max_num_batched_tokens);
  j["enforce_eager"] = opt(a.enforce_eager);
  j["skip_mm_profiling"] = opt(a.skip_mm_profiling);
  j["enable_prefix_caching"] = opt(a.enable_prefix_caching);
  j["enable_chunked_prefill"] = opt(a.enable_chunked_prefill);
  j["allow_deprecated_quantization"] = opt(a.allow_deprecated_quantization);
  // Issue 15: --limit-mm-per-prompt as the object validate reads ({"image": 0, "video": 0}).
  j["limit_mm_per_prompt"] = a.limit_mm_per_prompt ? Json::parse(a.limit_mm_per_prompt->value, nullptr, false) : Json();
  if (j["limit_mm_per_prompt"].is_discarded()) j["limit_mm_per_prompt"] = a.limit_mm_per_prompt->value;
  j["language_model_only"] = opt(a.language_model_only);  // issue 15
  if (a.mamba_ssm_cache_dtype) j["mamba_ssm_cache_dtype"] = a.mamba_ssm_cache_dtype->value;  // issue 15, only when the log states it
  // Issue 15: the DP+EP layout and the environment the log showed, in the fields validate reads.
  j["data_parallel_size"] = opt(a.data_parallel_size);
  j["data_parallel_size_local"] = opt(a.data_parallel_size_local);
  // Issue 15 (multinode32): the multi-node flags, only where the log states them (docs/validation.md names the fields).
  if (a.headless) j["headless"] = a.headless->value;
  if (a.data_parallel_start_rank) j["data_parallel_start_rank"] = a.data_parallel_start_rank->value;
  if (a.data_parallel_address) j["data_parallel_address"] = a.data_parallel_address->value;
  if (a.data_parallel_rpc_port) j["data_parallel_rpc_port"] = a.data_parallel_rpc_port->value;
  if (a.data_parallel_backend) j["data_parallel_backend"] = a.data_parallel_backend->value;
  if (a.data_parallel_hybrid_lb) j["data_parallel_hybrid_lb"] = a.data_parallel_hybrid_lb->value;
  if (a.data_parallel_external_lb) j["data_parallel_external_lb"] = a.data_parallel_external_lb->value;
  if (a.api_server_count) j["api_server_count"] = a.api_server_count->value;
  if (a.data_parallel_rank) j["data_parallel_rank"] = a.data_parallel_rank->value;  // issue 15 (dpep33)
  if (a.nnodes) {
    j["nnodes"] = a.nnodes->value;
    if (a.node_rank) j["node_rank"] = a.node_rank->value;
    if (a.master_addr) j["master_addr"] = a.master_addr->value;
    if (a.master_port) j["master_port"] = a.master_port->value;
  }
  if (a.decode_context_parallel_size) j["decode_context_parallel_size"] = opt(a.decode_context_parallel_size);
  j["enable_expert_parallel"] = opt(a.enable_expert_parallel);
  // Issue 15 (ev): the speculative config the log states (the flag, the non-default args dict or the config dump), as
  // the object validate reads; only when stated. The DeepSeek-V3.2 nightly logs run deepseek_mtp with 2 or 3 tokens.
  // Issue 19 (hard33): as its text when it nests deeper than a flag's JSON is read (the case is written out recursively:
  // a 30,000-deep list in the log's dict overflowed the stack under ASan); validate reads either form.
  if (a.speculative_config) {
    const bool deep = deploy::json_text_depth(a.speculative_config->value) > deploy::k_max_flag_json_depth;
    j["speculative_config"] = deep ? Json() : Json::parse(a.speculative_config->value, nullptr, false);
    if (deep || j["speculative_config"].is_discarded()) j["speculative_config"] = a.speculative_config->value;
  }
  Json env = Json::object();
  // The digits the log assigned (logs/engine_log reads at most nine): written as the integer the engine's environment
  // holds, since a case's env is read as CANN reads it (hard32: 1024.0 is no HCCL_BUFFSIZE).
  if (a.hccl_buffsize) env["HCCL_BUFFSIZE"] = static_cast<int64_t>(a.hccl_buffsize->value);
  if (a.flashcomm1) env["VLLM_ASCEND_ENABLE_FLASHCOMM1"] = a.flashcomm1->value ? 1 : 0;
  if (a.mlapo) env["VLLM_ASCEND_ENABLE_MLAPO"] = a.mlapo->value ? 1 : 0;
  j["env"] = env.empty() ? Json() : env;
  if (a.flashinfer_sampler) j["sampler"] = a.flashinfer_sampler->value ? "flashinfer" : "native";  // issue 15
  // Issue 15: the capture settings the log states, in the fields validate reads (only when stated).
  if (a.compilation_config) {
    j["compilation_config"] = Json::parse(a.compilation_config->value, nullptr, false);
    if (j["compilation_config"].is_discarded()) j["compilation_config"] = a.compilation_config->value;
  }
  if (a.optimization_level) j["optimization_level"] = a.optimization_level->value;
  if (a.attention_backend) j["attention_backend"] = a.attention_backend->value;
  if (a.moe_backend) j["moe_backend"] = a.moe_backend->value;
  j["weights_gib"] = opt(p.weights_gib);
  // A log without the "Available KV cache memory" line (vLLM V0) states its KV budget in the per-term summary.
  j["available_kv_gib"] = p.available_kv_gib ? opt(p.available_kv_gib) : opt(p.kv_reserve_gib);
  if (p.available_kv_gib && p.available_kv_stage) j["available_kv_stage"] = p.available_kv_stage->value;  // issue 15 (pp35)
  j["kv_cache_tokens"] = opt(p.kv_cache_tokens);
  j["num_gpu_blocks"] = opt(p.num_gpu_blocks);
  j["max_concurrency"] = opt(p.max_concurrency);
  j["concurrency_len"] = opt(p.concurrency_len);
  j["cuda_graph_gib"] = opt(p.graph_gib);
  j["cuda_graph_estimate_gib"] = opt(p.graph_estimate_gib);
  j["tokens_per_s"] = Json();
  j["fits"] = failed ? Json(false) : log.started || p.kv_cache_tokens ? Json(true) : Json();
  j["failure"] = failed ? Json(failure_for_case(log.diagnosis.class_id)) : Json();
  // skip_mm_profiling above is a field validate reads; the notes repeat it for people.
  // date37: the version the formats of the log's lines dated, where they dated it, as the "vX.Y" validate dates the case by
  // from its notes (the version hint), so that validate of the case selects the profile logs selected (misc21).
  j["notes"] = case_notes(log, path) +
               (f.dating.applied ? "; version dated by the formats of its printed lines (data/engines/line_formats.json): v" + f.dating.version : std::string());
  return j;
}

}  // namespace preflight::cli
