// Issue 16 (h-quant11), "Done when": `fit --variant`, validate's reading of a case's `quantization` text and
// `plan` agree on the same deployment for every variant family of data/variants/quant_variants.json that the
// vLLM / vLLM-Ascend fit sizes (tests/cli/test_variant_validate.cpp covers msModelSlim W8A8, W4A8_DYNAMIC, W4A16,
// AWQ and FP8 per-tensor; GGUF presets on vLLM from quant29, converted by llama.cpp's tools); and
// every `plan --json` row's start command serves a checkpoint that has the row's format, or the path a command of
// its prepare step writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "../plan/plan_catalogs.hpp"
#include "../variant_support.hpp"
#include "base/json_util.hpp"
#include "model/architecture_traits.hpp"
#include "model/model_catalog.hpp"
#include "plan/dp_ep.hpp"
#include "plan/planner.hpp"
#include "report/render_plan.hpp"

using namespace preflight;
using pftest::json_of, pftest::term_gib;

namespace {

Json data_file(const std::string& rel) { return pftest::source_json(rel); }

struct Deployment {
  std::string model, device, engine, variant, text;  // text: the case's `quantization` as people write it
};

// One deployment per family not covered by test_variant_validate.cpp, each on a card whose engine takes it.
const std::vector<Deployment>& deployments() {
  static const std::vector<Deployment> d = {
      {"Qwen/Qwen3-8B", "910B4", "vllm-ascend", "w8a8_dynamic", "w8a8 (ascend w8a8_dynamic)"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "fp8_channel", "compressed-tensors (FP8 dynamic)"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "fp8_block", "fp8 (checkpoint native)"},
      {"Qwen/Qwen3-8B", "A100-80G-SXM", "vllm", "fp8_block", "fp8 (Marlin weight-only fallback)"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "ct_w8a8_int8", "compressed-tensors W8A8 (INT8)"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "ct_w4a16", "compressed-tensors w4a16"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "ct_w8a16", "compressed-tensors w8a16"},
      {"Qwen/Qwen3-8B", "B200", "vllm", "ct_nvfp4", "compressed-tensors (NVFP4)"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "gptq", "GPTQ 4-bit"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "gptq_int8", "GPTQ Int8"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "autoround", "auto_round (int4)"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "modelopt_fp8", "modelopt (FP8)"},
      {"Qwen/Qwen3-8B", "B200", "vllm", "modelopt_nvfp4", "modelopt (NVFP4)"},
      // quant33: NVIDIA's exports of the hybrid models, each published (data/engines/quantized_checkpoints.json).
      {"Qwen/Qwen3.6-35B-A3B", "B200", "vllm", "modelopt_nvfp4_fp8_attn", "modelopt (mixed precision)"},
      {"Qwen/Qwen3-Next-80B-A3B-Thinking", "B200", "vllm", "modelopt_nvfp4_experts", "nvfp4 experts only"},
      // h-quant13: gpt-oss, not Qwen3-30B-A3B: no checkpoint of another model is in MXFP4 and no tool writes one, so
      // plan no longer recommends mxfp4 rows of other models ("no start command: ...").
      {"openai/gpt-oss-20b", "H100-SXM", "vllm", "mxfp4", "mxfp4"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "bnb_4bit", "bnb-4bit"},
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "bnb_8bit", "bitsandbytes 8-bit"},
      // h-q950: the Ascend 950 MX schemes, on models whose MX uploads the vLLM-Ascend tutorials name (Eco-Tech).
      {"Qwen/Qwen3.6-27B", "950DT", "vllm-ascend", "w8a8_mxfp8", "w8a8-mxfp8"},
      {"Qwen/Qwen3.5-397B-A17B", "950DT", "vllm-ascend", "w4a4_mxfp4", "Eco-Tech w4a4-mxfp4"},
      // quant29: GGUF presets on vLLM. Before, fit sized Qwen3-8B in Q4_K_M on an H100 and said it fits while plan refused
      // the variant ("no start command: ... no conversion recipe on cuda"); plan now converts with llama.cpp's
      // convert_hf_to_gguf.py and llama-quantize and serves the one .gguf file, and the three agree.
      {"Qwen/Qwen3-8B", "H100-SXM", "vllm", "gguf_q4_k_m", "GGUF Q4_K_M"},
      {"Qwen/Qwen3-8B", "L40S", "vllm", "gguf_q8_0", "GGUF Q8_0"},
  };
  return d;
}

