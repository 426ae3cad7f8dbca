#include "cli/cmd_llama.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/args.hpp"
#include "cli/common.hpp"
#include "cli/help.hpp"
#include "device/cpu_catalog.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/llama_cpp.hpp"
#include "logs/llama_cpp_log.hpp"
#include "model/gguf_reader.hpp"
#include "probe/host_bandwidth.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

const char* k_llama_usage =
    "usage: preflight fit MODEL.gguf --engine llama.cpp --device cpu|D [--ctx-size N] [--ubatch-size N] [--parallel N]\n"
    "         [--n-gpu-layers N] [--cache-type-k T] [--cache-type-v T] [--flash-attn on|off|auto] [--no-mmap]\n"
    "         [--cpu-extra-buffer auto|none|amx] [--threads N] [--tensor-split A,B,...] [--override-tensor PATTERN=CPU]\n"
    "         [--cpu-moe] [--n-cpu-moe N] [--json]";

// llama.cpp's own flag names (llama-server / llama-cli), declared once with their checks.
struct LlamaRequest {
  std::optional<std::string> device, engine, cache_type_k, cache_type_v, flash_attn, cpu_extra_buffer, models, tensor_split, override_tensor;
  std::optional<int64_t> ctx_size, ubatch_size, batch_size, parallel, n_gpu_layers, threads, n_cpu_moe;
  bool no_mmap = false, offline = false, json = false, cpu_moe = false;
};

std::vector<Option> llama_options(LlamaRequest& r) {
  const IntRange positive{1, int64_t{1} << 31};
  return {text_flag("device", "D", r.device, "cpu (this host), a catalogue CPU (data/devices/cpus.json: EPYC 9654, Xeon 6980P, M4 Max, ...) or an accelerator"),
          text_flag("engine", "llama.cpp[@bNNNN]", r.engine, "llama.cpp"),
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
          int_flag("threads", "N", r.threads, {1, 4096}, "CPU threads llama.cpp decodes with (default: all cores); the host bandwidth is measured with as many"),
          text_flag("tensor-split", "A,B,...", r.tensor_split, "proportions of the offloaded layers per GPU (CUDA0, CUDA1, ...; -ts), llama.cpp's layer split"),
          text_flag("override-tensor", "PATTERN=CPU,...", r.override_tensor, "keep tensors whose name matches PATTERN in the CPU model buffer (-ot; only CPU is modelled)"),
          switch_flag("cpu-moe", r.cpu_moe, "keep the MoE expert tensors (ffn_up/down/gate_exps) of every layer on the CPU"),
          int_flag("n-cpu-moe", "N", r.n_cpu_moe, {0, int64_t{1} << 20}, "keep the MoE expert tensors of the first N layers on the CPU"),
          models_dir_flag(r.models, "accepted for symmetry with fit; a GGUF path is read directly"),
          switch_flag("offline", r.offline, "accepted for symmetry with fit"), json_flag(r.json)};
}

