// Engine log reader. A vLLM log is free text with a few fixed formats (reference section 1.3):
// "Model loading took %s GiB memory and %.6f seconds", "Available KV cache memory: %s GiB",
// "GPU KV cache size: %s tokens", "Maximum concurrency for %s tokens per request: %.2fx"; the
// engine arguments appear as a Python dict ("non-default args: {...}"), as key=value pairs
// ("Initializing a V1 LLM engine (v0.10.1) with config: model='...', ..."), or on the command line.
// Lines may carry a process prefix ("(EngineCore_DP0 pid=12) ERROR 08-01 ... [core.py:700] ") and
// ANSI colours; matching is by substring so both pass through.
#include "logs/engine_log.hpp"
#include "logs/log_scan.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>

#include "base/json_util.hpp"
#include "base/json_writer.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::logs {

namespace {

using namespace detail;

// A speculative config as the log writes it, as JSON: the flag's JSON, the dict's Python repr, or the
// config dump's "SpeculativeConfig(method='mtp', model=..., num_spec_tokens=1)". Empty when unreadable.
std::string speculative_json(const std::string& v) {
  if (starts_with(v, "SpeculativeConfig(")) {
    // method='([^']*)' and num_spec(?:ulative)?_tokens=(\d+), each at its first occurrence.
    const size_t m = v.find("method='");
    const size_t m_end = m == std::string::npos ? m : v.find('\'', m + 8);
    if (m_end == std::string::npos) return {};
    std::string json = "{\"method\": \"" + v.substr(m + 8, m_end - m - 8) + "\"";
    for (size_t t = v.find("num_spec"); t != std::string::npos; t = v.find("num_spec", t + 1)) {
      size_t d = t + 8;
      if (v.compare(d, 7, "ulative") == 0) d += 7;
      if (v.compare(d, 8, "_tokens=") != 0) continue;
      d += 8;
      const size_t e = digits_end(v, d);
      if (e == d) continue;
      json += ", \"num_speculative_tokens\": " + v.substr(d, e - d);
      break;
    }
    return json + "}";
  }
  if (v.empty() || v.front() != '{') return {};
  std::string json = v;
  std::replace(json.begin(), json.end(), '\'', '"');
  return json;
}

// --limit-mm-per-prompt as the log writes it, as JSON: the flag's JSON or the dict's Python repr
// ({'image': 0}), or the key=value form vLLM also parses (image=0,video=0). Empty when unreadable.
std::string mm_limits_json(const std::string& v) {
  if (!v.empty() && v.front() == '{') {
    std::string json = v;
    std::replace(json.begin(), json.end(), '\'', '"');
    return json;
  }
  std::string json;
  for (const auto& part : split(v, ',')) {
    const size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0) return {};
    const std::string key = trim(part.substr(0, eq)), count = trim(part.substr(eq + 1));
    // A modality name (image, video, audio) only: nothing a log writes there needs escaping in JSON.
    if (key.empty() || !std::all_of(key.begin(), key.end(), [](unsigned char ch) { return std::islower(ch) || ch == '_'; })) return {};
    if (!to_int(count)) return {};
    json += (json.empty() ? "{" : ", ") + std::string("\"") + key + "\": " + count;
  }
  return json.empty() ? json : json + "}";
}

// Issue 15: the capture keys of a compilation config as the log writes it (the flag's JSON, or the Python repr of the
// non-default args, where unset fields print None and the mode an enum repr), as JSON; empty when none is set.
std::string compilation_json(const std::string& v) {
  std::string json;
  // ['"]cudagraph_capture_sizes['"]\s*:\s*\[([\d,\s]*)\]
  if (size_t at = after_quoted_key(v, "cudagraph_capture_sizes"); at < v.size() && v[at] == '[') {
    size_t e = at + 1;
    while (e < v.size() && (std::isdigit(static_cast<unsigned char>(v[e])) != 0 || v[e] == ',' || std::isspace(static_cast<unsigned char>(v[e])) != 0)) ++e;
    if (e < v.size() && v[e] == ']') {
      std::string list;
      for (const auto& part : split(v.substr(at + 1, e - at - 1), ','))
        if (!trim(part).empty()) list += (list.empty() ? "" : ", ") + trim(part);
      json += "\"cudagraph_capture_sizes\": [" + list + "]";
    }
  }
  // ['"]max_cudagraph_capture_size['"]\s*:\s*(-?\d+)
  if (const size_t at = after_quoted_key(v, "max_cudagraph_capture_size"); at < v.size()) {
    const size_t d = v[at] == '-' ? at + 1 : at, e = digits_end(v, d);
    if (e > d) json += std::string(json.empty() ? "" : ", ") + "\"max_cudagraph_capture_size\": " + v.substr(at, e - at);
  }
  // ['"]cudagraph_mode['"]\s*:\s*(?:<CUDAGraphMode\.(\w+)|['"](\w+)['"])
  if (const size_t at = after_quoted_key(v, "cudagraph_mode"); at < v.size()) {
    std::string mode;
    if (v.compare(at, 15, "<CUDAGraphMode.") == 0) {
      mode = v.substr(at + 15, word_end(v, at + 15) - at - 15);
    } else if (quote(v[at])) {
      const size_t e = word_end(v, at + 1);
      if (e > at + 1 && e < v.size() && quote(v[e])) mode = v.substr(at + 1, e - at - 1);
    }
    if (!mode.empty()) json += std::string(json.empty() ? "" : ", ") + "\"cudagraph_mode\": \"" + mode + "\"";
  }
  return json.empty() ? json : "{" + json + "}";
}

// Using (?:AttentionBackendEnum\.)?(\w+) (?:attention )?backend(?:\.| out of potential): the backend vLLM's platform
// selected (vllm/platforms/cuda.py).
std::optional<std::string> selected_backend(std::string_view line) {
  for (size_t u = line.find("Using "); u != std::string_view::npos; u = line.find("Using ", u + 1)) {
    size_t w = u + 6;
    if (line.compare(w, 21, "AttentionBackendEnum.") == 0) w += 21;
    const size_t e = word_end(line, w);
    if (e == w || e >= line.size() || line[e] != ' ') continue;
    size_t b = e + 1;
    if (line.compare(b, 10, "attention ") == 0) b += 10;
    if (line.compare(b, 7, "backend") != 0) continue;
    b += 7;
    if ((b < line.size() && line[b] == '.') || line.compare(b, 17, " out of potential") == 0) return std::string(line.substr(w, e - w));
  }
  return std::nullopt;
}

