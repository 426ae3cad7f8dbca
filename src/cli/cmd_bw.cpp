#include "base/build_info.hpp"
#include "cli/cmd_bw.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "base/checked.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/args.hpp"
#include "cli/help.hpp"
#include "cli/common.hpp"
#include "device/device_spec.hpp"
#include "device/measured_overlay.hpp"
#include "probe/device_bandwidth.hpp"
#include "probe/host_bandwidth.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

constexpr int64_t k_default_host_mib = 256;     // per array: far above the LLC of the hosts we target
constexpr int64_t k_default_device_mib = 2048;  // per buffer: the seed's 2 GiB fp16 tensor
constexpr int64_t k_max_mib = int64_t{1} << 30;


int fail(const Error& e, int code) {
  fmt::print(stderr, "preflight: {}\n", e.describe());
  return code;
}
int usage(const std::string& message) { return fail(make_error(ErrorKind::invalid_argument, message + "\n" + command_usage("bw")), k_exit_usage); }

// Usage problems exit 2; a machine without the runtime or a failing runtime call exits 1.
int measurement_failed(const Error& e) { return fail(e, e.kind == ErrorKind::invalid_argument ? k_exit_usage : k_exit_fail); }

std::string build_note() {
#ifdef NDEBUG
  return "optimized";
#else
  return "debug (NDEBUG unset): host figures are not representative";
#endif
}

std::function<void(const std::string&)> progress_printer() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](const std::string& line) { fmt::print(stderr, "preflight bw: {}\n", line); };
}

double gb(double bytes_per_s) { return bytes_per_s / k_gb; }

Json result_to_json(const probe::BandwidthResult& r) {
  Json j{{"operation", r.operation}, {"counting", r.counting}, {"bytes_per_repeat", r.bytes_per_repeat}, {"warmup", r.warmup},
         {"repeats", r.seconds.size()}, {"seconds", r.seconds}, {"min_bytes_per_s", r.min_bytes_per_s},
         {"median_bytes_per_s", r.median_bytes_per_s}, {"max_bytes_per_s", r.max_bytes_per_s}, {"aggregate_bytes_per_s", r.aggregate_bytes_per_s},
         {"min_gb_per_s", gb(r.min_bytes_per_s)}, {"median_gb_per_s", gb(r.median_bytes_per_s)}, {"max_gb_per_s", gb(r.max_bytes_per_s)},
         {"aggregate_gb_per_s", gb(r.aggregate_bytes_per_s)}};
  // Host kernels: each repeat timed by its slowest worker's thread CPU time as well (what fit --device cpu reads).
  if (!r.cpu_seconds.empty()) {
    j["cpu_seconds"] = r.cpu_seconds;
    j["median_cpu_bytes_per_s"] = r.median_cpu_bytes_per_s;
    j["median_cpu_gb_per_s"] = gb(r.median_cpu_bytes_per_s);
  }
  return j;
}

std::string result_row(const probe::BandwidthResult& r) {
  return fmt::format("{:<12} {:<24} {:>10} {:>10} {:>10} {:>10}\n", r.operation, (with_thousands(static_cast<int64_t>(r.bytes_per_repeat)) + " B"),
                fixed(gb(r.min_bytes_per_s), 2), fixed(gb(r.median_bytes_per_s), 2), fixed(gb(r.max_bytes_per_s), 2),
                fixed(gb(r.aggregate_bytes_per_s), 2));
}

const char* k_table_header = "operation    bytes counted per run           min     median        max  aggregate\n";

// What `preflight bw` takes, written by its flag declarations.
struct Request {
  std::optional<std::string> target_flag, kernel, runtime_lib_flag, device;
  std::optional<int64_t> device_index_flag, size_mib, threads, repeats, warmup;
  bool save = false;
  bool json = false;
  // Derived by read_request.
  std::string target;
  int64_t device_index = 0;
  uint64_t size_bytes = 0;
  std::string kernels, runtime_lib, device_name;
};

