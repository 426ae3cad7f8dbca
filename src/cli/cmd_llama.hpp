// cli/cmd_llama: `preflight fit MODEL.gguf --device D --engine llama.cpp`: llama.cpp's own memory model
// (estimate/llama_cpp) with llama.cpp's flag names, printed as llama.cpp's start-up lines (model, KV,
// compute and output buffer sizes per device) with a verdict against the device's memory; `--device cpu`
// is this host (MemAvailable from /proc/meminfo). `--json` carries the object `llama_cpp`.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace preflight::cli {

// True when argv names the llama.cpp engine (--engine llama.cpp[@version] or --engine=llama.cpp...).
bool llama_cpp_engine_requested(const std::vector<std::string>& argv);
int cmd_fit_llama_cpp(const std::vector<std::string>& argv);
// A /proc/meminfo figure in bytes ("MemAvailable"); nullopt when the file or the line is missing.
std::optional<double> meminfo_bytes(const std::string& key);
// `preflight fit ... --engine llama.cpp --help`: llama.cpp's own flags and exit codes (ux28: the help printed was vLLM's).
std::string llama_cpp_help_text();

// `preflight logs FILE` for a llama.cpp start-up log (logs::is_llama_cpp_log): the buffers llama.cpp
// printed against estimate_llama_cpp for the model file and parameters the log names. Exit 0 when the
// log was read (a prediction that cannot be made is a note), 1 when the model file cannot be read.
int cmd_logs_llama_cpp(const std::string& path, const std::string& text, bool json);

}  // namespace preflight::cli
