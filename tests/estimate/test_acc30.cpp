// Issue 15 (acc30): three mechanisms the estimator could not state before.
//  1. llm-compressor's NVFP4 exports keep the Gated DeltaNet projections and the MTP layers in the model dtype
//     (examples/quantization_w4a4_fp4/qwen3_6_example.py ignores "re:.*linear_attn.*"; the MTP layers are not in the
//     Transformers class it quantizes and are copied unquantized, compressed_tensors save_mtp_tensors_to_checkpoint).
//     RedHatAI/Qwen3.6-35B-A3B-NVFP4 with MTP on a GB10 printed 'Model loading took 23.45 GiB'
//     (data/evidence/vllm-startup-public.jsonl); sized as all-FP4 it was 20.86 GiB (-11%).
//  2. VLLM_ROCM_MOE_PADDING=0 in the engine's environment turns vLLM's ROCm expert row padding off (vllm/envs.py:
//     bool(int(os.getenv("VLLM_ROCM_MOE_PADDING", "1")))). Qwen3-30B-A3B at TP 1 pads 5,637,144,576 B (worked in
//     test_rocm_moe_padding.cpp: 48 x 128 x (1,536 + 2,048) rows x 256 B).
//  3. vLLM-Ascend's 310P attention metadata builder makes a max_model_len x max_model_len fp16 mask at the first forward
//     with attention, after KV sizing (AttentionMaskBuilder310, PR #6803, v0.15.0rc1): the fp16 mask, its padded copy
//     and its FRACTAL_NZ copy are live together, 3 x 2 B a position. max_model_len 32,768: 32,768^2 x 6 B =
//     6,442,450,944 B (6 GiB); 16,384: 1,610,612,736 B; 16,000 rounds up to 16,000 (a multiple of 16): 1,536,000,000 B.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "deploy/engine_env.hpp"
#include "engine/engine_profile.hpp"
#include "engine/moe_row_padding.hpp"
#include "estimate/fit.hpp"
#include "model/quant_scheme.hpp"
#include "model/quant_variant.hpp"
#include "fit_setup.hpp"
#include "../validate/validate_support.hpp"
#include "../variant_support.hpp"

using namespace preflight;

namespace {

std::string evidence_line(const std::string& id) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/data/evidence/vllm-startup-public.jsonl");
  for (std::string line; std::getline(in, line);)
    if (line.find("\"" + id + "\"") != std::string::npos) return line;
  ADD_FAILURE() << "no evidence line " << id;
  return {};
}

const validate::FieldComparison* field(const validate::CaseResult& row, const std::string& name) {
  for (const auto& f : row.fields)
    if (f.field == name) return &f;
  return nullptr;
}

estimate::Deployment rocm_tp1() {
  estimate::Deployment d;
  d.max_model_len = 8192;
  d.gpu_memory_utilization = 0.9;
  return d;
}

// The fit with the overheads of the device's platform (fit_setup takes the engine's: cuda for vLLM).
estimate::FitEstimate fit_on_device(const pftest::FitSetup& s, const estimate::Deployment& d) {
  auto engines = engine::load_engine_catalog();
  EXPECT_TRUE(engines.has_value());
  const engine::Overheads* oh = engines ? engines->overheads_for(s.engine, s.device.platform) : nullptr;
  EXPECT_NE(oh, nullptr) << s.device.platform;
  if (!oh) return {};
  return estimate::estimate_fit(s.model, s.device, s.engine, *oh, d);
}

double weights(const pftest::FitSetup& s, const estimate::Deployment& d) { return fit_on_device(s, d).weights_bytes; }

estimate::FitEstimate fit_310p(const std::string& version, int64_t max_model_len, const std::string& model = "Qwen/Qwen3-8B") {
  auto s = pftest::fit_setup(model, "300I-Duo", "vllm-ascend", version);
  estimate::Deployment d;
  d.max_model_len = max_model_len;
  d.gpu_memory_utilization = 0.9;
  d.mode = estimate::ExecutionMode::eager;  // the 310P runs eager (vLLM-Ascend's 310P guide)
  return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
}

}  // namespace