std::vector<Option> bw_options(Request& r) {
  const IntRange count{0, 1000000};
  return {text_flag("target", "host|cuda|npu", r.target_flag, "what to measure (default host)", {"host", "cuda", "npu"}),
          int_flag("device-index", "N", r.device_index_flag, count, "the accelerator to measure (cuda, npu)"),
          int_flag("size", "MiB", r.size_mib, {INT64_MIN, INT64_MAX}, "per array (host, default 256) or buffer (device, default 2048)"),
          int_flag("threads", "N", r.threads, count, "host threads (default: all cores)"),
          int_flag("repeats", "N", r.repeats, count, "timed runs; the median is reported"),
          int_flag("warmup", "N", r.warmup, count, "untimed runs first"),
          text_flag("kernel", "copy,read,triad", r.kernel, "host kernels to run"),
          text_flag("runtime-lib", "PATH", r.runtime_lib_flag, "the CUDA / AscendCL runtime library (else PREFLIGHT_CUDART_LIB / PREFLIGHT_ACL_LIB)"),
          text_flag("device", "D", r.device, "the catalogue device the figure belongs to (with --save)"),
          switch_flag("save", r.save, "store the figure as a measured override that fit and plan then use"), json_flag(r.json)};
}

const CommandText k_bw_text{
    R"(usage: preflight bw [--target host|cuda|npu] [--device-index N] [--size MiB] [--threads N]
                    [--repeats N] [--warmup N] [--kernel copy,read,triad] [--runtime-lib PATH] [--save --device D] [--json])",
    R"(Measures memory bandwidth the way the field report does (a copy counts one read and one write): median and
spread over the repeats. --save --device D stores it as a measured override that fit and plan then use.)",
    "", "exit: 0, 1 when the runtime is missing or the measurement fails, 2 bad input (a flag given twice included)"};

Expected<Request> read_request(const std::vector<std::string>& argv) {
  Request r;
  PF_TRY(positional, parse_options(argv, bw_options(r)));
  if (!positional.empty()) return make_error(ErrorKind::invalid_argument, fmt::format("unexpected argument '{}'", one_line(positional[0], 60)));
  r.target = r.target_flag.value_or("host");
  const bool host = r.target == "host";
  if (host && (r.device_index_flag || r.runtime_lib_flag)) return make_error(ErrorKind::invalid_argument, "--device-index and --runtime-lib apply to --target cuda or npu");
  if (!host && (r.threads || r.kernel)) return make_error(ErrorKind::invalid_argument, "--threads and --kernel apply to --target host");
  const int64_t mib = r.size_mib.value_or(host ? k_default_host_mib : k_default_device_mib);
  if (mib < 1 || mib > k_max_mib) return make_error(ErrorKind::invalid_argument, fmt::format("--size: expected MiB in [1, {}], got {}", k_max_mib, mib));
  r.size_bytes = *checked_mul(static_cast<uint64_t>(mib), 1ull << 20);  // cannot overflow below k_max_mib
  r.device_index = r.device_index_flag.value_or(0);
  r.kernels = r.kernel.value_or("");
  r.runtime_lib = r.runtime_lib_flag.value_or("");
  r.device_name = r.device.value_or("");
  if (r.save && host && r.device_name != "cpu") {
    // Issue 16 (ux31): the catalogue has a host entry, "cpu" (llama.cpp rows on this host); the message said it had none.
    return make_error(ErrorKind::invalid_argument, "a host measurement is saved with --device cpu (the host CPU that fit and plan size llama.cpp on); an "
                                                   "accelerator's with --target cuda|npu --device ID");
  }
  if (r.save && r.device_name.empty()) return make_error(ErrorKind::invalid_argument, "--save needs --device ID, the catalogue device the figure belongs to");
  if (host && !r.device_name.empty() && r.device_name != "cpu") return make_error(ErrorKind::invalid_argument, "--device names an accelerator; use it with --target cuda or npu");
  return r;
}

