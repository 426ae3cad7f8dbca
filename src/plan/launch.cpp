#include "plan/launch.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::plan {

namespace {

bool rule_applies(const engine::LaunchRule& r, const model::ModelSpec& m, const engine::EngineProfile& e) {
  if (r.engine != "*" && r.engine != e.engine) return false;
  if (r.engine == "*" && e.engine == "llama.cpp") return false;
  if (e.version_max < r.version_min || r.version_max < e.version_min) return false;
  if (r.always) return true;
  if (r.vision && m.vision_params > 0) return true;
  const std::string mt = to_lower(m.model_type);
  for (const auto& p : r.model_type_prefixes)
    if (!mt.empty() && mt.rfind(to_lower(p), 0) == 0) return true;
  return false;
}

std::string served_name(const std::string& id) {
  const auto slash = id.find_last_of('/');
  return to_lower(slash == std::string::npos ? id : id.substr(slash + 1));
}

}  // namespace

Launch build_launch(const model::ModelSpec& m, const Candidate& c, const engine::EngineProfile& e, const engine::LaunchRules& rules, int64_t devices_per_node) {
  Launch l;
  std::vector<std::string> extra_flags;
  for (const auto& r : rules.rules) {
    if (!rule_applies(r, m, e)) continue;
    l.shell.insert(l.shell.end(), r.shell.begin(), r.shell.end());
    for (const auto& [k, v] : r.env) l.env.push_back(k + "=" + v);
    extra_flags.insert(extra_flags.end(), r.flags.begin(), r.flags.end());
    l.notes.push_back(r.id + ": " + r.note + " (" + r.source + ")");
  }
  if (e.engine == "llama.cpp") {
    l.serve = format("llama-server -m MODEL.gguf -c %lld -ngl 999 --host 0.0.0.0 --port 8000", static_cast<long long>(c.context_tokens));
    return l;
  }
  std::string s = "vllm serve " + c.model_id + " --served-model-name " + served_name(c.model_id);
  s += format(" --tensor-parallel-size %lld", static_cast<long long>(c.tensor_parallel_size));
  if (c.pipeline_parallel_size > 1) s += format(" --pipeline-parallel-size %lld", static_cast<long long>(c.pipeline_parallel_size));
  s += format(" --max-model-len %lld", static_cast<long long>(c.context_tokens));
  s += " --gpu-memory-utilization " + fixed(c.fit.gpu_memory_utilization, 2);
  if (!c.quantization_flag.empty()) s += " --quantization " + c.quantization_flag;
  if (c.fit.kv_cache_dtype != "auto" && !c.fit.kv_cache_dtype.empty()) s += " --kv-cache-dtype " + c.fit.kv_cache_dtype;
  // The encoder's profiling pass would leave less KV than the context asks for: skip it, and say so.
  const bool skip_mm = c.skip_mm_profiling;
  if (c.no_video) s += " --limit-mm-per-prompt '{\"video\": 0}'";
  if (skip_mm) s += " --skip-mm-profiling";
  const bool multi_node = c.num_devices > devices_per_node;
  if (multi_node) s += " --distributed-executor-backend ray";
  for (const auto& f : extra_flags) s += " " + f;
  l.serve = s;
  if (c.no_video)
    l.notes.push_back(format("--limit-mm-per-prompt '{\"video\": 0}': at a %s-token context the profile run would encode a dummy video longer than any image "
                             "and leave no room for the KV cache; without video input it profiles the largest image (images still work)",
                             with_thousands(c.context_tokens).c_str()));
  if (skip_mm)
    l.notes.push_back(format("--skip-mm-profiling: profiling the vision encoder on its largest image would leave %s KV tokens, under the %s-token context, "
                             "and the engine would not start; images at serve time then draw on the memory above --gpu-memory-utilization, so keep prompts "
                             "to a few images or set max_pixels",
                             with_thousands(c.fit_with_encoder_pass_tokens).c_str(), with_thousands(c.context_tokens).c_str()));
  if (c.quantization_flag == "ascend") l.notes.push_back("--quantization ascend loads a W8A8 checkpoint exported by msModelSlim; it does not quantize a BF16 checkpoint on the fly");
  if (c.quantization_flag == "awq") l.notes.push_back("--quantization awq needs an AWQ checkpoint of this model");
  if (multi_node) {
    const int64_t nodes = (c.num_devices + devices_per_node - 1) / devices_per_node;
    const std::string nic = e.platform == "npu" ? "HCCL_SOCKET_IFNAME" : "NCCL_SOCKET_IFNAME";
    l.multi_node.push_back(format("# %lld nodes x %lld devices: TP stays inside a node, PP crosses nodes", static_cast<long long>(nodes),
                                  static_cast<long long>(devices_per_node)));
    l.multi_node.push_back("# every node: same model path, same versions; export GLOO_SOCKET_IFNAME=<nic> " + nic + "=<nic>");
    l.multi_node.push_back("# head node:");
    l.multi_node.push_back("ray start --head --port=6379");
    l.multi_node.push_back(format("# each of the %lld worker node(s):", static_cast<long long>(nodes - 1)));
    l.multi_node.push_back("ray start --address=<head-ip>:6379");
    l.multi_node.push_back("# then on the head node: the serve command below");
  }
  return l;
}

}  // namespace preflight::plan
