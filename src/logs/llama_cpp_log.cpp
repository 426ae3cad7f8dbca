// llama.cpp log reader. The lines it reads, as llama.cpp prints them (b6000+ names first, older names
// after): "llama_model_loader: loaded meta data with 16 key-value pairs and 90 tensors from PATH (version
// GGUF V3 (latest))", "load_tensors: loading model tensors, this can take a while... (load_mode = mmap)",
// "load_tensors: offloaded 33/33 layers to GPU", "load_tensors:   CPU_Mapped model buffer size =    54.69 MiB"
// ("llm_load_tensors:        CPU buffer size =  4437.80 MiB" before the kind word existed),
// "llama_context: n_ctx                 = 1024", "llama_context: flash_attn = enabled",
// "llama_kv_cache:        CPU KV buffer size =     8.00 MiB", "llama_kv_cache: size = 8.00 MiB (1024 cells,
// 8 layers, 1/1 seqs), K (f16): 4.00 MiB, V (f16): 4.00 MiB", "sched_reserve: CPU compute buffer size =
// 95.75 MiB", "llama_context: CPU output buffer size = 0.18 MiB".
#include "logs/llama_cpp_log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "base/text.hpp"
#include "logs/log_scan.hpp"

namespace preflight::logs {

namespace {

constexpr size_t k_max_line_chars = 64 * 1024;

// The function names llama.cpp has printed the context parameters under (n_ctx, n_batch, n_ubatch,
// n_seq_max, flash_attn), newest first: "llama_context:", "llama_init_from_model:" (the early-2025 name; an
// Ollama runner's log of April 2025 prints "llama_init_from_model: n_ctx = 8192", issue 15 evid31) and
// "llama_new_context_with_model:".
constexpr const char* k_context_prefixes[] = {"llama_context:", "llama_init_from_model:", "llama_new_context_with_model:"};
// What llama.cpp chose for "flash_attn = auto", printed after it: "... Flash Attention was auto, set to enabled".
constexpr const char* k_flash_attn_resolved = "Flash Attention was auto, set to ";

std::optional<int64_t> to_int(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoll(s);
}

// "llama_context: n_ctx                 = 1024" -> the text after '=' when the key matches exactly.
std::optional<std::string> context_value(const std::string& line, const std::string& prefix, const std::string& key) {
  const auto p = line.find(prefix);
  if (p == std::string::npos) return std::nullopt;
  const auto eq = line.find('=', p + prefix.size());
  if (eq == std::string::npos || trim(line.substr(p + prefix.size(), eq - p - prefix.size())) != key) return std::nullopt;
  return trim(line.substr(eq + 1));
}

// The kind of an old-style "<fn>: <device> buffer size" line, from the function that printed it.
std::string kind_from_function(const std::string& line) {
  if (line.find("load_tensors") != std::string::npos) return "model";
  if (line.find("kv_cache") != std::string::npos) return "KV";
  return "compute";
}

// "<fn>: <device> [model|KV|compute|output] buffer size = X MiB".
std::optional<LlamaLogBuffer> buffer_line(const std::string& line, int64_t number) {
  const auto at = line.find(" buffer size =");
  const auto colon = line.find(": ");
  if (at == std::string::npos || colon == std::string::npos || colon > at) return std::nullopt;
  std::istringstream words(line.substr(colon + 2, at - colon - 2));
  std::vector<std::string> w;
  for (std::string x; words >> x;) w.push_back(x);
  if (w.empty() || w.size() > 2) return std::nullopt;
  LlamaLogBuffer b;
  b.device = w[0];
  b.kind = w.size() == 2 ? w[1] : kind_from_function(line);
  if (b.kind != "model" && b.kind != "KV" && b.kind != "RS" && b.kind != "compute" && b.kind != "output") return std::nullopt;
  const std::string rest = line.substr(at + 14);
  char* end = nullptr;
  const double mib = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str() || std::string(end).find("MiB") == std::string::npos) return std::nullopt;
  // Issue 19 (hard35): llama.cpp prints "%8.2f MiB"; strtod also takes "nan" and "inf", which made the buffer table's
  // total "nan". Such a line is not one llama.cpp printed.
  if (!std::isfinite(mib) || mib < 0) return std::nullopt;
  b.bytes = mib * 1024.0 * 1024.0;
  b.line = number;
  return b;
}

// Short llama.cpp flags and their long names (common/arg.cpp).
std::string long_flag(const std::string& f) {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"-c", "ctx-size"}, {"-ub", "ubatch-size"}, {"-b", "batch-size"}, {"-np", "parallel"}, {"-ngl", "n-gpu-layers"}, {"--gpu-layers", "n-gpu-layers"},
      {"-ctk", "cache-type-k"}, {"-ctv", "cache-type-v"}, {"-fa", "flash-attn"}, {"-m", "model"}, {"-hf", "hf-repo"}, {"-t", "threads"}};
  for (const auto& [s, l] : names)
    if (f == s) return l;
  return f.rfind("--", 0) == 0 ? f.substr(2) : "";
}

