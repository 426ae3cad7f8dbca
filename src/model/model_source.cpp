#include "model/model_source.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "base/checked.hpp"
#include "base/file.hpp"
#include "base/json_util.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "model/gguf_reader.hpp"
#include "model/header_stub.hpp"
#include "model/hf_config.hpp"
#include "model/hub_repo_id.hpp"
#include "model/model_catalog.hpp"
#include "model/safetensors_header.hpp"

namespace preflight::model {

namespace {
std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// Tensors the engine skips unless speculative decoding is on: MTP modules ("mtp." prefix, Qwen3.5)
// and DeepSeek-style next-token layers stored as model.layers.<num_hidden_layers + i>.
bool is_mtp_tensor(const std::string& name, int64_t num_layers) {
  if (name.find("mtp.") != std::string::npos) return true;
  const std::string marker = "layers.";
  const auto pos = name.find(marker);
  if (pos == std::string::npos) return false;
  const auto start = pos + marker.size();
  const auto end = name.find('.', start);
  const std::string index = name.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos || index.size() > 6) return false;
  return std::stoll(index) >= num_layers && name.find("visual") == std::string::npos;
}

// A byte a terminal acts on other than a line break or a tab: C0 controls (ESC starts every escape sequence, CR rewrites
// the line), DEL, and the UTF-8 encoded C1 controls U+0080 - U+009F (CSI among them).
bool holds_terminal_control(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return true;
  }
  return false;
}
}  // namespace

std::vector<std::string> hub_cache_candidates(const std::string& hub_id) {
  std::vector<std::string> out;
  if (!is_hub_repo_id(hub_id)) return out;  // issue 19 (hard31): "x/../../elsewhere" joined into the cache paths
  const std::string home = env_or("HOME", "/root");
  const std::string hf_home = env_or("HF_HOME", join_path(home, ".cache/huggingface"));
  const std::string hf_cache = env_or("HF_HUB_CACHE", env_or("HUGGINGFACE_HUB_CACHE", join_path(hf_home, "hub")));
  std::string repo_dir = "models--";
  for (char c : hub_id) repo_dir += (c == '/') ? std::string("--") : std::string(1, c);
  out.push_back(join_path(hf_cache, repo_dir));
  const std::string ms = env_or("MODELSCOPE_CACHE", join_path(home, ".cache/modelscope/hub"));
  out.push_back(join_path(join_path(ms, "models"), hub_id));
  out.push_back(join_path(ms, hub_id));
  // The ModelScope SDK stores a name's dots as "___" (modelscope/hub/file_download.py).
  std::string ms_name;
  for (char c : hub_id) ms_name += (c == '.') ? std::string("___") : std::string(1, c);
  if (ms_name != hub_id) out.push_back(join_path(join_path(ms, "models"), ms_name));
  return out;
}

