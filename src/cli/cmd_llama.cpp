#include "cli/cmd_llama.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/args.hpp"
#include "cli/common.hpp"
#include "cli/help.hpp"
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

// llama.cpp's own flag names (llama-server / llama-cli), declared once with their checks.
struct LlamaRequest {
  std::optional<std::string> device, engine, cache_type_k, cache_type_v, flash_attn, cpu_extra_buffer, models;
  std::optional<int64_t> ctx_size, ubatch_size, batch_size, parallel, n_gpu_layers;
  bool no_mmap = false, offline = false, json = false;
};

std::vector<Option> llama_options(LlamaRequest& r) {
  const IntRange positive{1, int64_t{1} << 31};
  return {text_flag("device", "D", r.device, "cpu (this host) or a catalogue device"),
          text_flag("engine", "llama.cpp[@VERSION]", r.engine, "llama.cpp"),
          int_flag("ctx-size", "N", r.ctx_size, positive, "n_ctx, the context of all sequences together (default 4096)"),
          int_flag("ubatch-size", "N", r.ubatch_size, positive, "n_ubatch, the physical batch (default 512)"),
          int_flag("batch-size", "N", r.batch_size, positive, "n_batch, the logical batch (default 2048)"),
          int_flag("parallel", "N", r.parallel, {1, 65536}, "sequences decoded together (default 1)"),
          int_flag("n-gpu-layers", "N", r.n_gpu_layers, {0, int64_t{1} << 20}, "layers offloaded to the device (default all on a GPU, 0 on cpu)"),
          text_flag("cache-type-k", "T", r.cache_type_k, "K cache type (f16, q8_0, ...; default f16)"),
          text_flag("cache-type-v", "T", r.cache_type_v, "V cache type (default f16)"),
          text_flag("flash-attn", "on|off|auto", r.flash_attn, "flash attention (default auto)", {"on", "off", "auto"}),
          switch_flag("no-mmap", r.no_mmap, "copy the weights instead of mapping the file"),
          text_flag("cpu-extra-buffer", "auto|none|amx", r.cpu_extra_buffer, "CPU repacked weight buffer (default auto: AMX when the host has it)", {"auto", "none", "amx"}),
          text_flag("models", "DIR", r.models, "accepted for symmetry with fit; a GGUF path is read directly"),
          switch_flag("offline", r.offline, "accepted for symmetry with fit"), json_flag(r.json)};
}

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

