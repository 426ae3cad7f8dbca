#include "cli/engine_flags.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "base/quote.hpp"
#include "base/text.hpp"
#include "deploy/engine_env.hpp"
#include "plan/launch.hpp"

namespace preflight::cli {

namespace {

// One engine setting: its flags, and what a start command carries for it. `carry` adds nothing for an unset setting.
struct Setting {
  std::vector<Option> (*declare)(EngineSettingsInto into);
  void (*carry)(const deploy::Flags& flags, plan::EngineArgs& args);
};

void none(const deploy::Flags&, plan::EngineArgs&) {}

// A number as vLLM's argparse reads it back: 400, not 400.000000.
std::string number_text(double v) { return fmt::format("{:g}", v); }

const std::vector<Setting>& settings() {
  static const std::vector<Setting> k_settings = {
      {[](EngineSettingsInto i) { return std::vector<Option>{given_text("kv-cache-dtype", "D", i.flags.kv_cache_dtype, "auto|fp8|fp8_e4m3|fp8_e5m2|int8")}; },
       none},  // each row's start command writes its fit's KV cache dtype (plan/launch)
      {[](EngineSettingsInto i) { return std::vector<Option>{given_switch("enforce-eager", i.flags.enforce_eager, "no graph capture; eager decode speed")}; },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.enforce_eager && f.enforce_eager->value) a.serve_args.push_back("--enforce-eager");
       }},
      {[](EngineSettingsInto i) { return std::vector<Option>{given_int("max-num-seqs", "N", i.flags.max_num_seqs, "sequences per scheduler step")}; },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.max_num_seqs) a.serve_args.push_back(fmt::format("--max-num-seqs {}", f.max_num_seqs->value));
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_tokens("max-num-batched-tokens", "N", i.flags.max_num_batched_tokens, "tokens per scheduler step (the profile run's batch)")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.max_num_batched_tokens) a.serve_args.push_back(fmt::format("--max-num-batched-tokens {}", f.max_num_batched_tokens->value));
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_switch("enable-chunked-prefill", i.flags.enable_chunked_prefill, "the engine's default where it has chunked prefill (V1)"),
                                    given_switch_off("no-enable-chunked-prefill", i.flags.enable_chunked_prefill,
                                                     "the profile run forwards max(max_model_len, 2048) tokens at once, unless --max-num-batched-tokens")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.enable_chunked_prefill) a.serve_args.push_back(f.enable_chunked_prefill->value ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill");
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_switch("enable-prefix-caching", i.flags.enable_prefix_caching, "hybrid models: Mamba cache mode align (2 state blocks per request)"),
                                    given_switch_off("no-enable-prefix-caching", i.flags.enable_prefix_caching, "hybrid models: Mamba cache mode none (1 state block per request)")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.enable_prefix_caching) a.serve_args.push_back(f.enable_prefix_caching->value ? "--enable-prefix-caching" : "--no-enable-prefix-caching");
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_switch("skip-mm-profiling", i.flags.skip_mm_profiling, "leave the vision encoder out of the profile run")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.skip_mm_profiling && f.skip_mm_profiling->value) a.serve_args.push_back("--skip-mm-profiling");
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_text("limit-mm-per-prompt", "JSON", i.flags.limit_mm_per_prompt,
                                               "'{\"video\": 0}': no dummy video in the profile run; '{\"image\": 0, \"video\": 0}': text only;\n"
                                               "'{\"image\": {\"count\": 1, \"width\": 1024, \"height\": 1024}}': a smaller dummy image (vLLM >= 0.11.1)")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.limit_mm_per_prompt) a.serve_args.push_back("--limit-mm-per-prompt " + plan::shell_single_quoted(f.limit_mm_per_prompt->value));
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_switch("language-model-only", i.flags.language_model_only,
                                                 "every modality's limit at 0: text-only profile run, no vision tower (vLLM >= 0.16)")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.language_model_only && f.language_model_only->value) a.serve_args.push_back("--language-model-only");
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_text("mamba-ssm-cache-dtype", "D", i.flags.mamba_ssm_cache_dtype,
                                               "hybrid models: the SSM state dtype, auto|float32|float16|bfloat16 (auto: the\nmodel's, Qwen3.5 float32)")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.mamba_ssm_cache_dtype) a.serve_args.push_back("--mamba-ssm-cache-dtype " + f.mamba_ssm_cache_dtype->value);
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_text("moe-backend", "B", i.flags.moe_backend,
                                               "auto (default), triton, marlin, flashinfer_cutlass, flashinfer_b12x, ...: the MoE expert kernels;\n"
                                               "flashinfer_b12x (vLLM 0.25, SM 12.x, NVFP4) keeps a workspace per MoE layer from the profile run")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.moe_backend) a.serve_args.push_back("--moe-backend " + f.moe_backend->value);
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{
             given_switch("flashinfer-sampler", i.flags.flashinfer_sampler,
                          "the engine samples with FlashInfer (its log: 'Using FlashInfer for top-p & top-k\nsampling.'; VLLM_USE_FLASHINFER_SAMPLER=1)"),
             given_switch_off("no-flashinfer-sampler", i.flags.flashinfer_sampler, "the engine samples natively ('FlashInfer is not available'; VLLM_USE_FLASHINFER_SAMPLER=0)")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {  // an environment variable of vLLM (vllm/envs.py), not an argument
         if (f.flashinfer_sampler) a.env.push_back(f.flashinfer_sampler->value ? "VLLM_USE_FLASHINFER_SAMPLER=1" : "VLLM_USE_FLASHINFER_SAMPLER=0");
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_real("hccl-buffsize", "MB", i.flags.hccl_buffsize_mb,
                                               "NPU: HCCL_BUFFSIZE of the engine's environment (CANN default 200): the MC2 buffer\nexpert parallel opens before KV sizing")};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {
         if (f.hccl_buffsize_mb) a.npu_env.push_back("HCCL_BUFFSIZE=" + number_text(f.hccl_buffsize_mb->value));
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{given_text("npu-driver-version", "V", i.flags.npu_driver_version,
                                               "NPU: the driver (Ascend HDK) version npu-smi info prints; decides the MC2\ntransport of expert parallel over two or more A2 nodes")};
       },
       none},  // the host's driver: nothing to start with
      {[](EngineSettingsInto i) {  // issue 15 (acc30): the engine's environment, read as the engine reads it (deploy/engine_env)
         deploy::Flags& flags = i.flags;
         return std::vector<Option>{Option{"env", "NAME=VALUE",
                                           "a variable of the engine's environment the estimate follows (repeatable): VLLM_ROCM_MOE_PADDING,\n"
                                           "VLLM_USE_FLASHINFER_SAMPLER, VLLM_ASCEND_ENABLE_FLASHCOMM1, VLLM_ASCEND_ENABLE_MLAPO, HCCL_BUFFSIZE",
                                           [&flags, seen = std::make_shared<std::vector<std::string>>()](const std::string& text) -> Status {
                                             const size_t eq = text.find('=');
                                             if (eq == std::string::npos || eq == 0)
                                               return make_error(ErrorKind::invalid_argument, "--env: expected NAME=VALUE, found '" + one_line(text, 60) + "'");
                                             const std::string name = text.substr(0, eq);
                                             // hard32: repeatable for different names; one name twice is the repeated flag parse_options refuses
                                             if (std::find(seen->begin(), seen->end(), name) != seen->end())
                                               return make_error(ErrorKind::invalid_argument, "--env " + one_line(name, 60) + " is given twice; give it once");
                                             seen->push_back(name);
                                             // hard31: the name cut in the origin every message starts with (a 100,000-byte name was echoed to 8 KB)
                                             return deploy::apply_engine_env(flags, name, text.substr(eq + 1), "--env " + one_line(name, 60));
                                           },
                                           "", {}, {}, Option::Repeat::many}};
       },
       [](const deploy::Flags& f, plan::EngineArgs& a) {  // the --env switches no other setting carries
         if (f.rocm_moe_padding) a.env.push_back(f.rocm_moe_padding->value ? "VLLM_ROCM_MOE_PADDING=1" : "VLLM_ROCM_MOE_PADDING=0");
         if (f.flashcomm1) a.npu_env.push_back(f.flashcomm1->value ? "VLLM_ASCEND_ENABLE_FLASHCOMM1=1" : "VLLM_ASCEND_ENABLE_FLASHCOMM1=0");
         if (f.mlapo) a.npu_env.push_back(f.mlapo->value ? "VLLM_ASCEND_ENABLE_MLAPO=1" : "VLLM_ASCEND_ENABLE_MLAPO=0");
       }},
      {[](EngineSettingsInto i) {
         return std::vector<Option>{text_flag("engine-build", "BUILD", i.engine_build,
                                              "the engine build as pip lists it (0.17.0rc2.dev66+g9d0b7c8e9): decides the rules\nthat a PR merged between two releases starts or ends")};
       },
       none},  // the installed build: nothing to start with
  };
  return k_settings;
}

}  // namespace

std::vector<Option> engine_setting_options(EngineSettingsInto into) {
  std::vector<Option> out;
  for (const auto& s : settings())
    for (auto& o : s.declare(into)) out.push_back(std::move(o));
  return out;
}

plan::EngineArgs engine_setting_args(const deploy::Flags& flags) {
  plan::EngineArgs args;
  for (const auto& s : settings()) s.carry(flags, args);
  return args;
}

std::string first_engine_setting(const std::vector<std::string>& argv) {
  deploy::Flags scratch_flags;
  std::optional<std::string> scratch_build;
  const auto options = engine_setting_options({scratch_flags, scratch_build});
  for (const auto& a : argv) {
    if (a.rfind("--", 0) != 0) continue;
    std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    for (auto& c : name) if (c == '_') c = '-';  // as parse_options reads it
    for (const auto& o : options)
      if (o.name == name) return "--" + name;
  }
  return "";
}

}  // namespace preflight::cli