// --tensor-split A,B,... (llama.cpp common/arg.cpp splits on ',' and '/'): one proportion per GPU.
Expected<std::vector<float>> parse_tensor_split(const std::string& text) {
  std::vector<float> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find_first_of(",/", start);
    const std::string item = trim(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    char* rest = nullptr;
    const float v = item.empty() ? 0.0f : std::strtof(item.c_str(), &rest);
    if (item.empty() || *rest != '\0')
      return make_error(ErrorKind::invalid_argument, "--tensor-split: expected numbers separated by ',' (e.g. 3,1), got '" + one_line(text, 80) + "'");
    out.push_back(v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// --override-tensor PATTERN=BUFT[,PATTERN=BUFT...] (llama.cpp's -ot): the patterns whose buffer type is CPU.
Expected<std::vector<std::string>> parse_cpu_overrides(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& item : split(text, ',')) {
    const auto eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0)
      return make_error(ErrorKind::invalid_argument, "--override-tensor: expected PATTERN=BUFFER_TYPE (e.g. exps=CPU), got '" + one_line(item, 80) + "'");
    const std::string buft = item.substr(eq + 1);
    if (buft != "CPU") return make_error(ErrorKind::invalid_argument, "--override-tensor: only the CPU buffer type is modelled, got '" + one_line(buft, 60) + "' in '" + one_line(item, 80) + "'");
    out.push_back(item.substr(0, eq));
  }
  return out;
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

// Per device in the order llama.cpp prints them: its buffers by kind, and for a GPU the layers it holds.
Json buffers_json(const estimate::LlamaCppEstimate& e) {
  Json per_device = Json::array();
  Json list = Json::array();
  for (const auto& b : e.buffers) {
    const std::string key = std::string(b.kind == estimate::LlamaBufferKind::model     ? "model_buffer_bytes"
                                        : b.kind == estimate::LlamaBufferKind::kv      ? "kv_buffer_bytes"
                                        : b.kind == estimate::LlamaBufferKind::compute ? "compute_buffer_bytes"
                                        : b.kind == estimate::LlamaBufferKind::rs      ? "rs_buffer_bytes"
                                                                                       : "output_buffer_bytes");
    auto it = std::find_if(per_device.begin(), per_device.end(), [&](const Json& d) { return d["device"] == b.device; });
    if (it == per_device.end()) {
      Json d = {{"device", b.device}, {"model_buffer_bytes", 0}, {"kv_buffer_bytes", 0}, {"compute_buffer_bytes", 0}, {"output_buffer_bytes", 0}, {"rs_buffer_bytes", 0}};
      for (const auto& [gpu, layers] : e.gpu_layers)
        if (gpu == b.device) d["layers"] = layers;
      per_device.push_back(d);
      it = per_device.end() - 1;
    }
    (*it)[key] = (*it)[key].get<uint64_t>() + b.bytes;
    list.push_back({{"device", b.device}, {"kind", estimate::llama_buffer_kind_name(b.kind)}, {"bytes", b.bytes}});
  }
  return {{"model_buffer_bytes", e.model_buffer_bytes}, {"kv_buffer_bytes", e.kv_buffer_bytes}, {"compute_buffer_bytes", e.compute_buffer_bytes},
          {"output_buffer_bytes", e.output_buffer_bytes}, {"rs_buffer_bytes", e.rs_buffer_bytes}, {"total_bytes", e.total_bytes()}, {"n_ctx", e.n_ctx}, {"n_ubatch", e.n_ubatch},
          {"flash_attn", e.flash_attn}, {"n_gpu_layers", e.layers_on_gpu}, {"devices", per_device}, {"buffers", list},
          {"kv_k_bytes", e.kv_k_bytes}, {"kv_v_bytes", e.kv_v_bytes}, {"kv_other_build_bytes", e.kv_other_build_bytes},
          {"formulas", e.formulas}, {"assumptions", e.assumptions}};
}

// llama.cpp's own log lines: load_tensors, llama_context (output), llama_kv_cache, sched_reserve.
std::string render_lines(const estimate::LlamaCppEstimate& e) {
  std::string out;
  for (const auto& b : e.buffers) {
    const char* fn = b.kind == estimate::LlamaBufferKind::model ? "load_tensors"
                     : b.kind == estimate::LlamaBufferKind::kv  ? "llama_kv_cache"
                     : b.kind == estimate::LlamaBufferKind::compute ? "sched_reserve"
                     : b.kind == estimate::LlamaBufferKind::rs      ? "llama_memory_recurrent"
                                                                    : "llama_context";
    out += fmt::format("{}: {:>12} {} buffer size = {}\n", fn, b.device, estimate::llama_buffer_kind_name(b.kind), mib_text(b.bytes));
  }
  // Issue 16 (llamacpp33): the K/V split llama_kv_cache prints after its buffers (an MLA cache from PR #19067 has no V).
  if (e.kv_buffer_bytes > 0)
    out += fmt::format("llama_kv_cache: size = {} ({} cells), K: {}, V: {}\n", mib_text(e.kv_k_bytes + e.kv_v_bytes), e.n_ctx, mib_text(e.kv_k_bytes), mib_text(e.kv_v_bytes));
  return out;
}


// A catalogue CPU as the device fit reports against: its peak memory bandwidth in the bandwidth slot.
device::DeviceSpec cpu_as_device(const device::CpuSpec& c) {
  device::DeviceSpec d;
  d.id = c.id;
  d.name = c.name;
  d.vendor = c.vendor;
  d.platform = "cpu";
  d.memory_bytes = c.max_memory_bytes;
  d.hbm_bandwidth_bytes_per_s = c.peak_bandwidth_bytes_per_s;
  d.source_bandwidth = fmt::format("{} peak, {} x {}-bit {}-{} ({}): an upper bound, decode reaches a fraction of it", c.peak_bandwidth_kind, c.memory_channels,
                                   c.memory_bus_bits / c.memory_channels, c.memory_type, c.memory_mt_per_s, c.source);
  d.origin = c.origin;
  return d;
}

// The bandwidth decode reads at, and where it came from. On this host (--device cpu): `preflight bw`'s read
// kernel measured now with llama.cpp's thread count (decode streams the weights; the copy kernel's
// non-temporal stores overstate a read stream 1.6-2x on the 2-core Xeon of tests/llama_cpp). Elsewhere:
// the catalogue's measured copy bandwidth, else its datasheet figure.
struct DecodeBandwidth {
  double bytes_per_s = 0;
  std::string source;
};

Expected<DecodeBandwidth> decode_bandwidth(const device::DeviceSpec& dev, bool host_cpu, int threads) {
  if (host_cpu) {
    probe::HostBandwidthOptions o;
    o.threads = threads;
    o.warmup = 1;
    o.repeats = 5;
    o.kernels = {probe::HostKernel::read};
    PF_TRY(report, probe::measure_host_bandwidth(o));
    // Timed by the workers' CPU time: the rate with the cores to themselves, as on an idle host, whatever
    // else runs now (a wall-clock median read 0.7-1.7x llama.cpp per round on the 2-core test host; docs/bw.md).
    return DecodeBandwidth{report.results.at(0).median_cpu_bytes_per_s,
                           fmt::format("preflight bw --kernel read measured now, {} thread{}, {} MiB, median of {} runs timed by thread cpu time", report.threads,
                                       report.threads == 1 ? "" : "s", report.array_bytes >> 20, report.results.at(0).cpu_seconds.size())};
  }
  if (dev.measured_copy_bandwidth_bytes_per_s)
    return DecodeBandwidth{*dev.measured_copy_bandwidth_bytes_per_s, "measured copy bandwidth, " + (dev.source_measured_copy_bandwidth.empty() ? dev.origin : dev.source_measured_copy_bandwidth)};
  if (dev.hbm_bandwidth_bytes_per_s) return DecodeBandwidth{*dev.hbm_bandwidth_bytes_per_s, (dev.platform == "cpu" ? "" : "datasheet ") + dev.source_bandwidth};
  return DecodeBandwidth{};
}

// /proc/loadavg's 1-minute figure: the cores other work keeps busy.
std::optional<double> load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  if (in >> one) return one;
  return std::nullopt;
}

// ggml-cpu's threads meet at a spinning barrier after every graph node; a thread that the OS has
// descheduled for other work holds all of them. Measured with node-llama-cpp 3.21.1 on the 2-core
// Xeon of tests/llama_cpp while a build kept one core busy: 1.7 tok/s with 2 threads, 80 tok/s with 1.
std::optional<std::string> thread_warning(int threads) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto load = load_average();
  if (threads <= 1 || !load || static_cast<double>(threads) + *load <= static_cast<double>(cores) + 0.5) return std::nullopt;
  return fmt::format("{} llama.cpp threads on {} cores with a load average of {:.1f}: its threads spin at a barrier after every op and wait for "
                     "descheduled peers, so decode can run 10-50x below this bound (use --threads {})",
                     threads, cores, *load, std::max(1, cores - static_cast<int>(*load + 0.5)));
}