// quant30: variants plan recommends no row of on these deployments, because no start command serves them (no published
// checkpoint of the model in them, no conversion recipe: msModelSlim has no W4A16, W4A16_MXFP4 or W4A8_MXFP practice and
// no one-click W8A16 practice for these models at 3de0a3c; no tool writes MXFP4 experts for Qwen3-30B-A3B); the engine
// version takes each of them on that card.
const std::vector<Deployment>& unservable_deployments() {
  static const std::vector<Deployment> d = {
      {"Qwen/Qwen3-30B-A3B", "910B4", "vllm-ascend", "w4a16", "w4a16 (ascend)"},
      {"Qwen/Qwen3-30B-A3B", "950DT", "vllm-ascend", "w4a16_mxfp4", "ascend w4a16_mxfp4"},
      {"Qwen/Qwen3-30B-A3B", "950DT", "vllm-ascend", "w4a8_mxfp", "w4a8-mxfp"},
      {"Qwen/Qwen3-8B", "910B4", "vllm-ascend", "w8a16_ascend", "msmodelslim w8a16"},
      {"Qwen/Qwen3-30B-A3B", "H100-SXM", "vllm", "mxfp4", "mxfp4"},
  };
  return d;
}

}  // namespace

namespace {

// What fit and plan gave for one deployment: the figures its validate case must predict.
struct Sized {
  Deployment d;
  double weights_gib = 0, available_kv_gib = 0;
  int64_t kv_cache_tokens = 0;
};

// `validate FILE --json` of `cases` (one JSONL line per entry of `sized`, keyed by case id), one run of the binary: each
// case predicts fit's weights per device and available KV and the plan's KV tokens (`tokens`: where the case reaches
// them), and names the variant it read the case's `quantization` text as (`own_descriptor`: or a checkpoint that is the
// variant keeps its own descriptor).
void expect_validate_sizes_as_fit(const std::string& file, const std::string& cases, const std::map<std::string, Sized>& sized, bool own_descriptor) {
  std::ofstream(file) << cases;
  const auto v = pftest::run_cli("validate " + file + " --json", {.with_stderr = false});
  const Json j = json_of(v);
  ASSERT_EQ(j["rows"].size(), sized.size()) << v.out.substr(0, 400);
  for (const Json& vrow : j["rows"]) {
    const auto at = sized.find(vrow["id"].get<std::string>());
    ASSERT_NE(at, sized.end()) << vrow["id"];
    const Sized& s = at->second;
    SCOPED_TRACE(s.d.variant + " on " + s.d.device + " (validate)");
    ASSERT_TRUE(vrow["fields"].contains("weights_gib") && vrow["fields"].contains("available_kv_gib") && vrow["fields"].contains("kv_cache_tokens"))
        << vrow.dump().substr(0, 400);
    EXPECT_DOUBLE_EQ(vrow["fields"]["weights_gib"]["predicted"].get<double>(), s.weights_gib);
    EXPECT_DOUBLE_EQ(vrow["fields"]["available_kv_gib"]["predicted"].get<double>(), s.available_kv_gib);
    EXPECT_EQ(static_cast<int64_t>(vrow["fields"]["kv_cache_tokens"]["predicted"].get<double>()), s.kv_cache_tokens);
    bool named = false;
    for (const auto& a : vrow["assumptions"])
      named |= a.get<std::string>().find("read as variant " + s.d.variant + " ") != std::string::npos ||
               (own_descriptor &&
                a.get<std::string>().find("own descriptor (catalog:" + s.d.model + ") is kept, variant " + s.d.variant + " (") != std::string::npos);
    EXPECT_TRUE(named) << vrow["assumptions"].dump().substr(0, 400);
  }
}

}  // namespace

