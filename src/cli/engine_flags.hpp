// cli/engine_flags: the engine settings fit and plan both take, declared once (issue 15/16, plan28). A setting is how
// the engine runs, not its layout (plan chooses TP, PP, DP, nodes and --quantization itself): one record per setting
// holds its flags (name, value, help, the field of deploy::Flags it writes) and what a start command carries for it in
// vLLM's spelling, so that fit's and plan's flags, and plan's `vllm serve` lines, cannot drift apart.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "deploy/deployment.hpp"
#include "plan/planner.hpp"

namespace preflight::cli {

// Where the settings' flags write: vLLM's flags into `flags` (deploy::check_flags checks them, deploy::deployment_from_flags
// turns them into the estimate's settings), --engine-build's text into `engine_build` (the command parses it).
struct EngineSettingsInto {
  deploy::Flags& flags;
  std::optional<std::string>& engine_build;
};

// The settings' flags, in one block for --help.
std::vector<Option> engine_setting_options(EngineSettingsInto into);

// What every vLLM start command carries for the settings given in `flags` (unset: nothing, the engine's default):
// `vllm serve` arguments ("--enforce-eager", "--max-num-seqs 64", "--limit-mm-per-prompt '{...}'"), environment
// (VLLM_USE_FLASHINFER_SAMPLER), and environment only an NPU's engine reads (HCCL_BUFFSIZE). --kv-cache-dtype is written
// by each row from its fit; --engine-build and --npu-driver-version describe the installed stack and add nothing.
plan::EngineArgs engine_setting_args(const deploy::Flags& flags);

// The first of `argv`'s flags that is an engine setting, as "--name" ("--enforce-eager"); empty when none is. For the
// engines that take none of them (plan --engine llama.cpp), which refuse them before their own parsing.
std::string first_engine_setting(const std::vector<std::string>& argv);

}  // namespace preflight::cli