namespace {
// models--org--name -> snapshots/<rev> named by refs/<revision>, a snapshot named <revision>, else
// (revision main only) the only/last snapshot.
std::string hf_snapshot_dir(const std::string& repo_dir, const std::string& revision) {
  const std::string snapshots = join_path(repo_dir, "snapshots");
  if (!is_directory(snapshots) || revision.empty() || revision.find("..") != std::string::npos) return {};
  auto ref = read_text_file(join_path(join_path(repo_dir, "refs"), revision), 4096);
  if (ref) {
    const std::string rev = trim(*ref);
    if (!rev.empty() && rev.find('/') == std::string::npos && is_directory(join_path(snapshots, rev))) return join_path(snapshots, rev);
  }
  if (revision.find('/') == std::string::npos && is_directory(join_path(snapshots, revision))) return join_path(snapshots, revision);
  if (revision != "main") return {};
  const auto revs = list_directory(snapshots);
  return revs.empty() ? std::string{} : join_path(snapshots, revs.back());
}

// Issue 16/19 (ux29): the shards model.safetensors.index.json names (its weight_map's values, each once, in order of
// first appearance) that `names` (the directory's entries) holds neither as the file nor as its header stub. A download
// cut short leaves some out (ModelScope keeps unfinished files in ._____temp, Hugging Face as blobs/*.incomplete, and
// neither links them into the folder until they are whole); summing the shards that are there sized an 8B model as 0.7 GiB.
Expected<std::vector<std::string>> shards_missing(const std::string& index_path, const std::vector<std::string>& names, size_t& named) {
  PF_TRY(index, load_json_file(index_path));
  const Json* map = index.is_object() ? &index["weight_map"] : nullptr;
  if (!map || !map->is_object())
    return make_error(ErrorKind::corrupt, format("%s: weight_map: expected an object of tensor name -> shard file", base_name(index_path).c_str()), index_path);
  std::vector<std::string> shards;
  std::unordered_set<std::string> seen;  // DeepSeek-V3's map: 91,991 tensors over 163 shards
  for (const auto& [tensor, shard] : map->items()) {
    if (!shard.is_string())
      return make_error(ErrorKind::corrupt, format("%s: weight_map[%s]: expected a shard file name", base_name(index_path).c_str(), tensor.c_str()), index_path);
    if (seen.insert(shard.get<std::string>()).second) shards.push_back(shard.get<std::string>());
  }
  named = shards.size();
  const std::unordered_set<std::string> present(names.begin(), names.end());
  std::vector<std::string> missing;
  for (const auto& shard : shards)
    if (!present.count(shard) && !present.count(shard + k_header_stub_suffix)) missing.push_back(shard);
  return missing;
}

// The assumption a folder with missing shards carries: which, how many, and what the weights are then taken from.
std::string missing_shards_text(const std::vector<std::string>& missing, size_t named, const std::vector<std::string>& names) {
  std::string list;
  // Issue 19 (hard30): the names are the index file's text, printed as an assumption: an escape sequence in one reached
  // the terminal, a 1 MB name the output whole.
  for (size_t i = 0; i < missing.size() && i < 3; ++i) list += (i ? ", " : "") + one_line(strip_terminal_controls(missing[i]), 200);  // hard34: and on one line
  if (missing.size() > 3) list += format(" and %zu more", missing.size() - 3);
  const bool ms_temp = std::find(names.begin(), names.end(), "._____temp") != names.end();
  return format("model.safetensors.index.json names %zu shard files and %zu of them are not in the folder (%s): an incomplete download%s; weight bytes "
                "computed from the architecture, not summed over the %zu shard(s) present; finish the download before serving (hf download and "
                "modelscope download resume it)",
                named, missing.size(), list.c_str(), ms_temp ? " (ModelScope's ._____temp holds its unfinished files)" : "", named - missing.size());
}

// A shard's header from the shard itself or from its header stub.
Expected<SafetensorsHeader> load_shard_header(const std::string& path, uint64_t* bytes_read) {
  if (!ends_with(path, k_header_stub_suffix)) return load_safetensors_header(path, bytes_read);
  PF_TRY(stub, load_header_stub(path));
  *bytes_read = stub.prefix.size();
  const std::string name = base_name(path);
  return parse_safetensors_prefix(stub.prefix.data(), stub.prefix.size(), stub.file_size_bytes, name.substr(0, name.size() - 7));
}
}  // namespace