// Issue 15 (arch32): vLLM <= 0.8.2's speculative arguments (the V0 Namespace's speculative_model='[ngram]',
// num_speculative_tokens=5, speculative_draft_tensor_parallel_size=1; the flags on a logged command line), merged into
// the speculative config's JSON the way vLLM 0.8.2 builds it from them ([ngram] is method ngram).
void apply_legacy_speculative(EngineArgs& a, const std::string& key, const std::string& v, int64_t line) {
  Json j = a.speculative_config ? Json::parse(a.speculative_config->value, nullptr, false) : Json::object();
  if (!j.is_object()) return;
  const std::string text = unquote(v);
  if (key == "speculative_model") {
    if (text == "[ngram]") j["method"] = "ngram";
    else j["model"] = text;
  } else if (key == "speculative_model_quantization") {  // hard36: the drafter's quantization and longest sequence
    j["quantization"] = text;
  } else if (const auto n = to_int(text)) {
    // quant34: V0's n-gram window too (ngram_prompt_lookup_max/min -> prompt_lookup_max/min, as 0.8.2's create_speculative_config maps them)
    j[key == "num_speculative_tokens"              ? "num_speculative_tokens"
      : key == "speculative_draft_tensor_parallel_size" ? "draft_tensor_parallel_size"
      : key == "speculative_max_model_len"              ? "max_model_len"
                                                        : key.substr(std::string("ngram_").size())] = *n;
  } else {
    return;
  }
  a.speculative_config = Logged<std::string>{dump_json(j), a.speculative_config ? a.speculative_config->line : line};
}

// Applies one named argument (vLLM's Python name, dashes already turned into underscores).
void apply_arg(EngineArgs& a, const std::string& key, const std::string& raw, int64_t line) {
  const std::string v = trim(raw);
  if (v.empty() || v == "None" || v == "null") return;
  auto set_int = [&](std::optional<Logged<int64_t>>& slot) { if (auto n = to_int(v)) set_once(slot, *n, line); };
  if (key == "model" || key == "model_tag") set_once(a.model, v, line);
  else if (key == "tensor_parallel_size" || key == "tp") set_int(a.tensor_parallel_size);
  else if (key == "pipeline_parallel_size" || key == "pp") set_int(a.pipeline_parallel_size);
  else if (key == "max_model_len" || key == "max_seq_len") set_int(a.max_model_len);
  else if (key == "max_num_seqs") set_int(a.max_num_seqs);
  else if (key == "max_num_batched_tokens") set_int(a.max_num_batched_tokens);
  else if (key == "gpu_memory_utilization") { if (auto d = to_double(v)) set_once(a.gpu_memory_utilization, *d, line); }
  else if (key == "quantization") set_once(a.quantization, v, line);
  else if (key == "kv_cache_dtype") set_once(a.kv_cache_dtype, v, line);
  else if (key == "mamba_ssm_cache_dtype") set_once(a.mamba_ssm_cache_dtype, v, line);
  else if (key == "dtype") set_once(a.dtype, starts_with(v, "torch.") ? v.substr(6) : v, line);
  else if (key == "data_parallel_size" || key == "dp") set_int(a.data_parallel_size);
  else if (key == "data_parallel_size_local" || key == "dpl") set_int(a.data_parallel_size_local);
  else if (key == "data_parallel_start_rank" || key == "dpr") set_int(a.data_parallel_start_rank);
  else if (key == "data_parallel_rpc_port" || key == "dpp") set_int(a.data_parallel_rpc_port);
  else if (key == "api_server_count" || key == "asc") set_int(a.api_server_count);
  else if (key == "data_parallel_rank" || key == "dpn") set_int(a.data_parallel_rank);
  else if (key == "nnodes") { if (auto k = to_int(v); k && *k > 1) set_once(a.nnodes, *k, line); }  // 1: the default a Namespace prints
  else if (key == "node_rank") set_int(a.node_rank);
  else if (key == "master_port") set_int(a.master_port);
  else if (key == "master_addr") set_once(a.master_addr, unquote(v), line);
  else if (key == "data_parallel_address" || key == "dpa") set_once(a.data_parallel_address, unquote(v), line);
  else if (key == "data_parallel_backend" || key == "dpb") set_once(a.data_parallel_backend, unquote(v), line);
  else if (key == "headless" || key == "data_parallel_hybrid_lb" || key == "data_parallel_external_lb") {
    auto& slot = key == "headless" ? a.headless : key == "data_parallel_hybrid_lb" ? a.data_parallel_hybrid_lb : a.data_parallel_external_lb;
    if (v == "True" || v == "true") set_once(slot, true, line);
    else if (v == "False" || v == "false") set_once(slot, false, line);
  }
  else if (key == "decode_context_parallel_size" || key == "dcp") set_int(a.decode_context_parallel_size);
  else if (key == "limit_mm_per_prompt") { if (auto j = mm_limits_json(v); !j.empty()) set_once(a.limit_mm_per_prompt, j, line); }
  else if (key == "speculative_config") { if (auto j = speculative_json(v); !j.empty()) set_once(a.speculative_config, j, line); }
  else if (key == "speculative_model" || key == "num_speculative_tokens" || key == "speculative_draft_tensor_parallel_size" || key == "ngram_prompt_lookup_max" ||
           key == "ngram_prompt_lookup_min" || key == "speculative_model_quantization" || key == "speculative_max_model_len")
    apply_legacy_speculative(a, key, v, line);
  else if (key == "compilation_config" || key == "cc") {
    if (to_int(v)) set_int(a.optimization_level);  // vLLM < 0.12: "-O 3" is the compilation level
    else if (auto j = compilation_json(v); !j.empty()) set_once(a.compilation_config, j, line);
  }
  else if (key == "optimization_level" || key == "O") set_int(a.optimization_level);
  else if (key.size() == 2 && key[0] == 'O' && std::isdigit(static_cast<unsigned char>(key[1]))) set_once(a.optimization_level, int64_t{key[1] - '0'}, line);
  else if (key == "attention_backend") set_once(a.attention_backend, to_upper(v), line);
  else if (key == "moe_backend") {  // vLLM KernelConfig._normalize_moe_backend: lower case, '-' read as '_'
    std::string name = to_lower(trim(v));
    std::replace(name.begin(), name.end(), '-', '_');
    set_once(a.moe_backend, name, line);
  }
  else if (key == "enable_expert_parallel") {
    if (v == "True" || v == "true") set_once(a.enable_expert_parallel, true, line);
    else if (v == "False" || v == "false") set_once(a.enable_expert_parallel, false, line);
  }
  else if (key == "enable_prefix_caching") {
    if (v == "True" || v == "true") set_once(a.enable_prefix_caching, true, line);
    else if (v == "False" || v == "false") set_once(a.enable_prefix_caching, false, line);
  }
  else if (key == "allow_deprecated_quantization") {
    if (v == "True" || v == "true") set_once(a.allow_deprecated_quantization, true, line);
    else if (v == "False" || v == "false") set_once(a.allow_deprecated_quantization, false, line);
  }
  else if (key == "enable_chunked_prefill" || key == "chunked_prefill_enabled") {  // the args; V0's config line
    if (v == "True" || v == "true") set_once(a.enable_chunked_prefill, true, line);
    else if (v == "False" || v == "false") set_once(a.enable_chunked_prefill, false, line);
  }
  else if (key == "enforce_eager" || key == "skip_mm_profiling" || key == "language_model_only") {
    auto& slot = key == "enforce_eager" ? a.enforce_eager : key == "skip_mm_profiling" ? a.skip_mm_profiling : a.language_model_only;
    if (v == "True" || v == "true") set_once(slot, true, line);
    else if (v == "False" || v == "false") set_once(slot, false, line);
  }
}

