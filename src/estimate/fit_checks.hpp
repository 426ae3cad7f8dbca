// The fit's layout and quantization checks (fit_checks.cpp); private to src/estimate, called by fit.cpp.
#pragma once

#include "estimate/fit.hpp"

namespace preflight::estimate::checks {

// Parallel layout checks (vLLM ParallelConfig / model verify_with_parallel_config); false when refused (e.failure set).
bool layout_accepted(FitEstimate& e, const model::ModelSpec& m, const Deployment& dep);
// Quantization accepted by this engine on this platform; false when refused (e.failure set).
bool quantization_accepted(FitEstimate& e, const model::ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep);
// Issue 16 (gguf36): after sizing and the printed lines, a GGUF file's tensor of a ggml type vLLM does not run (vLLM
// stops at load or in the profile run, after reading the weights): the verdict and the lines the engine prints first.
void gguf_type_stop(FitEstimate& e, const model::ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep);
// Issue 19 (hard35): vLLM's scheduler checks on the batch sizes resolve_settings settled (e.max_num_seqs,
// e.max_num_batched_tokens: the flags, else the version's defaults for the card), data/engines/scheduler_checks.json.
// Without --max-num-seqs, a version that caps its default at max_num_batched_tokens lowers e.max_num_seqs to it (with an
// assumption when explained). invalid_argument with the engine's message when it refuses max_num_batched_tokens below
// max_num_seqs (vLLM SchedulerConfig); corrupt when the shipped file does not load.
Status scheduler_batch_accepted(FitEstimate& e, const engine::EngineProfile& engine, const Deployment& dep);

}  // namespace preflight::estimate::checks