// For each deployment: the plan (--variant, 16,384 tokens) picks the layout; fit with that variant and layout,
// and a validate case naming the variant in free text, then give the same weights per device, available KV and
// KV tokens as the plan's row, and validate names the variant it read. Every family here was untested before;
// a variant read differently by one command (another alias winning, a rule applied in one path only) fails.
TEST(VariantAgree, Issue16_FitValidateAndPlanAgreeOnEveryOtherFamily) {
  const std::string dir = pftest::scratch_dir("variant-agree11");
  std::set<std::string> families;
  std::string cases;                   // one validate case per deployment, validated together below (one run of the binary)
  std::map<std::string, Sized> sized;  // case id -> what fit and plan gave
  for (const auto& d : deployments()) {
    SCOPED_TRACE(d.variant + " on " + d.device);
    families.insert(d.variant);
    const auto plan = pftest::run_cli("plan " + d.model + " --devices " + d.device + " --context 16384 --variant " + d.variant + " --json", {.with_stderr = false});
    ASSERT_EQ(plan.code, 0) << plan.out.substr(0, 400);
    const Json p = json_of(plan);
    ASSERT_FALSE(p["recommended"].empty()) << plan.out.substr(0, 400);
    const Json row = p["recommended"][0];
    ASSERT_EQ(row["variant_id"], d.variant);
    const int64_t n = row["num_devices"].get<int64_t>();
    const std::string layout = " --device " + d.device + " --engine " + d.engine + " --num-devices " + std::to_string(n) + " --max-model-len 16384";
    const auto fit = pftest::run_cli("fit " + d.model + layout + " --variant " + d.variant + " --json", {.with_stderr = false});
    ASSERT_EQ(fit.code, 0) << fit.out.substr(0, 400);
    const Json f = json_of(fit);
    const double fit_weights = term_gib(f, "weights"), fit_available = term_gib(f, "available KV");
    EXPECT_DOUBLE_EQ(fit_weights, row["weights_gib_per_device"].get<double>());
    EXPECT_DOUBLE_EQ(fit_available, row["available_kv_gib"].get<double>());
    EXPECT_EQ(f["kv_cache"]["tokens"].get<int64_t>(), row["kv_cache_tokens"].get<int64_t>());
    EXPECT_EQ(f["settings"]["quantization"], row["quantization"]);

    const std::string id = "agree-" + d.variant + "-" + d.device;
    sized[id] = {d, fit_weights, fit_available, row["kv_cache_tokens"].get<int64_t>()};
    cases += Json({{"id", id}, {"engine", d.engine}, {"device", d.device}, {"num_devices", n}, {"model", d.model},
                   {"quantization", d.text}, {"tensor_parallel_size", row["tensor_parallel_size"]},
                   {"pipeline_parallel_size", row["pipeline_parallel_size"]}, {"max_model_len", 16384}, {"weights_gib", 1.0},
                   {"available_kv_gib", 1.0}, {"kv_cache_tokens", 1}})
                 .dump() +
             "\n";
  }
  ASSERT_EQ(sized.size(), deployments().size());
  // A base config reads the text as the variant; a checkpoint that is the variant (gpt-oss's MXFP4) keeps its own descriptor.
  expect_validate_sizes_as_fit(dir + "/agree.jsonl", cases, sized, true);
  // With test_variant_validate.cpp's (w8a8, awq, fp8_tensor, w4a8_dynamic, w4a16), every variant of the list but the
  // GGUF presets and bf16 is covered.
  for (const char* covered : {"w8a8", "awq", "fp8_tensor", "w4a8_dynamic", "w4a16"}) families.insert(covered);
  // quant30: the variants no start command serves (no published checkpoint, no recipe) agree in
  // Issue16_FitRefusesWhatPlanRefusesAndValidateSizesTheSame below.
  for (const auto& d : unservable_deployments()) families.insert(d.variant);
  const Json variants = data_file("data/variants/quant_variants.json");  // named: a range over a member of a temporary would dangle
  for (const auto& v : variants["variants"]) {
    const std::string id = v["id"].get<std::string>();
    if (id == "bf16") continue;
    if (id.rfind("gguf_", 0) == 0) families.insert(id);  // quant29: one recipe per preset, checked for two of them above
    EXPECT_EQ(families.count(id), 1u) << "variant " << id << " has no agreement case";
  }
}

// Bad input, as documented (fit --help, docs/quant-variants.md): an unknown variant is exit 2 listing the known ones,
// and a variant the engine rejects on that card is exit 1 with the engine's message verbatim, in fit, in every plan
// row's reason, and in validate's predicted failure of a case that names it. Written by hand from vLLM's capability
// gate (vllm/config: 'The quantization method {q} is not supported for the current GPU. Minimum capability: {min}.
// Current capability: {cur}.'; mxfp4 needs 80, a T4 / RTX 2080 Ti (Turing) is 75) and compressed-tensors' scheme
// check (W4A16 needs 80; V100 is 70).
TEST(VariantAgree, Issue16_RejectedVariantIsTheEnginesMessageInFitPlanAndValidate) {
  const auto unknown = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --variant gptq_int3");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.out.find("unknown variant 'gptq_int3'; known variants: bf16, w8a8"), std::string::npos) << unknown.out.substr(0, 300);
  EXPECT_NE(unknown.out.find("gptq, gptq_int8, autoround"), std::string::npos) << unknown.out.substr(0, 600);

  struct Rejected {
    std::string model, device, variant, text, message;
  };
  const std::vector<Rejected> rejected = {
      {"Qwen/Qwen3-30B-A3B", "T4", "mxfp4", "mxfp4",
       "ValueError: The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80. Current capability: 75."},
      {"Qwen/Qwen3-8B", "V100-SXM2-32G", "ct_w4a16", "compressed-tensors w4a16",
       "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 70.')"},
  };
  const std::string dir = pftest::scratch_dir("variant-reject11");
  for (const auto& r : rejected) {
    SCOPED_TRACE(r.variant + " on " + r.device);
    const auto fit = pftest::run_cli("fit " + r.model + " --device " + r.device + " --engine vllm --max-model-len 4096 --variant " + r.variant + " --json",
                                     {.with_stderr = false});
    EXPECT_EQ(fit.code, 1) << fit.out.substr(0, 300);
    const Json f = json_of(fit);
    EXPECT_EQ(f["failure"], "unsupported_quantization");
    EXPECT_EQ(f["failure_message"], r.message);

    const auto plan = pftest::run_cli("plan " + r.model + " --devices " + r.device + " --variant " + r.variant + " --json", {.with_stderr = false});
    EXPECT_EQ(plan.code, 1) << plan.out.substr(0, 300);
    const Json p = json_of(plan);
    EXPECT_TRUE(p["recommended"].empty());
    ASSERT_FALSE(p["rejected"].empty());
    for (const auto& row : p["rejected"]) EXPECT_NE(row["reason"].get<std::string>().find(r.message), std::string::npos) << row["reason"];

    const std::string file = dir + "/" + r.variant + ".jsonl";
    std::ofstream(file) << Json({{"id", "reject-" + r.variant}, {"engine", "vllm"}, {"device", r.device}, {"num_devices", 1}, {"model", r.model},
                                 {"quantization", r.text}, {"max_model_len", 4096}, {"fits", false}, {"failure", "unsupported_quantization"}})
                                  .dump()
                           << "\n";
    const auto v = pftest::run_cli("validate " + file + " --json", {.with_stderr = false});
    EXPECT_EQ(v.code, 0) << v.out.substr(0, 300);
    const Json j = json_of(v);
    ASSERT_FALSE(j["rows"].empty());
    EXPECT_EQ(j["rows"][0]["predicted_failure_message"], r.message) << j["rows"][0].dump().substr(0, 600);
  }
}