// Issue 15 (multinode32): vllm/entrypoints/cli/serve.py run_headless logs "Launching %d data parallel engine(s) in
// headless mode, with head node address %s." (the address get_tcp_uri(host, port): tcp://HOST:PORT): a headless node,
// its local rank count, the head's address and RPC port.
void scan_headless_launch(EngineArgs& a, const std::string& line, int64_t n) {
  const size_t p = line.find("Launching ");
  const size_t m = line.find(" data parallel engine(s) in headless mode");
  if (p == std::string::npos || m == std::string::npos || m <= p + 10) return;
  const auto local = to_int(line.substr(p + 10, m - p - 10));
  if (!local) return;
  set_once(a.headless, true, n);
  set_once(a.data_parallel_size_local, *local, n);
  const std::string tag = "head node address tcp://";
  const size_t h = line.find(tag, m);
  if (h == std::string::npos) return;
  std::string address = line.substr(h + tag.size());
  while (!address.empty() && (address.back() == '.' || address.back() == ' ' || address.back() == '\r')) address.pop_back();
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return;
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);  // an IPv6 host
  if (auto port = to_int(address.substr(colon + 1))) set_once(a.data_parallel_rpc_port, *port, n);
  if (!host.empty()) set_once(a.data_parallel_address, host, n);
}

// `vllm serve MODEL --flag value ...` or `... api_server --model MODEL ...`.
void scan_command_line(EngineArgs& a, const std::string& line, int64_t n) {
  std::vector<std::string> tokens;
  for (const auto& t : split(line, ' ')) if (!t.empty() && t != "\\") tokens.push_back(t);
  size_t i = 0;
  for (; i < tokens.size(); ++i) if (tokens[i] == "serve" || find_ci(tokens[i], "api_server") != std::string::npos) break;
  if (i >= tokens.size()) return;
  std::string dotted;  // the dotted compilation-config keys, as a Python dict body
  if (tokens[i] == "serve" && i + 1 < tokens.size() && tokens[i + 1][0] != '-') apply_arg(a, "model", tokens[i + 1], n);
  for (size_t k = i + 1; k < tokens.size(); ++k) {
    std::string t = tokens[k];
    if (t.rfind("-", 0) != 0) continue;
    while (!t.empty() && t[0] == '-') t.erase(0, 1);
    std::string value;
    const size_t eq = t.find('=');
    if (eq != std::string::npos) {
      value = t.substr(eq + 1);
      t = t.substr(0, eq);
    } else if (k + 1 < tokens.size() && tokens[k + 1].rfind("--", 0) != 0) {
      value = tokens[k + 1];
      // A JSON value the shell kept whole ('{"method": "mtp", ...}') was split at its spaces: rejoin it.
      for (size_t j = k + 2; j < tokens.size() && !value.empty() && (value[0] == '{' || value.rfind("'{", 0) == 0) &&
                             std::count(value.begin(), value.end(), '{') > std::count(value.begin(), value.end(), '}');
           ++j)
        value += " " + tokens[j];
      if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') value = value.substr(1, value.size() - 2);
    }
    std::replace(t.begin(), t.end(), '-', '_');
    // Issue 15 (dpep33): vLLM's one-letter short names (arg_utils.py, 0.11.1 on), read on a serve line only.
    if (t == "n") t = "nnodes";
    else if (t == "r") t = "node_rank";
    // Issue 15: -cc.key=value, --compilation-config.key value, -O.key=value (vLLM's dotted forms), merged into one JSON.
    if (const size_t dot = t.find('.'); dot != std::string::npos) {
      const std::string head = t.substr(0, dot), key = t.substr(dot + 1);
      if ((head == "cc" || head == "compilation_config" || head == "O") && !key.empty() && key.find('.') == std::string::npos) {
        const bool number = to_int(value).has_value();
        dotted += (dotted.empty() ? "" : ", ") + ("'" + key + "': ") + (number || value.rfind('[', 0) == 0 ? value : "'" + value + "'");
      }
      continue;
    }
    if (t == "enforce_eager" || t == "skip_mm_profiling" || t == "enable_expert_parallel" || t == "language_model_only" || t == "headless" ||
        t == "data_parallel_hybrid_lb" || t == "data_parallel_external_lb" || t == "allow_deprecated_quantization")
      value = "True";
    if (t == "no_enable_expert_parallel") { t = "enable_expert_parallel"; value = "False"; }
    if (t == "enable_prefix_caching") value = "True";
    if (t == "no_enable_prefix_caching") { t = "enable_prefix_caching"; value = "False"; }
    if (t == "enable_chunked_prefill") value = "True";
    if (t == "no_enable_chunked_prefill") { t = "enable_chunked_prefill"; value = "False"; }
    apply_arg(a, t, value, n);
  }
  if (!dotted.empty()) apply_arg(a, "compilation_config", "{" + dotted + "}", n);
}

