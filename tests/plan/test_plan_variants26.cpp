// Issue 16 (quant26), through the real binary: the quantized-variant defects found in round 25 and fixed in 26.
//  - a vendor release made from a BF16 original (Qwen/Qwen3-8B-FP8) lists no conversion row the original lists too;
//  - MXFP4 (experts only) on a model without experts changes nothing: fit refuses it (exit 2), plan rejects it;
//  - every plan --json row has "launch": the commands where it meets the targets, null where it is rejected;
//  - validate reads a bare method name and "fp8_e4m3", and an unreadable quantization skips that case alone.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "base/json_util.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using pftest::json_of;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Every row (recommended and rejected) of a plan --json document.
std::vector<Json> rows_of(const Json& j) {
  std::vector<Json> out;
  for (const char* k : {"recommended", "rejected"})
    for (const auto& r : j[k]) out.push_back(r);
  return out;
}
}  // namespace

// data/engines/quantized_checkpoints.json lists Qwen/Qwen3-8B-FP8 as Qwen's FP8 release of Qwen/Qwen3-8B; its msModelSlim
// W8A8 and W4A8_DYNAMIC rows on 910B4 start from that BF16 original (the conversion reads Qwen/Qwen3-8B), so with both
// models in the run they were the original's rows twice, with the same KV tokens. Now the conversion rows are the
// original's alone, the release keeps its own (as published: FP8 block, which vLLM-Ascend 0.23 refuses), and a plan of
// the release alone still offers the conversions (nothing else in the run starts them).
TEST(PlanVariants26, Issue16_ReleaseConversionRowsAreListedOnceUnderTheBf16Original) {
  const auto both = pftest::run_cli("plan --device 910B4 --model 'Qwen/Qwen3-8B*' --context 8192 --json", {.with_stderr = false});
  ASSERT_EQ(both.code, 0) << both.out.substr(0, 400);
  std::map<std::string, std::set<std::string>> variants;  // model -> variant ids of its rows
  for (const auto& r : rows_of(json_of(both))) variants[r["model"].get<std::string>()].insert(r["variant_id"].get<std::string>());
  EXPECT_EQ(variants["Qwen/Qwen3-8B-FP8"], (std::set<std::string>{""})) << "the release keeps only its published format";
  EXPECT_TRUE(variants["Qwen/Qwen3-8B"].count("w8a8") && variants["Qwen/Qwen3-8B"].count("w4a8_dynamic"));

  const auto alone = pftest::run_cli("plan --device 910B4 --model 'Qwen/Qwen3-8B-FP8' --context 8192 --json", {.with_stderr = false});
  ASSERT_EQ(alone.code, 0) << alone.out.substr(0, 400);
  std::set<std::string> own;
  for (const auto& r : rows_of(json_of(alone))) own.insert(r["variant_id"].get<std::string>());
  EXPECT_TRUE(own.count("w8a8") && own.count("w4a8_dynamic")) << "without its original in the run the release keeps the conversions";

  // Over the whole catalogue on one 910B4: no two recommended rows are one deployment (same variant, same checkpoint
  // served, same KV tokens).
  const auto all = pftest::run_cli("plan --device 910B4 --json", {.with_stderr = false});
  ASSERT_EQ(all.code, 0);
  std::set<std::tuple<std::string, std::string, int64_t>> seen;
  const Json whole = json_of(all);
  for (const auto& r : whole["recommended"]) {
    if (r["variant_id"].get<std::string>().empty()) continue;
    const auto key = std::make_tuple(r["variant_id"].get<std::string>(), r["launch"]["checkpoint"].get<std::string>(), r["kv_cache_tokens"].get<int64_t>());
    EXPECT_TRUE(seen.insert(key).second) << r["model"] << " " << r["variant_id"] << " repeats a row serving " << r["launch"]["checkpoint"];
  }
}

// vLLM's Mxfp4Config.get_quant_method (vllm/model_executor/layers/quantization/mxfp4.py at 007d500) gives every
// LinearBase UnquantizedLinearMethod and quantizes FusedMoE layers only: on Qwen3-8B (no experts) --quantization mxfp4
// loads every weight in BF16. fit said "weights stored MXFP4 experts" and "fits" at the BF16 size (15.27 GiB); it is
// now bad input naming the reason, plan rejects the row with it, and plan never lists such a variant by itself.
TEST(PlanVariants26, Issue16_Mxfp4OnAModelWithoutExpertsIsNoEffect) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --variant mxfp4");
  EXPECT_EQ(fit.code, 2) << fit.out.substr(0, 400);
  EXPECT_TRUE(contains(fit.out, "--variant mxfp4: no effect: no MoE experts")) << fit.out.substr(0, 400);
  EXPECT_FALSE(contains(fit.out, "weights stored")) << fit.out.substr(0, 400);

  // A model with experts is sized in it as before (gpt-oss-20b publishes MXFP4 experts).
  const auto moe = pftest::run_cli("fit openai/gpt-oss-20b --device H100 --variant mxfp4 --max-model-len 8192");
  EXPECT_EQ(moe.code, 0) << moe.out.substr(0, 400);
  EXPECT_FALSE(contains(moe.out, "no effect")) << moe.out.substr(0, 400);

  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100 --variant mxfp4 --json", {.with_stderr = false});
  EXPECT_EQ(plan.code, 1) << plan.out.substr(0, 400);
  const Json j = json_of(plan);
  EXPECT_TRUE(j["recommended"].empty());
  ASSERT_FALSE(j["rejected"].empty());
  for (const auto& r : j["rejected"]) EXPECT_TRUE(contains(r["reason"].get<std::string>(), "no effect: no MoE experts")) << r["reason"];

  // The variants plan tries by itself on every catalogue card of both platforms: none that changes nothing.
  for (const char* device : {"H100", "B200", "910B4", "950DT"}) {
    const auto p = pftest::run_cli(std::string("plan --device ") + device + " --json", {.with_stderr = false});
    for (const auto& r : rows_of(json_of(p)))
      EXPECT_FALSE(contains(r["reason"].get<std::string>(), "no effect")) << device << " " << r["model"] << " " << r["variant_id"];
  }
}

