#include "engine/vllm_gguf_types.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"

namespace preflight::engine {

bool VllmGgufTypeList::takes(const std::string& type) const { return std::find(types.begin(), types.end(), type) != types.end(); }

Expected<VllmGgufTypeCatalog> parse_vllm_gguf_types(const Json& root, const std::string& origin) {
  VllmGgufTypeCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "lists"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "lists", "id", {"id", "version_min", "version_max", "types", "load_check", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    VllmGgufTypeList list;
    list.id = id;
    PF_TRY(range, read_list_versions(r, where, origin));
    list.version_min = range.first;
    list.version_max = range.second;
    PF_TRY(types, read_record_names(r, "types", where, origin, EmptyWording::must_not_be_empty));
    list.types = std::move(types);
    PF_TRY(load_check, r.opt_bool("load_check"));
    if (!load_check) return make_error(ErrorKind::corrupt, where + ": load_check (true or false) is missing", origin);
    list.load_check = *load_check;
    PF_TRY(source, read_list_source(r, where, origin));
    list.source = source;
    return add_disjoint_list(out.lists, std::move(list), where, origin);
  }));
  (void)walked;
  if (out.lists.empty()) return make_error(ErrorKind::corrupt, origin + ": lists is empty", origin);
  return out;
}

const Expected<VllmGgufTypeCatalog>& shipped_vllm_gguf_types() {
  static const Expected<VllmGgufTypeCatalog> catalog = []() -> Expected<VllmGgufTypeCatalog> {
    const std::string origin = "data/engines/vllm_gguf_types.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/vllm_gguf_types.json")), origin));
    return parse_vllm_gguf_types(json, origin);
  }();
  return catalog;
}

const VllmGgufTypeList* vllm_gguf_type_list(const VllmGgufTypeCatalog& catalog, const std::string& engine_name, const Version& version) {
  return engine_name == "vllm" ? list_for_version(catalog.lists, version) : nullptr;
}

namespace {

// The vLLM module class that holds GGUF tensor `layer` in the llama-style layout (vllm/model_executor/layers/linear.py,
// vocab_parallel_embedding.py; the model files build q/k/v as one QKVParallelLinear and gate/up as one
// MergedColumnParallelLinear); "" for another tensor.
std::string vllm_layer_class(const std::string& layer) {
  const auto has = [&](const char* part) { return layer.find(part) != std::string::npos; };
  if (has("token_embd")) return "VocabParallelEmbedding";
  if (layer == "output.weight") return "ParallelLMHead";
  if (has("_exps") || has("_shexp")) return "";
  if (has(".attn_q.") || has(".attn_k.") || has(".attn_v.") || has(".attn_qkv.")) return "QKVParallelLinear";
  if (has(".attn_output.") || has(".ffn_down.")) return "RowParallelLinear";
  if (has(".ffn_gate.") || has(".ffn_up.")) return "MergedColumnParallelLinear";
  return "";
}

}  // namespace

std::string vllm_gguf_type_refusal(const VllmGgufTypeCatalog& catalog, const VllmGgufTypeList& list, const std::string& type, uint32_t type_id,
                                   const std::string& layer, bool expert) {
  if (list.takes(type)) return "";
  const std::string id = std::to_string(type_id);
  const bool at_load = list.load_check && !expert;
  std::string names;
  for (const auto& t : list.types) names += (names.empty() ? "" : ", ") + t;
  const std::string tail = " (ggml type " + type + " of the GGUF tensor " + layer + "; vLLM " + list.version_min.text() + " - " + list.version_max.text() + " runs " +
                           names +
                           (at_load ? "; raised at load by GGUFLinearMethod.process_weights_after_loading, after the weights are read and before "
                                      "'Model loading took' is printed"
                                    : "; raised in the profile run's first forward, after 'Model loading took' is printed and before the KV cache is sized") +
                           "; " + catalog.origin + ")";
  // vLLM formats the layer object itself: its class and extra_repr (sizes, tp_size), elided here as "(...)".
  const std::string cls = vllm_layer_class(layer);
  if (at_load)
    return "ValueError: Unsupported GGUF quantization type " + id + " in layer " + (cls.empty() ? std::string("<the module of ") + layer + ">" : cls + "(...)") + "." + tail;
  return "NotImplementedError: Unsupported GGUF quantization type: " + id + tail;
}

}  // namespace preflight::engine
