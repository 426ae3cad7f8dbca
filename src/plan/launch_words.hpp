// plan/launch_words: what launch.cpp and launch_llama.cpp share (internal to src/plan): a local path, a model id's last
// part and the local folder a model was read from as a start command's words, and llama-server's model argument for a
// row (launch_llama.cpp). Split from launch.cpp (issue 19, hard35).
#pragma once

#include <string>

#include "base/text.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/model_spec.hpp"
#include "plan/launch.hpp"

namespace preflight::plan::launch_words {

// The last '/'-separated part of a model id ("Qwen3-8B" of "Qwen/Qwen3-8B"), the id itself without a '/'.
inline std::string base_name(const std::string& id) {
  const auto slash = id.find_last_of('/');
  return slash == std::string::npos ? id : id.substr(slash + 1);
}

// A local path as a command's argument: one shell word, and "./" before a relative path that begins with '-' (the
// command would read it as an option: `preflight plan --devices H100 -rf` started `vllm serve -rf`).
inline std::string shell_path(const std::string& path) { return shell_word(!path.empty() && path[0] == '-' ? "./" + path : path); }

// Issue 19 (hard30): the local folder the model was read from (its id is a path and its config.json the source), or "":
// a recipe then reads that folder and downloads nothing (it wrote `hf download /the/folder`, which is no repo id).
inline std::string local_folder(const model::ModelSpec& m, const std::string& model_id) {
  if (model_id != m.id || starts_with(m.id, "hf:") || starts_with(m.id, "ms:") || !starts_with(m.source, m.id)) return "";
  if (m.source != m.id) return m.id;
  const auto slash = m.id.find_last_of('/');
  return slash == std::string::npos ? "." : m.id.substr(0, slash);  // the id named config.json itself
}

// llama-server and its model argument for a row (`llama-server -hf REPO[:QUANT]`, `... -m PATH`), with the download,
// conversion and quantization commands it needs written to `l.prepare` and their notes to `l.notes`; launch_llama.cpp.
// user37: a start that clones llama.cpp to convert builds llama-server there and runs llama.cpp/build/bin/llama-server;
// otherwise (a published GGUF, a file given) `llama-server` from PATH.
std::string llama_server_and_model(const model::ModelSpec& m, const Candidate& c, Launch& l, const engine::QuantizedCatalog& published);

}  // namespace preflight::plan::launch_words
