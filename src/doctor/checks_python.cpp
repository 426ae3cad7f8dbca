// Python stack checks read from installed package metadata (*.dist-info/METADATA, *.egg-info/PKG-INFO;
// nothing is imported): versions against the vllm-ascend compatibility row, upstream triton beside
// triton-ascend, CUDA-only packages on an NPU host, the TBE compiler's dependencies; glibc against
// the published wheel tag; and the CUDA basics on a CUDA host.
#include <algorithm>
#include <cctype>

#include "base/text.hpp"
#include "base/units.hpp"
#include "doctor/probe.hpp"

namespace preflight::doctor {

namespace {

std::string version_of(const PythonEnv& py, const std::string& name) {
  const InstalledPackage* p = py.find(name);
  return p ? p->version : std::string();
}

std::string pin_text(const CompatRow& row) {
  std::string s = "pip install vllm==" + row.vllm + " vllm-ascend==" + row.vllm_ascend + " torch==" + row.torch + " torch_npu==" + row.torch_npu;
  if (row.triton_ascend) s += " triton-ascend==" + *row.triton_ascend;
  return s;
}

}  // namespace

void check_python(CheckContext& ctx) {
  const PythonEnv& py = ctx.python;
  CheckResult st{"python.stack", "Python packages against the vllm-ascend compatibility row", CheckStatus::ok, "", {}, ""};
  for (const auto& problem : py.problems) st.evidence.push_back(problem);
  if (py.site_packages.empty()) {
    st.status = CheckStatus::skip;
    st.summary = "no Python site-packages found (give --venv DIR or set VIRTUAL_ENV)";
    ctx.report.checks.push_back(st);
    return;
  }
  st.evidence.push_back("site-packages: " + py.site_packages + (py.python_version.empty() ? "" : " (Python " + py.python_version + ")"));
  for (const char* name : {"vllm", "vllm-ascend", "torch", "torch-npu", "triton", "triton-ascend", "transformers", "torchvision", "fastapi", "pydantic", "uvicorn",
                           "xgrammar", "numpy"}) {
    if (const InstalledPackage* p = py.find(name)) {
      st.evidence.push_back(std::string(name) + " " + (p->version.empty() ? "(no version in metadata)" : p->version));
    }
  }
  const InstalledPackage* va = py.find("vllm-ascend");
  std::vector<std::string> mismatches;
  if (va) {
    const CompatRow* row = ctx.compat.row_for(va->version);
    if (!row) {
      st.status = CheckStatus::warn;
      st.summary = "vllm-ascend '" + va->version + "' has no row in the compatibility table";
      st.fix = "install a listed release (data/doctor/compat.json)";
    } else {
      st.evidence.push_back("row vllm-ascend " + row->vllm_ascend + " (" + row->source + ")");
      auto expect = [&](const std::string& pkg, const std::string& want) {
        const std::string have = version_of(py, pkg);
        if (have.empty()) mismatches.push_back(pkg + " missing (row: " + want + ")");
        else if (!satisfies(have, want)) mismatches.push_back(pkg + " " + have + " (row: " + want + ")");
      };
      expect("vllm", row->vllm);
      expect("torch", row->torch);
      expect("torch-npu", row->torch_npu);
      if (row->triton_ascend) expect("triton-ascend", *row->triton_ascend);
      for (const auto& [pkg, pin] : row->requires_) {
        const std::string have = version_of(py, pkg);
        if (have.empty()) mismatches.push_back(pkg + " missing (vllm-ascend requires " + pin + ")");
        else if (!satisfies(have, pin)) mismatches.push_back(pkg + " " + have + " (vllm-ascend requires " + pin + ")");
      }
      if (!py.python_version.empty()) {
        const auto lo = compare_versions(py.python_version, row->python_min), hi = compare_versions(py.python_version, row->python_below);
        if (lo && hi && (*lo < 0 || *hi >= 0)) mismatches.push_back("Python " + py.python_version + " (row: >=" + row->python_min + ", <" + row->python_below + ")");
      }
      if (mismatches.empty()) {
        st.summary = "matches the vllm-ascend " + row->vllm_ascend + " row";
      } else {
        st.status = CheckStatus::fail;
        st.summary = format("%zu package(s) off the vllm-ascend %s row", mismatches.size(), row->vllm_ascend.c_str());
        for (const auto& m : mismatches) st.evidence.push_back("mismatch: " + m);
        st.fix = pin_text(*row) + " (install the whole row; vllm-ascend's dependencies are the authority on NPU, not vllm's)";
      }
    }
  } else if (py.find("vllm")) {
    st.summary = "vllm " + version_of(py, "vllm") + " without vllm-ascend";
    if (ctx.ascend_host) {
      st.status = CheckStatus::fail;
      st.fix = "pip install the vllm-ascend release matching vllm (see 'preflight doctor --json' rows)";
    }
  } else {
    st.status = CheckStatus::skip;
    st.summary = "neither vllm nor vllm-ascend installed here";
  }
  ctx.report.checks.push_back(st);

  if (ctx.ascend_host || va) {
    CheckResult tr{"python.triton", "upstream triton beside triton-ascend", CheckStatus::ok, "", {}, ""};
    const InstalledPackage* t = py.find("triton");
    const InstalledPackage* ta = py.find("triton-ascend");
    const CompatRow* row = va ? ctx.compat.row_for(va->version) : nullptr;
    const bool needs_ta = row && row->triton_ascend;
    if (t) tr.evidence.push_back("triton " + t->version + " (" + t->metadata_path + ")");
    if (ta) tr.evidence.push_back("triton-ascend " + ta->version + " (" + ta->metadata_path + ")");
    const std::string reinstall = "pip uninstall -y triton triton-ascend && pip install triton-ascend==" + (needs_ta ? *row->triton_ascend : std::string("<row version>"));
    if (t && ta) {
      tr.status = CheckStatus::fail;
      tr.summary = "upstream triton is installed beside triton-ascend and shadows it ('function' object is not subscriptable, missing fused ops)";
      tr.fix = reinstall;
    } else if (t && !ta) {
      tr.status = needs_ta ? CheckStatus::fail : CheckStatus::warn;
      tr.summary = "upstream triton without triton-ascend: @triton.jit kernels degrade to plain functions on NPU";
      tr.fix = reinstall;
    } else if (!ta && needs_ta) {
      tr.status = CheckStatus::fail;
      tr.summary = "triton-ascend missing (vllm-ascend " + row->vllm_ascend + " requires " + *row->triton_ascend + ")";
      tr.fix = reinstall;
    } else {
      tr.summary = ta ? "triton-ascend only" : "no triton installed";
    }
    ctx.report.checks.push_back(tr);

    CheckResult cu{"python.cuda_only", "CUDA-only packages on an NPU host", CheckStatus::ok, "", {}, ""};
    std::vector<std::string> found;
    for (const auto& name : ctx.compat.cuda_only_packages.values) {
      if (const InstalledPackage* p = py.find(name)) found.push_back(p->name + " " + p->version);
    }
    if (const InstalledPackage* v = py.find("vllm")) {
      for (const auto& req : v->requires_dist) {
        for (const auto& name : ctx.compat.cuda_only_packages.values) {
          if (normalize_package_name(req.substr(0, req.find_first_of(" <>=!;[("))) == normalize_package_name(name)) cu.evidence.push_back("vllm metadata requires " + req);
        }
      }
    }
    for (const auto& f : found) cu.evidence.push_back("installed: " + f);
    if (!found.empty()) {
      cu.status = CheckStatus::warn;
      cu.summary = format("%zu CUDA-only package(s) installed (pulled in by the CUDA-built vllm metadata)", found.size());
      cu.fix = "install vllm with --no-deps and take the dependency list from vllm-ascend; pip uninstall the CUDA-only packages (" + ctx.compat.cuda_only_packages.source + ")";
    } else {
      cu.summary = "none installed";
    }
    ctx.report.checks.push_back(cu);

    CheckResult tbe{"python.tbe_deps", "Python packages the CANN operator compiler (TBE) imports", CheckStatus::ok, "", {}, ""};
    std::vector<std::string> missing;
    for (const auto& name : ctx.compat.tbe_python_deps.values) if (!py.find(name)) missing.push_back(name);
    if (py.include_system_site_packages) tbe.evidence.push_back(std::string("pyvenv.cfg include-system-site-packages = ") + (*py.include_system_site_packages ? "true" : "false"));
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : " ") + m;
      tbe.status = CheckStatus::fail;
      tbe.summary = format("%zu missing from %s: %s", missing.size(), py.site_packages.c_str(), list.c_str());
      tbe.fix = "pip install " + list + " (" + ctx.compat.tbe_python_deps.source + ")";
      if (!ctx.ascend_host && ctx.cann_toolkit.empty()) tbe.status = CheckStatus::warn;
    } else {
      tbe.summary = "all present";
    }
    ctx.report.checks.push_back(tbe);
  }
}