TEST(Acc30, Issue15_CtNvfp4KeepsGatedDeltaNetAndMtpInTheModelDtype) {
  auto v = model::find_variant(pftest::shipped_variants(), "ct_nvfp4");
  ASSERT_TRUE(v.has_value());
  const model::QuantScheme& s = (*v)->scheme;
  for (const char* kept : {"model.language_model.layers.*.linear_attn.in_proj_qkv", "model.language_model.layers.*.linear_attn.in_proj_z",
                           "model.language_model.layers.*.linear_attn.out_proj", "model.layers.*.linear_attn.in_proj_qkvz", "mtp.layers.*.self_attn.q_proj",
                           "mtp.fc"})
    EXPECT_EQ(model::module_format(s, kept, false), model::WeightFormat::native) << kept;
  EXPECT_EQ(model::module_format(s, "mtp.layers.*.mlp.experts", true), model::WeightFormat::native);
  for (const char* quantized : {"model.language_model.layers.*.self_attn.q_proj", "model.language_model.layers.*.mlp.shared_expert.gate_proj"})
    EXPECT_EQ(model::module_format(s, quantized, false), model::WeightFormat::nvfp4) << quantized;
  EXPECT_EQ(model::module_format(s, "model.language_model.layers.*.mlp.experts", true), model::WeightFormat::nvfp4);

  const std::string path = ::testing::TempDir() + "/acc30-ct-nvfp4.jsonl";
  std::ofstream(path) << evidence_line("pub-dgxspark-qwen36-35b-a3b-nvfp4-ct-mtp3-gb10-v0251-u0.85-len262144") << "\n";
  auto r = pftest::validate_with_models({path});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 1u);
  const auto* w = field(r->rows[0], "weights_gib");
  ASSERT_NE(w, nullptr);
  EXPECT_DOUBLE_EQ(w->observed, 23.45);
  EXPECT_LT(w->abs_pct, 1.0) << "predicted " << w->predicted << " GiB";  // 20.86 GiB (-11%) with both sized as FP4
}

TEST(Acc30, Issue15_EnvSwitchReadAsPythonBoolOfInt) {
  const std::pair<const char*, bool> read[] = {{"0", false}, {"1", true}, {" 0 ", false}, {"+1", true}, {"-0", false}, {"00", false}, {"1_0", true}, {"2", true}};
  for (const auto& [text, want] : read) {
    auto v = deploy::parse_env_switch(text, "--env X");
    ASSERT_TRUE(v.has_value()) << text;
    EXPECT_EQ(*v, want) << text;
  }
  for (const char* text : {"", " ", "x", "true", "0x1", "1__0", "_1", "1_", "1.0", "+"}) {
    auto v = deploy::parse_env_switch(text, "--env X");
    ASSERT_FALSE(v.has_value()) << text;
    EXPECT_EQ(v.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(v.error().message.find(std::string("ValueError: invalid literal for int() with base 10: '") + text + "'"), std::string::npos) << v.error().message;
  }
  deploy::Flags f;
  ASSERT_TRUE(deploy::apply_engine_env(f, "VLLM_ROCM_MOE_PADDING", "0", "--env VLLM_ROCM_MOE_PADDING").has_value());
  ASSERT_TRUE(f.rocm_moe_padding.has_value());
  EXPECT_FALSE(f.rocm_moe_padding->value);
  EXPECT_EQ(f.rocm_moe_padding->origin, "--env VLLM_ROCM_MOE_PADDING");
  ASSERT_TRUE(deploy::apply_engine_env(f, "HCCL_BUFFSIZE", "1024", "--env HCCL_BUFFSIZE").has_value());
  EXPECT_DOUBLE_EQ(f.hccl_buffsize_mb->value, 1024.0);
  auto unknown = deploy::apply_engine_env(f, "VLLM_ROCM_MOE_PADING", "0", "--env VLLM_ROCM_MOE_PADING");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("'VLLM_ROCM_MOE_PADING' is not an environment variable the estimate follows (it reads VLLM_ROCM_MOE_PADDING"),
            std::string::npos)
      << unknown.error().message;
}