// Every plan --json row has "launch": the start commands where the row meets the targets, null where it is rejected
// (its "reason" says why it does not run). Rejected rows of two kinds: Qwen3-32B in BF16 on one 910B4 (weights 61.1 GiB
// per device, budget 27.1 GiB) and Qwen3-8B-FP8 as published on 910B4 (vLLM-Ascend 0.23 refuses its FP8 block layers).
TEST(PlanVariants26, Issue16_EveryJsonRowHasALaunchNullWhenRejected) {
  const auto big = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4,H100 --json", {.with_stderr = false});
  ASSERT_EQ(big.code, 0) << big.out.substr(0, 400);
  const Json j = json_of(big);
  bool too_big = false;
  for (const auto& r : j["rejected"]) {
    ASSERT_TRUE(r.contains("launch")) << r.dump().substr(0, 300);
    EXPECT_TRUE(r["launch"].is_null()) << r.dump().substr(0, 300);
    EXPECT_FALSE(r["reason"].get<std::string>().empty());
    too_big |= contains(r["reason"].get<std::string>(), "exceed the 27.1 GiB budget");
  }
  EXPECT_TRUE(too_big);
  ASSERT_FALSE(j["recommended"].empty());
  for (const auto& r : j["recommended"]) EXPECT_EQ(r["launch"]["serve"].get<std::string>().rfind("vllm serve ", 0), 0u) << r["launch"].dump();

  const auto fp8 = pftest::run_cli("plan Qwen/Qwen3-8B-FP8 --devices 910B4 --json", {.with_stderr = false});
  bool refused = false;
  const Json published = json_of(fp8);
  for (const auto& r : published["rejected"]) {
    ASSERT_TRUE(r.contains("launch"));
    EXPECT_TRUE(r["launch"].is_null());
    refused |= contains(r["reason"].get<std::string>(), "engine rejects it: ");
  }
  EXPECT_TRUE(refused) << fp8.out.substr(0, 600);
}

// A validate run with three cases: "compressed-tensors" on a checkpoint whose config.json states that method
// (DocPang/Qwen3.6-35B-A3B-W8A8-DCU) is that checkpoint's own descriptor; "fp8_e4m3" on Qwen/Qwen3-8B-FP8 reads as
// "fp8" does; "hqq 4-bit" names no variant: that case is listed as unreadable and the other two are evaluated (exit 2
// after the report). Each reading gives the weights the same case gives with the spelling the list already read (the
// published checkpoint with no quantization text, and "fp8").
TEST(PlanVariants26, Issue16_ValidateReadsBareMethodAndFp8E4m3AndSkipsOnlyTheUnreadableCase) {
  const std::string dir = pftest::scratch_dir("quant26-validate");
  const auto line = [](const std::string& id, const std::string& model, const std::string& quantization) {
    Json j = {{"id", id}, {"engine", "vllm"}, {"device", "H100-SXM"}, {"num_devices", 1}, {"model", model}, {"max_model_len", 4096}, {"weights_gib", 9.0}};
    if (!quantization.empty()) j["quantization"] = quantization;
    return j.dump() + "\n";
  };
  const std::string file = dir + "/three.jsonl", ref = dir + "/reference.jsonl";
  std::ofstream(file) << line("ct-bare", "DocPang/Qwen3.6-35B-A3B-W8A8-DCU", "compressed-tensors") << line("fp8-e4m3", "Qwen/Qwen3-8B-FP8", "fp8_e4m3")
                      << line("unreadable", "Qwen/Qwen3-8B", "hqq 4-bit");
  std::ofstream(ref) << line("ct-bare", "DocPang/Qwen3.6-35B-A3B-W8A8-DCU", "") << line("fp8-e4m3", "Qwen/Qwen3-8B-FP8", "fp8");
  const auto v = pftest::run_cli("validate " + file + " --json", {.with_stderr = false});
  EXPECT_EQ(v.code, 2) << v.out.substr(0, 400);
  const Json j = json_of(v);
  EXPECT_EQ(j["cases"], 3);
  EXPECT_EQ(j["evaluated"], 2);
  EXPECT_EQ(j["unreadable"], 1);
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_EQ(j["skipped"][0]["id"], "unreadable");
  EXPECT_TRUE(contains(j["skipped"][0]["reason"].get<std::string>(), "unreadable: ")) << j["skipped"].dump();
  EXPECT_TRUE(contains(j["skipped"][0]["reason"].get<std::string>(), "quantization 'hqq 4-bit': no variant")) << j["skipped"].dump();

  const auto r = pftest::run_cli("validate " + ref + " --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  std::map<std::string, double> want;
  const Json reference = json_of(r);
  for (const auto& row : reference["rows"]) want[row["id"].get<std::string>()] = row["fields"]["weights_gib"]["predicted"].get<double>();
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) {
    const std::string id = row["id"].get<std::string>();
    EXPECT_DOUBLE_EQ(row["fields"]["weights_gib"]["predicted"].get<double>(), want[id]) << id;
    std::string assumptions;
    for (const auto& a : row["assumptions"]) assumptions += a.get<std::string>() + "\n";
    if (id == "ct-bare") EXPECT_TRUE(contains(assumptions, "quantization 'compressed-tensors': the method of the checkpoint's own descriptor")) << assumptions;
  }
}