void merge_args(EngineArgs& into, const EngineArgs& from) {
  auto m = [](auto& slot, const auto& other) { if (!slot && other) slot = other; };
  m(into.model, from.model);
  m(into.tensor_parallel_size, from.tensor_parallel_size);
  m(into.pipeline_parallel_size, from.pipeline_parallel_size);
  m(into.max_model_len, from.max_model_len);
  m(into.max_num_seqs, from.max_num_seqs);
  m(into.max_num_batched_tokens, from.max_num_batched_tokens);
  m(into.gpu_memory_utilization, from.gpu_memory_utilization);
  m(into.quantization, from.quantization);
  m(into.kv_cache_dtype, from.kv_cache_dtype);
  m(into.dtype, from.dtype);
  m(into.enforce_eager, from.enforce_eager);
  m(into.skip_mm_profiling, from.skip_mm_profiling);
  m(into.limit_mm_per_prompt, from.limit_mm_per_prompt);
  m(into.language_model_only, from.language_model_only);
  m(into.data_parallel_size, from.data_parallel_size);
  m(into.data_parallel_size_local, from.data_parallel_size_local);
  m(into.headless, from.headless);
  m(into.data_parallel_hybrid_lb, from.data_parallel_hybrid_lb);
  m(into.data_parallel_external_lb, from.data_parallel_external_lb);
  m(into.data_parallel_start_rank, from.data_parallel_start_rank);
  m(into.data_parallel_rpc_port, from.data_parallel_rpc_port);
  m(into.api_server_count, from.api_server_count);
  m(into.data_parallel_address, from.data_parallel_address);
  m(into.data_parallel_backend, from.data_parallel_backend);
  m(into.data_parallel_rank, from.data_parallel_rank);
  m(into.nnodes, from.nnodes);
  m(into.node_rank, from.node_rank);
  m(into.master_port, from.master_port);
  m(into.master_addr, from.master_addr);
  m(into.decode_context_parallel_size, from.decode_context_parallel_size);
  m(into.enable_expert_parallel, from.enable_expert_parallel);
  m(into.enable_prefix_caching, from.enable_prefix_caching);
  m(into.enable_chunked_prefill, from.enable_chunked_prefill);
  m(into.allow_deprecated_quantization, from.allow_deprecated_quantization);
  m(into.mamba_ssm_cache_dtype, from.mamba_ssm_cache_dtype);
  m(into.speculative_config, from.speculative_config);
  m(into.hccl_buffsize, from.hccl_buffsize);
  m(into.flashcomm1, from.flashcomm1);
  m(into.mlapo, from.mlapo);
  m(into.flashinfer_sampler, from.flashinfer_sampler);
  m(into.compilation_config, from.compilation_config);
  m(into.optimization_level, from.optimization_level);
  m(into.attention_backend, from.attention_backend);
  m(into.moe_backend, from.moe_backend);
}

// Up to 9 digits at `q` of `line`, after an optional opening quote; empty when there are none.
std::string env_digits(const std::string& line, size_t q) {
  if (q < line.size() && quote(line[q])) ++q;
  const size_t e = digits_end(line, q);
  return e > q && e - q <= 9 ? line.substr(q, e - q) : std::string();
}

// The first value `read(line, offset after '=')` finds after a "NAME=" of `line` whose NAME starts a word; empty when
// none.
template <typename Read>
std::string value_after_assignment(const std::string& line, const std::string& name, Read read) {
  const std::string key = name + "=";
  for (size_t p = line.find(key); p != std::string::npos; p = line.find(key, p + 1)) {
    if (p > 0 && word_byte(line[p - 1])) continue;
    if (std::string v = read(line, p + key.size()); !v.empty()) return v;
  }
  return {};
}

// NAME=digits anywhere in a line (an export, an env prefix of the command, a printed environment), issue 15; or
// 'NAME': 'digits' as a Python dict prints it: vllm-ascend's nightly multi-node runner logs the environment it
// launches each node with as "[INFO] Node 0 envs: {'HCCL_BUFFSIZE': '1024', ...}"
// (tests/e2e/nightly/multi_node/scripts, as saved in github.com/starmountain1997/gDS job logs, issue 15 ev). A YAML
// line "NAME: digits" (a config file echoed into the log, not what was applied) is not read.
std::optional<std::string> env_assignment(const std::string& line, const std::string& name) {
  if (std::string d = value_after_assignment(line, name, env_digits); !d.empty()) return d;
  for (const char q : {'\'', '"'}) {
    const std::string key = std::string(1, q) + name + q + ": ";
    for (size_t p = line.find(key); p != std::string::npos; p = line.find(key, p + 1)) {
      if (auto d = env_digits(line, p + key.size()); !d.empty()) return d;
    }
  }
  return std::nullopt;
}

// A 0/1 switch of the engine's environment as vLLM and vLLM-Ascend read it, bool(int(value)), on the digits env_assignment
// found: any value but zero is on (issue 19, hard32: "=2" and "=01" were read as off).
bool env_switch_on(const std::string& digits) { return digits.find_first_not_of('0') != std::string::npos; }

