#include "plan/launch.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::plan {

namespace {

struct RuleContext {
  const model::ModelSpec& model;
  const engine::EngineProfile& engine;
  std::string model_id_lower;    // the candidate's model id, lowercased once for every rule
  std::string model_type_lower;  // the model's model_type, likewise
  bool multi_node;
  Workload workload;
};

bool rule_applies(const engine::LaunchRule& r, const RuleContext& ctx) {
  const auto& e = ctx.engine;
  if (r.engine != "*" && r.engine != e.engine) return false;
  if (r.engine == "*" && e.engine == "llama.cpp") return false;
  if (e.version_max < r.version_min || r.version_max < e.version_min) return false;
  if (!r.workload.empty() && r.workload != workload_name(ctx.workload)) return false;
  if (r.multi_node && !ctx.multi_node) return false;
  const std::string& id = ctx.model_id_lower;
  if (!r.model_id_contains.empty()) {
    bool named = false;
    for (const auto& s : r.model_id_contains) named |= id.find(to_lower(s)) != std::string::npos;
    if (!named) return false;
  }
  for (const auto& s : r.model_id_excludes)
    if (id.find(to_lower(s)) != std::string::npos) return false;
  if (r.always) return true;
  if (r.vision && ctx.model.vision_params > 0) return true;
  const std::string& mt = ctx.model_type_lower;
  if (mt.empty()) return false;
  for (const auto& t : r.model_types)
    if (mt == to_lower(t)) return true;
  for (const auto& p : r.model_type_prefixes)
    if (mt.rfind(to_lower(p), 0) == 0) return true;
  return false;
}

std::string base_name(const std::string& id) {
  const auto slash = id.find_last_of('/');
  return slash == std::string::npos ? id : id.substr(slash + 1);
}

std::string served_name(const std::string& id) { return to_lower(base_name(id)); }

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

// msModelSlim's --device: "npu" for one card, "npu:0,1,..." for several.
std::string npu_devices(int64_t n) {
  if (n <= 1) return "npu";
  std::string s = "npu:";
  for (int64_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(i);
  return s;
}

// What `vllm serve` loads for the candidate's variant, and the --quantization it passes. Never
// --quantization X on a checkpoint that is not X: a published X checkpoint, else the conversion
// that produces one (its commands go to `prepare`), else vLLM's own load-time quantization (fp8).
void choose_checkpoint(const model::ModelSpec& m, const Candidate& c, const engine::EngineProfile& e, const engine::QuantizedCatalog& catalog,
                       int64_t devices_per_node, Launch& l, std::string& flag) {
  l.checkpoint = c.model_id;
  flag = c.quantization_flag;
  if (flag.empty() || m.quant.quantized()) return;
  if (const auto* ck = engine::find_quantized_checkpoint(catalog, c.model_id, c.quantization_flag)) {
    l.checkpoint = ck->repo;
    flag = ck->quantization_flag;
    if (ck->hub == "modelscope") l.env.push_back("VLLM_USE_MODELSCOPE=true");
    l.notes.push_back("checkpoint " + ck->repo + ": " + ck->format + " of " + ck->base_model + ", published on " + ck->hub + " (" + ck->url + "; " +
                      ck->source + ")" + (ck->hub == "modelscope" ? "; VLLM_USE_MODELSCOPE=true makes vLLM fetch it from ModelScope" : ""));
    return;
  }
  if (const auto* cv = engine::find_conversion(catalog, c.quantization_flag, e.platform)) {
    const std::string name = base_name(c.model_id);
    const std::string model_dir = "/models/" + name;
    const std::string output_dir = model_dir + cv->output_suffix;
    const double bf16_gib = bytes_to_gib(static_cast<double>(model::count_params(m).total) * 2.0);
    const std::string devices = npu_devices(std::min(c.num_devices, devices_per_node));
    l.prepare.push_back(format("# no published checkpoint of %s in this variant (%s) is known: convert it once with %s, then serve the output",
                               c.model_id.c_str(), c.variant.c_str(), cv->tool.c_str()));
    for (const auto& cmd : cv->commands) {
      std::string s = replace_all(cmd, "{model_id}", c.model_id);
      s = replace_all(s, "{model_name}", name);
      s = replace_all(s, "{model_dir}", model_dir);
      s = replace_all(s, "{output_dir}", output_dir);
      s = replace_all(s, "{devices}", devices);
      l.prepare.push_back(s);
    }
    l.checkpoint = output_dir;
    flag = cv->quantization_flag;
    l.notes.push_back(cv->id + ": " + replace_all(cv->note, "{bf16_gib}", fixed(bf16_gib, 0)) + " (" + cv->source + ")");
    return;
  }
  if (c.quantization_flag == "fp8") {
    l.notes.push_back("--quantization fp8 on a BF16 checkpoint: vLLM quantizes the weights to FP8 while loading, no calibration or converted checkpoint needed "
                      "(vLLM docs, FP8 W8A8: dynamic quantization with --quantization fp8)");
    return;
  }
  const std::string placeholder = "/models/" + base_name(c.model_id) + "-" + c.quantization_flag;
  l.prepare.push_back(format("# no published checkpoint of %s in this variant (%s) and no conversion recipe on %s: produce one at %s first", c.model_id.c_str(),
                             c.variant.c_str(), e.platform.c_str(), placeholder.c_str()));
  l.checkpoint = placeholder;
}

}  // namespace

const char* workload_name(Workload workload) {
  switch (workload) {
    case Workload::chat: return "chat";
    case Workload::agent: return "agent";
  }
  return "chat";
}

Launch build_launch(const model::ModelSpec& m, const Candidate& c, const engine::EngineProfile& e, const engine::LaunchRules& rules, int64_t devices_per_node,
                    const LaunchOptions& options) {
  Launch l;
  const bool multi_node = c.num_devices > devices_per_node;
  const RuleContext ctx{m, e, to_lower(c.model_id), to_lower(m.model_type), multi_node, options.workload};
  std::vector<std::string> extra_flags;
  for (const auto& r : rules.rules) {
    if (!rule_applies(r, ctx)) continue;
    l.shell.insert(l.shell.end(), r.shell.begin(), r.shell.end());
    for (const auto& [k, v] : r.env) l.env.push_back(k + "=" + v);
    for (const auto& f : r.flags)
      if (std::find(extra_flags.begin(), extra_flags.end(), f) == extra_flags.end()) extra_flags.push_back(f);
    l.notes.push_back(r.id + ": " + r.note + " (" + r.source + ")");
  }
  if (e.engine == "llama.cpp") {
    l.serve = format("llama-server -m MODEL.gguf -c %lld -ngl 999 --host 0.0.0.0 --port 8000", static_cast<long long>(c.context_tokens));
    return l;
  }
  std::string flag;
  choose_checkpoint(m, c, e, rules.quantized, devices_per_node, l, flag);
  std::string s = "vllm serve " + l.checkpoint + " --served-model-name " + served_name(c.model_id);
  s += format(" --tensor-parallel-size %lld", static_cast<long long>(c.tensor_parallel_size));
  if (c.pipeline_parallel_size > 1) s += format(" --pipeline-parallel-size %lld", static_cast<long long>(c.pipeline_parallel_size));
  s += format(" --max-model-len %lld", static_cast<long long>(c.context_tokens));
  s += " --gpu-memory-utilization " + fixed(c.fit.gpu_memory_utilization, 2);
  if (!flag.empty()) s += " --quantization " + flag;
  if (c.fit.kv_cache_dtype != "auto" && !c.fit.kv_cache_dtype.empty()) s += " --kv-cache-dtype " + c.fit.kv_cache_dtype;
  // The encoder's profiling pass would leave less KV than the context asks for: skip it, and say so.
  const bool skip_mm = c.skip_mm_profiling;
  if (c.no_video) s += " --limit-mm-per-prompt '{\"video\": 0}'";
  if (skip_mm) s += " --skip-mm-profiling";
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
  if (multi_node) {
    const int64_t nodes = (c.num_devices + devices_per_node - 1) / devices_per_node;
    // Every node: the environment first (toolkit, ATB with the matching cxx_abi, exports), then
    // `ray start`: Ray's workers on that node inherit exactly this environment.
    std::vector<std::string> common = l.shell;
    for (const auto& env : l.env) common.push_back("export " + env);
    NodeCommands head{"head", common}, worker{"worker", common};
    head.lines.push_back("ray start --head --port=6379");
    worker.lines.push_back("ray start --address=${HEAD_IP:?set HEAD_IP to the head node address}:6379");
    l.nodes = {head, worker};
    l.multi_node.push_back(format("# %lld nodes x %lld devices: TP stays inside a node, PP crosses nodes; same versions and the model at the same path on every node",
                                  static_cast<long long>(nodes), static_cast<long long>(devices_per_node)));
    l.multi_node.push_back("# on every node first: NIC=<interface that carries the nodes' addresses>; HEAD_IP=<head node address>");
    l.multi_node.push_back("# ---- head node ----");
    l.multi_node.insert(l.multi_node.end(), head.lines.begin(), head.lines.end());
    l.multi_node.push_back(format("# ---- each of the %lld worker node(s), after the head is up ----", static_cast<long long>(nodes - 1)));
    l.multi_node.insert(l.multi_node.end(), worker.lines.begin(), worker.lines.end());
    l.multi_node.push_back("# ---- then on the head node, in the same shell ----");
  }
  return l;
}

}  // namespace preflight::plan
