// run_doctor: decides which platform the tree under the root is (Ascend when a driver, npu-smi,
// toolkit or torch_npu is present; CUDA when the NVIDIA driver or nvidia-smi is), then runs the
// check groups in a fixed order so output is stable.
#include "doctor/probe.hpp"

namespace preflight::doctor {

DoctorReport run_doctor(const DoctorOptions& options, const Compat& compat) {
  DoctorReport report;
  report.root = options.root;
  const Probe probe(options);
  const PythonEnv python = read_python_env(probe);
  CheckContext ctx{probe, compat, python, report};
  bool ascend = probe.find_program("npu-smi").has_value() || python.find("torch-npu") != nullptr || python.find("vllm-ascend") != nullptr;
  for (const auto& d : compat.driver_lib_dir.values) ascend = ascend || probe.is_dir(d);
  for (const auto& p : compat.cann_prefixes.values) {
    if (auto e = probe.expand(p)) ascend = ascend || probe.is_dir(*e + "/ascend-toolkit") || probe.is_dir(*e + "/nnal");
  }
  ctx.ascend_host = ascend;
  ctx.cuda_host = probe.exists("/proc/driver/nvidia/version") || probe.find_program("nvidia-smi").has_value();
  report.platform = ascend ? "npu" : ctx.cuda_host ? "cuda" : "none";
  check_cann(ctx);
  check_driver(ctx);
  check_python(ctx);
  check_glibc(ctx);
  check_cuda(ctx);
  check_locks(ctx);
  check_script(ctx);
  check_model_cache(ctx);
  return report;
}

}  // namespace preflight::doctor
