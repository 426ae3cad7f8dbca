// estimate/mindie: what MindIE Service (mindie_llm_server / mindieservice_daemon) reserves on each NPU, by
// its own mechanism: a static KV pool per card, either fixed (ModelConfig.npuMemSize > 0, in GiB) or, with
// npuMemSize = -1, what is left of the runtime-reported total x NPU_MEMORY_FRACTION after the weights and the
// runtime variables (a multimodal model instead gets a pool sized from its config, and must leave MindIE's
// post-warm-up free memory); the pool is cut into blocks of cacheBlockSize tokens, and a request holds
// Ceil(input / cacheBlockSize) + Ceil(output / cacheBlockSize) blocks. Options take MindIE's config.json key
// names. Rules, defaults and ranges come from data/engines/mindie.json (MindIE LLM service_parameter_configuration.md,
// cited there); the runtime-variable term has no published formula and is a band (docs/mindie.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "device/device_spec.hpp"
#include "model/model_spec.hpp"

namespace preflight::estimate {

// data/engines/mindie.json: documented defaults (config.json key -> value), ranges and sources.
struct MindieCatalog {
  std::string version;
  std::map<std::string, double> defaults;
  std::map<std::string, std::pair<int64_t, int64_t>> limits;
  std::vector<std::string> accepted_weight_formats;  // model::weight_format_name values
  // "mtp" (issue 16, mindie35): the config.json architectures MindIE's MTP page lists (others get a warning), and the MTP
  // module's tensors MindIE's ATB backend takes from the main model instead of loading them ("embed_tokens",
  // "shared_head.head": the checkpoint's model.layers.<N>.embed_tokens / shared_head.head). Both optional (empty: none).
  std::vector<std::string> mtp_architectures;
  std::vector<std::string> mtp_shared_with_model;
  std::map<std::string, std::string> sources;
  std::string origin;
};
// Errors: corrupt naming the file and key (missing defaults/limits/sources, a non-numeric value, an unknown key).
Expected<MindieCatalog> parse_mindie_catalog(const Json& root, const std::string& origin);
Expected<MindieCatalog> load_mindie_catalog();  // the embedded data/engines/mindie.json

// The config.json values the memory model reads, named as MindIE names them.
struct MindieOptions {
  int64_t npu_mem_size = -1;           // ModelConfig.npuMemSize: -1 auto, else GiB of KV per card
  int64_t cache_block_size = 128;      // ScheduleConfig.cacheBlockSize, [1, 128]
  int64_t max_seq_len = 2560;          // ModelDeployConfig.maxSeqLen
  int64_t max_input_token_len = 2048;  // ModelDeployConfig.maxInputTokenLen (capped at maxSeqLen - 1)
  int64_t max_prefill_tokens = 8192;   // ScheduleConfig.maxPrefillTokens, >= maxInputTokenLen
  int64_t max_prefill_batch_size = 50; // ScheduleConfig.maxPrefillBatchSize, <= maxBatchSize (0: maxBatchSize)
  int64_t max_batch_size = 200;        // ScheduleConfig.maxBatchSize, [1, 5000]
  int64_t max_iter_times = 512;        // ScheduleConfig.maxIterTimes, [1, maxSeqLen]
  int64_t world_size = 1;              // ModelConfig.worldSize: cards of one instance (tensor parallel)
  double npu_memory_fraction = 0.8;    // env NPU_MEMORY_FRACTION (documented default 0.8)
  int kv_cache_dtype_bytes = 2;        // bf16 / fp16 cache (2); 1 with KV cache int8
  // ModelConfig.plugin_params {"plugin_type":"mtp","num_speculative_tokens":N}: MTP; 0 off, else 1 or 2 (MindIE's MTP
  // page). With MTP the block holds one more layer whatever N is, and the MTP module's weights load (issue 16, mindie34).
  int64_t num_speculative_tokens = 0;
};
// Defaults from the catalogue; fields it lacks keep the struct's values.
MindieOptions mindie_default_options(const MindieCatalog& catalog);

// invalid_argument naming the config.json key, the documented range and the value found.
Status check_mindie_options(const MindieOptions& o, const MindieCatalog& catalog);

enum class MindieVerdict { fits, marginal, does_not_fit };
const char* mindie_verdict_name(MindieVerdict v);

// Per card. "low"/"high" are the two ends of the runtime-variable band: kv_*_bytes and blocks_* at the
// high runtime end are the pessimistic values.
struct MindieEstimate {
  int64_t input_tokens = 0;           // min(maxInputTokenLen, maxSeqLen - 1)
  int64_t output_tokens = 0;          // min(maxIterTimes, maxSeqLen - input)
  double card_bytes = 0;              // npu-smi total (device memory_bytes)
  double runtime_total_bytes = 0;     // what the runtime reports as the card's total (acl.rt.get_mem_info; MindIE's "total_mem")
  double fraction_bytes = 0;          // runtime total x NPU_MEMORY_FRACTION (MindIE's warm_up; docs/mindie.md)
  double system_bytes = 0;            // card - runtime total: outside what the runtime hands out, so not in the KV formula
  double weight_bytes = 0;            // per card: weights / worldSize
  double runtime_bytes_low = 0, runtime_bytes_high = 0;
  bool npu_mem_auto = true;
  double kv_pool_bytes_low = 0, kv_pool_bytes_high = 0;  // at runtime high / low
  int64_t kv_bytes_per_token = 0;     // per card
  int64_t block_bytes = 0;            // per card: cacheBlockSize x kv_bytes_per_token
  int64_t total_blocks_low = 0, total_blocks_high = 0;
  int64_t blocks_per_request = 0;
  int64_t batch_low = 0, batch_high = 0;  // full-length requests the pool holds: the maxBatchSize MindIE's doc derives
  MindieVerdict verdict = MindieVerdict::fits;
  std::string reason;
  std::vector<std::string> formulas;
  std::vector<std::string> assumptions;
  std::vector<std::string> warnings;
};

// Errors: invalid_argument from check_mindie_options; unsupported for a checkpoint format MindIE does not
// load (FP8, NVFP4, MXFP4, AWQ/GPTQ int4, GGUF), recurrent layers, or KV heads that worldSize does not divide.
// A multimodal model with npuMemSize -1 gets MindIE's config-sized pool and a warning (issue 15, evid33).
Expected<MindieEstimate> estimate_mindie(const model::ModelSpec& spec, const device::DeviceSpec& device, const MindieOptions& options,
                                         const MindieCatalog& catalog);

// Issue 15 (evid33): the npuMemSize (GiB, whole) to write for a multimodal model, whose -1 MindIE sizes from the
// config rather than the free memory: the largest pool that fits runtime total x NPU_MEMORY_FRACTION less the
// weights and the pessimistic runtime band, and leaves the free memory MindIE's post-warm-up check asks for.
// 0 when nothing is left. e is an estimate of the same model, card and options.
Expected<int64_t> mindie_multimodal_npu_mem_gib(const MindieEstimate& e, const MindieOptions& options, const MindieCatalog& catalog);

}  // namespace preflight::estimate
