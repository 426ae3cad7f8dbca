// Ascend checks: the CANN toolkit and NNAL/ATB (where installed, version, active in this shell,
// persisted where the EngineCore child process inherits it, the cxx_abi directory matching torch),
// and the driver (npu-smi runnable, driver lib64 on the library path, memory already in use).
// Layout facts: toolkit at <prefix>/ascend-toolkit/latest with <arch>-linux/ascend_toolkit_install.info
// ("version=8.3.RC1"); ATB at <prefix>/nnal/atb/<version>/atb/cxx_abi_{0,1}/lib/libatb.so
// (seeds/000 section 2.3); torch's ABI in torch/share/cmake/Torch/TorchConfig.cmake
// ("-D_GLIBCXX_USE_CXX11_ABI=1").
#include <algorithm>
#include <cctype>

#include "base/text.hpp"
#include "base/units.hpp"
#include "doctor/probe.hpp"

namespace preflight::doctor {

namespace {

bool looks_like_version(const std::string& v) { return !v.empty() && std::isdigit(static_cast<unsigned char>(v[0])) && v.find('.') != std::string::npos; }

std::string value_after(const std::string& text, const std::string& key) {
  for (const auto& raw : split(text, '\n')) {
    const std::string line = trim(raw);
    if (starts_with(line, key)) return trim(line.substr(key.size()));
  }
  return {};
}

// Toolkit version and where it was read.
std::pair<std::string, std::string> toolkit_version(const Probe& probe, const std::string& toolkit) {
  if (auto entries = probe.list(toolkit)) {
    for (const auto& e : *entries) {
      if (!ends_with(e, "-linux")) continue;
      const std::string info = join_path(join_path(toolkit, e), "ascend_toolkit_install.info");
      if (auto text = probe.read(info, 64 * 1024)) {
        const std::string v = value_after(*text, "version=");
        if (!v.empty()) return {v, info};
      }
    }
  }
  const std::string cfg = join_path(toolkit, "version.cfg");
  if (auto text = probe.read(cfg, 64 * 1024)) {
    std::string v = value_after(*text, "version=");
    if (v.empty()) {
      v = value_after(*text, "runtime_running_version=[");
      v = v.substr(0, v.find(':'));
    }
    if (!v.empty()) return {v, cfg};
  }
  const std::string target = probe.link_target(toolkit);
  if (!target.empty()) return {base_name(target), toolkit + " -> " + target};
  return {};
}

bool mentions(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The libatb.so directories found per cxx_abi (index 0 or 1) and the ATB version they belong to.
struct AtbInstall {
  std::vector<std::string> abi_dirs[2];
  std::string version;
  bool empty() const { return abi_dirs[0].empty() && abi_dirs[1].empty(); }
};

// The CANN toolkit: found via ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME or <prefix>/ascend-toolkit/latest,
// its version against the compatibility row, and whether this shell has it active. Sets ctx.cann_toolkit.
CheckResult check_cann_toolkit(CheckContext& ctx, const std::vector<std::string>& prefixes, const CompatRow* row, const InstalledPackage* va) {
  const Probe& probe = ctx.probe;
  CheckResult tk{"cann.toolkit", "CANN toolkit", CheckStatus::skip, "", {}, ""};
  std::vector<std::string> candidates;
  for (const char* var : {"ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"}) if (auto v = probe.env(var)) candidates.push_back(*v);
  for (const auto& p : prefixes) candidates.push_back(join_path(p, "ascend-toolkit/latest"));
  for (const auto& c : candidates) {
    if (probe.is_dir(c)) { ctx.cann_toolkit = c; break; }
  }
  if (ctx.cann_toolkit.empty()) {
    tk.status = ctx.ascend_host ? CheckStatus::fail : CheckStatus::skip;
    tk.summary = "no CANN toolkit found";
    for (const auto& c : candidates) tk.evidence.push_back("looked in " + c);
    if (ctx.ascend_host) tk.fix = "install the CANN toolkit" + (row ? " " + row->cann : std::string()) + " and source <prefix>/ascend-toolkit/set_env.sh";
    return tk;
  }
  auto [version, where] = toolkit_version(probe, ctx.cann_toolkit);
  tk.evidence.push_back("toolkit: " + ctx.cann_toolkit);
  tk.status = CheckStatus::ok;
  if (version.empty()) {
    tk.status = CheckStatus::warn;
    tk.summary = "CANN toolkit found, version unknown";
    tk.evidence.push_back("no ascend_toolkit_install.info or version.cfg with a version under " + ctx.cann_toolkit);
  } else if (!looks_like_version(version)) {
    tk.status = CheckStatus::warn;
    tk.summary = "CANN toolkit found, unrecognised version string '" + version + "'";
    tk.evidence.push_back("version '" + version + "' read from " + where);
  } else {
    tk.summary = "CANN " + version;
    tk.evidence.push_back("version " + version + " read from " + where);
    if (row && to_lower(row->cann) != to_lower(version)) {
      tk.status = CheckStatus::warn;
      tk.summary += ", but vllm-ascend " + va->version + " is documented with CANN " + row->cann;
      tk.evidence.push_back("compatibility row vllm-ascend " + row->vllm_ascend + ": CANN " + row->cann + " (" + row->source + ")");
      tk.fix = "install CANN " + row->cann + " (the whole row: vllm " + row->vllm + ", torch " + row->torch + ", torch_npu " + row->torch_npu + ")";
    }
  }
  bool active = probe.env("ASCEND_HOME_PATH").has_value();
  for (const auto& d : probe.library_path()) active = active || mentions(d, "ascend-toolkit") || starts_with(d, ctx.cann_toolkit);
  tk.evidence.push_back(active ? "active in this shell (ASCEND_HOME_PATH or LD_LIBRARY_PATH)" : "not active in this shell: ASCEND_HOME_PATH unset, no toolkit dir on LD_LIBRARY_PATH");
  if (!active && tk.status == CheckStatus::ok) {
    tk.status = CheckStatus::warn;
    tk.fix = "source " + join_path(ctx.cann_toolkit.substr(0, ctx.cann_toolkit.rfind('/')), "set_env.sh");
  }
  return tk;
}

// libatb.so under <prefix>/nnal/atb/<version>/atb/cxx_abi_{0,1}/lib; unreadable directories go to `evidence`.
AtbInstall find_atb(const Probe& probe, const std::vector<std::string>& prefixes, std::vector<std::string>& evidence) {
  AtbInstall atb;
  for (const auto& p : prefixes) {
    const std::string base = join_path(p, "nnal/atb");
    auto versions = probe.list(base);
    if (!versions) {
      if (probe.exists(base)) evidence.push_back(versions.error().describe());
      continue;
    }
    for (const auto& v : *versions) {
      for (int abi = 0; abi < 2; ++abi) {
        const std::string lib = join_path(base, v + "/atb/cxx_abi_" + std::to_string(abi) + "/lib");
        if (probe.exists(join_path(lib, "libatb.so"))) {
          atb.abi_dirs[abi].push_back(lib);
          if (atb.version.empty() || v != "latest") atb.version = v;
        }
      }
    }
  }
  return atb;
}

// torch's _GLIBCXX_USE_CXX11_ABI (0 or 1) from TorchConfig.cmake, -1 when unknown; what was read goes to `evidence`.
int torch_cxx_abi(const CheckContext& ctx, std::vector<std::string>& evidence) {
  int torch_abi = -1;
  if (!ctx.python.site_packages.empty()) {
    const std::string cfg = join_path(ctx.python.site_packages, "torch/share/cmake/Torch/TorchConfig.cmake");
    if (auto text = ctx.probe.read(cfg, 256 * 1024)) {
      const size_t p = text->find("_GLIBCXX_USE_CXX11_ABI=");
      if (p != std::string::npos && p + 23 < text->size() && (text->at(p + 23) == '0' || text->at(p + 23) == '1')) torch_abi = text->at(p + 23) - '0';
      evidence.push_back(torch_abi >= 0 ? format("torch built with _GLIBCXX_USE_CXX11_ABI=%d (%s)", torch_abi, cfg.c_str()) : cfg + ": no _GLIBCXX_USE_CXX11_ABI flag");
    } else if (ctx.python.find("torch")) {
      evidence.push_back("torch ABI unknown: " + text.error().describe());
    }
  }
  return torch_abi;
}

// NNAL / ATB and the cxx_abi directory that matches torch's C++ ABI.
CheckResult check_cann_atb(const CheckContext& ctx, const std::vector<std::string>& prefixes, const InstalledPackage* va, AtbInstall& found) {
  const Probe& probe = ctx.probe;
  CheckResult atb{"cann.atb", "NNAL/ATB (libatb.so) and cxx_abi", CheckStatus::skip, "", {}, ""};
  found = find_atb(probe, prefixes, atb.evidence);
  const auto& abi_dirs = found.abi_dirs;
  const int torch_abi = torch_cxx_abi(ctx, atb.evidence);
  int on_path_abi = -1;
  for (const auto& d : probe.library_path()) {
    if (mentions(d, "cxx_abi_0")) on_path_abi = on_path_abi == 1 ? 2 : 0;
    if (mentions(d, "cxx_abi_1")) on_path_abi = on_path_abi == 0 ? 2 : 1;
  }
  if (found.empty()) {
    atb.status = (ctx.ascend_host && va) ? CheckStatus::fail : CheckStatus::skip;
    atb.summary = "no libatb.so under <prefix>/nnal/atb/<version>/atb/cxx_abi_{0,1}/lib";
    if (atb.status == CheckStatus::fail) atb.fix = "install the NNAL (ATB) package matching CANN and source <prefix>/nnal/atb/set_env.sh";
    return atb;
  }
  for (int abi = 0; abi < 2; ++abi) for (const auto& d : abi_dirs[abi]) atb.evidence.push_back("libatb.so in " + d);
  atb.summary = "ATB " + found.version;
  atb.status = CheckStatus::ok;
  if (torch_abi < 0) {
    atb.status = CheckStatus::warn;
    atb.summary += "; torch's C++ ABI unknown, so the cxx_abi directory cannot be chosen";
    atb.fix = "source <prefix>/nnal/atb/set_env.sh, which asks torch.compiled_with_cxx11_abi()";
  } else if (abi_dirs[torch_abi].empty()) {
    atb.status = CheckStatus::fail;
    atb.summary += format("; torch needs cxx_abi_%d, which is not installed", torch_abi);
    atb.fix = "install the NNAL package that ships cxx_abi_" + std::to_string(torch_abi);
  } else {
    const std::string want = abi_dirs[torch_abi].back();
    atb.summary += format("; torch needs cxx_abi_%d: %s", torch_abi, want.c_str());
    if (on_path_abi == -1) {
      atb.status = CheckStatus::warn;
      atb.evidence.push_back("LD_LIBRARY_PATH holds no cxx_abi directory: libatb.so is not found in this shell");
      atb.fix = "export LD_LIBRARY_PATH=" + want + ":$LD_LIBRARY_PATH (or source <prefix>/nnal/atb/set_env.sh)";
    } else if (on_path_abi != torch_abi) {
      atb.status = CheckStatus::fail;
      atb.evidence.push_back(format("LD_LIBRARY_PATH holds cxx_abi_%d (or both), torch needs cxx_abi_%d", on_path_abi == 2 ? 1 - torch_abi : on_path_abi, torch_abi));
      atb.fix = "put only " + want + " on LD_LIBRARY_PATH";
    } else {
      atb.evidence.push_back(format("LD_LIBRARY_PATH holds cxx_abi_%d", torch_abi));
    }
  }
  return atb;
}

// Persisted where the engine's child process inherits it: the venv's activate script, a service
// unit that starts vllm, or the deploy script.
CheckResult check_cann_persisted(const CheckContext& ctx, const AtbInstall& atb) {
  const Probe& probe = ctx.probe;
  CheckResult per{"cann.persisted", "CANN/ATB environment persisted for the EngineCore child", CheckStatus::skip, "", {}, ""};
  if (ctx.cann_toolkit.empty() && atb.empty()) {
    per.summary = "no CANN install found";
    return per;
  }
  std::vector<std::pair<std::string, std::string>> places;  // host path, text
  if (!ctx.python.venv.empty()) {
    const std::string act = join_path(ctx.python.venv, "bin/activate");
    if (auto t = probe.read(act)) places.push_back({act, *t});
    else per.evidence.push_back(t.error().describe());
  }
  if (auto units = probe.list("/etc/systemd/system")) {
    for (const auto& u : *units) {
      if (!ends_with(u, ".service")) continue;
      const std::string path = join_path("/etc/systemd/system", u);
      if (auto t = probe.read(path)) if (mentions(to_lower(*t), "vllm")) places.push_back({path, *t});
    }
  }
  if (ctx.probe.options().script_path) {
    if (auto t = read_text_file(*ctx.probe.options().script_path)) places.push_back({*ctx.probe.options().script_path, *t});
  }
  bool any = false;
  for (const auto& [path, text] : places) {
    const bool has_tk = mentions(text, "ascend-toolkit");
    const bool has_atb = mentions(text, "nnal/atb") || mentions(text, "cxx_abi_");
    per.evidence.push_back(path + ": toolkit " + (has_tk ? "set" : "not set") + ", ATB " + (has_atb ? "set" : "not set"));
    any = any || (has_tk && has_atb);
  }
  bool active_now = false;
  for (const auto& d : probe.library_path()) active_now = active_now || mentions(d, "cxx_abi_");
  if (any) {
    per.status = CheckStatus::ok;
    per.summary = "persisted";
  } else {
    per.status = places.empty() || active_now ? CheckStatus::warn : CheckStatus::fail;
    per.summary = places.empty() ? "no venv activate script, vllm service unit or --script to check" : "not persisted where the EngineCore child process inherits it";
    per.fix = "append 'source <prefix>/ascend-toolkit/set_env.sh' and 'source <prefix>/nnal/atb/set_env.sh' (or the LD_LIBRARY_PATH exports) to the venv's bin/activate or the service unit's environment";
  }
  return per;
}

}  // namespace

void check_cann(CheckContext& ctx) {
  std::vector<std::string> prefixes;
  for (const auto& p : ctx.compat.cann_prefixes.values) if (auto e = ctx.probe.expand(p)) prefixes.push_back(*e);
  const InstalledPackage* va = ctx.python.find("vllm-ascend");
  const CompatRow* row = va ? ctx.compat.row_for(va->version) : nullptr;
  ctx.report.checks.push_back(check_cann_toolkit(ctx, prefixes, row, va));
  AtbInstall atb;
  ctx.report.checks.push_back(check_cann_atb(ctx, prefixes, va, atb));
  ctx.report.checks.push_back(check_cann_persisted(ctx, atb));
}

NpuSmiInfo parse_npu_smi_info(const std::string& text) {
  NpuSmiInfo info;
  bool in_processes = false;
  int64_t current_npu = -1;
  std::string current_name;
  for (const auto& raw : split(text, '\n')) {
    const std::string line = trim(raw);
    if (line.find("npu-smi") != std::string::npos && info.version.empty()) {
      const size_t p = line.find("Version:");
      if (p != std::string::npos) info.version = trim(split(line.substr(p + 8), '|')[0]);
    }
    if (line.empty() || line[0] != '|') continue;
    if (line.find("Process id") != std::string::npos) { in_processes = true; continue; }
    std::vector<std::string> cells;
    for (const auto& c : split(line, '|')) cells.push_back(trim(c));
    // split on a leading '|' gives an empty first cell.
    if (cells.size() < 4) continue;
    auto first_int = [](const std::string& cell, int64_t* out) {
      if (cell.empty() || !std::isdigit(static_cast<unsigned char>(cell[0]))) return false;
      *out = std::strtoll(cell.c_str(), nullptr, 10);
      return true;
    };
    int64_t a = 0;
    if (in_processes) {
      int64_t pid = 0, mem = 0;
      if (cells.size() >= 5 && first_int(cells[1], &a) && first_int(cells[2], &pid) && first_int(cells[4], &mem)) {
        info.processes.push_back({a, pid, cells[3], mem});
      }
      continue;
    }
    if (!first_int(cells[1], &a)) continue;
    if (cells[2].find(':') != std::string::npos) {  // chip row: "| 0  0 | 0000:C1:00.0 | 0  31793 / 30271 |"
      const std::string& usage = cells[3];
      const size_t slash = usage.rfind('/');
      if (slash == std::string::npos || current_npu < 0) continue;
      size_t b = slash;
      while (b > 0 && usage[b - 1] == ' ') --b;
      size_t s = b;
      while (s > 0 && std::isdigit(static_cast<unsigned char>(usage[s - 1]))) --s;
      const std::string used = usage.substr(s, b - s), total = trim(usage.substr(slash + 1));
      if (used.empty() || total.empty() || !std::isdigit(static_cast<unsigned char>(total[0]))) continue;
      info.memory.push_back({current_npu, current_name, std::strtoll(used.c_str(), nullptr, 10), std::strtoll(total.c_str(), nullptr, 10)});
    } else {  // NPU row: "| 0  910B4 | OK | ..."
      current_npu = a;
      const auto words = split(cells[1], ' ');
      current_name.clear();
      for (size_t i = 1; i < words.size(); ++i) if (!words[i].empty()) { current_name = words[i]; break; }
    }
  }
  return info;
}

void check_driver(CheckContext& ctx) {
  const Probe& probe = ctx.probe;
  CheckResult smi{"driver.npu_smi", "Ascend driver and npu-smi", CheckStatus::skip, "", {}, ""};
  const std::string driver_lib = ctx.compat.driver_lib_dir.values.front();
  const auto prog = probe.find_program("npu-smi");
  if (!ctx.ascend_host) {
    smi.summary = "not an Ascend host (no npu-smi, driver or toolkit found)";
    ctx.report.checks.push_back(smi);
    return;
  }
  bool lib_on_path = false;
  for (const auto& d : probe.library_path()) lib_on_path = lib_on_path || d == driver_lib || d == driver_lib + "/";
  smi.evidence.push_back(driver_lib + (probe.is_dir(driver_lib) ? " exists" : " missing") + (lib_on_path ? ", on LD_LIBRARY_PATH" : ", not on LD_LIBRARY_PATH"));
  const std::string lib_fix = "export LD_LIBRARY_PATH=" + driver_lib + ":$LD_LIBRARY_PATH (" + ctx.compat.driver_lib_dir.source + ")";
  if (!prog) {
    smi.status = CheckStatus::fail;
    smi.summary = "npu-smi not found on PATH or in the sbin/bin directories";
    smi.fix = "install the Ascend driver (npu-smi ships with it) or add its directory to PATH";
    ctx.report.checks.push_back(smi);
    return;
  }
  smi.evidence.push_back("npu-smi: " + *prog);
  if (!probe.options().runner) {
    smi.status = CheckStatus::skip;
    smi.summary = "npu-smi found; not run";
    ctx.report.checks.push_back(smi);
    return;
  }
  auto out = probe.options().runner({probe.at(*prog), "info"}, probe.options().env);
  if (!out) {
    smi.status = CheckStatus::fail;
    smi.summary = "npu-smi could not be run";
    smi.evidence.push_back(out.error().describe());
    ctx.report.checks.push_back(smi);
    return;
  }
  if (out->exit_code != 0) {
    smi.status = CheckStatus::fail;
    smi.summary = format("npu-smi info exited with %d", out->exit_code);
    const auto lines = split(trim(out->output), '\n');
    for (size_t i = 0; i < lines.size() && i < 3; ++i) smi.evidence.push_back("npu-smi: " + trim(lines[i]));
    if (mentions(out->output, "libc_sec.so") || mentions(out->output, "cannot open shared object")) smi.fix = lib_fix;
    else smi.fix = "check the driver installation (dmesg, /var/log/ascend_seclog) and device permissions";
    ctx.report.checks.push_back(smi);
    return;
  }
  NpuSmiInfo info = parse_npu_smi_info(out->output);
  smi.status = lib_on_path ? CheckStatus::ok : CheckStatus::warn;
  smi.summary = "npu-smi info ran" + (info.version.empty() ? std::string() : " (npu-smi " + info.version + ")") + format(", %zu NPU(s)", info.memory.size());
  if (!lib_on_path) smi.fix = lib_fix;
  ctx.report.checks.push_back(smi);

  CheckResult mem{"driver.npu_memory", "NPU memory already in use", CheckStatus::ok, "", {}, ""};
  const InstalledPackage* vllm = ctx.python.find("vllm");
  const double util = ctx.compat.default_utilization(vllm ? vllm->version : "0");
  double min_free = 1.0;
  for (const auto& m : info.memory) {
    const double free_fraction = m.total_mb > 0 ? std::max(0.0, static_cast<double>(m.total_mb - m.used_mb) / static_cast<double>(m.total_mb)) : 0.0;
    min_free = std::min(min_free, free_fraction);
    mem.evidence.push_back(format("NPU %lld %s: %lld MB of %lld MB in use%s, %.0f%% free", static_cast<long long>(m.npu), m.name.c_str(),
                                  static_cast<long long>(m.used_mb), static_cast<long long>(m.total_mb), m.used_mb > m.total_mb ? " (more than the total, as printed)" : "",
                                  free_fraction * 100));
  }
  for (const auto& p : info.processes) {
    mem.evidence.push_back(format("NPU %lld: pid %lld %s holds %lld MB", static_cast<long long>(p.npu), static_cast<long long>(p.pid), p.name.c_str(),
                                  static_cast<long long>(p.memory_mb)));
  }
  if (info.memory.empty()) {
    mem.status = CheckStatus::warn;
    mem.summary = "could not read per-NPU memory from npu-smi info";
  } else {
    ctx.report.free_fraction_min = min_free;
    mem.summary = format("lowest free fraction %.2f; the default gpu_memory_utilization is %.2f", min_free, util);
    if (min_free < util || !info.processes.empty()) {
      mem.status = CheckStatus::warn;
      mem.fix = format("stop the processes holding NPU memory, or pass --gpu-memory-utilization %.2f or lower to vllm and to 'preflight fit' "
                       "(vLLM-Ascend >= 0.15 refuses to start when free memory is below utilization x total; %s)",
                       std::max(0.0, min_free - 0.01), ctx.compat.utilization_source.c_str());
    }
  }
  ctx.report.npu_smi = info;
  ctx.report.checks.push_back(mem);
}

}  // namespace preflight::doctor
