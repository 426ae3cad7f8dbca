#include "cli/cmd_llama.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/args.hpp"
#include "cli/common.hpp"
#include "device/device_spec.hpp"
#include "estimate/llama_cpp.hpp"
#include "model/gguf_reader.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

const char* k_llama_usage =
    "usage: preflight fit MODEL.gguf --engine llama.cpp --device cpu|D [--ctx-size N] [--ubatch-size N] [--parallel N]\n"
    "         [--n-gpu-layers N] [--cache-type-k T] [--cache-type-v T] [--flash-attn on|off|auto] [--no-mmap]\n"
    "         [--cpu-extra-buffer auto|none|amx] [--json]";

const std::vector<FlagSpec> k_llama_flags = {
    {"json", false},         {"device", true},       {"engine", true},       {"ctx-size", true},     {"ubatch-size", true},
    {"parallel", true},      {"n-gpu-layers", true}, {"cache-type-k", true}, {"cache-type-v", true}, {"flash-attn", true},
    {"no-mmap", false},      {"cpu-extra-buffer", true}, {"batch-size", true}, {"models", true},     {"offline", false}};

// /proc/meminfo "MemTotal:  123 kB" lines.
std::optional<double> meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream s(line.substr(key.size() + 1));
    double kb = 0;
    if (s >> kb) return kb * 1024.0;
  }
  return std::nullopt;
}

// ggml-cpu picks its AMX buffer type when the CPU reports amx_int8 and amx_tile (Linux /proc/cpuinfo flags).
bool host_has_amx() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    return line.find(" amx_int8") != std::string::npos && line.find(" amx_tile") != std::string::npos;
  }
  return false;
}

std::string mib_text(uint64_t bytes) { return format("%8.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0)); }

Json buffers_json(const estimate::LlamaCppEstimate& e) {
  Json per_device = Json::object();
  Json list = Json::array();
  for (const auto& b : e.buffers) {
    const std::string key = std::string(b.kind == estimate::LlamaBufferKind::model     ? "model_buffer_bytes"
                                        : b.kind == estimate::LlamaBufferKind::kv      ? "kv_buffer_bytes"
                                        : b.kind == estimate::LlamaBufferKind::compute ? "compute_buffer_bytes"
                                                                                       : "output_buffer_bytes");
    Json& d = per_device[b.device];
    if (d.is_null()) d = {{"model_buffer_bytes", 0}, {"kv_buffer_bytes", 0}, {"compute_buffer_bytes", 0}, {"output_buffer_bytes", 0}};
    d[key] = d[key].get<uint64_t>() + b.bytes;
    list.push_back({{"device", b.device}, {"kind", estimate::llama_buffer_kind_name(b.kind)}, {"bytes", b.bytes}});
  }
  return {{"model_buffer_bytes", e.model_buffer_bytes}, {"kv_buffer_bytes", e.kv_buffer_bytes}, {"compute_buffer_bytes", e.compute_buffer_bytes},
          {"output_buffer_bytes", e.output_buffer_bytes}, {"total_bytes", e.total_bytes()}, {"n_ctx", e.n_ctx}, {"n_ubatch", e.n_ubatch},
          {"flash_attn", e.flash_attn}, {"n_gpu_layers", e.layers_on_gpu}, {"devices", per_device}, {"buffers", list},
          {"formulas", e.formulas}, {"assumptions", e.assumptions}};
}

// llama.cpp's own log lines: load_tensors, llama_context (output), llama_kv_cache, sched_reserve.
std::string render_lines(const estimate::LlamaCppEstimate& e) {
  std::string out;
  for (const auto& b : e.buffers) {
    const char* fn = b.kind == estimate::LlamaBufferKind::model ? "load_tensors"
                     : b.kind == estimate::LlamaBufferKind::kv  ? "llama_kv_cache"
                     : b.kind == estimate::LlamaBufferKind::compute ? "sched_reserve"
                                                                    : "llama_context";
    out += format("%s: %12s %s buffer size = %s\n", fn, b.device.c_str(), estimate::llama_buffer_kind_name(b.kind), mib_text(b.bytes).c_str());
  }
  return out;
}

}  // namespace

bool llama_cpp_engine_requested(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--engine" && i + 1 < argv.size() && argv[i + 1].rfind("llama.cpp", 0) == 0) return true;
    if (a.rfind("--engine=llama.cpp", 0) == 0) return true;
  }
  return false;
}