namespace {

// The checks of one `plan --json` row's start command (launch: checkpoint, prepare, serve), each violation by kind
// with its first example.
struct StartCheck {
  Json checkpoints, conversions, in_flight, variants;
  std::map<std::string, std::string> own_variant;  // published checkpoint -> the variant `fit` reads from its descriptor
  std::map<std::string, std::pair<size_t, std::string>> violations;
  std::map<std::string, size_t> gaps;  // "variant on platform" -> rows whose prepare says no command produces the checkpoint
  std::map<std::string, size_t> published;  // variant -> rows serving a catalogued checkpoint of another repository
  size_t rows = 0;

  StartCheck()
      : checkpoints(data_file("data/engines/quantized_checkpoints.json")["checkpoints"]),
        conversions(data_file("data/engines/quantized_checkpoints.json")["conversions"]),
        in_flight(data_file("data/engines/quantized_checkpoints.json")["in_flight"]),
        variants(data_file("data/variants/quant_variants.json")["variants"]) {}

  void add(const std::string& kind, const std::string& example) {
    auto& [n, first] = violations[kind];
    if (n++ == 0) first = example;
  }
  size_t total() const {
    size_t n = 0;
    for (const auto& [k, v] : violations) n += v.first;
    return n;
  }
  std::string summary() const {
    std::ostringstream o;
    o << rows << " rows, " << total() << " violations\n";
    for (const auto& [k, v] : violations) o << "  " << v.first << " x " << k << "\n      e.g. " << v.second << "\n";
    return o.str();
  }
  const Json* catalogued(const std::string& repo) const {
    for (const auto& c : checkpoints)
      if (c["repo"] == repo) return &c;
    return nullptr;
  }
  // The engine quantizes a BF16 checkpoint into `variant` while loading when asked with `flag` (h-conv12; the
  // record's platform is the engine's, "cuda" for vLLM on ROCm devices too, so the device platform is not compared).
  bool at_load(const std::string& variant, const std::string& flag) const {
    for (const auto& r : in_flight)
      if (r["variant"] == variant && r["quantization_flag"] == flag) return true;
    return false;
  }
  bool has_conversion(const std::string& variant, const std::string& platform) const {
    for (const auto& c : conversions)
      if (c["variant"] == variant && c["platform"] == platform) return true;
    return false;
  }
  // The --quantization a conversion output of `variant` on `platform` is served with (ux28: "" for AWQ and GPTQ, whose
  // config.json vLLM reads, upgrading them to Marlin), else the variant's own method.
  std::string served_flag(const std::string& variant, const std::string& platform) const {
    for (const auto& c : conversions)
      if (c["variant"] == variant && c["platform"] == platform) return c["quantization_flag"].get<std::string>();
    return engine_quantization(variant);
  }
  std::string engine_quantization(const std::string& variant) const {
    for (const auto& v : variants)
      if (v["id"] == variant) return v["engine_quantization"].get<std::string>();
    return "?";
  }
  const std::string& own(const std::string& model) {
    auto it = own_variant.find(model);
    if (it != own_variant.end()) return it->second;
    const auto r = pftest::run_cli("fit " + model + " --device H100-SXM --max-model-len 4096 --json", {.with_stderr = false});
    std::string id;
    if (auto j = parse_json(r.out, "stdout"))
      for (const auto& a : (*j)["assumptions"]) {
        const std::string s = a.get<std::string>();
        // "variant ID: ..." names it; "variant ID on DEVICE (family): ..." is one of its engine rules (h-quant12)
        if (s.rfind("variant ", 0) == 0 && id.empty()) id = s.substr(8, s.find_first_of(": ", 8) - 8);
      }
    return own_variant[model] = id;
  }