int run_host(const Request& req) {
  probe::HostBandwidthOptions o;
  o.array_bytes = req.size_bytes;
  if (req.threads) o.threads = static_cast<int>(*req.threads);
  if (req.repeats) o.repeats = static_cast<int>(*req.repeats);
  if (req.warmup) o.warmup = static_cast<int>(*req.warmup);
  if (!req.kernels.empty()) {
    o.kernels.clear();
    for (const auto& name : split(req.kernels, ',')) {
      auto k = probe::parse_host_kernel(trim(name));
      if (!k) return usage("--kernel: " + k.error().message);
      o.kernels.push_back(*k);
    }
  }
  o.on_progress = progress_printer();
  auto report = probe::measure_host_bandwidth(o);
  if (!report) return measurement_failed(report.error());
  // --save --device cpu: this host's copy bandwidth, which fit --engine llama.cpp --device cpu reads (issue 17).
  for (const auto& res : report->results) {
    if (!req.save || res.operation != "copy") continue;
    device::BandwidthMeasurement m{res.median_bytes_per_s, res.min_bytes_per_s, res.max_bytes_per_s, static_cast<int64_t>(res.seconds.size()), res.warmup,
                                   static_cast<double>(report->array_bytes), 0, utc_now_rfc3339(), format("preflight bw %s (%s)", PREFLIGHT_VERSION, build_commit()),
                                   "host copy kernel, " + std::to_string(report->threads) + " threads; bytes counted read + write"};
    auto builtin = device::load_builtin_device_catalog();
    if (!builtin) return fail(builtin.error(), k_exit_fail);
    auto saved = device::save_measured_copy_bandwidth(device::device_overlay_path(), *builtin, "cpu", m);
    if (!saved) return fail(saved.error(), k_exit_fail);
    std::cerr << "saved to " << device::device_overlay_path() << " as cpu measured_copy_bandwidth_bytes_per_s\n";
  }
  if (req.json) {
    Json j = report::envelope("bw");
    j["target"] = "host";
    j["unit"] = "GB/s, 1 GB = 1e9 bytes";
    j["build"] = build_note();
    j["threads"] = report->threads;
    j["array_bytes"] = report->array_bytes;
    j["results"] = Json::array();
    for (const auto& r : report->results) j["results"].push_back(result_to_json(r));
    print_json(j);
    return k_exit_ok;
  }
  std::cout << fmt::format("host memory: {} threads, 3 arrays of {} B ({} MiB), {} warm-up + {} timed runs per kernel\n", report->threads,
                      with_thousands(static_cast<int64_t>(report->array_bytes)), fixed(static_cast<double>(report->array_bytes) / k_mib, 0),
                      o.warmup, o.repeats);
  std::cout << "rates in GB/s (1 GB = 1e9 bytes); bytes counted as STREAM does: copy 2 x array, read 1 x array, triad 3 x array\n";
  if (build_note() != "optimized") std::cout << "build: " << build_note() << "\n";
  std::cout << "\n" << k_table_header;
  for (const auto& r : report->results) std::cout << result_row(r);
  return k_exit_ok;
}