TEST(Acc30, Issue15_RocmMoePaddingOffByTheEnvironment) {
  const auto mi300x = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "MI300X", "vllm", "0.28.0");
  const auto h200 = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "H200", "vllm", "0.28.0");
  estimate::Deployment off = rocm_tp1(), on = rocm_tp1();
  off.moe_row_padding = false;
  on.moe_row_padding = true;
  EXPECT_DOUBLE_EQ(weights(mi300x, rocm_tp1()) - weights(h200, rocm_tp1()), 5637144576.0);
  EXPECT_DOUBLE_EQ(weights(mi300x, on) - weights(h200, rocm_tp1()), 5637144576.0);
  EXPECT_DOUBLE_EQ(weights(mi300x, off), weights(h200, rocm_tp1()));
  const auto e = fit_on_device(mi300x, off);
  bool said = false;
  for (const auto& t : e.terms) said |= t.rule.find("not padded: VLLM_ROCM_MOE_PADDING=0 in the engine's environment (the padding would add 5.25 GiB") != std::string::npos;
  EXPECT_TRUE(said);

  // A case's env, as the source records it: a number or its text; a value vLLM cannot read is bad input naming the field.
  const std::string head = R"J({"engine":"vllm","engine_version":"0.28.0","device":"AMD Instinct MI300X","model":"Qwen/Qwen3-30B-A3B","tensor_parallel_size":1,"max_model_len":8192,"weights_gib":57.0,)J";
  const std::string path = ::testing::TempDir() + "/acc30-rocm-env.jsonl";
  std::ofstream(path) << head << R"J("id":"default"})J" << "\n"
                      << head << R"J("id":"off","env":{"VLLM_ROCM_MOE_PADDING":"0"}})J" << "\n"
                      << head << R"J("id":"off-number","env":{"VLLM_ROCM_MOE_PADDING":0}})J" << "\n";
  auto r = pftest::validate_with_models({path});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  const double padded = r->rows[0].memory_terms.at("weights");
  EXPECT_DOUBLE_EQ(padded - r->rows[1].memory_terms.at("weights"), 5637144576.0);
  EXPECT_DOUBLE_EQ(padded - r->rows[2].memory_terms.at("weights"), 5637144576.0);
  std::ofstream(path) << head << R"J("id":"bad","env":{"VLLM_ROCM_MOE_PADDING":"off"}})J" << "\n";
  auto bad = pftest::validate_with_models({path});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(bad.error().message.find("env.VLLM_ROCM_MOE_PADDING: the engine reads it as bool(int(value)) and fails: ValueError: invalid literal for int() with base 10: 'off'"),
            std::string::npos)
      << bad.error().message;
}

TEST(Acc30, Issue15_310pSquareMaskRecords) {
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  for (const char* version : {"0.15.0", "0.16.0", "0.18.0", "0.20.2"}) {
    auto e = engine::select_engine(*engines, "vllm-ascend", version);
    ASSERT_TRUE(e.has_value()) << version;
    ASSERT_TRUE(e->square_attention_mask.has_value()) << version;
    EXPECT_EQ(e->square_attention_mask->families, std::vector<std::string>{"ascend-310p"});
    EXPECT_DOUBLE_EQ(e->square_attention_mask->element_bytes, 2.0);
    EXPECT_DOUBLE_EQ(e->square_attention_mask->peak_copies, 3.0);
    EXPECT_TRUE(e->square_attention_mask->compressed_when.empty()) << version;
    EXPECT_NE(e->square_attention_mask->rule.source.find("PR #6803"), std::string::npos);
  }
  for (const char* version : {"0.21.0", "0.23.0"}) {
    auto e = engine::select_engine(*engines, "vllm-ascend", version);
    ASSERT_TRUE(e.has_value()) << version;
    ASSERT_TRUE(e->square_attention_mask.has_value()) << version;
    EXPECT_NE(e->square_attention_mask->compressed_when.find("_npu_flash_attention_v3"), std::string::npos) << version;
  }
}

TEST(Acc30, Issue15_310pSquareMaskSizedAfterKv) {
  // The worked sizes (header): 32,768 -> 6 GiB at the peak; 16,000 is a multiple of 16.
  EXPECT_DOUBLE_EQ(fit_310p("0.16.0", 32768).after_kv_mask_high_bytes, 6442450944.0);
  EXPECT_DOUBLE_EQ(fit_310p("0.16.0", 32768).after_kv_mask_low_bytes, 6442450944.0);
  EXPECT_DOUBLE_EQ(fit_310p("0.16.0", 16000).after_kv_mask_high_bytes, 1536000000.0);
  // Before PR #6803 (0.14) the mask grew with the longest sequence seen, from 2048: nothing at start-up.
  EXPECT_DOUBLE_EQ(fit_310p("0.14.0", 32768).after_kv_mask_high_bytes, 0.0);
  // From 0.21 the torch_npu build decides between it and the 2048 x 2048 compressed mask: the high end only.
  EXPECT_DOUBLE_EQ(fit_310p("0.23.0", 32768).after_kv_mask_low_bytes, 0.0);
  EXPECT_DOUBLE_EQ(fit_310p("0.23.0", 32768).after_kv_mask_high_bytes, 6442450944.0);
  // Not on another family.
  auto a2 = pftest::fit_setup("Qwen/Qwen3-8B", "910B3", "vllm-ascend", "0.16.0");
  estimate::Deployment d;
  d.max_model_len = 32768;
  EXPECT_DOUBLE_EQ(estimate::estimate_fit(a2.model, a2.device, a2.engine, a2.overheads, d).after_kv_mask_high_bytes, 0.0);
}

