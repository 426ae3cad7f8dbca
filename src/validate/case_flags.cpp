#include "validate/case_flags.hpp"

#include <cmath>

#include "base/units.hpp"
#include "deploy/engine_env.hpp"

namespace preflight::validate {

namespace {

// Issue 15 (multinode32): the multi-node data-parallel flags a case records (docs/memory-model.md, multi-node data parallel).
Status read_multi_node_fields(const JsonObject& c, const std::string& where, deploy::Flags& flags) {
  for (const auto& [field, into] : {std::pair{"data_parallel_start_rank", &flags.data_parallel_start_rank},
                                    std::pair{"data_parallel_rpc_port", &flags.data_parallel_rpc_port}, std::pair{"api_server_count", &flags.api_server_count},
                                    // issue 15 (dpep33)
                                    std::pair{"data_parallel_rank", &flags.data_parallel_rank}, std::pair{"nnodes", &flags.nnodes},
                                    std::pair{"node_rank", &flags.node_rank}, std::pair{"master_port", &flags.master_port}}) {
    PF_TRY(v, c.opt_int(field));
    if (v) *into = deploy::Given<int64_t>{*v, where + ": " + field};
  }
  for (const auto& [field, into] : {std::pair{"headless", &flags.headless}, std::pair{"data_parallel_hybrid_lb", &flags.data_parallel_hybrid_lb},
                                    std::pair{"data_parallel_external_lb", &flags.data_parallel_external_lb}}) {
    PF_TRY(on, c.opt_bool(field));
    if (on) *into = deploy::Given<bool>{*on, where + ": " + field};
  }
  for (const auto& [field, into] : {std::pair{"data_parallel_address", &flags.data_parallel_address}, std::pair{"data_parallel_backend", &flags.data_parallel_backend},
                                    std::pair{"master_addr", &flags.master_addr}}) {
    PF_TRY(text, c.opt_string(field));
    if (text) *into = deploy::Given<std::string>{*text, where + ": " + field};
  }
  return Ok{};
}

// The case's env and additional_config objects into `flags` (issue 15; see read_case_flags).
Status read_env_and_additional_config(const JsonObject& c, const std::string& where, deploy::Flags& flags) {
  // env: the engine's environment as the source records it ({"HCCL_BUFFSIZE": 1024, "VLLM_ASCEND_ENABLE_FLASHCOMM1": 1},
  // numbers or their text); additional_config: vLLM-Ascend's --additional-config object (issue 15).
  // Issue 19 (hard32): every name read as the engine reads it (deploy/engine_env), where HCCL_BUFFSIZE went through strtod
  // ("0x10" read as 16) and the switches compared with 1.0 (2, which the engine's bool(int(value)) turns on, read as off).
  // Issue 19 (hard33's leftover): an env or additional_config of another type was ignored without a word.
  for (const char* field : {"env", "additional_config"})
    if (const Json* v = c.find(field); v && !v->is_null() && !v->is_object())
      return make_error(ErrorKind::invalid_argument,
                        format("%s: %s: expected an object of names and values (%s), found %s", where.c_str(), field,
                               std::string(field) == "env" ? "the engine's environment, e.g. {\"HCCL_BUFFSIZE\": 1024}" : "vLLM-Ascend's --additional-config JSON",
                               v->type_name()),
                        where);
  if (const Json* env = c.find("env"); env && env->is_object()) {
    for (const auto& name : deploy::engine_env_names()) {
      const auto it = env->find(name);
      if (it == env->end()) continue;
      const std::string text = it->is_string() ? it->get<std::string>() : it->dump();
      PF_TRY(set, deploy::apply_engine_env(flags, name, text, where + ": env." + name));
      (void)set;
    }
  }
  if (const Json* extra = c.find("additional_config"); extra && extra->is_object()) {
    if (const auto it = extra->find("enable_dsa_cp"); it != extra->end() && it->is_boolean())
      flags.enable_dsa_cp = deploy::Given<bool>{it->get<bool>(), where + ": additional_config.enable_dsa_cp"};
    if (const auto it = extra->find("enable_shared_expert_dp"); it != extra->end() && it->is_boolean())
      flags.enable_shared_expert_dp = deploy::Given<bool>{it->get<bool>(), where + ": additional_config.enable_shared_expert_dp"};
    if (const auto it = extra->find("layer_sharding"); it != extra->end() && !it->is_null()) {
      if (!it->is_array()) return make_error(ErrorKind::invalid_argument, where + ": additional_config.layer_sharding must be a list of layer names", where);
      std::string names;
      for (const auto& n : *it) {
        if (!n.is_string()) return make_error(ErrorKind::invalid_argument, where + ": additional_config.layer_sharding must be a list of layer names", where);
        names += (names.empty() ? "" : ",") + n.get<std::string>();
      }
      flags.layer_sharding = deploy::Given<std::string>{names, where + ": additional_config.layer_sharding"};
    }
    // eplb_config.num_redundant_experts: EPLB's extra expert slots (issue 15, evid25); a count, 0 or more.
    if (const auto eplb = extra->find("eplb_config"); eplb != extra->end() && eplb->is_object()) {
      if (const auto it = eplb->find("num_redundant_experts"); it != eplb->end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<int64_t>() < 0)
          return make_error(ErrorKind::invalid_argument, where + ": additional_config.eplb_config.num_redundant_experts must be a whole number, 0 or more", where);
        flags.num_redundant_experts = deploy::Given<int64_t>{it->get<int64_t>(), where + ": additional_config.eplb_config.num_redundant_experts"};
      }
      // dynamic_eplb (issue 15, evid26): true or "true" as the nightly configs write it (vllm-ascend ascend_config.py
      // reads the value through its bool parsing); false or "false" off.
      if (const auto it = eplb->find("dynamic_eplb"); it != eplb->end() && !it->is_null()) {
        const bool text = it->is_string() && (it->get<std::string>() == "true" || it->get<std::string>() == "false");
        if (!it->is_boolean() && !text)
          return make_error(ErrorKind::invalid_argument, where + ": additional_config.eplb_config.dynamic_eplb must be true or false", where);
        const bool on = it->is_boolean() ? it->get<bool>() : it->get<std::string>() == "true";
        flags.dynamic_eplb = deploy::Given<bool>{on, where + ": additional_config.eplb_config.dynamic_eplb"};
      }
    }
  }
  return Ok{};
}

}  // namespace