int cmd_fit_llama_cpp(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, k_llama_flags);
  if (!args) return report_error(args.error());
  if (args->positional.size() != 1 || !args->has("device")) return report_error(make_error(ErrorKind::invalid_argument, k_llama_usage));
  estimate::LlamaCppOptions o;
  for (const auto& [flag, field] : std::vector<std::pair<const char*, int64_t*>>{
           {"ctx-size", &o.ctx_size}, {"ubatch-size", &o.ubatch_size}, {"parallel", &o.parallel}, {"n-gpu-layers", &o.n_gpu_layers}}) {
    auto v = args->get_int(flag);
    if (!v) return report_error(v.error());
    if (v->has_value()) *field = **v;
  }
  o.cache_type_k = args->get("cache-type-k").value_or("f16");
  o.cache_type_v = args->get("cache-type-v").value_or("f16");
  const std::string fa = args->get("flash-attn").value_or("auto");
  if (fa == "on" || fa == "1" || fa == "true") o.flash_attn = estimate::LlamaFlashAttn::on;
  else if (fa == "off" || fa == "0" || fa == "false") o.flash_attn = estimate::LlamaFlashAttn::off;
  else if (fa == "auto") o.flash_attn = estimate::LlamaFlashAttn::auto_select;
  else return report_error(make_error(ErrorKind::invalid_argument, "--flash-attn: expected on, off or auto, got '" + fa + "'"));
  o.mmap = args->has("no-mmap") ? estimate::LlamaMmap::off : estimate::LlamaMmap::on;

  const std::string device_arg = *args->get("device");
  const bool host_cpu = device_arg == "cpu";
  const std::string extra = args->get("cpu-extra-buffer").value_or("auto");
  if (extra == "amx") o.cpu_extra_buffer = estimate::LlamaCpuExtraBuffer::amx;
  else if (extra == "none") o.cpu_extra_buffer = estimate::LlamaCpuExtraBuffer::none;
  else if (extra == "auto") o.cpu_extra_buffer = host_cpu && host_has_amx() ? estimate::LlamaCpuExtraBuffer::amx : estimate::LlamaCpuExtraBuffer::none;
  else return report_error(make_error(ErrorKind::invalid_argument, "--cpu-extra-buffer: expected auto, none or amx, got '" + extra + "'"));

  double capacity_bytes = 0;
  std::string capacity_source;
  auto devices = device::load_device_catalog();
  if (!devices) return report_error(devices.error());
  auto dev = device::find_device(*devices, device_arg);
  if (!dev) return report_error(dev.error());
  if (host_cpu) {
    const auto available = meminfo_bytes("MemAvailable");
    if (!available) return report_error(make_error(ErrorKind::io, "/proc/meminfo: no MemAvailable line; --device cpu needs this host's memory", "/proc/meminfo"));
    capacity_bytes = *available;
    capacity_source = "MemAvailable in /proc/meminfo";
    o.n_gpu_layers = 0;
  } else {
    capacity_bytes = dev->usable_total_bytes();
    capacity_source = dev->id + " in " + dev->origin;
    if (!args->has("n-gpu-layers")) o.n_gpu_layers = 1 << 20;  // llama.cpp's -ngl default on a GPU build: all layers
    o.gpu_name = dev->platform == "npu" ? "CANN0" : dev->platform == "metal" ? "MTL0" : "CUDA0";
  }

  auto file = model::load_gguf(args->positional[0]);
  if (!file && file.error().kind == ErrorKind::not_found)
    return report_error(make_error(ErrorKind::not_found, file.error().message + " (--engine llama.cpp reads a local GGUF file: llama.cpp loads GGUF only)", args->positional[0]));
  if (!file) return report_error(file.error());
  auto est = estimate::estimate_llama_cpp(*file, o);
  if (!est) return report_error(make_error(est.error().kind, args->positional[0] + ": " + est.error().message, args->positional[0]));

  // Per device: the largest single device budget decides. CPU buffers count against host memory.
  uint64_t on_device = 0;
  for (const auto& b : est->buffers) if (host_cpu || b.device == o.gpu_name) on_device += b.bytes;
  const bool fits = static_cast<double>(on_device) <= capacity_bytes;
  const std::optional<double> bandwidth = dev->measured_copy_bandwidth_bytes_per_s ? dev->measured_copy_bandwidth_bytes_per_s : dev->hbm_bandwidth_bytes_per_s;
  const std::string bandwidth_source = dev->measured_copy_bandwidth_bytes_per_s
                                           ? "measured copy bandwidth, " + (dev->source_measured_copy_bandwidth.empty() ? dev->origin : dev->source_measured_copy_bandwidth)
                                           : "datasheet " + dev->source_bandwidth;

  if (args->has("json")) {
    Json j = report::envelope("fit");
    j["engine"] = "llama.cpp";
    j["device"] = dev->id;
    j["model"] = args->positional[0];
    j["llama_cpp"] = buffers_json(*est);
    j["fits"] = fits;
    j["capacity_bytes"] = capacity_bytes;
    j["capacity_source"] = capacity_source;
    if (bandwidth) {
      const auto d = estimate::estimate_llama_cpp_decode(*file, *est, *bandwidth);
      j["bandwidth_bytes_per_s"] = *bandwidth;
      j["llama_cpp"]["decode"] = {{"weight_bytes_per_token", d.weight_bytes_per_token}, {"kv_bytes_per_token_full", d.kv_bytes_per_token_full},
                                  {"tokens_per_s_empty_context", d.tokens_per_s_empty}, {"tokens_per_s_full_context", d.tokens_per_s_full},
                                  {"bandwidth_source", bandwidth_source}};
    }
    print_json(j);
  } else {
    std::cout << format("llama.cpp on %s: n_ctx = %lld, n_ubatch = %lld, flash_attn = %s, n_gpu_layers = %lld\n", dev->id.c_str(),
                        static_cast<long long>(est->n_ctx), static_cast<long long>(est->n_ubatch), est->flash_attn ? "enabled" : "disabled",
                        static_cast<long long>(est->layers_on_gpu));
    std::cout << render_lines(*est);
    std::cout << format("total: model %.2f + KV %.2f + compute %.2f + output %.2f = %.2f MiB\n", est->model_buffer_bytes / 1048576.0, est->kv_buffer_bytes / 1048576.0,
                        est->compute_buffer_bytes / 1048576.0, est->output_buffer_bytes / 1048576.0, est->total_bytes() / 1048576.0);
    for (const auto& f : est->formulas) std::cout << "  " << f << "\n";
    for (const auto& a : est->assumptions) std::cout << "  assumption: " << a << "\n";
    if (bandwidth) {
      const auto d = estimate::estimate_llama_cpp_decode(*file, *est, *bandwidth);
      std::cout << format("decode: at most %.1f tok/s (empty context) to %.1f tok/s (n_ctx full): %.1f MB of weights + up to %.1f MB of KV per token at %.1f GB/s (%s)\n",
                          d.tokens_per_s_empty, d.tokens_per_s_full, d.weight_bytes_per_token / 1e6, d.kv_bytes_per_token_full / 1e6, *bandwidth / 1e9,
                          bandwidth_source.c_str());
    }
    std::cout << format("verdict: %s (%.2f GiB needed on %s, %.2f GiB from %s)\n", fits ? "fits" : "does not fit", bytes_to_gib(static_cast<double>(on_device)),
                        host_cpu ? "this host" : o.gpu_name.c_str(), bytes_to_gib(capacity_bytes), capacity_source.c_str());
  }
  return fits ? k_exit_ok : k_exit_fail;
}

}  // namespace preflight::cli