// Issue 16 (mindie34): the 300I Duo chip is sized from the total its runtime prints, not from the 48 GB it is sold as:
// vLLM-Ascend 'Available memory: 26954181529, total memory: 46431260672' (vllm-ascend #3479; 43.24 GiB, as #10122's
// 'Free memory on device (42.24/43.24 GiB)'). At utilization 0.9 the request is 0.9 x 46,431,260,672 = 41,788,134,604.8 B
// (38.92 GiB; from 48 GB it was 43,200,000,000 B, 40.23 GiB), and what is left beside it 0.1 x 46,431,260,672 =
// 4,643,126,067.2 B.
TEST(Acc30, Issue16_300IDuoRequestIsAFractionOfTheRuntimeTotal) {
  const auto e = fit_310p("0.16.0", 8192);
  EXPECT_NEAR(e.requested_bytes, 41788134604.8, 1.0);
  EXPECT_DOUBLE_EQ(e.total_bytes, 46431260672.0);
  EXPECT_NEAR(e.total_bytes - e.requested_bytes, 4643126067.2, 1.0);
}

TEST(Acc30, Issue15_310pLongContextDoesNotFit) {
  // vLLM-Ascend 0.16 on a 300I Duo chip at utilization 0.9: what is left beside the KV pool is total x 0.1, about 4.3 GiB
  // (43.24 GiB x 0.1, the runtime's total),
  // so the 6 GiB peak of a 32,768-token mask does not fit, and the longest context whose mask fits is given as the fix.
  const auto e = fit_310p("0.16.0", 32768);
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.failure, estimate::Failure::after_kv_oom);
  const std::string& message = e.failure_message.str();
  EXPECT_NE(message.find("RuntimeError: NPU out of memory at the first forward with attention"), std::string::npos) << message;
  EXPECT_NE(message.find("the square attention mask of ascend-310p (max_model_len 32768: 32768 x 32768 x 2 B, 3 copies"), std::string::npos) << message;
  const auto at = message.find("fix: --max-model-len ");
  ASSERT_NE(at, std::string::npos) << message;
  const long long len = std::stoll(message.substr(at + 21));
  EXPECT_EQ(len % 16, 0);
  // The context the fix names fits, 16 tokens more does not.
  EXPECT_LE(static_cast<double>(len) * len * 6.0, e.after_kv_headroom_bytes);
  EXPECT_GT(static_cast<double>(len + 16) * (len + 16) * 6.0, e.after_kv_headroom_bytes);
  EXPECT_TRUE(fit_310p("0.16.0", len).fits) << len;
  EXPECT_FALSE(fit_310p("0.16.0", len + 16).fits) << len + 16;
  // 0.14 made no such mask at start-up, so the same deployment starts.
  EXPECT_TRUE(fit_310p("0.14.0", 32768).fits);
  // 0.23: the worker halves the budget, so the unallocated half is left beside the pool too: 32,768 tokens fit there.
  // Qwen3-VL-8B at 53,248 tokens (53,248^2 x 6 B = 17,012,097,024 B, 15.84 GiB at the peak, against about 13 GiB left):
  // the high end does not fit, the low end does: a stated risk.
  EXPECT_TRUE(fit_310p("0.23.0", 32768).fits);
  const auto newer = fit_310p("0.23.0", 53248, "Qwen/Qwen3-VL-8B-Instruct");
  EXPECT_DOUBLE_EQ(newer.after_kv_mask_high_bytes, 17012097024.0);
  EXPECT_LT(newer.after_kv_headroom_bytes, 17012097024.0);
  EXPECT_TRUE(newer.fits);
  bool risk = false;
  for (const auto& a : newer.assumptions) risk |= a.find("the low end fits, the high end does not") != std::string::npos && a.find("torch_npu build decides") != std::string::npos;
  EXPECT_TRUE(risk);
}