// The case's recorded inputs, checked whether or not the model resolves: a bad value is an error
// naming the file, line and field (exit 2), never silently replaced.
Expected<deploy::Flags> read_case_flags(const JsonObject& c, const std::string& where, std::optional<int64_t> concurrency_len) {
  deploy::Flags flags;
  auto integer = [&](const char* field, std::optional<deploy::Given<int64_t>>& into) -> Status {
    PF_TRY(v, c.opt_int(field));
    if (v) into = deploy::Given<int64_t>{*v, where + ": " + field};
    return Ok{};
  };
  for (const auto& [field, into] : {std::pair{"tensor_parallel_size", &flags.tensor_parallel_size}, std::pair{"pipeline_parallel_size", &flags.pipeline_parallel_size},
                                    std::pair{"num_devices", &flags.num_devices}, std::pair{"max_model_len", &flags.max_model_len},
                                    std::pair{"max_num_seqs", &flags.max_num_seqs}, std::pair{"max_num_batched_tokens", &flags.max_num_batched_tokens},
                                    std::pair{"data_parallel_size", &flags.data_parallel_size}, std::pair{"data_parallel_size_local", &flags.data_parallel_size_local},
                                    std::pair{"decode_context_parallel_size", &flags.decode_context_parallel_size}}) {
    PF_TRY(ok, integer(field, *into));
    (void)ok;
  }
  // "Maximum concurrency for L tokens per request" prints max_model_len itself.
  if (!flags.max_model_len && concurrency_len) flags.max_model_len = deploy::Given<int64_t>{*concurrency_len, where + ": concurrency_len"};
  PF_TRY(util, c.opt_number("gpu_memory_utilization"));
  if (util) flags.gpu_memory_utilization = deploy::Given<double>{*util, where + ": gpu_memory_utilization"};
  // Issue 19: dtype is vLLM's --dtype (the schema, ../shared/validation/README.md; vllm/engine/arg_utils.py's choices);
  // issue 15 (warmup32): applied to the model as the flag is (deploy::model_dtype_flag).
  PF_TRY(dtype, c.opt_string("dtype"));
  if (dtype) {
    static const std::vector<std::string> k_dtypes{"auto", "half", "float16", "bfloat16", "float", "float32"};
    if (std::find(k_dtypes.begin(), k_dtypes.end(), *dtype) == k_dtypes.end())
      return make_error(ErrorKind::invalid_argument, where + ": dtype: expected one of auto|half|float16|bfloat16|float|float32 (vLLM's --dtype), found '" + quoted_case_text(*dtype) + "'", where);
    flags.dtype = deploy::Given<std::string>{*dtype, where + ": dtype"};
  }
  PF_TRY(kvd, c.opt_string("kv_cache_dtype"));
  if (kvd) flags.kv_cache_dtype = deploy::Given<std::string>{*kvd, where + ": kv_cache_dtype"};
  PF_TRY(eager, c.opt_bool("enforce_eager"));
  if (eager) flags.enforce_eager = deploy::Given<bool>{*eager, where + ": enforce_eager"};
  PF_TRY(multi_node, read_multi_node_fields(c, where, flags));
  (void)multi_node;
  PF_TRY(ep, c.opt_bool("enable_expert_parallel"));
  if (ep) flags.enable_expert_parallel = deploy::Given<bool>{*ep, where + ": enable_expert_parallel"};
  // speculative_config: vLLM's JSON, as an object or as the flag's string.
  if (const Json* spec = c.find("speculative_config"); spec && !spec->is_null())
    flags.speculative_config = deploy::Given<std::string>{spec->is_string() ? spec->get<std::string>() : spec->dump(), where + ": speculative_config"};
  PF_TRY(engine_settings, read_env_and_additional_config(c, where, flags));
  (void)engine_settings;
  // Issue 15 (mc2): the NPU driver (Ascend HDK) version, where the case's source states it (npu-smi info, the issue's
  // environment); absent, a multi-node A2 EP group's verdict stays undecided.
  PF_TRY(driver, c.opt_string("npu_driver_version"));
  if (driver) flags.npu_driver_version = deploy::Given<std::string>{*driver, where + ": npu_driver_version"};
  // Issue 15/16 (nccl): how the case's GPUs reach each other (nvswitch | nvlink-direct | pcie | network), where its source
  // states it; absent, deploy assumes the card's default and says so.
  PF_TRY(interconnect, c.opt_string("interconnect"));
  if (interconnect) flags.interconnect = deploy::Given<std::string>{*interconnect, where + ": interconnect"};
  // Issue 15 (dsvtp16): the kv_role of --kv-transfer-config; vLLM's KVTransferConfig.is_kv_producer is true for
  // kv_producer and kv_both (a disaggregated prefill instance).
  PF_TRY(kv_role, c.opt_string("kv_role"));
  if (kv_role) {
    if (*kv_role != "kv_producer" && *kv_role != "kv_both" && *kv_role != "kv_consumer")
      return make_error(ErrorKind::invalid_argument, format("%s: kv_role '%s': expected kv_producer, kv_consumer or kv_both", where.c_str(), quoted_case_text(*kv_role).c_str()), where);
    flags.kv_producer = deploy::Given<bool>{*kv_role != "kv_consumer", where + ": kv_role"};
  }
  // Issue 15: VLLM_PP_LAYER_PARTITION as the case records it ("24,40").
  PF_TRY(partition, c.opt_string("pp_layer_partition"));
  if (partition) flags.pp_layer_partition = deploy::Given<std::string>{*partition, where + ": pp_layer_partition"};
  PF_TRY(skip_mm, c.opt_bool("skip_mm_profiling"));  // written by `preflight logs --emit-case`
  if (skip_mm) flags.skip_mm_profiling = deploy::Given<bool>{*skip_mm, where + ": skip_mm_profiling"};
  // Issue 15: --limit-mm-per-prompt as the source's command line states it: vLLM's object ({"image": 0, "video": 0},
  // what `logs --emit-case` writes) or the flag's JSON text. A zero count keeps that modality out of the profile run.
  if (const Json* mm = c.find("limit_mm_per_prompt"); mm && !mm->is_null())
    flags.limit_mm_per_prompt = deploy::Given<std::string>{mm->is_string() ? mm->get<std::string>() : mm->dump(), where + ": limit_mm_per_prompt"};
  // Issue 15: --language-model-only as the source's command line or non-default args state it.
  PF_TRY(lm_only, c.opt_bool("language_model_only"));
  if (lm_only) flags.language_model_only = deploy::Given<bool>{*lm_only, where + ": language_model_only"};
  PF_TRY(ssm_dtype, c.opt_string("mamba_ssm_cache_dtype"));  // vLLM's --mamba-ssm-cache-dtype
  if (ssm_dtype) flags.mamba_ssm_cache_dtype = deploy::Given<std::string>{*ssm_dtype, where + ": mamba_ssm_cache_dtype"};
  // Issue 15: the sampling path the log printed ("Using FlashInfer for top-p & top-k sampling." or "FlashInfer is not
  // available. Falling back to the PyTorch-native implementation ..."): "flashinfer" or "native".
  PF_TRY(sampler, c.opt_string("sampler"));
  if (sampler) {
    if (*sampler != "flashinfer" && *sampler != "native")
      return make_error(ErrorKind::invalid_argument, format("%s: sampler '%s': expected \"flashinfer\" or \"native\"", where.c_str(), quoted_case_text(*sampler).c_str()), where);
    flags.flashinfer_sampler = deploy::Given<bool>{*sampler == "flashinfer", where + ": sampler"};
  }
  // Issue 15: the capture settings the source's command line or non-default args state: compilation_config as vLLM's
  // object (what `logs --emit-case` writes) or the flag's JSON text, optimization_level (-O<n>), attention_backend.
  if (const Json* cc = c.find("compilation_config"); cc && !cc->is_null())
    flags.compilation_config = deploy::Given<std::string>{cc->is_string() ? cc->get<std::string>() : cc->dump(), where + ": compilation_config"};
  PF_TRY(level, c.opt_int("optimization_level"));
  if (level) flags.optimization_level = deploy::Given<int64_t>{*level, where + ": optimization_level"};
  PF_TRY(backend, c.opt_string("attention_backend"));
  if (backend) flags.attention_backend = deploy::Given<std::string>{*backend, where + ": attention_backend"};
  // Issue 15 (evid24): the --moe-backend the source's command line or non-default args state.
  PF_TRY(moe_backend, c.opt_string("moe_backend"));
  if (moe_backend) flags.moe_backend = deploy::Given<std::string>{*moe_backend, where + ": moe_backend"};
  PF_TRY(prefix_caching, c.opt_bool("enable_prefix_caching"));  // the log's --enable-prefix-caching / --no-enable-prefix-caching
  if (prefix_caching) flags.enable_prefix_caching = deploy::Given<bool>{*prefix_caching, where + ": enable_prefix_caching"};
  PF_TRY(chunked, c.opt_bool("enable_chunked_prefill"));  // the engine's chunked_prefill_enabled / --no-enable-chunked-prefill
  if (chunked) flags.enable_chunked_prefill = deploy::Given<bool>{*chunked, where + ": enable_chunked_prefill"};
  PF_TRY(deprecated_ok, c.opt_bool("allow_deprecated_quantization"));  // issue 16: --allow-deprecated-quantization
  if (deprecated_ok) flags.allow_deprecated_quantization = deploy::Given<bool>{*deprecated_ok, where + ": allow_deprecated_quantization"};
  PF_TRY(checked, deploy::check_flags(flags));
  (void)checked;
  return flags;
}

}  // namespace preflight::validate