// (?:^|[^A-Za-z0-9_])VLLM_ATTENTION_BACKEND=["']?([A-Za-z_0-9]+)
std::optional<std::string> backend_env(const std::string& line) {
  std::string name = value_after_assignment(line, "VLLM_ATTENTION_BACKEND", [](const std::string& l, size_t q) {
    if (q < l.size() && quote(l[q])) ++q;
    return l.substr(q, word_end(l, q) - q);
  });
  if (name.empty()) return std::nullopt;
  return name;
}

void scan_versions(Versions& v, const std::string& line, int64_t n) {
  for (const char* key : {"vllm-ascend", "vllm_ascend"}) {
    if (auto ver = version_after(line, key)) set_once(v.vllm_ascend, *ver, n);
  }
  for (const char* key : {"vLLM API server version", "LLM engine (v", "vLLM version", "vllm==", "vllm "}) {
    if (std::string_view(key) == "vllm " && find_ci(line, "vllm-ascend ") != std::string::npos) continue;
    if (auto ver = version_after(line, key)) set_once(v.vllm, *ver, n);
  }
  for (const char* key : {"torch_npu", "torch-npu"}) {
    if (auto ver = version_after(line, key)) set_once(v.torch_npu, *ver, n);
  }
  for (const char* key : {"torch==", "PyTorch version", "torch version"}) {
    if (auto ver = version_after(line, key)) set_once(v.torch, *ver, n);
  }
  for (const char* key : {"CANN ", "CANN version", "cann=="}) {
    if (auto ver = version_after(line, key)) set_once(v.cann, *ver, n);
  }
  if (auto ver = version_after(line, "MindIE")) set_once(v.mindie, *ver, n);
}