Expected<ModelSpec> load_model_directory(const std::string& path) {
  std::string dir = path;
  std::string config_path;
  if (!is_directory(path)) {
    config_path = path;
    const auto slash = path.find_last_of('/');
    dir = slash == std::string::npos ? "." : path.substr(0, slash);
  } else {
    config_path = join_path(dir, "config.json");
  }
  PF_TRY(spec, load_hf_config(config_path));
  spec.id = path;
  spec.source = config_path;
  // An unreadable directory must not look like one without shards: the weights would silently shrink.
  PF_TRY(names, read_directory_names(dir));
  // Quantization descriptors beside config.json.
  for (const auto& n : names) {
    if (n == "quant_model_description.json") {
      PF_TRY(json, load_json_file(join_path(dir, n)));
      PF_TRY(scheme, parse_modelslim_description(json, join_path(dir, n)));
      scheme.config_quant_method = spec.quant.method;  // config.json's own quantization_config, if any
      spec.quant = scheme;
      spec.provenance.push_back({"quantization", join_path(dir, n), scheme.detail});
    } else if (n == "hf_quant_config.json" && !spec.quant.quantized()) {
      PF_TRY(json, load_json_file(join_path(dir, n)));
      PF_TRY(scheme, parse_hf_quant_config(json, join_path(dir, n)));
      spec.quant = scheme;
      spec.provenance.push_back({"quantization", join_path(dir, n), scheme.detail});
    }
  }
  if (spec.quant.quantized() && spec.quant.source == config_path) spec.provenance.push_back({"quantization", config_path, spec.quant.detail});
  // Safetensors headers: exact bytes.
  uint64_t total = 0, mtp = 0, shards = 0;
  for (const auto& n : names) {
    const bool stub = ends_with(n, std::string(".safetensors") + k_header_stub_suffix);
    if (!ends_with(n, ".safetensors") && !stub) continue;
    // A stub stands in for its shard only when the shard itself is absent.
    if (stub && path_exists(join_path(dir, n.substr(0, n.size() - 7)))) continue;
    uint64_t read = 0;
    PF_TRY(header, load_shard_header(join_path(dir, n), &read));
    spec.header_bytes_read += read;
    ++shards;
    for (const auto& t : header.tensors) {
      // Shards each within their own declared size can still sum past 2^64 (issue 19 item 5).
      uint64_t& sum = is_mtp_tensor(t.name, spec.num_hidden_layers) ? mtp : total;
      const auto next = checked_add(sum, t.bytes());
      if (!next || *next > static_cast<uint64_t>(INT64_MAX)) {
        return make_error(ErrorKind::corrupt, format("%s: tensor %s: weight bytes summed over the shards overflow", n.c_str(), t.name.c_str()), join_path(dir, n));
      }
      sum = *next;
      if (&sum == &mtp) continue;
      spec.exact_bytes_by_dtype[dtype_name(t.dtype)] += t.bytes();
      ++spec.exact_tensor_count;
    }
  }
  // The index names every shard; with some missing, the sum above is part of the model (ux29).
  std::vector<std::string> missing;
  size_t named = 0;
  if (const std::string index = join_path(dir, "model.safetensors.index.json"); shards > 0 && path_exists(index)) {
    PF_TRY(absent, shards_missing(index, names, named));
    missing = std::move(absent);
  }
  if (!missing.empty()) {
    spec.exact_bytes_by_dtype.clear();
    spec.exact_tensor_count = 0;
    spec.assumptions.push_back(missing_shards_text(missing, named, names));
  } else if (shards > 0) {
    spec.exact_weight_bytes = total;
    spec.provenance.push_back({"weight bytes", dir, format("sum of %llu safetensors headers (%llu tensors; %llu bytes of MTP tensors excluded as not loaded)",
                                                          static_cast<unsigned long long>(shards), static_cast<unsigned long long>(spec.exact_tensor_count),
                                                          static_cast<unsigned long long>(mtp))});
  } else if (path_exists(join_path(dir, "model.safetensors.index.json"))) {
    spec.assumptions.push_back("model.safetensors.index.json present but no shard files: weight bytes computed from the architecture");
  }
  return spec;
}

// GGUF by its magic (the first four bytes "GGUF"), not its name: Ollama stores its blobs as sha256-<hex>.
bool has_gguf_magic(const std::string& path) {
  auto reader = FileReader::open(path);
  if (!reader || reader->size_bytes() < 4) return false;
  auto head = reader->read_at(0, 4);
  return head && std::memcmp(head->data(), "GGUF", 4) == 0;
}

Expected<ModelSpec> load_gguf_model(const std::string& path) {
  Expected<GgufFile> file = make_error(ErrorKind::io, "unread", path);
  if (ends_with(to_lower(path), k_header_stub_suffix)) {
    PF_TRY(stub, load_header_stub(path));
    const std::string name = base_name(path);
    file = parse_gguf_prefix(stub.prefix.data(), stub.prefix.size(), stub.file_size_bytes, name.substr(0, name.size() - 7));
  } else {
    file = load_gguf(path);
  }
  if (!file) return file.error();
  PF_TRY(spec, model_spec_from_gguf(*file, path));
  spec.id = path;
  return spec;
}

std::string find_hub_cache_snapshot(const std::string& hub_id, const std::string& revision) {
  for (const auto& candidate : hub_cache_candidates(hub_id)) {
    if (!is_directory(candidate)) continue;
    const std::string snap = starts_with(base_name(candidate), "models--") ? hf_snapshot_dir(candidate, revision) : candidate;
    if (!snap.empty() && path_exists(join_path(snap, "config.json"))) return snap;
  }
  return {};
}