// Checked band: predicted / llama.cpp decode tokens/s within 20 % on the test host (tests/llama_cpp/speed.mjs).
constexpr double k_decode_band = 0.20;

Json decode_json(const estimate::LlamaCppDecode& d, const DecodeBandwidth& bw, int threads, bool measured) {
  Json by_type = Json::object(), factors = Json::object();
  for (const auto& [type, bytes] : d.weight_bytes_by_type) by_type[type] = bytes;
  for (const auto& [type, factor] : d.cpu_stream_factors) factors[type] = factor;
  return {{"weight_bytes_per_token", d.weight_bytes_per_token}, {"weight_bytes_per_token_by_type", by_type}, {"kv_bytes_per_token_full", d.kv_bytes_per_token_full},
          {"per_token_overhead_s", d.per_token_overhead_s}, {"cpu_stream_factors", factors}, {"tokens_per_s_empty_context", d.tokens_per_s_empty}, {"tokens_per_s_full_context", d.tokens_per_s_full},
          {"band_fraction", measured ? Json(k_decode_band) : Json()}, {"bound", !measured}, {"threads", threads}, {"bandwidth_bytes_per_s", bw.bytes_per_s}, {"bandwidth_source", bw.source}};
}

// The +-20 % band is what tests/llama_cpp checked: a read bandwidth measured on this host. A datasheet
// bandwidth gives a bound.
std::string decode_text(const estimate::LlamaCppDecode& d, const DecodeBandwidth& bw, bool measured) {
  std::string types;
  for (const auto& [type, bytes] : d.weight_bytes_by_type) {
    double factor = 1.0;
    for (const auto& [t, f] : d.cpu_stream_factors) factor = t == type ? f : factor;
    types += fmt::format("{}{} {:.1f} MB{}", types.empty() ? "" : ", ", type, bytes / 1e6, factor != 1.0 ? fmt::format(" at {:.2f}x", factor) : "");
  }
  return fmt::format("decode: {}{:.1f} tok/s (empty context, {}) to {:.1f} tok/s (n_ctx full): {:.1f} MB of weights ({}) + up to {:.1f} MB of KV per token "
                     "at {:.2f} GB/s ({}) + {:.2f} ms per token\n",
                     measured ? "" : "at most ", d.tokens_per_s_empty, measured ? fmt::format("band +-{:.0f}%", k_decode_band * 100) : "a bandwidth bound", d.tokens_per_s_full, d.weight_bytes_per_token / 1e6, types, d.kv_bytes_per_token_full / 1e6,
                     bw.bytes_per_s / 1e9, bw.source, d.per_token_overhead_s * 1e3);
}