int run_device(const Request& req) {
  // Resolve the catalogue device first: a typo should not cost a measurement.
  std::optional<device::DeviceSpec> dev;
  if (!req.device_name.empty()) {
    auto catalog = device::load_device_catalog();
    if (!catalog) return fail(catalog.error(), k_exit_usage);
    auto found = device::find_device(*catalog, req.device_name);
    if (!found) return fail(found.error(), k_exit_usage);
    if (found->platform != req.target) {
      return usage(fmt::format("--device {} is a {} device; this measures --target {}", found->id, found->platform, req.target));
    }
    dev = *found;
  }
  probe::DeviceBandwidthOptions o;
  o.runtime = req.target == "cuda" ? probe::DeviceRuntime::cuda : probe::DeviceRuntime::ascend;
  o.device_index = static_cast<int>(req.device_index);
  o.buffer_bytes = req.size_bytes;
  if (req.repeats) o.repeats = static_cast<int>(*req.repeats);
  if (req.warmup) o.warmup = static_cast<int>(*req.warmup);
  o.library_path = req.runtime_lib;
  o.on_progress = progress_printer();
  const std::string date = utc_now_rfc3339();
  auto report = probe::measure_device_bandwidth(o);
  if (!report) return measurement_failed(report.error());
  const auto& c = report->copy;

  std::optional<std::string> saved_path;
  if (req.save) {
    device::BandwidthMeasurement m;
    m.median_bytes_per_s = c.median_bytes_per_s;
    m.min_bytes_per_s = c.min_bytes_per_s;
    m.max_bytes_per_s = c.max_bytes_per_s;
    m.repeats = static_cast<int64_t>(c.seconds.size());
    m.warmup = c.warmup;
    m.buffer_bytes = static_cast<double>(report->buffer_bytes);
    m.device_index = report->device_index;
    m.date = date;
    m.tool = fmt::format("preflight bw {} ({})", PREFLIGHT_VERSION, build_commit());
    m.method = report->method + "; bytes counted read + write (2 x buffer)";
    auto builtin = device::load_builtin_device_catalog();
    if (!builtin) return fail(builtin.error(), k_exit_fail);
    const std::string path = device::device_overlay_path();
    auto saved = device::save_measured_copy_bandwidth(path, *builtin, dev->id, m);
    if (!saved) return fail(saved.error(), k_exit_fail);
    saved_path = path;
  }

  if (req.json) {
    Json j = report::envelope("bw");
    j["target"] = req.target;
    j["unit"] = "GB/s, 1 GB = 1e9 bytes";
    j["runtime"] = probe::device_runtime_name(report->runtime);
    j["library"] = report->library_path;
    j["device_index"] = report->device_index;
    j["buffer_bytes"] = report->buffer_bytes;
    j["method"] = report->method;
    j["date"] = date;
    j["results"] = Json::array({result_to_json(c)});
    if (dev) {
      j["device"] = {{"id", dev->id},
                     {"catalogue_hbm_bandwidth_bytes_per_s", dev->hbm_bandwidth_bytes_per_s ? Json(*dev->hbm_bandwidth_bytes_per_s) : Json()},
                     {"catalogue_measured_copy_bandwidth_bytes_per_s", dev->measured_copy_bandwidth_bytes_per_s ? Json(*dev->measured_copy_bandwidth_bytes_per_s) : Json()}};
    }
    j["saved_to"] = saved_path ? Json(*saved_path) : Json();
    print_json(j);
    return k_exit_ok;
  }
  std::cout << fmt::format("{} device {} via {}\n", req.target, report->device_index, report->library_path);
  std::cout << fmt::format("method: {}\n", report->method);
  std::cout << fmt::format("{} warm-up + {} timed copies of {} B; bytes counted per copy: {}\n", c.warmup, c.seconds.size(),
                      with_thousands(static_cast<int64_t>(report->buffer_bytes)), c.counting);
  std::cout << "rates in GB/s (1 GB = 1e9 bytes); aggregate = all bytes over all timed seconds (the seed's method)\n\n" << k_table_header << result_row(c);
  if (dev) {
    std::cout << fmt::format("\n{} in the catalogue: peak {} GB/s, measured copy {} GB/s; this run's median is {} of the peak\n", dev->id,
                        dev->hbm_bandwidth_bytes_per_s ? fixed(gb(*dev->hbm_bandwidth_bytes_per_s), 0) : "-",
                        dev->measured_copy_bandwidth_bytes_per_s ? fixed(gb(*dev->measured_copy_bandwidth_bytes_per_s), 0) : "-",
                        dev->hbm_bandwidth_bytes_per_s ? (fixed(100 * c.median_bytes_per_s / *dev->hbm_bandwidth_bytes_per_s, 1) + "%") : "-");
  }
  if (saved_path) std::cout << fmt::format("saved to {} as {} measured_copy_bandwidth_bytes_per_s = {:.0f} (median)\n", saved_path->c_str(), dev->id, c.median_bytes_per_s);
  return k_exit_ok;
}

}  // namespace

CommandHelp bw_help() {
  static Request scratch;
  return {k_bw_text, bw_options(scratch)};
}

int cmd_bw(const std::vector<std::string>& argv) {
  auto req = read_request(argv);
  if (!req) return usage(req.error().message);
  return req->target == "host" ? run_host(*req) : run_device(*req);
}

}  // namespace preflight::cli