Expected<ModelSpec> resolve_model(const std::string& raw, const ResolveOptions& options) {
  std::string name = trim(raw);
  bool hub_only = false;
  if (starts_with(name, "hf:") || starts_with(name, "ms:")) {
    name = name.substr(3);
    hub_only = true;
  }
  if (name.empty()) return make_error(ErrorKind::invalid_argument, "empty model name");
  // A path that loops (a -> b -> a) does not "exist", but it is no catalogue name either.
  if (!hub_only && is_symlink_loop(name)) {
    return make_error(ErrorKind::invalid_argument, format("%s: symbolic link loop (ELOOP): the path never resolves to a file or directory", name.c_str()), name);
  }
  if (!hub_only && path_exists(name)) {
    // Issue 19 (attack36): a local path is printed (fit's and inspect's header, plan's rows, the start command and the
    // Kubernetes manifest's comment): a folder named with an escape sequence recoloured or retitled the terminal. A path
    // holding a terminal control (ESC, CR, backspace, BEL, any C0 control but newline and tab, DEL, a UTF-8 C1 control)
    // is refused, never shown altered (the start command must name the folder as it is). A newline stays taken: the
    // start commands quote it and the comments fold it (hard30, hard32).
    if (holds_terminal_control(name))
      return make_error(ErrorKind::invalid_argument,
                        "a model path holding a terminal control character (shown escaped) is refused: it would reach the terminal and the start command "
                        "as it is; rename the folder or file",
                        one_line(name, 200));
    const std::string lower = to_lower(name);
    if (ends_with(lower, ".gguf") || ends_with(lower, std::string(".gguf") + k_header_stub_suffix) || (!is_directory(name) && has_gguf_magic(name)))
      return load_gguf_model(name);
    return load_model_directory(name);
  }
  // Issue 19 (hard31): a name with '/' that is no local path is looked up as a hub repo id only when it is one by the
  // hub's rules; anything else ("x/../../elsewhere", "/abs/path", "a\\b") never joins into a cache path.
  const std::string repo_problem = name.find('/') != std::string::npos ? hub_repo_id_problem(name) : "";
  if (name.find('/') != std::string::npos && repo_problem.empty()) {
    const std::string snap = find_hub_cache_snapshot(name, "main");
    if (!snap.empty()) {
      PF_TRY(spec, load_model_directory(snap));
      spec.id = name;
      return spec;
    }
    std::string flat;
    for (char c : name) flat += (c == '/') ? std::string("__") : std::string(1, c);
    for (const auto& dir : options.extra_model_dirs) {
      const std::string candidate = join_path(dir, flat);
      if (path_exists(join_path(candidate, "config.json"))) {
        PF_TRY(spec, load_model_directory(candidate));
        spec.id = name;
        return spec;
      }
    }
  }
  PF_TRY(indexed, find_builtin_model(name));
  if (indexed) return model_spec_from_catalog(*indexed);
  const auto& catalog = builtin_model_catalog();
  if (!repo_problem.empty())
    return make_error(ErrorKind::invalid_argument,
                      format("model '%s' is not a local path, not in the catalogue, and not a hub repo id org/name (letters, digits, '-', '_', '.'): %s",
                             one_line(name, 200).c_str(), repo_problem.c_str()),
                      name);
  std::string message = format("model '%s' is not a local path, not in the Hugging Face or ModelScope cache, and not in the catalogue", one_line(name, 200).c_str());
  const auto near = nearest_names(name, catalog.names());
  if (!near.empty()) {
    message += "; did you mean ";
    for (size_t i = 0; i < near.size(); ++i) message += (i ? ", " : "") + near[i];
  }
  // A hub id ("Qwen/Qwen3-32B-AWQ") is read from the hub only when asked (hf: / ms:): say how.
  if (name.find('/') != std::string::npos)
    message += format("; to read its config from a hub: hf:%s (Hugging Face) or ms:%s (ModelScope)", name.c_str(), name.c_str());
  return make_error(ErrorKind::not_found, message, name);
}

}  // namespace preflight::model