// The estimate options the llama.cpp flags give, before the device sets the GPU name and layer default.
Expected<estimate::LlamaCppOptions> options_from_request(const LlamaRequest& r) {
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
  if (r.tensor_split) {
    auto split = parse_tensor_split(*r.tensor_split);
    if (!split) return split.error();
    o.tensor_split = *split;
  }
  if (r.override_tensor) {
    auto patterns = parse_cpu_overrides(*r.override_tensor);
    if (!patterns) return patterns.error();
    o.cpu_tensor_patterns = *patterns;
  }
  if (r.cpu_moe) o.cpu_tensor_patterns.push_back(estimate::llama_cpu_moe_pattern());
  if (r.n_cpu_moe) o.cpu_moe_first_layers = *r.n_cpu_moe;
  return o;
}

}  // namespace

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

bool llama_cpp_engine_requested(const std::vector<std::string>& argv) { return last_engine_argument(argv).rfind("llama.cpp", 0) == 0; }

int cmd_fit_llama_cpp(const std::vector<std::string>& argv_in) {
  LlamaRequest r;
  std::vector<std::string> argv = argv_in;  // llama.cpp's short names for the split and override flags
  for (auto& a : argv) a = a == "-ot" ? "--override-tensor" : a == "-ts" ? "--tensor-split" : a;
  auto positional = parse_options(argv, llama_options(r));
  if (!positional) return report_error(positional.error());
  if (positional->size() != 1 || !r.device) return report_error(make_error(ErrorKind::invalid_argument, k_llama_usage));
  const std::string model_path = (*positional)[0];
  auto options = options_from_request(r);
  if (!options) return report_error(options.error());
  estimate::LlamaCppOptions o = *options;
  // Issue 16 (llamacpp33): --engine llama.cpp@bNNNN names the build, which decides an MLA model's KV cache.
  if (r.engine && r.engine->find('@') != std::string::npos && to_lower(r.engine->substr(r.engine->find('@') + 1)) != "any") {
    const auto v = engine::parse_version(r.engine->substr(r.engine->find('@')), "llama.cpp");
    if (!v) return report_error(make_error(ErrorKind::invalid_argument, "--engine " + *r.engine + ": expected llama.cpp@bNNNN (a build, e.g. llama.cpp@b7342)", "--engine"));
    o.build = v->major;
  }

  const std::string device_arg = *r.device;
  const bool host_cpu = device_arg == "cpu";
  const std::string extra = r.cpu_extra_buffer.value_or("auto");
  if (extra == "amx") o.cpu_extra_buffer = estimate::LlamaCpuExtraBuffer::amx;
  else if (extra == "none") o.cpu_extra_buffer = estimate::LlamaCpuExtraBuffer::none;
  else o.cpu_extra_buffer = host_cpu && host_has_amx() ? estimate::LlamaCpuExtraBuffer::amx : estimate::LlamaCpuExtraBuffer::none;  // auto

  double capacity_bytes = 0;
  std::string capacity_source;
  auto cpus = device::load_cpu_catalog();
  if (!cpus) return report_error(cpus.error());
  const device::CpuSpec* cpu = host_cpu ? nullptr : cpus->find(device_arg);
  auto dev = cpu ? Expected<device::DeviceSpec>(cpu_as_device(*cpu)) : Expected<device::DeviceSpec>(make_error(ErrorKind::not_found, ""));
  if (!cpu) {
    auto devices = device::load_device_catalog();
    if (!devices) return report_error(devices.error());
    dev = device::find_device(*devices, device_arg);
  }
  if (!dev) return report_error(dev.error());
  if (host_cpu) {
    const auto available = meminfo_bytes("MemAvailable");
    if (!available) return report_error(make_error(ErrorKind::io, "/proc/meminfo: no MemAvailable line; --device cpu needs this host's memory", "/proc/meminfo"));
    capacity_bytes = *available;
    capacity_source = "MemAvailable in /proc/meminfo";
    o.n_gpu_layers = 0;
  } else if (cpu) {
    capacity_bytes = cpu->max_memory_bytes;
    capacity_source = "the platform maximum of " + cpu->name + " in " + cpu->origin + " (a machine has what its DIMMs give)";
    o.n_gpu_layers = 0;
  } else {
    capacity_bytes = dev->usable_total_bytes();
    capacity_source = dev->id + " in " + dev->origin;
    if (!dev->runtime_total_bytes && !dev->class_runtime_total_rule.empty()) capacity_source += " (" + dev->class_runtime_total_rule + ")";
    if (!r.n_gpu_layers) o.n_gpu_layers = 1 << 20;  // llama.cpp's -ngl default on a GPU build: all layers
    o.gpu_name = dev->platform == "npu" ? "CANN0" : dev->platform == "metal" ? "MTL0" : "CUDA0";
  }
  const bool on_cpu = host_cpu || cpu;
  if (on_cpu && !o.tensor_split.empty())
    return report_error(make_error(ErrorKind::invalid_argument, fmt::format("--tensor-split: {} entries but --device {} has no GPU", o.tensor_split.size(), device_arg)));

  auto file = model::load_gguf(model_path);
  if (!file && file.error().kind == ErrorKind::not_found)
    return report_error(make_error(ErrorKind::not_found, file.error().message + " (--engine llama.cpp reads a local GGUF file: llama.cpp loads GGUF only)", model_path));
  if (!file) return report_error(file.error());
  auto est = estimate::estimate_llama_cpp(*file, o);
  if (!est) return report_error(make_error(est.error().kind, model_path + ": " + est.error().message, model_path));

  // Per device: the fullest GPU decides (each has the catalogue capacity). CPU buffers count against host memory.
  uint64_t on_device = 0;
  std::string fullest = o.gpu_name;
  for (const auto& [gpu, layers] : est->gpu_layers) {
    uint64_t bytes = 0;
    for (const auto& b : est->buffers) bytes += b.device == gpu ? b.bytes : 0;
    if (bytes > on_device) on_device = bytes, fullest = gpu;
  }
  if (on_cpu)
    for (const auto& b : est->buffers) on_device += b.bytes;
  const bool fits = static_cast<double>(on_device) <= capacity_bytes;
  const int threads = r.threads ? static_cast<int>(*r.threads) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto bandwidth = decode_bandwidth(*dev, host_cpu, threads);
  if (!bandwidth) return report_error(bandwidth.error());
  const auto decode = estimate::estimate_llama_cpp_decode(
      *file, *est, {.bandwidth_bytes_per_s = bandwidth->bytes_per_s, .backend = host_cpu ? estimate::LlamaDecodeBackend::measured_cpu_read : estimate::LlamaDecodeBackend::bare_bandwidth});
  for (const auto& type : decode.unmeasured_types)
    est->assumptions.push_back("decode: no measured CPU stream factor for " + type + " weights; read at the bare read bandwidth (unchecked against llama.cpp)");
  if (host_cpu) {
    if (auto w = thread_warning(threads)) est->assumptions.push_back(*w);
  }

  if (r.json) {
    Json j = report::envelope("fit");
    j["engine"] = "llama.cpp";
    j["device"] = dev->id;
    j["model"] = model_path;
    j["llama_cpp"] = buffers_json(*est);
    j["fits"] = fits;
    j["capacity_bytes"] = capacity_bytes;
    j["capacity_source"] = capacity_source;
    if (bandwidth->bytes_per_s > 0) {
      j["bandwidth_bytes_per_s"] = bandwidth->bytes_per_s;
      j["llama_cpp"]["decode"] = decode_json(decode, *bandwidth, threads, host_cpu);
    }
    print_json(j);
  } else {
    std::cout << fmt::format("llama.cpp on {}: n_ctx = {}, n_ubatch = {}, flash_attn = {}, n_gpu_layers = {}\n", dev->id, est->n_ctx, est->n_ubatch,
                             est->flash_attn ? "enabled" : "disabled", est->layers_on_gpu);
    std::cout << render_lines(*est);
    std::cout << fmt::format("total: model {:.2f} + KV {:.2f}{} + compute {:.2f} + output {:.2f} = {:.2f} MiB\n", est->model_buffer_bytes / 1048576.0, est->kv_buffer_bytes / 1048576.0,
                             est->rs_buffer_bytes ? fmt::format(" + RS {:.2f}", est->rs_buffer_bytes / 1048576.0) : "", est->compute_buffer_bytes / 1048576.0,
                             est->output_buffer_bytes / 1048576.0, est->total_bytes() / 1048576.0);
    for (const auto& f : est->formulas) std::cout << "  " << f << "\n";
    for (const auto& a : est->assumptions) std::cout << "  assumption: " << a << "\n";
    if (bandwidth->bytes_per_s > 0) std::cout << decode_text(decode, *bandwidth, host_cpu);
    std::cout << fmt::format("verdict: {} ({:.2f} GiB needed on {}, {:.2f} GiB from {})\n", fits ? "fits" : "does not fit", bytes_to_gib(static_cast<double>(on_device)),
                        host_cpu ? std::string("this host") : cpu ? cpu->id : fullest, bytes_to_gib(capacity_bytes), capacity_source);
  }
  return fits ? k_exit_ok : k_exit_fail;
}