// The catalogue record: no family, an element size or copy count out of range, an unknown key or no source is corrupt
// and names the key (the shipped engines.json with one profile's record changed).
TEST(Acc30, Issue15_310pSquareMaskRecordChecked) {
  const std::string text = pftest::read_all(std::string(PREFLIGHT_SOURCE_DIR) + "/data/engines/engines.json");
  const struct {
    const char* key;
    std::string value;  // JSON; null removes the key
    const char* fragment;
  } rows[] = {
      {"families", "[]", "square_attention_mask needs families"},
      {"element_bytes", "0", "square_attention_mask.element_bytes: expected 0 < bytes <= 8, found 0"},
      {"peak_copies", "40", "square_attention_mask.peak_copies: expected 1-16, found 40"},
      {"source", "null", "source"},
      {"mask_rows", "1", "mask_rows"},
  };
  for (const auto& row : rows) {
    auto root = parse_json(text, "engines.json");
    ASSERT_TRUE(root.has_value());
    bool changed = false;
    for (auto& p : (*root)["profiles"])
      if (p["id"] == "vllm-ascend@0.18-0.20") {
        Json& mask = p["square_attention_mask"];
        if (row.value == "null") mask.erase(row.key);
        else mask[row.key] = Json::parse(row.value);
        changed = true;
      }
    ASSERT_TRUE(changed);
    auto c = engine::parse_engine_catalog(*root, "engines.json");
    ASSERT_FALSE(c.has_value()) << row.key;
    EXPECT_EQ(c.error().kind, ErrorKind::corrupt) << row.key;
    EXPECT_NE(c.error().describe().find(row.fragment), std::string::npos) << c.error().describe();
  }
}

namespace {

Json run_json(const std::string& args) {
  const auto r = pftest::run_cli(args, {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << args << ": " << r.out.substr(0, 400);
  auto j = parse_json(r.out, "stdout");
  EXPECT_TRUE(j.has_value()) << args;
  return j ? *j : Json();
}

bool listed(const Json& list, const std::string& entry) {
  for (const auto& e : list)
    if (e.is_string() && e.get<std::string>() == entry) return true;
  return false;
}

}  // namespace

// fit and plan take the switch as --env; plan's row is sized as fit sizes it and its start command sets it. A name the
// estimate does not follow, a value vLLM's int() refuses and a text without '=' exit 2 naming the flag.
TEST(Acc30, Issue15_EnvFlagOnFitAndPlan) {
  const std::string fit = "fit Qwen/Qwen3-30B-A3B --device MI300X --engine vllm@0.28.0 --max-model-len 32768 --json";
  const Json padded = run_json(fit);
  const Json off = run_json(fit + " --env VLLM_ROCM_MOE_PADDING=0");
  const auto weights = [](const Json& j) {
    for (const auto& t : j["memory_per_device"]["terms"])
      if (t["name"] == "weights") return t["gib"].get<double>();
    return 0.0;
  };
  EXPECT_NEAR((weights(padded) - weights(off)) * 1073741824.0, 5637144576.0, 1.0);
  EXPECT_GT(off["kv_cache"]["tokens"].get<long long>(), padded["kv_cache"]["tokens"].get<long long>());

  const Json plan = run_json("plan Qwen/Qwen3-30B-A3B --devices MI300X --max-devices 1 --variant bf16 --context 32768 --engine vllm@0.28.0 --json --env VLLM_ROCM_MOE_PADDING=0");
  ASSERT_TRUE(plan.contains("recommended") && plan["recommended"].size() == 1) << plan.dump().substr(0, 400);
  const Json& row = plan["recommended"][0];
  EXPECT_EQ(row["kv_cache_tokens"].get<long long>(), off["kv_cache"]["tokens"].get<long long>());
  EXPECT_TRUE(listed(row["launch"]["env"], "VLLM_ROCM_MOE_PADDING=0")) << row["launch"]["env"].dump();

  const std::pair<const char*, const char*> refused[] = {
      {"--env VLLM_ROCM_MOE_PADDING=off", "--env VLLM_ROCM_MOE_PADDING: the engine reads it as bool(int(value)) and fails: ValueError: invalid literal for int() with base 10: 'off'"},
      {"--env NCCL_ALGO=Ring", "--env NCCL_ALGO: 'NCCL_ALGO' is not an environment variable the estimate follows"},
      {"--env VLLM_ROCM_MOE_PADDING", "--env: expected NAME=VALUE, found 'VLLM_ROCM_MOE_PADDING'"},
  };
  for (const auto& [flag, fragment] : refused) {
    const auto r = pftest::run_cli("fit Qwen/Qwen3-30B-A3B --device MI300X " + std::string(flag));
    EXPECT_EQ(r.code, 2) << flag << ": " << r.out;
    EXPECT_NE(r.out.find(fragment), std::string::npos) << r.out;
  }
}
