// engine/vllm_gguf_types: the ggml types vLLM's in-tree GGUF support runs, by version (data/engines/vllm_gguf_types.json,
// issue 16 spec35). A GGUF whose tensor is of another type (MXFP4 in gpt-oss GGUFs) does not start: from 0.9.0 a linear
// or embedding layer of it is refused at load ("ValueError: Unsupported GGUF quantization type 39 in layer ..."), routed
// experts and every layer before 0.9.0 stop in the profile run ("NotImplementedError: Unsupported GGUF quantization type:
// 39"). From 0.24.0 GGUF is the out-of-tree vllm-gguf-plugin's, not covered.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct VllmGgufTypeList {
  std::string id;
  Version version_min, version_max;
  std::vector<std::string> types;  // ggml type names as GGUF writes them ("Q4_K", "IQ4_XS", "F32")
  bool load_check = false;         // linear and embedding layers checked at load (0.9.0 on)
  std::string source;
  bool takes(const std::string& type) const;
};

struct VllmGgufTypeCatalog {
  std::vector<VllmGgufTypeList> lists;
  std::string origin;
};

// corrupt naming `origin` and the record: an unknown key, an empty type list or source, a bad or overlapping range.
Expected<VllmGgufTypeCatalog> parse_vllm_gguf_types(const Json& root, const std::string& origin);
// The embedded data/engines/vllm_gguf_types.json, parsed once per process.
const Expected<VllmGgufTypeCatalog>& shipped_vllm_gguf_types();
// The list of vLLM (`engine_name` "vllm" only: vLLM-Ascend refuses GGUF altogether) at `version`; nullptr otherwise.
const VllmGgufTypeList* vllm_gguf_type_list(const VllmGgufTypeCatalog& catalog, const std::string& engine_name, const Version& version);

// What vLLM raises for a tensor of ggml type `type` (number `type_id`, as Python prints the IntEnum) of GGUF tensor
// `layer`, or "" when `list` takes the type: at load for a linear / embedding layer where the list has load_check ('in
// layer {layer}': vLLM prints the module, its class named here for the llama-style tensors, its sizes elided "(...)"),
// else in the profile run; followed by the tensor, the version's types, the phase and the file (gguf36).
std::string vllm_gguf_type_refusal(const VllmGgufTypeCatalog& catalog, const VllmGgufTypeList& list, const std::string& type, uint32_t type_id,
                                   const std::string& layer, bool expert);

}  // namespace preflight::engine
