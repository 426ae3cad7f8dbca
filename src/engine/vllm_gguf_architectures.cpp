#include "engine/vllm_gguf_architectures.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"

namespace preflight::engine {

namespace {

Status read_arch_list(VllmGgufArchCatalog& out, const JsonObject& r, const std::string& id, const std::string& where, const std::string& origin) {
  VllmGgufArchList list;
  list.id = id;
  PF_TRY(versions, read_list_versions(r, where, origin));
  list.version_min = versions.first;
  list.version_max = versions.second;
  const Json* renames = r.find("renames");
  if (!renames || !renames->is_object()) return make_error(ErrorKind::corrupt, where + ": renames must be an object (model_type: GGUF architecture)", origin);
  for (const auto& [from, to] : renames->items()) {
    if (!to.is_string() || to.get<std::string>().empty())
      return make_error(ErrorKind::corrupt, where + ".renames." + from + ": expected a GGUF architecture name", origin);
    list.renames[from] = to.get<std::string>();
  }
  PF_TRY(source, read_list_source(r, where, origin));
  list.source = source;
  return add_disjoint_list(out.lists, std::move(list), where, origin);
}

}  // namespace

Expected<VllmGgufArchCatalog> parse_vllm_gguf_architectures(const Json& root, const std::string& origin) {
  VllmGgufArchCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "gguf_arch_names", "gguf_arch_names_source", "lists", "file_architectures"}));
  (void)top_ok;
  PF_TRY(names, string_list(top.find("gguf_arch_names"), origin + ": gguf_arch_names", origin));
  if (names.empty()) return make_error(ErrorKind::corrupt, origin + ": gguf_arch_names must not be empty", origin);
  out.arch_names = std::move(names);
  PF_TRY(names_source, top.string("gguf_arch_names_source"));
  if (names_source.empty()) return make_error(ErrorKind::corrupt, origin + ": gguf_arch_names_source must not be empty", origin);
  out.arch_names_source = names_source;
  PF_TRY(lists, for_each_record(top, origin, "lists", "id", {"id", "version_min", "version_max", "renames", "source"},
                                [&](const JsonObject& r, const std::string& id, const std::string& where) { return read_arch_list(out, r, id, where, origin); }));
  (void)lists;
  if (out.lists.empty()) return make_error(ErrorKind::corrupt, origin + ": lists is empty", origin);
  PF_TRY(files, for_each_record(top, origin, "file_architectures", "architecture", {"architecture", "model_type", "transformers_refusal", "source"},
                                [&](const JsonObject& r, const std::string& arch, const std::string& where) -> Status {
    VllmGgufFileArch f;
    f.architecture = arch;
    PF_TRY(model_type, r.string("model_type"));
    PF_TRY(refusal, r.opt_string("transformers_refusal"));
    PF_TRY(source, r.string("source"));
    if (model_type.empty() || source.empty()) return make_error(ErrorKind::corrupt, where + ": model_type and source must not be empty", origin);
    f.model_type = model_type;
    f.transformers_refusal = refusal.value_or("");
    f.source = source;
    out.file_architectures.push_back(std::move(f));
    return Ok{};
  }));
  (void)files;
  return out;
}

const Expected<VllmGgufArchCatalog>& shipped_vllm_gguf_architectures() {
  static const Expected<VllmGgufArchCatalog> catalog = []() -> Expected<VllmGgufArchCatalog> {
    const std::string origin = "data/engines/vllm_gguf_architectures.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/vllm_gguf_architectures.json")), origin));
    return parse_vllm_gguf_architectures(json, origin);
  }();
  return catalog;
}

std::string vllm_gguf_architecture_refusal(const VllmGgufArchCatalog& catalog, const std::string& engine_name, const Version& version,
                                           const std::string& model_type, bool from_file) {
  if (engine_name != "vllm" || model_type.empty()) return "";
  const VllmGgufArchList* in_range = list_for_version(catalog.lists, version);
  if (!in_range) return "";
  const VllmGgufArchList& list = *in_range;
  const VllmGgufFileArch* file = nullptr;
  if (from_file)
    for (const auto& a : catalog.file_architectures)
      if (a.architecture == model_type) file = &a;
  const std::string hf_type = file ? file->model_type : model_type;
  // The loader's lookup (GGUFModelLoader._get_gguf_weights_map): the renamed model type among gguf-py's names.
  const auto renamed = list.renames.find(hf_type);
  const std::string name = renamed == list.renames.end() ? hf_type : renamed->second;
  std::string loader;
  if (std::find(catalog.arch_names.begin(), catalog.arch_names.end(), name) == catalog.arch_names.end()) {
    std::string renames;
    for (const auto& [from, to] : list.renames) renames += (renames.empty() ? "" : ", ") + from + " -> " + to;
    loader = "RuntimeError: Unknown gguf model_type: " + name;
    loader += " (vLLM's GGUF loader, GGUFModelLoader._get_gguf_weights_map, before it reads a tensor: vLLM " + list.version_min.text() + " - " +
              list.version_max.text() + " renames " + renames + " and looks the model type up among gguf-py's architecture names, which have no " + name +
              "; " + list.source + "; " + catalog.origin + ")";
  }
  if (file && !file->transformers_refusal.empty()) {
    std::string out = file->transformers_refusal + " (transformers' GGUF reader, while vLLM reads the config from the file, before any worker starts: " +
                      file->source;
    if (!loader.empty())
      out += "; with --hf-config-path naming a Hugging Face config, vLLM's loader stops next, before it reads a tensor: RuntimeError: Unknown gguf model_type: " + name;
    return out + "; " + catalog.origin + ")";
  }
  return loader;
}

}  // namespace preflight::engine
