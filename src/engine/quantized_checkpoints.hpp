// engine/quantized_checkpoints: published quantized checkpoints of base models and the conversion
// steps that produce one when none is published (data/engines/quantized_checkpoints.json). A start
// command names a checkpoint that really has the format it asks the engine for: a listed repo, or
// the output path of a listed conversion.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::engine {

struct QuantizedCheckpoint {
  std::string repo;               // hub repo id served by `vllm serve`
  std::string hub;                // huggingface | modelscope
  std::string base_model;         // the BF16 repo it was quantized from
  std::string variant;            // id in data/variants/quant_variants.json: w8a8 | awq | ...
  std::string format;             // human-readable, e.g. "msModelSlim W8A8"
  std::string quantization_flag;  // --quantization value for this checkpoint; empty = read from its config
  std::string url, source;
};

struct ConversionRecipe {
  std::string id;
  std::string variant;             // variant id it produces (data/variants/quant_variants.json)
  std::string platform;            // npu | cuda | any: where the tool runs
  std::string tool;
  std::string output_suffix;       // appended to the model name for the output directory
  std::string quantization_flag;   // --quantization value for the output; empty = read from its config
  std::vector<std::string> commands;  // templates: {model_id} {model_name} {model_dir} {output_dir} {devices}
  std::string note;                // template: {bf16_gib}
  std::string source;
  // The id of the QuantizedCatalog::model_types list its {model_type} template is filled from (msModelSlim's
  // --model_type); empty: its commands name no {model_type}.
  std::string model_types;
};

// One model adapter of a conversion tool (a group of msModelSlim's config/config.ini [ModelAdapter]): every name of it
// loads the same adapter; `config_model_types` are the config.json model_type values of the models it is for, where read
// (empty: matched by name only).
struct ModelAdapter {
  std::string id;  // "qwen3_5_moe"
  std::vector<std::string> config_model_types;
  std::vector<std::string> names;
};

// The model names a conversion tool registers an adapter for, which its --model_type takes; another name falls back to
// the tool's default adapter and default practice (issue 16, quant29). quant30: grouped by adapter, so a model whose
// config.json model_type is an adapter's family gets a name of that adapter.
struct ModelTypeList {
  std::string id;
  std::string tool;
  std::vector<ModelAdapter> adapters;
  std::vector<std::string> names;  // every adapter's names, in the file's order
  std::string source;
};

// A variant the engine produces itself while loading a BF16/FP16 checkpoint (vLLM's --quantization fp8,
// --quantization bitsandbytes): the start command serves the BF16 repo with that flag, no conversion.
struct InFlightQuantization {
  std::string variant;            // id in data/variants/quant_variants.json the loaded weights are
  std::string platform;           // npu | cuda | any: where the engine does it
  std::string quantization_flag;  // --quantization value that asks for it
  // The engine's message (verbatim) rejecting a published checkpoint of the variant under tensor parallelism
  // (vLLM's bitsandbytes loader); non-empty: a row with TP > 1 quantizes the BF16 original at load instead.
  std::string published_tp_rejection;
  std::string note, source;
};

// Issue 16 (quant30): a package the engine needs, from a version on, to serve a checkpoint asked for with one
// --quantization (vLLM moved GGUF out of the tree into vllm-gguf-plugin in 0.24.0): its install commands go before
// `vllm serve` in the start command, at that version and later only (the plugin requires the vLLM that dropped the
// in-tree code).
struct ServePlugin {
  std::string id;
  std::string quantization_flag;      // "gguf"
  std::string engine;                 // vllm | vllm-ascend
  std::string from_version;           // "0.24.0": needed from this engine version on
  std::vector<std::string> commands;  // run before `vllm serve`
  std::string note, source;
};

// Issue 16 (quant31): why no conversion produces `variant` on `platform`, with what was read to say so: a refusal keeps
// its reason ("no start command: ... and no conversion recipe on npu: <reason>") instead of leaving the gap unexplained.
// A variant and platform with a conversion cannot also have one of these.
struct MissingRecipe {
  std::string variant, platform, reason, source;
};