  void check(const Json& row, const std::string& platform) {
    ++rows;
    const std::string model = row["model"], vid = row.value("variant_id", ""), serve = row["launch"]["serve"], ck = row["launch"]["checkpoint"];
    static const std::regex quantization_flag("--quantization (\\S+)");  // compiled once: 23,000 rows (ci35)
    std::smatch q;
    const std::string flag = std::regex_search(serve, q, quantization_flag) ? q[1].str() : "";
    const std::string where = model + " (" + vid + ") on " + row["device"].get<std::string>() + ": " + serve.substr(0, 160);
    std::vector<std::string> commands, comments;
    for (const auto& p : row["launch"]["prepare"]) {
      const std::string line = p.get<std::string>();
      (line.rfind("#", 0) == 0 ? comments : commands).push_back(line);
    }
    const Json* release = catalogued(model);
    // vLLM's quantization at load (fp8, bitsandbytes NF4: catalogue "in_flight", h-conv12) on the release's BF16 original
    if (release && ck == (*release)["base_model"] && at_load(vid, flag)) return;
    if (ck == model) {
      if (!vid.empty() && !at_load(vid, flag) && own(model) != vid) add("a variant served from a published repository that is not that variant", where);
      return;
    }
    if (const Json* c = catalogued(ck)) {
      const std::string base = (*c)["base_model"];
      // The same model: the base itself, a release named after it (Qwen/Qwen3-32B-FP8), or another catalogued
      // checkpoint of that base (nvidia/Qwen3-32B-NVFP4's W8A8 row serves vllm-ascend/Qwen3-32B-W8A8; h-quant12).
      const bool same_model = model == base || model.rfind(base + "-", 0) == 0 || (release && (*release)["base_model"] == base);
      if ((*c)["variant"] != vid || !same_model) add("a catalogued checkpoint of another variant or model", where);
      if ((*c)["quantization_flag"] != flag) add("--quantization is not the catalogued checkpoint's method", where);
      ++published[vid];
      return;
    }
    if (!vid.empty() && flag != served_flag(vid, platform)) add("--quantization is not the variant's method", where);
    for (const auto& c : commands)
      if (c.find(ck) != std::string::npos && c.find(" download ") == std::string::npos) return;  // a command of prepare writes it
    const bool no_recipe = !comments.empty() && comments.front().find("and no conversion recipe on " + platform) != std::string::npos;
    const bool no_cast = !comments.empty() && comments.front().find(" is published in ") != std::string::npos && comments.front().find("no cast") != std::string::npos;
    if (no_recipe && !has_conversion(vid, platform)) {
      ++gaps[vid + " on " + platform];
      return;
    }
    if (no_cast) {
      ++gaps[vid + " on " + platform + " (published in another format, no cast)"];
      return;
    }
    add("a path no command of prepare writes", where);
  }
};

// The catalogue `plan --device D` sizes (cli/cmd_plan.cpp, catalogue_models): every model but the speculative drafter
// heads (traits.json speculative_drafter), which vLLM serves only beside a target.
std::vector<model::ModelSpec> plan_device_models() {
  return model::builtin_model_specs(
      [](const model::CatalogModel& m) {
        const Json& a = m.config.is_object() && m.config.contains("architectures") ? m.config["architectures"] : Json();
        const model::ArchitectureTraits* t = a.is_array() && !a.empty() && a[0].is_string() ? model::find_builtin_traits(a[0].get<std::string>()) : nullptr;
        return !(t && t->speculative_drafter);
      },
      0);
}

// `plan --device D --num-devices N [--variant V] --json` for every device of `devices` and N of `counts`, in this process
// (ci35: 364 processes of the binary took 320 s of the sanitizer suite): the plan cmd_plan makes without flags (the
// catalogue above, no targets but one request at a time, every row's detail, the DP+EP rows above one card), over the
// devices together (plan::plan_for_devices, which gives each device what plan_for_device gives it alone:
// Planner.Issue19_WholeCatalogueTogetherEqualsEachDeviceAlone), written by plan --json's writer (report::render_plan_json)
// and read back. `each` gets the device, N and the JSON document. The host CPU ("cpu") goes through the binary: its memory
// is what the host has free when the command runs (cmd_plan's host_memory). The binary's rows are the same as these:
// Issue16_EveryPlanJsonRowServesWhatItNames compares them on some devices.
void for_each_plan_json(const std::vector<model::ModelSpec>& models, const std::vector<device::DeviceSpec>& devices, const std::vector<int64_t>& counts,
                        const std::string& variant, const std::function<void(const std::string&, int64_t, const Json&)>& each) {
  std::vector<device::DeviceSpec> cards;
  for (const auto& d : devices)
    if (d.id != "cpu") cards.push_back(d);
  plan::PlanInputs in = test::catalogs().inputs();
  in.variant = variant;
  in.detail = plan::RowDetail::every_row;
  const plan::PlanTargets t;
  auto plans = plan::plan_for_devices(models, cards, counts, in, t, 0);
  ASSERT_EQ(plans.size(), cards.size() * counts.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    plan::DevicePlan& p = plans[i];
    if (p.num_devices > 1) plan::add_dp_ep_rows_for_device(p.result, models, cards[i / counts.size()], in, t);
    const auto text = report::render_plan_json(p.result, "what " + std::to_string(p.num_devices) + " x " + p.device_id + " runs");
    ASSERT_TRUE(text.has_value()) << p.device_id;
    auto j = parse_json(*text, "plan --json");
    ASSERT_TRUE(j.has_value()) << p.device_id;
    p.result = {};  // freed as it goes: the whole catalogue's rows, each with its start commands, are large under the sanitizers
    each(p.device_id, p.num_devices, *j);
  }
  for (const auto& d : devices)
    if (d.id == "cpu")
      for (const int64_t n : counts)
        each(d.id, n,
             json_of(pftest::run_cli("plan --device cpu --num-devices " + std::to_string(n) + (variant.empty() ? "" : " --variant " + variant) + " --json",
                                     {.with_stderr = false})));
}

// The rows of `plan --device D --num-devices N [--variant V] --json` as the binary prints them equal those of
// for_each_plan_json: the same recommended and rejected rows, member for member.
void expect_binary_rows(const std::string& device, int64_t n, const std::string& variant, const Json& in_process) {
  const Json cli = json_of(pftest::run_cli("plan --device " + device + " --num-devices " + std::to_string(n) + (variant.empty() ? "" : " --variant " + variant) + " --json",
                                           {.with_stderr = false}));
  for (const char* rows : {"recommended", "rejected"}) {
    ASSERT_TRUE(cli.contains(rows) && in_process.contains(rows)) << device << " x" << n << " " << variant;
    EXPECT_EQ(cli[rows].size(), in_process[rows].size()) << rows << " of " << device << " x" << n << " " << variant;
    for (size_t i = 0; i < std::min(cli[rows].size(), in_process[rows].size()); ++i)
      EXPECT_EQ(cli[rows][i], in_process[rows][i]) << rows << "[" << i << "] of " << device << " x" << n << " " << variant;
  }
}

std::string platform_of(const std::string& device) {
  for (const auto& d : test::catalogs().devices.devices)
    if (d.id == device) return d.platform;
  return "";
}

}  // namespace