void read_command_line(const std::string& line, int64_t number, LlamaCppLog& log) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  size_t i = 0;
  while (i < w.size() && w[i].find("llama-server") == std::string::npos && w[i].find("llama-cli") == std::string::npos) ++i;
  if (i == w.size()) return;
  static const std::vector<std::string> switches = {"no-mmap", "mlock", "cont-batching", "no-kv-offload"};
  for (++i; i < w.size(); ++i) {
    if (w[i].empty() || w[i][0] != '-') continue;
    const std::string name = long_flag(w[i]);
    if (name.empty()) continue;
    const bool is_switch = std::find(switches.begin(), switches.end(), name) != switches.end();
    // -fa without a value is the older switch form: on.
    const bool next_is_value = i + 1 < w.size() && (w[i + 1].empty() || w[i + 1][0] != '-');
    std::string value = is_switch ? "" : next_is_value ? w[i + 1] : name == "flash-attn" ? "on" : "";
    if (!is_switch && next_is_value) ++i;
    log.flags.push_back({name, {value, number}});
  }
}

void read_line(const std::string& line, int64_t n, LlamaCppLog& log) {
  for (const char* key : {"build: ", "version: "}) {  // llamacpp33: 'build: 7342 (2fbe3b7bb) with GNU 11.4.0 ...'
    const std::string k = key;
    const auto at = line.find_first_not_of(' ');
    if (at == std::string::npos || line.compare(at, k.size(), k) != 0) continue;
    const auto from = at + k.size(), space = line.find(' ', from);
    if (space == std::string::npos || space + 1 >= line.size() || line[space + 1] != '(') continue;
    if (const auto v = to_int(line.substr(from, space - from)); v && *v > 0) log.build = Logged<int64_t>{*v, n};
  }
  if (auto p = line.find("loaded meta data with"); p != std::string::npos) {
    const auto from = line.find(" from ", p);
    const auto version = line.rfind(" (version");
    if (from != std::string::npos) log.model_path = Logged<std::string>{line.substr(from + 6, (version != std::string::npos && version > from ? version : line.size()) - from - 6), n};
  }
  if (auto p = line.find("(load_mode = "); p != std::string::npos) log.load_mode = Logged<std::string>{line.substr(p + 13, line.find(')', p) - p - 13), n};
  if (auto p = line.find("offloaded "); p != std::string::npos && line.find("layers to GPU") != std::string::npos) {
    const auto slash = line.find('/', p);
    const auto space = line.find(' ', slash == std::string::npos ? p : slash);
    if (slash != std::string::npos && space != std::string::npos) {
      const auto done = to_int(line.substr(p + 10, slash - p - 10)), all = to_int(line.substr(slash + 1, space - slash - 1));
      if (done && all) {
        log.layers_offloaded = Logged<int64_t>{*done, n};
        log.layer_count = Logged<int64_t>{*all, n};
      }
    }
  }
  for (const auto& [key, field] : std::vector<std::pair<const char*, std::optional<Logged<int64_t>>*>>{
           {"n_ctx", &log.n_ctx}, {"n_batch", &log.n_batch}, {"n_ubatch", &log.n_ubatch}, {"n_seq_max", &log.n_seq_max}}) {
    for (const char* prefix : k_context_prefixes)
      if (auto v = context_value(line, prefix, key); v && to_int(*v)) *field = Logged<int64_t>{*to_int(*v), n};
  }
  for (const char* prefix : k_context_prefixes)
    if (auto v = context_value(line, prefix, "flash_attn")) log.flash_attn = Logged<std::string>{*v == "1" ? "enabled" : *v == "0" ? "disabled" : *v, n};
  // "flash_attn = auto" is resolved a few lines later (under llama_context:, sched_reserve: in later builds;
  // llama.cpp src/llama-context.cpp); the resolved value replaces "auto".
  if (auto p = line.find(k_flash_attn_resolved); p != std::string::npos) {
    const std::string v = trim(line.substr(p + std::string(k_flash_attn_resolved).size()));
    if (v == "enabled" || v == "disabled") log.flash_attn = Logged<std::string>{v, n};
  }
  if (auto k = line.find(", K ("); k != std::string::npos && (line.find("kv_cache") != std::string::npos || line.find("KV self size") != std::string::npos)) {
    log.cache_type_k = Logged<std::string>{line.substr(k + 5, line.find(')', k) - k - 5), n};
    if (auto v = line.find(", V (", k); v != std::string::npos) log.cache_type_v = Logged<std::string>{line.substr(v + 5, line.find(')', v) - v - 5), n};
  }
  if (auto b = buffer_line(line, n)) log.buffers.push_back(*b);
  if (line.find("llama-server") != std::string::npos || line.find("llama-cli") != std::string::npos) read_command_line(line, n, log);
}

}  // namespace

double LlamaCppLog::total(const std::string& kind) const {
  double sum = 0;
  for (const auto& b : buffers) sum += b.kind == kind ? b.bytes : 0.0;
  return sum;
}

bool is_llama_cpp_log(const std::string& text) {
  for (const char* marker : {"llama_model_loader:", "load_tensors:", "llama_kv_cache", "sched_reserve:", "llama_new_context_with_model:"})
    if (text.find(marker) != std::string::npos) return true;
  return false;
}

LlamaCppLog parse_llama_cpp_log(const std::string& text) {
  LlamaCppLog log;
  size_t start = 0;
  int64_t n = 0;
  const char line_end = detail::line_end_byte(text);
  while (start < text.size()) {
    size_t end = text.find(line_end, start);
    if (end == std::string::npos) end = text.size();
    std::string line = strip_terminal_controls(text.substr(start, std::min(end - start, k_max_line_chars)));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    read_line(line, ++n, log);
    start = end + 1;
  }
  log.line_count = n;
  if (!log.model_path) {
    for (const auto& [name, value] : log.flags)
      if (name == "model") log.model_path = value;
  }
  return log;
}

}  // namespace preflight::logs