// The size that ends just before `label` ("1.14 GiB for weights" with label "for weights" -> 1.14).
std::optional<double> gib_before(const std::string& s, const std::string& label) {
  const size_t p = s.find(label);
  if (p == std::string::npos) return std::nullopt;
  size_t i = p;
  while (i > 0 && s[i - 1] == ' ') --i;
  if (i < 3 || s.compare(i - 3, 3, "GiB") != 0) return std::nullopt;
  i -= 3;
  while (i > 0 && s[i - 1] == ' ') --i;
  while (i > 0 && (std::isdigit(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '.' || s[i - 1] == '-')) --i;
  if (i > 0 && std::isalnum(static_cast<unsigned char>(s[i - 1]))) return std::nullopt;  // "1e999 GiB": not a figure
  return size_at(s, i, SizeUnit::gib);
}

// The size in GiB right after `key`.
std::optional<double> gib_after(const std::string& s, const std::string& key) {
  const size_t p = s.find(key);
  if (p == std::string::npos) return std::nullopt;
  return size_at(s, p + key.size(), SizeUnit::gib);
}

// The engine's per-term memory summaries (engine_log.hpp PrintedLines, docs/logs.md "Per-term memory lines").
void scan_memory_summary(PrintedLines& p, const std::string& line, int64_t n) {
  // vLLM-Ascend, vllm_ascend/worker/worker.py compile_or_warm_up_model from PR #8289 (commit 65289ca, v0.19.1rc1;
  // the same f-string at v0.23.0 and v0.25.1rc1): "Free memory on device (F/T GiB) on startup. Desired GPU memory
  // utilization is (u, R GiB). Actual usage: W GiB for weights, A GiB for peak activation, N GiB for non-torch
  // memory, G GiB for NPU graph memory. Replace ... Current KV cache memory: K GiB." (format_gib: two decimals).
  if (const size_t a = line.find("Actual usage:"); a != std::string::npos) {
    const std::string usage = line.substr(a);
    if (auto v = gib_before(usage, "for weights")) set_once(p.weights_gib, *v, n);
    if (auto v = gib_before(usage, "for peak activation")) set_once(p.activation_peak_gib, *v, n);
    if (auto v = gib_before(usage, "for non-torch memory")) set_once(p.non_torch_gib, *v, n);
    if (auto v = gib_before(usage, "for NPU graph memory")) set_once(p.graph_gib, *v, n);
    if (auto v = gib_after(usage, "Current KV cache memory:")) set_once(p.kv_reserve_gib, *v, n);
    if (const size_t d = line.find("Desired GPU memory utilization is ("); d != std::string::npos && d < a) {
      const size_t comma = line.find(',', d);
      if (comma != std::string::npos && comma < a) {
        if (auto v = size_at(line, comma + 1, SizeUnit::gib)) set_once(p.requested_gib, *v, n);
      }
    }
  }
  // Issue 15 (pp36): "Free memory on device (F/T GiB)", T the total (vLLM gpu_worker.py, vLLM-Ascend worker.py).
  if (const size_t f = line.find("Free memory on device ("); f != std::string::npos) {
    const size_t slash = line.find('/', f), close = line.find(')', f);
    if (slash != std::string::npos && close != std::string::npos && slash < close) {
      if (auto v = size_at(line, slash + 1, SizeUnit::gib); v && *v > 0) set_once(p.device_total_gib, *v, n);
    }
  }
  // vLLM's V0 worker, vllm/worker/worker.py determine_num_available_blocks (wording of PR #12126, printed at INFO
  // until the V0 engine was removed; issue #11550 and PR #14447 quote it): one logger.info whose lines are
  // "Memory profiling takes X seconds", "the current vLLM instance can use total_gpu_memory (TGiB) x
  // gpu_memory_utilization (u) = RGiB" and "model weights take WGiB; non_torch_memory takes NGiB; PyTorch
  // activation peak memory takes AGiB; the rest of the memory reserved for KV Cache is KGiB.".
  if (line.find("the current vLLM instance can use total_gpu_memory") != std::string::npos) {
    const size_t eq = line.find(") = ");
    if (eq != std::string::npos) {
      if (auto v = size_at(line, eq + 4, SizeUnit::gib)) set_once(p.requested_gib, *v, n);
    }
  }
  if (auto v = gib_after(line, "model weights take")) set_once(p.weights_gib, *v, n);
  if (auto v = gib_after(line, "non_torch_memory takes")) set_once(p.non_torch_gib, *v, n);
  if (auto v = gib_after(line, "PyTorch activation peak memory takes")) set_once(p.activation_peak_gib, *v, n);
  if (auto v = gib_after(line, "the rest of the memory reserved for KV Cache is")) set_once(p.kv_reserve_gib, *v, n);
}

// Issue 15 (evid29): every TP / PP worker of one engine prints its own "Available KV cache memory" and, where the engine
// sized each worker's KV cache config before merging them (vLLM 0.10: get_kv_cache_config per worker, each logging "GPU
// KV cache size" and "Maximum concurrency"), its own pair of those; the engine keeps the smallest (unify_kv_cache_configs
// takes the minimum num_blocks; vllm/v1/core/kv_cache_utils.py). Within one engine start the smallest printed value is
// kept; the values of a later start (another "Initializing ... LLM engine" line: a second attempt in the same file, or a
// data-parallel rank's own engine) never replace the first start's.
struct StartOfValue {
  int64_t available = -1, tokens = -1, concurrency = -1;  // the engine start each printed value came from
};

template <typename T>
void keep_smallest_of_start(std::optional<Logged<T>>& slot, int64_t& slot_start, T value, int64_t line, int64_t start) {
  if (!slot) {
    slot = Logged<T>{std::move(value), line};
    slot_start = start;
  } else if (slot_start == start && value < slot->value) {
    slot = Logged<T>{std::move(value), line};
  }
}

// Whether the line starts an engine: vLLM's "Initializing a V1 LLM engine (v...) with config" (vllm/v1/engine/core.py),
// "Initializing a V0 LLM engine", "Initializing an LLM engine (v...)" before 0.8.
bool starts_engine(const std::string& line) {
  return line.find("Initializing a V1 LLM engine") != std::string::npos || line.find("Initializing a V0 LLM engine") != std::string::npos ||
         line.find("Initializing an LLM engine") != std::string::npos;
}

// Issue 15 (pp35): the PP rank a worker's process prefix names. vLLM's worker processes log as "(<name> pid=N)", the
// name "Worker" and a "_DP<r>" / "_PP<r>" / "_TP<r>" / "_EP<r>" part per parallel dimension in use, as the evidence's
// logs show them: "(Worker_PP0 pid=...)" (0.19 PP 2), "(Worker_PP0_TP0 ...)" (vLLM-Ascend 0.23 PP 2 x TP 2),
// "(Worker_DP1_TP0_EP8 ...)", "(Worker_TP0 ...)". nullopt: no such prefix, or no PP part in it (PP 1, Ray workers).
std::optional<int64_t> worker_pp_rank(const std::string& line) {
  const size_t w = line.find("(Worker_");
  if (w == std::string::npos) return std::nullopt;
  const size_t end = line.find_first_of(" )", w);
  const std::string name = line.substr(w + 1, (end == std::string::npos ? line.size() : end) - w - 1);
  const size_t pp = name.find("_PP");
  if (pp == std::string::npos) return std::nullopt;
  size_t d = pp + 3;
  int64_t rank = 0;
  const size_t first_digit = d;
  while (d < name.size() && std::isdigit(static_cast<unsigned char>(name[d])) && d - first_digit < 6) rank = rank * 10 + (name[d++] - '0');
  if (d == first_digit || (d < name.size() && name[d] != '_')) return std::nullopt;
  return rank;
}

void scan_printed(PrintedLines& p, StartOfValue& from, int64_t start, const std::string& line, int64_t n) {
  for (const char* key : {"Model loading took", "Loading model weights took"}) {
    size_t end = 0;
    auto v = number_after(line, key, &end);
    // Only a size: "Loading weights took 3.03 seconds" is a duration.
    if (v && line.compare(std::min(end + 1, line.size()), 1, "G") == 0) set_once(p.weights_gib, *v, n);
  }
  if (auto v = number_after(line, "Available KV cache memory:")) {
    keep_smallest_of_start(p.available_kv_gib, from.available, *v, n, start);
    if (p.available_kv_gib->line == n) {  // this line's figure is the one kept: its stage with it
      p.available_kv_stage.reset();
      if (auto pp = worker_pp_rank(line)) p.available_kv_stage = Logged<int64_t>{*pp, n};
    }
  }
  if (line.find("total memory:") != std::string::npos) {
    if (auto v = number_after(line, "Available memory:")) set_once(p.available_kv_gib, *v / (1024.0 * 1024 * 1024), n);
  }
  if (auto v = count_after(line, "GPU KV cache size:")) keep_smallest_of_start(p.kv_cache_tokens, from.tokens, *v, n, start);
  for (const char* key : {"# npu blocks:", "# NPU blocks:", "# GPU blocks:", "# cuda blocks:", "# rocm blocks:"}) {
    if (auto v = count_after(line, key)) set_once(p.num_gpu_blocks, *v, n);
  }
  size_t end = 0;
  if (auto len = count_after(line, "Maximum concurrency for", &end)) {
    const size_t colon = line.find(':', end);
    if (colon != std::string::npos) {
      if (auto c = number_at(line, colon + 1)) {
        keep_smallest_of_start(p.max_concurrency, from.concurrency, *c, n, start);
        set_once(p.concurrency_len, *len, n);
      }
    }
  }
  if (line.find("Graph capturing finished") != std::string::npos) {
    if (auto v = number_after(line, "took")) set_once(p.graph_gib, *v, n);
  }
  if (auto v = number_after(line, "Estimated CUDA graph memory:")) set_once(p.graph_estimate_gib, *v, n);
  scan_memory_summary(p, line, n);
  if (line.find("Encoder cache will be initialized") != std::string::npos) {
    if (auto budget = count_after(line, "with a budget of")) set_once(p.encoder_budget_tokens, *budget, n);
    size_t items_end = 0;
    if (auto items = count_after(line, "profiled with", &items_end)) {
      set_once(p.encoder_items, *items, n);
      size_t w = items_end;
      while (w < line.size() && line[w] == ' ') ++w;
      size_t e = w;
      while (e < line.size() && std::isalpha(static_cast<unsigned char>(line[e]))) ++e;
      if (e > w) set_once(p.encoder_modality, line.substr(w, e - w), n);
    }
  }
}

std::optional<OomDetail> parse_oom(const std::string& line, int64_t n) {
  const size_t p = line.find("Tried to allocate");
  if (p == std::string::npos) return std::nullopt;
  auto req = size_at(line, p + 17, SizeUnit::bytes);
  if (!req) return std::nullopt;
  OomDetail d;
  d.requested_bytes = *req;
  d.line = n;
  if (auto t = size_before(line, "total capacity;")) d.total_bytes = t;
  else if (const size_t q = line.find("total capacity of"); q != std::string::npos) d.total_bytes = size_at(line, q + 17, SizeUnit::bytes);
  if (auto a = size_before(line, "already allocated")) d.allocated_bytes = a;
  if (auto f = size_before(line, "free;")) d.free_bytes = f;
  else if (auto f2 = size_before(line, "free)")) d.free_bytes = f2;
  else if (const size_t q = line.find("of which"); q != std::string::npos) d.free_bytes = size_at(line, q + 8, SizeUnit::bytes);
  return d;
}

EvidenceLine evidence(const std::vector<std::string>& lines, int64_t index, const std::string& rule) {
  std::string t = trim(lines[static_cast<size_t>(index)]);
  t = clip_text(t, k_max_evidence_chars);  // issue 19: a hand-cut here split a UTF-8 character of the log
  return EvidenceLine{index + 1, t, rule};
}

struct Match {
  const SignatureRule* rule = nullptr;
  int64_t index = 0;  // 0-based line
};

bool is_exception_line(const std::string& line) {
  // "...SomethingError: message" or "...SomeException" outside a "File ..." frame line.
  const std::string t = trim(line);
  if (starts_with(t, "File ") || t.find("File \"") != std::string::npos) return false;
  for (const char* kind : {"Error:", "Exception:", "Error(", "Exception(", "Interrupt"}) {
    const size_t p = t.find(kind);
    if (p != std::string::npos && p > 0 && std::isalpha(static_cast<unsigned char>(t[p - 1]))) return true;
  }
  return ends_with(t, "Error") || ends_with(t, "Exception");
}

void classify(EngineLog& log, const std::vector<std::string>& lines, const SignatureSet& sigs) {
  std::vector<Match> matches;
  std::map<std::string, size_t> per_rule;
  for (size_t i = 0; i < lines.size(); ++i) {
    for (const auto& rule : sigs.rules) {
      for (const auto& pat : rule.patterns) {
        if (lines[i].find(pat) == std::string::npos) continue;
        if (per_rule[rule.id]++ < 50) matches.push_back({&rule, static_cast<int64_t>(i)});
        break;
      }
    }
  }
  Diagnosis& d = log.diagnosis;
  const Match* best = nullptr;
  for (const auto& m : matches) {
    if (m.rule->severity == Severity::symptom) {
      if (d.symptoms.size() < k_max_evidence_per_rule) d.symptoms.push_back(evidence(lines, m.index, m.rule->id));
      continue;
    }
    if (m.rule->severity == Severity::warning) {
      if (d.warnings.size() < k_max_evidence_per_rule) d.warnings.push_back(evidence(lines, m.index, m.rule->id));
      continue;
    }
    if (!best || m.rule->priority > best->rule->priority) best = &m;
  }
  if (best) {
    std::string class_id = best->rule->class_id;
    for (const auto& m : matches) {
      if (m.rule == best->rule && d.evidence.size() < k_max_evidence_per_rule) d.evidence.push_back(evidence(lines, m.index, m.rule->id));
    }
    if (class_id == "oom") {
      d.oom = parse_oom(lines[static_cast<size_t>(best->index)], best->index + 1);
      // Walk back through the traceback; the innermost frame (closest to the error) names the phase.
      std::string phase;
      int64_t phase_line = -1;
      std::string marker_found;
      for (int64_t i = best->index; i >= 0 && i >= best->index - k_traceback_window_lines; --i) {
        const std::string& l = lines[static_cast<size_t>(i)];
        for (const auto& mk : sigs.oom_kv_markers) {
          if (phase.empty() && l.find(mk) != std::string::npos) { phase = "kv_alloc_oom"; phase_line = i; marker_found = mk; }
        }
        for (const auto& mk : sigs.oom_weights_markers) {
          if (phase.empty() && l.find(mk) != std::string::npos) { phase = "weights_oom"; phase_line = i; marker_found = mk; }
        }
        if (!phase.empty() || l.find("Traceback (most recent call last)") != std::string::npos) break;
      }
      const bool weights_printed_before = log.printed.weights_gib && log.printed.weights_gib->line < best->index + 1;
      if (weights_printed_before) {
        class_id = "kv_alloc_oom";
        d.reasoning = format("the weights line at line %lld was printed before the out-of-memory error", static_cast<long long>(log.printed.weights_gib->line));
      } else if (!phase.empty()) {
        class_id = phase;
        d.evidence.push_back(evidence(lines, phase_line, "phase"));
        d.reasoning = "the innermost traceback frame before the error mentions " + marker_found;
      } else {
        class_id = "weights_oom";
        d.reasoning = "no 'Model loading took' line before the out-of-memory error: the weights were still loading";
      }
      d.reasoning += " (" + sigs.oom_phase_source + ")";
    }
    d.class_id = class_id;
    for (const auto& m : matches) {
      if (m.rule->severity != Severity::error || m.rule == best->rule) continue;
      std::string other = m.rule->class_id;
      if (other == "oom") other = "out of memory";
      if (other != class_id && std::find(d.secondary.begin(), d.secondary.end(), other) == d.secondary.end()) d.secondary.push_back(other);
    }
  } else {
    // No signature: the first traceback's exception line is the best root-cause candidate.
    for (size_t i = 0; i < lines.size() && d.class_id.empty(); ++i) {
      if (lines[i].find("Traceback (most recent call last)") == std::string::npos) continue;
      for (size_t j = i + 1; j < lines.size() && j < i + 400; ++j) {
        if (is_exception_line(lines[j])) {
          d.class_id = "unknown";
          d.evidence.push_back(evidence(lines, static_cast<int64_t>(j), "traceback"));
          d.reasoning = "no known signature; the exception ending the first traceback is the likeliest root cause";
          break;
        }
      }
    }
    if (d.class_id.empty() && !d.symptoms.empty()) {
      d.class_id = "unknown";
      d.reasoning = "the engine failed but the log holds no traceback or known signature; the cause is usually printed above the first symptom line";
    }
  }
  if (const SignatureClass* c = sigs.find_class(d.class_id)) {
    d.title = c->title;
    d.fix = c->fix;
    d.source = c->source;
    d.memory = c->memory;
  } else if (d.class_id == "unknown") {
    d.title = "unrecognised failure";
    d.fix = "read the evidence line; if it names a missing package, op or library, 'preflight doctor' checks the stack";
  }
}

// A log record hard-wrapped over several lines (some logs are saved at a fixed width): the line
// plus following lines that do not start a new record, up to 40 lines.
bool starts_record(const std::string& line) {
  const std::string head = line.substr(0, 48);
  if (head.find(" pid=") != std::string::npos) return true;
  for (const char* level : {"INFO", "WARNING", "ERROR", "DEBUG", "Traceback", "$ "}) if (starts_with(line, level)) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines, size_t i) {
  std::string out = lines[i];
  for (size_t j = i + 1; j < lines.size() && j <= i + 40 && !starts_record(lines[j]); ++j) out += lines[j];
  return out;
}

}  // namespace