// (c) `plan --device D --num-devices N --json` over the whole model catalogue, for every catalogue device and N = 1
// and 8: every recommended row's `vllm serve` names a checkpoint that has the row's format (the repository as
// published, served as itself; a catalogued checkpoint of that variant of that model; vLLM's FP8 at load on a BF16
// original) or the path a command of its prepare step writes. Then `plan --variant V` for every quantized variant on
// H100-SXM, B200 and 910B4 (8 cards): the same, except rows whose prepare says that no command produces the checkpoint,
// counted per variant and allowed only where data/engines/quantized_checkpoints.json has no recipe for the variant on
// that platform. Before h-quant11: `--variant ct_w8a16` served RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic (FP8) and
// DocPang's INT8 W8A8 checkpoint as W8A16 ("the same method"), `--variant fp8_tensor` served Qwen3-235B-A22B-FP8's block
// FP8 files as per-tensor, and gptq, gptq_int8, ct_w8a8_int8, ct_w8a16, fp8_channel and ct_nvfp4 had no recipe.
TEST(VariantAgree, Issue16_EveryPlanJsonRowServesWhatItNames) {
  StartCheck s;
  const auto models = plan_device_models();
  const auto& devices = test::catalogs().devices.devices;
  // The binary prints the same rows: a card whose fit the plan copies from another (H100-PCIe from H100-SXM), an NPU
  // with its DP+EP rows (910B4 x 8), and with --variant below.
  const std::set<std::pair<std::string, int64_t>> through_binary = {{"H100-PCIe", 1}, {"910B4", 8}};
  size_t plans = 0, compared = 0;
  for_each_plan_json(models, devices, {1, 8}, "", [&](const std::string& device, int64_t n, const Json& p) {
    ++plans;
    for (const auto& row : p["recommended"]) s.check(row, platform_of(device));
    if (through_binary.count({device, n})) {
      ++compared;
      expect_binary_rows(device, n, "", p);
    }
  });
  EXPECT_EQ(plans, devices.size() * 2);
  EXPECT_EQ(compared, through_binary.size());
  EXPECT_GE(s.rows, 2000u) << "the sweep found too few rows to mean anything";
  EXPECT_EQ(s.total(), 0u) << s.summary();
  EXPECT_TRUE(s.gaps.empty()) << "a default plan row with no command producing its checkpoint";
  std::printf("plan --device sweep: %s", s.summary().c_str());

  StartCheck v;
  std::map<std::string, size_t> no_command;  // rejected rows "no start command: ..." / the engine's TP message, per variant
  const std::vector<device::DeviceSpec> cards = {test::dev("H100-SXM"), test::dev("B200"), test::dev("910B4")};
  size_t variant_plans = 0;
  for (const auto& variant : v.variants) {
    const std::string id = variant["id"];
    if (id == "bf16" || id.rfind("gguf_", 0) == 0) continue;
    for_each_plan_json(models, cards, {1, 8}, id, [&](const std::string& device, int64_t n, const Json& p) {
      ++variant_plans;
      const std::string platform = platform_of(device);
      for (const auto& row : p["recommended"]) v.check(row, platform);
      for (const auto& row : p["rejected"]) {
        const std::string reason = row["reason"];
        if (reason.rfind("no start command: ", 0) == 0 || reason.find("Prequant BitsAndBytes") != std::string::npos) ++no_command[id + " on " + platform];
      }
      if (device == "B200" && n == 8 && id == "modelopt_nvfp4") expect_binary_rows(device, n, id, p);
    });
  }
  EXPECT_GE(variant_plans, 20u * cards.size() * 2);
  EXPECT_GE(v.rows, 3000u);
  EXPECT_EQ(v.total(), 0u) << v.summary();
  // h-quant13: no recommended row is left without a command that produces its checkpoint. Before, the 8-card sweep
  // recommended such rows for mxfp4 and bnb_8bit on cuda and for w4a16, ct_* and fp8_channel on npu (the count per
  // variant is in docs/quant-variants.md); they are now rejected rows with the reason, or served by a new recipe.
  EXPECT_TRUE(v.gaps.empty()) << "recommended rows with no command producing the checkpoint";
  for (const auto& [k, n] : v.gaps) std::printf("    recommended without a command: %zu x %s\n", n, k.c_str());
  for (const auto& [k, n] : no_command) std::printf("    rejected, no command: %zu x %s\n", n, k.c_str());
  // h-quant12: variants whose rows only said "produce one first" now serve a real published checkpoint where one is
  // catalogued (nvidia's NVFP4 / FP8 uploads, Intel's AutoRound, unsloth's bnb-4bit, vllm-ascend's W8A8_DYNAMIC and
  // W4A8 uploads): before, none of these variants had a catalogued checkpoint, so each count was 0.
  // bnb_4bit left this list in h-conv12: unsloth's NF4 uploads are served at TP 1 only (vLLM: "Prequant BitsAndBytes
  // models with tensor parallelism is not supported."), and every bnb_4bit row of these 8-card plans has TP > 1, so it
  // quantizes the BF16 original at load (Launch.Issue16_PrequantizedBitsAndBytesOnlyAtTp1ElseInFlight).
  for (const char* id : {"modelopt_nvfp4", "modelopt_fp8", "autoround", "w8a8_dynamic", "w4a8_dynamic"})
    EXPECT_GT(v.published[id], 0u) << id << ": no plan --variant row serves a catalogued published checkpoint";
  std::printf("plan --variant sweep: %s  rows no command produces (no recipe on the platform, or published in another format):\n", v.summary().c_str());
  for (const auto& [k, n] : v.gaps) std::printf("    %zu x %s\n", n, k.c_str());
  std::printf("  rows serving a catalogued published checkpoint:\n");
  for (const auto& [k, n] : v.published) std::printf("    %zu x %s\n", n, k.c_str());
}