struct QuantizedCatalog {
  std::vector<QuantizedCheckpoint> checkpoints;
  std::vector<InFlightQuantization> in_flight;  // optional section "in_flight"
  std::vector<ConversionRecipe> conversions;
  // Casts of a published checkpoint back to BF16, for tools that quantize from BF16 only (msModelSlim):
  // `variant` is the checkpoint variant the cast reads (fp8_block), the output is BF16 (no quantization_flag).
  std::vector<ConversionRecipe> casts;
  std::vector<ModelTypeList> model_types;  // optional section "model_types"
  std::vector<ServePlugin> serve_plugins;  // optional section "serve_plugins"
  std::vector<MissingRecipe> no_recipe;    // optional section "no_recipe"
  std::string origin;
};

// Validates every record: unknown keys, empty source, a url that is not https, an unknown hub,
// duplicate repo or recipe ids, a recipe whose commands never write {output_dir}, a cast with a
// quantization_flag, a no_recipe record repeated or beside a conversion of its variant and platform (corrupt errors
// naming the file and record). "casts" is optional.
Expected<QuantizedCatalog> parse_quantized_catalog(const Json& root, const std::string& origin);
Expected<QuantizedCatalog> load_quantized_catalog();
// The shipped catalogue, loaded once per process (thread-safe static) for the callers that read it without a plan's
// launch rules: plan's variant list, fit's variant notes.
const Expected<QuantizedCatalog>& shipped_quantized_catalog();

// The published checkpoint of `base_model` (hub id, case-insensitive) in `variant`, or nullptr.
const QuantizedCheckpoint* find_quantized_checkpoint(const QuantizedCatalog& catalog, const std::string& base_model, const std::string& variant);
// The conversion producing `variant` on `platform` (a recipe for "any" matches every platform), or nullptr.
const ConversionRecipe* find_conversion(const QuantizedCatalog& catalog, const std::string& variant, const std::string& platform);
// Why no conversion produces `variant` on `platform` (a record for "any" matches every platform), or nullptr.
const MissingRecipe* find_missing_recipe(const QuantizedCatalog& catalog, const std::string& variant, const std::string& platform);
// The engine's load-time quantization of a BF16 checkpoint into `variant` on `platform`, or nullptr.
const InFlightQuantization* find_in_flight(const QuantizedCatalog& catalog, const std::string& variant, const std::string& platform);
// The catalogue's record of the published checkpoint `repo` (hub id, case-insensitive), or nullptr.
const QuantizedCheckpoint* find_checkpoint_by_repo(const QuantizedCatalog& catalog, const std::string& repo);
// The --model_type `recipe` writes for a model named `model_name` (the repo's base name, "Qwen3-30B-A3B-Instruct-2507")
// whose config.json model_type is `config_model_type` ("" when not known): the name of its model_types list equal to it,
// else the longest one it begins with before a '-' ("Qwen3-30B", the adapter msModelSlim registers for the Qwen3-30B-A3B
// family), else (quant30) a name of the adapter whose config_model_types hold `config_model_type`: the one with the
// longest common ending with `model_name` (its size tag: "Qwen3.5-35B-A3B" for Qwen3.6-35B-A3B, model_type
// qwen3_5_moe), then the length nearest `model_name`'s, then the first listed; every name of an adapter loads it, the
// name picks among its practices.
// nullopt when none matches (the tool has no adapter for the model). A recipe without a list: `model_name` itself.
std::optional<std::string> recipe_model_type(const QuantizedCatalog& catalog, const ConversionRecipe& recipe, const std::string& model_name,
                                             const std::string& config_model_type = "");
// The plugin `engine` at `version` ("0.24.0"; compared as X.Y.Z) needs to serve a checkpoint with `--quantization
// quantization_flag`, or nullptr.
const ServePlugin* find_serve_plugin(const QuantizedCatalog& catalog, const std::string& quantization_flag, const std::string& engine, const std::string& version);
// The adapter of `recipe`'s model_types list whose config_model_types hold `config_model_type`, or nullptr.
const ModelAdapter* family_adapter(const QuantizedCatalog& catalog, const ConversionRecipe& recipe, const std::string& config_model_type);
// Whether every published checkpoint, conversion and load-time record of `variant` serves it without --quantization
// (quantization_flag "": vLLM reads quant_method from the checkpoint), and there is at least one.
bool served_without_quantization_flag(const QuantizedCatalog& catalog, const std::string& variant);
// The cast that turns a checkpoint of `from_variant` (an id of data/variants/quant_variants.json, e.g.
// fp8_block) into BF16, or nullptr.
const ConversionRecipe* find_cast(const QuantizedCatalog& catalog, const std::string& from_variant);

}  // namespace preflight::engine