void check_glibc(CheckContext& ctx) {
  const Probe& probe = ctx.probe;
  CheckResult gl{"glibc", "glibc against the vllm-ascend wheel tag", CheckStatus::skip, "", {}, ""};
  std::string version, where, arch;
  for (const char* dir : {"/lib", "/usr/lib", "/lib64", "/usr/lib64"}) {
    auto entries = probe.list(dir);
    if (!entries) continue;
    for (const auto& e : *entries) {
      std::string d = join_path(dir, e);
      if (ends_with(e, "-linux-gnu") && probe.is_dir(d)) {
        if (arch.empty()) arch = e.substr(0, e.find('-'));
        if (auto inner = probe.list(d)) {
          for (const auto& f : *inner) {
            if (starts_with(f, "libc-") && ends_with(f, ".so") && version.empty()) { version = f.substr(5, f.size() - 8); where = join_path(d, f); }
          }
          if (version.empty() && probe.is_regular_file(join_path(d, "libc.so.6"))) where = join_path(d, "libc.so.6");
        }
      }
    }
  }
  if (version.empty() && !where.empty()) {
    // glibc >= 2.34 has no libc-X.Y.so; its banner says "release version 2.35".
    if (auto text = probe.read(where, 8u << 20)) {
      const size_t p = text->find("release version ");
      if (p != std::string::npos) {
        size_t e = p + 16;
        while (e < text->size() && (std::isdigit(static_cast<unsigned char>(text->at(e))) || text->at(e) == '.')) ++e;
        version = text->substr(p + 16, e - p - 16);
        while (!version.empty() && version.back() == '.') version.pop_back();
      }
    } else {
      gl.evidence.push_back(text.error().describe());
    }
  }
  if (version.empty()) {
    gl.summary = "glibc version not found under " + probe.options().root;
    ctx.report.checks.push_back(gl);
    return;
  }
  gl.evidence.push_back("glibc " + version + " (" + where + ")" + (arch.empty() ? "" : ", architecture " + arch));
  const InstalledPackage* va = ctx.python.find("vllm-ascend");
  const CompatRow* target = va ? ctx.compat.row_for(va->version) : nullptr;
  if (!target) {
    for (const auto& r : ctx.compat.rows) if (r.wheel_glibc_min.count(arch)) { target = &r; break; }
  }
  if (!target || !target->wheel_glibc_min.count(arch)) {
    gl.status = CheckStatus::ok;
    gl.summary = "glibc " + version + "; no wheel tag data for " + (target ? "vllm-ascend " + target->vllm_ascend : std::string("any release")) + " on " + arch;
    ctx.report.checks.push_back(gl);
    return;
  }
  const std::string need = target->wheel_glibc_min.at(arch);
  const auto c = compare_versions(version, need);
  if (!c) {
    gl.status = CheckStatus::warn;
    gl.summary = "unrecognised glibc version string '" + version + "'";
  } else if (*c < 0) {
    gl.status = va ? CheckStatus::warn : CheckStatus::fail;
    gl.summary = "glibc " + version + " is older than " + need + " which the vllm-ascend " + target->vllm_ascend + " " + arch + " wheel needs (manylinux_" +
                 [&] { std::string t = need; std::replace(t.begin(), t.end(), '.', '_'); return t; }() + "): pip silently falls back to a source build";
    gl.evidence.push_back(target->source);
    gl.fix = "use an OS or container image with glibc >= " + need + " (for example Ubuntu 22.04 or later), or budget a source build (about 40 minutes in the field report)";
  } else {
    gl.status = CheckStatus::ok;
    gl.summary = "glibc " + version + " >= " + need + " (vllm-ascend " + target->vllm_ascend + " " + arch + " wheel)";
  }
  ctx.report.checks.push_back(gl);
}