// Issue 16 (h-quant12), bad input in validate: a case's `quantization` text that names no variant of the list was
// passed on as `--quantization <first word>` and the fit read it as "quantization 'hqq' not modelled; weights in
// model dtype" (a 4-bit HQQ case predicted 15.27 GiB of BF16 weights for Qwen3-8B). It is now bad input naming the
// file, line, case and field, exit 2, as an unknown --variant is in fit and plan; text naming no method at all
// (absent, "none", "not stated") still reads as the published dtype.
TEST(VariantAgree, Issue16_UnknownQuantizationTextInValidateIsExit2NamingCaseAndField) {
  const std::string dir = pftest::scratch_dir("variant-unknown12");
  for (const std::string text : {"hqq 4-bit", "float8", "int3 magic"}) {
    SCOPED_TRACE(text);
    const std::string file = dir + "/unknown.jsonl";
    std::ofstream(file) << Json({{"id", "unk-1"}, {"engine", "vllm"}, {"device", "H100-SXM"}, {"num_devices", 1}, {"model", "Qwen/Qwen3-8B"},
                                 {"quantization", "none"}, {"max_model_len", 4096}, {"weights_gib", 15.0}})
                               .dump()
                        << "\n"
                        << Json({{"id", "unk-2"}, {"engine", "vllm"}, {"device", "H100-SXM"}, {"num_devices", 1}, {"model", "Qwen/Qwen3-8B"},
                                 {"quantization", text}, {"max_model_len", 4096}, {"weights_gib", 5.0}})
                               .dump()
                        << "\n";
    const auto v = pftest::run_cli("validate " + file + " --json");
    EXPECT_EQ(v.code, 2) << v.out.substr(0, 400);
    EXPECT_NE(v.out.find("unknown.jsonl:2 (case unk-2): quantization '" + text + "': no variant of data/variants/quant_variants.json is named in it"),
              std::string::npos)
        << v.out.substr(0, 400);
    EXPECT_NE(v.out.find("known variants: bf16, w8a8"), std::string::npos) << v.out.substr(0, 400);
  }
  // The same file with only the first case (quantization "none") validates.
  const std::string ok = dir + "/none.jsonl";
  std::ofstream(ok) << Json({{"id", "none-1"}, {"engine", "vllm"}, {"device", "H100-SXM"}, {"num_devices", 1}, {"model", "Qwen/Qwen3-8B"},
                             {"quantization", "none"}, {"max_model_len", 4096}, {"weights_gib", 15.0}})
                           .dump()
                    << "\n";
  EXPECT_EQ(pftest::run_cli("validate " + ok + " --json", {.with_stderr = false}).code, 0);
}