std::string mib_text(uint64_t bytes) { return fmt::format("{:8.2f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0)); }

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
    out += fmt::format("{}: {:>12} {} buffer size = {}\n", fn, b.device, estimate::llama_buffer_kind_name(b.kind), mib_text(b.bytes));
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
  LlamaRequest r;
  auto positional = parse_options(argv, llama_options(r));
  if (!positional) return report_error(positional.error());
  if (positional->size() != 1 || !r.device) return report_error(make_error(ErrorKind::invalid_argument, k_llama_usage));
  const std::string model_path = (*positional)[0];
  estimate::LlamaCppOptions o;
  for (const auto& [value, field] : std::vector<std::pair<const std::optional<int64_t>*, int64_t*>>{
           {&r.ctx_size, &o.ctx_size}, {&r.ubatch_size, &o.ubatch_size}, {&r.parallel, &o.parallel}, {&r.n_gpu_layers, &o.n_gpu_layers}}) {
    if (*value) *field = **value;
  }
  o.cache_type_k = r.cache_type_k.value_or("f16");
  o.cache_type_v = r.cache_type_v.value_or("f16");
  const std::string fa = r.flash_attn.value_or("auto");
  if (fa == "on") o.flash_attn = estimate::LlamaFlashAttn::on;
  else if (fa == "off") o.flash_attn = estimate::LlamaFlashAttn::off;
  else o.flash_attn = estimate::LlamaFlashAttn::auto_select;
  o.mmap = r.no_mmap ? estimate::LlamaMmap::off : estimate::LlamaMmap::on;

  const std::string device_arg = *r.device;
  const bool host_cpu = device_arg == "cpu";
  const std::string extra = r.cpu_extra_buffer.value_or("auto");
  if (extra == "amx") o.cpu_extra_buffer = estimate::LlamaCpuExtraBuffer::amx;
  else if (extra == "none") o.cpu_extra_buffer = estimate::LlamaCpuExtraBuffer::none;
  else o.cpu_extra_buffer = host_cpu && host_has_amx() ? estimate::LlamaCpuExtraBuffer::amx : estimate::LlamaCpuExtraBuffer::none;  // auto

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
    if (!r.n_gpu_layers) o.n_gpu_layers = 1 << 20;  // llama.cpp's -ngl default on a GPU build: all layers
    o.gpu_name = dev->platform == "npu" ? "CANN0" : dev->platform == "metal" ? "MTL0" : "CUDA0";
  }

  auto file = model::load_gguf(model_path);
  if (!file && file.error().kind == ErrorKind::not_found)
    return report_error(make_error(ErrorKind::not_found, file.error().message + " (--engine llama.cpp reads a local GGUF file: llama.cpp loads GGUF only)", model_path));
  if (!file) return report_error(file.error());
  auto est = estimate::estimate_llama_cpp(*file, o);
  if (!est) return report_error(make_error(est.error().kind, model_path + ": " + est.error().message, model_path));

  // Per device: the largest single device budget decides. CPU buffers count against host memory.
  uint64_t on_device = 0;
  for (const auto& b : est->buffers) if (host_cpu || b.device == o.gpu_name) on_device += b.bytes;
  const bool fits = static_cast<double>(on_device) <= capacity_bytes;
  const std::optional<double> bandwidth = dev->measured_copy_bandwidth_bytes_per_s ? dev->measured_copy_bandwidth_bytes_per_s : dev->hbm_bandwidth_bytes_per_s;
  const std::string bandwidth_source = dev->measured_copy_bandwidth_bytes_per_s
                                           ? "measured copy bandwidth, " + (dev->source_measured_copy_bandwidth.empty() ? dev->origin : dev->source_measured_copy_bandwidth)
                                           : "datasheet " + dev->source_bandwidth;

  if (r.json) {
    Json j = report::envelope("fit");
    j["engine"] = "llama.cpp";
    j["device"] = dev->id;
    j["model"] = model_path;
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
    std::cout << fmt::format("llama.cpp on {}: n_ctx = {}, n_ubatch = {}, flash_attn = {}, n_gpu_layers = {}\n", dev->id, est->n_ctx, est->n_ubatch,
                             est->flash_attn ? "enabled" : "disabled", est->layers_on_gpu);
    std::cout << render_lines(*est);
    std::cout << fmt::format("total: model {:.2f} + KV {:.2f} + compute {:.2f} + output {:.2f} = {:.2f} MiB\n", est->model_buffer_bytes / 1048576.0, est->kv_buffer_bytes / 1048576.0,
                        est->compute_buffer_bytes / 1048576.0, est->output_buffer_bytes / 1048576.0, est->total_bytes() / 1048576.0);
    for (const auto& f : est->formulas) std::cout << "  " << f << "\n";
    for (const auto& a : est->assumptions) std::cout << "  assumption: " << a << "\n";
    if (bandwidth) {
      const auto d = estimate::estimate_llama_cpp_decode(*file, *est, *bandwidth);
      std::cout << fmt::format("decode: at most {:.1f} tok/s (empty context) to {:.1f} tok/s (n_ctx full): {:.1f} MB of weights + up to {:.1f} MB of KV per token at {:.1f} GB/s ({})\n",
                          d.tokens_per_s_empty, d.tokens_per_s_full, d.weight_bytes_per_token / 1e6, d.kv_bytes_per_token_full / 1e6, *bandwidth / 1e9,
                          bandwidth_source);
    }
    std::cout << fmt::format("verdict: {} ({:.2f} GiB needed on {}, {:.2f} GiB from {})\n", fits ? "fits" : "does not fit", bytes_to_gib(static_cast<double>(on_device)),
                        host_cpu ? std::string("this host") : o.gpu_name, bytes_to_gib(capacity_bytes), capacity_source);
  }
  return fits ? k_exit_ok : k_exit_fail;
}

}  // namespace preflight::cli