EngineLog parse_engine_log(const std::string& text, const SignatureSet& signatures) {
  EngineLog log;
  const auto lines = split_lines(text);
  log.line_count = static_cast<int64_t>(lines.size());
  EngineArgs from_config, from_dict, from_cmdline;
  bool ascend = false, mindie = false, vllm = false;
  std::optional<EngineCoreClue> core;
  StartOfValue printed_from;
  int64_t engine_start = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const int64_t n = static_cast<int64_t>(i) + 1;
    scan_versions(log.versions, line, n);
    if (auto c = engine_core_clue(line, n); c && (!core || c->strength > core->strength)) core = c;  // issue 15 (v0eng29)
    if (starts_engine(line)) ++engine_start;
    scan_printed(log.printed, printed_from, engine_start, line, n);
    if (const size_t p = line.find("with config:"); p != std::string::npos) {
      for (const auto& [k, v] : scan_pairs(joined(lines, i).substr(p + 12), '=')) apply_arg(from_config, k, v, n);
    }
    if (const size_t p = line.find("Namespace("); p != std::string::npos) {
      for (const auto& [k, v] : scan_pairs(joined(lines, i).substr(p + 10), '=')) apply_arg(from_config, k, v, n);
    }
    if (const size_t p = line.find("non-default args: {"); p != std::string::npos) {
      for (const auto& [k, v] : scan_pairs(joined(lines, i).substr(p + 19), ':')) apply_arg(from_dict, k, v, n);
    }
    if (line.find("vllm serve") != std::string::npos || line.find("api_server") != std::string::npos) scan_command_line(from_cmdline, line, n);
    if (line.find("Skipping memory profiling for multimodal encoder") != std::string::npos) set_once(from_cmdline.skip_mm_profiling, true, n);
    scan_headless_launch(from_config, line, n);  // issue 15 (multinode32)
    // vllm/multimodal/registry.py prints it when every modality's limit is 0 (--language-model-only, or all limits 0).
    if (line.find("All limits of multimodal modalities supported by the model are set to 0") != std::string::npos)
      set_once(from_cmdline.language_model_only, true, n);
    if (auto v = env_assignment(line, "HCCL_BUFFSIZE")) set_once(from_cmdline.hccl_buffsize, std::stod(*v), n);
    if (auto v = env_assignment(line, "VLLM_ASCEND_ENABLE_FLASHCOMM1")) set_once(from_cmdline.flashcomm1, env_switch_on(*v), n);
    if (auto v = env_assignment(line, "VLLM_ASCEND_ENABLE_MLAPO")) set_once(from_cmdline.mlapo, env_switch_on(*v), n);
    if (auto v = env_assignment(line, "VLLM_USE_FLASHINFER_SAMPLER")) set_once(from_cmdline.flashinfer_sampler, env_switch_on(*v), n);
    if (line.find("Using FlashInfer for top-p & top-k sampling") != std::string::npos) set_once(from_config.flashinfer_sampler, true, n);
    // Issue 15: the attention backend vLLM selected, as its platform prints it (vllm/platforms/cuda.py).
    if (line.find("Using ") != std::string::npos && line.find(" backend") != std::string::npos && line.find("for vit attention") == std::string::npos &&
        line.find("MMEncoderAttention") == std::string::npos)
      if (auto b = selected_backend(line)) set_once(from_config.attention_backend, to_upper(*b == "FlashInfer" ? "FLASHINFER" : *b), n);
    if (auto b = backend_env(line)) set_once(from_cmdline.attention_backend, to_upper(*b), n);
    if (line.find("FlashInfer is not available. Falling back to the PyTorch-native") != std::string::npos) set_once(from_config.flashinfer_sampler, false, n);
    if (find_ci(line, "vllm_ascend") != std::string::npos || find_ci(line, "vllm-ascend") != std::string::npos ||
        line.find("Platform plugin ascend is activated") != std::string::npos || line.find("NPU out of memory") != std::string::npos ||
        line.find("torch_npu") != std::string::npos) ascend = true;
    if (find_ci(line, "mindie") != std::string::npos) mindie = true;
    if (find_ci(line, "vllm") != std::string::npos) vllm = true;
    if (line.find("Application startup complete") != std::string::npos || line.find("Starting vLLM API server") != std::string::npos) {
      if (!log.started) log.started_line = n;
      log.started = true;
    }
  }
  // The config dump prints the resolved capture list and mode (the version's rule applied), not what was set.
  from_config.compilation_config.reset();
  from_config.optimization_level.reset();
  merge_args(log.args, from_config);
  merge_args(log.args, from_dict);
  merge_args(log.args, from_cmdline);
  log.engine = ascend ? "vllm-ascend" : mindie ? "mindie" : vllm ? "vllm" : "unknown";
  if (core) log.engine_core = core->seen;
  classify(log, lines, signatures);
  return log;
}

}  // namespace preflight::logs