// Issue 16 (quant30): fit sized these variants and said they fit while plan rejected every row ("no start command: ...");
// now fit refuses them with the row's reason, exit 1, and both keep the same sizes, which validate (a recorded deployment
// had its checkpoint) predicts too.
TEST(VariantAgree, Issue16_FitRefusesWhatPlanRefusesAndValidateSizesTheSame) {
  const std::string dir = pftest::scratch_dir("variant-agree30");
  std::string cases;                   // validated together below, as in Issue16_FitValidateAndPlanAgreeOnEveryOtherFamily
  std::map<std::string, Sized> sized;
  for (const auto& d : unservable_deployments()) {
    SCOPED_TRACE(d.variant + " on " + d.device);
    const auto plan = pftest::run_cli("plan " + d.model + " --devices " + d.device + " --context 16384 --variant " + d.variant + " --json", {.with_stderr = false});
    EXPECT_EQ(plan.code, 1) << plan.out.substr(0, 400);
    const Json p = json_of(plan);
    EXPECT_TRUE(p["recommended"].empty()) << p["recommended"].dump().substr(0, 400);
    Json row;
    for (const auto& r : p["rejected"])
      if (r.value("reason", std::string()).rfind("no start command: ", 0) == 0) {
        row = r;
        break;
      }
    ASSERT_FALSE(row.is_null()) << p["rejected"].dump().substr(0, 600);
    ASSERT_EQ(row["variant_id"], d.variant);
    const int64_t n = row["num_devices"].get<int64_t>();
    const std::string layout = " --device " + d.device + " --engine " + d.engine + " --num-devices " + std::to_string(n) + " --max-model-len 16384";
    const auto fit = pftest::run_cli("fit " + d.model + layout + " --variant " + d.variant + " --json", {.with_stderr = false});
    EXPECT_EQ(fit.code, 1) << fit.out.substr(0, 400);
    const Json f = json_of(fit);
    EXPECT_EQ(f["failure"], "unsupported_quantization");
    EXPECT_EQ(f["failure_message"], row["reason"]);
    const double fit_weights = term_gib(f, "weights"), fit_available = term_gib(f, "available KV");
    EXPECT_DOUBLE_EQ(fit_weights, row["weights_gib_per_device"].get<double>());
    EXPECT_DOUBLE_EQ(fit_available, row["available_kv_gib"].get<double>());
    EXPECT_EQ(f["kv_cache"]["tokens"].get<int64_t>(), row["kv_cache_tokens"].get<int64_t>());

    const std::string id = "agree30-" + d.variant + "-" + d.device;
    sized[id] = {d, fit_weights, fit_available, row["kv_cache_tokens"].get<int64_t>()};
    cases += Json({{"id", id}, {"engine", d.engine}, {"device", d.device}, {"num_devices", n}, {"model", d.model},
                   {"quantization", d.text}, {"tensor_parallel_size", row["tensor_parallel_size"]},
                   {"pipeline_parallel_size", row["pipeline_parallel_size"]}, {"max_model_len", 16384}, {"weights_gib", 1.0},
                   {"available_kv_gib", 1.0}, {"kv_cache_tokens", 1}})
                 .dump() +
             "\n";
  }
  ASSERT_EQ(sized.size(), unservable_deployments().size());
  expect_validate_sizes_as_fit(dir + "/agree30.jsonl", cases, sized, false);
}