namespace {

// The estimate options a llama.cpp log states: llama_context's resolved values first, a command-line
// flag where the log has no resolved value, llama.cpp's defaults otherwise.
estimate::LlamaCppOptions options_from_log(const logs::LlamaCppLog& log) {
  estimate::LlamaCppOptions o;
  auto flag = [&](const std::string& name) -> std::optional<std::string> {
    for (const auto& [n, v] : log.flags)
      if (n == name) return v.value;
    return std::nullopt;
  };
  auto flag_int = [&](const std::string& name) -> std::optional<int64_t> {
    const auto v = flag(name);
    if (!v || v->empty() || v->size() > 12 || v->find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoll(*v);
  };
  if (log.n_ctx) o.ctx_size = log.n_ctx->value; else if (auto v = flag_int("ctx-size")) o.ctx_size = *v;
  if (log.build) o.build = log.build->value;  // llamacpp33: the build decides an MLA model's KV cache
  if (log.n_ubatch) o.ubatch_size = log.n_ubatch->value; else if (auto v = flag_int("ubatch-size")) o.ubatch_size = *v;
  if (log.n_seq_max) o.parallel = log.n_seq_max->value; else if (auto v = flag_int("parallel")) o.parallel = *v;
  if (log.layers_offloaded) o.n_gpu_layers = log.layers_offloaded->value; else if (auto v = flag_int("n-gpu-layers")) o.n_gpu_layers = *v;
  const std::string fa = log.flash_attn ? log.flash_attn->value : flag("flash-attn").value_or("auto");
  o.flash_attn = fa == "enabled" || fa == "on" ? estimate::LlamaFlashAttn::on : fa == "disabled" || fa == "off" ? estimate::LlamaFlashAttn::off : estimate::LlamaFlashAttn::auto_select;
  o.cache_type_k = to_lower(log.cache_type_k ? log.cache_type_k->value : flag("cache-type-k").value_or("f16"));
  o.cache_type_v = to_lower(log.cache_type_v ? log.cache_type_v->value : flag("cache-type-v").value_or("f16"));
  // Tensors the command line keeps on the CPU (--override-tensor PATTERN=CPU, --cpu-moe, --n-cpu-moe N).
  if (auto v = flag("override-tensor"))
    if (auto patterns = parse_cpu_overrides(*v)) o.cpu_tensor_patterns = *patterns;
  if (flag("cpu-moe")) o.cpu_tensor_patterns.push_back(estimate::llama_cpu_moe_pattern());
  if (auto n = flag_int("n-cpu-moe")) o.cpu_moe_first_layers = *n;
  const bool mapped = std::any_of(log.buffers.begin(), log.buffers.end(), [](const auto& b) { return b.device == "CPU_Mapped"; });
  const bool cpu_model = std::any_of(log.buffers.begin(), log.buffers.end(), [](const auto& b) { return b.device == "CPU" && b.kind == "model"; });
  // load_mode is printed by newer builds; older ones show a CPU (copied) model buffer instead of CPU_Mapped.
  const bool no_mmap = log.load_mode ? log.load_mode->value != "mmap" : flag("no-mmap").has_value() || (cpu_model && !mapped);
  o.mmap = no_mmap ? estimate::LlamaMmap::off : estimate::LlamaMmap::on;
  for (const auto& b : log.buffers) {
    if (b.device == "AMX") o.cpu_extra_buffer = estimate::LlamaCpuExtraBuffer::amx;
    const bool host = b.device.rfind("CPU", 0) == 0 || b.device == "AMX" || b.device.find("_Host") != std::string::npos;
    if (!host) o.gpu_name = b.device;
  }
  return o;
}

struct LogComparison {
  std::string kind;
  double printed = 0;
  std::vector<int64_t> lines;
  std::optional<double> predicted;
};

std::vector<LogComparison> compare_log(const logs::LlamaCppLog& log, const std::optional<estimate::LlamaCppEstimate>& est) {
  std::vector<LogComparison> rows;
  double printed_total = 0, predicted_total = 0;
  for (const char* kind : {"model", "KV", "RS", "compute", "output"}) {
    LogComparison r{kind, log.total(kind), {}, std::nullopt};
    for (const auto& b : log.buffers)
      if (b.kind == kind) r.lines.push_back(b.line);
    if (r.lines.empty()) continue;
    if (est) {
      const std::string k = kind;
      r.predicted = static_cast<double>(k == "model" ? est->model_buffer_bytes : k == "KV" ? est->kv_buffer_bytes : k == "RS" ? est->rs_buffer_bytes
                                        : k == "compute" ? est->compute_buffer_bytes : est->output_buffer_bytes);
      predicted_total += *r.predicted;
    }
    printed_total += r.printed;
    rows.push_back(r);
  }
  if (!rows.empty()) rows.push_back({"total", printed_total, {}, est ? std::optional<double>(predicted_total) : std::nullopt});
  return rows;
}

Json log_json(const std::string& path, const logs::LlamaCppLog& log, const std::vector<LogComparison>& rows, const std::vector<std::string>& notes) {
  auto logged = [](const auto& v) { return v ? Json{{"value", v->value}, {"line", v->line}} : Json(); };
  Json j = report::envelope("logs");
  j["file"] = path;
  j["engine"] = "llama.cpp";
  j["line_count"] = log.line_count;
  j["model"] = logged(log.model_path);
  j["context"] = {{"n_ctx", logged(log.n_ctx)}, {"n_batch", logged(log.n_batch)}, {"n_ubatch", logged(log.n_ubatch)}, {"n_seq_max", logged(log.n_seq_max)},
                  {"flash_attn", logged(log.flash_attn)}, {"cache_type_k", logged(log.cache_type_k)}, {"cache_type_v", logged(log.cache_type_v)},
                  {"layers_offloaded", logged(log.layers_offloaded)}, {"load_mode", logged(log.load_mode)}};
  Json flags = Json::array(), buffers = Json::array(), cmp = Json::array();
  for (const auto& [name, v] : log.flags) flags.push_back({{"flag", name}, {"value", v.value}, {"line", v.line}});
  for (const auto& b : log.buffers) buffers.push_back({{"device", b.device}, {"kind", b.kind}, {"bytes", b.bytes}, {"line", b.line}});
  for (const auto& r : rows)
    cmp.push_back({{"what", r.kind == "total" ? "total" : r.kind + " buffer"}, {"printed_bytes", r.printed}, {"lines", r.lines},
                   {"predicted_bytes", r.predicted ? Json(*r.predicted) : Json()}, {"ratio", r.predicted && r.printed > 0 ? Json(*r.predicted / r.printed) : Json()}});
  j["flags"] = flags;
  j["buffers"] = buffers;
  j["printed_vs_predicted"] = cmp;
  j["notes"] = notes;
  return j;
}

}  // namespace

int cmd_logs_llama_cpp(const std::string& path, const std::string& text, bool json) {
  const logs::LlamaCppLog log = logs::parse_llama_cpp_log(text);
  std::vector<std::string> notes;
  std::optional<estimate::LlamaCppEstimate> est;
  const auto options = options_from_log(log);
  if (!log.model_path) {
    notes.push_back("the log names no model file (no 'loaded meta data ... from PATH' line, no -m flag): printed lines only");
  } else if (auto file = model::load_gguf(log.model_path->value); !file) {
    notes.push_back("no prediction: " + log.model_path->value + " (log line " + std::to_string(log.model_path->line) + "): " + file.error().message);
  } else if (auto e = estimate::estimate_llama_cpp(*file, options); !e) {
    notes.push_back("no prediction: " + log.model_path->value + ": " + e.error().message);
  } else {
    est = *e;
    for (const auto& a : e->assumptions) notes.push_back("assumption: " + a);
  }
  const auto rows = compare_log(log, est);
  if (rows.empty()) notes.push_back("no buffer size lines in the log (llama.cpp prints them at info level)");
  if (json) {
    print_json(log_json(path, log, rows, notes));
    return k_exit_ok;
  }
  std::cout << fmt::format("{}: llama.cpp log, {} lines; model {}\n", path, log.line_count, log.model_path ? fmt::format("{} (line {})", log.model_path->value, log.model_path->line) : "not named");
  std::cout << fmt::format("  n_ctx {}, n_ubatch {}, n_seq_max {}, flash_attn {}, K/V {}/{}, layers on GPU {}\n", options.ctx_size, options.ubatch_size, options.parallel,
                           log.flash_attn ? log.flash_attn->value : "not printed", options.cache_type_k, options.cache_type_v, options.n_gpu_layers);
  for (const auto& [name, v] : log.flags) std::cout << fmt::format("  flag --{}{} (line {})\n", name, v.value.empty() ? "" : " " + v.value, v.line);
  std::cout << fmt::format("{:<16} {:>14} {:>14} {:>8}  {}\n", "buffer", "printed MiB", "predicted MiB", "ratio", "lines");
  for (const auto& r : rows) {
    std::string lines;
    for (auto l : r.lines) lines += (lines.empty() ? "" : ",") + std::to_string(l);
    std::cout << fmt::format("{:<16} {:>14.2f} {:>14} {:>8}  {}\n", r.kind, r.printed / 1048576.0, r.predicted ? fmt::format("{:.2f}", *r.predicted / 1048576.0) : "-",
                             r.predicted && r.printed > 0 ? fmt::format("{:.4f}", *r.predicted / r.printed) : "-", lines);
  }
  for (const auto& n : notes) std::cout << "note: " << n << "\n";
  return k_exit_ok;
}

std::string llama_cpp_help_text() {
  static LlamaRequest scratch;  // the setters are never called
  CommandText text{k_llama_usage,
                   "llama.cpp's own memory for a GGUF file: model, KV, compute and output buffers as llama.cpp prints them, with llama.cpp's\n"
                   "flag names (llama-server / llama-cli) and the decode speed from the device's bandwidth.",
                   "", "exit: 0 fits, 1 does not fit, 2 bad input (a flag out of range names the flag; a flag given twice)"};
  return render_help({text, llama_options(scratch)});
}

}  // namespace preflight::cli