void check_cuda(CheckContext& ctx) {
  const Probe& probe = ctx.probe;
  if (!ctx.cuda_host) return;
  CheckResult drv{"cuda.driver", "NVIDIA driver and GPU memory", CheckStatus::ok, "", {}, ""};
  if (auto text = probe.read("/proc/driver/nvidia/version", 64 * 1024)) {
    drv.evidence.push_back("/proc/driver/nvidia/version: " + trim(split(*text, '\n')[0]));
  }
  const auto prog = probe.find_program("nvidia-smi");
  if (!prog) {
    drv.status = CheckStatus::warn;
    drv.summary = "nvidia-smi not found on PATH";
  } else if (!probe.options().runner) {
    drv.status = CheckStatus::skip;
    drv.summary = "nvidia-smi found; not run";
  } else {
    auto out = probe.options().runner({probe.at(*prog), "--query-gpu=index,name,driver_version,memory.used,memory.total", "--format=csv,noheader,nounits"},
                                      probe.options().env);
    if (!out || out->exit_code != 0) {
      drv.status = CheckStatus::fail;
      drv.summary = "nvidia-smi failed";
      drv.evidence.push_back(out ? clip_text(trim(out->output), 300) : out.error().describe());
      drv.fix = "check the driver installation (nvidia-smi must run) and the container's GPU access";
    } else {
      double min_free = 1.0;
      int gpus = 0;
      for (const auto& line : split(out->output, '\n')) {
        const auto f = split(line, ',');
        if (f.size() < 5) continue;
        const double used = std::strtod(trim(f[3]).c_str(), nullptr), total = std::strtod(trim(f[4]).c_str(), nullptr);
        if (total <= 0) continue;
        ++gpus;
        min_free = std::min(min_free, std::max(0.0, (total - used) / total));
        drv.evidence.push_back(format("GPU %s %s: driver %s, %s MiB of %s MiB in use", trim(f[0]).c_str(), trim(f[1]).c_str(), trim(f[2]).c_str(), trim(f[3]).c_str(),
                                      trim(f[4]).c_str()));
      }
      drv.summary = format("%d GPU(s)", gpus);
      if (gpus > 0) {
        ctx.report.free_fraction_min = min_free;
        const InstalledPackage* vllm = ctx.python.find("vllm");
        const double util = ctx.compat.default_utilization(vllm ? vllm->version : "0");
        if (min_free < util) {
          drv.status = CheckStatus::warn;
          drv.summary += format("; lowest free fraction %.2f is below the default gpu_memory_utilization %.2f", min_free, util);
          drv.fix = format("stop the processes holding GPU memory or pass --gpu-memory-utilization %.2f or lower", std::max(0.0, min_free - 0.01));
        }
      }
    }
  }
  ctx.report.checks.push_back(drv);

  CheckResult tc{"cuda.torch", "torch CUDA build", CheckStatus::skip, "", {}, ""};
  if (const InstalledPackage* t = ctx.python.find("torch")) {
    const std::string local = t->version.find('+') == std::string::npos ? "" : t->version.substr(t->version.find('+') + 1);
    tc.evidence.push_back("torch " + t->version);
    const InstalledPackage* rt = ctx.python.find("nvidia-cuda-runtime-cu12");
    if (!rt) rt = ctx.python.find("nvidia-cuda-runtime");
    if (rt) tc.evidence.push_back("CUDA runtime wheel " + rt->name + " " + rt->version);
    if (starts_with(local, "cpu")) {
      tc.status = CheckStatus::fail;
      tc.summary = "torch is a CPU-only build";
      tc.fix = "install the CUDA build of torch the vllm release pins (pip install torch==<version> --index-url https://download.pytorch.org/whl/cu12x)";
    } else if (starts_with(local, "cu") || rt) {
      tc.status = CheckStatus::ok;
      tc.summary = "CUDA build" + (local.empty() ? std::string() : " (" + local + ")");
    } else {
      tc.status = CheckStatus::warn;
      tc.summary = "cannot tell from the metadata whether torch is a CUDA build";
    }
  } else {
    tc.summary = "torch not installed here";
  }
  ctx.report.checks.push_back(tc);
}

}  // namespace preflight::doctor
