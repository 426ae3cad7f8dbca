// Issues 15/16 (arch31): a start command never names a model the engine version cannot load. The first vLLM release
// whose model registry has each architecture (data/engines/model_support.json); fit refuses an older named version with
// vLLM's registry message (exit 1), plan makes no row for it. Expected versions come from the sources the file names
// (vllm-project/vllm#17327: "vLLM v0.8.4 and higher natively supports all Qwen3 and Qwen3MoE models";
// runpod-workers/worker-vllm#279: vLLM 0.16.0 refuses Qwen3_5MoeForConditionalGeneration, 0.17.0 loads it).
#include <gtest/gtest.h>

#include <string>

#include "base/json_util.hpp"
#include "engine/model_support.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::engine;

namespace {

Version v(const std::string& text) { return *parse_version(text); }

const ModelSupportCatalog& shipped() {
  const auto& c = shipped_model_support();
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().describe());
  return *c;
}

Expected<ModelSupportCatalog> parse_text(const std::string& text) {
  auto json = parse_json(text, "t.json");
  if (!json) return json.error();
  return parse_model_support(*json, "t.json");
}

}  // namespace

TEST(ModelSupport, Issue16_ShippedCatalogueLoadsWithASourcePerRecord) {
  const auto& c = shipped();
  ASSERT_FALSE(c.records.empty());
  for (const auto& r : c.records) EXPECT_FALSE(r.source.empty()) << r.architecture;
}

// ux31: fit said "fits" for Qwen3 on vllm-ascend@0.7.3 (vLLM 0.7.3 predates Qwen3).
TEST(ModelSupport, Issue16_Qwen3BeforeVllm084IsRefusedWithTheRegistryMessage) {
  const auto& c = shipped();
  for (const char* engine : {"vllm", "vllm-ascend"}) {
    for (const char* arch : {"Qwen3ForCausalLM", "Qwen3MoeForCausalLM"}) {
      const auto old = check_architecture(c, engine, v("0.7.3"), arch);
      EXPECT_EQ(old.verdict, ArchitectureVerdict::unsupported) << engine << " " << arch;
      EXPECT_NE(old.message.find(std::string("Model architectures ['") + arch + "'] are not supported for now. Supported architectures:"), std::string::npos) << old.message;
      EXPECT_NE(old.message.find(std::string("--engine ") + engine + "@0.8.4"), std::string::npos) << old.message;
      EXPECT_EQ(check_architecture(c, engine, v("0.8.3"), arch).verdict, ArchitectureVerdict::unsupported);
      EXPECT_EQ(check_architecture(c, engine, v("0.8.4"), arch).verdict, ArchitectureVerdict::supported);
      EXPECT_EQ(check_architecture(c, engine, v("0.23.0"), arch).verdict, ArchitectureVerdict::supported);
    }
  }
}

TEST(ModelSupport, Issue16_Qwen35MoeNeedsVllm0170) {
  const auto& c = shipped();
  EXPECT_EQ(check_architecture(c, "vllm", v("0.16.0"), "Qwen3_5MoeForConditionalGeneration").verdict, ArchitectureVerdict::unsupported);
  EXPECT_EQ(check_architecture(c, "vllm", v("0.17.0"), "Qwen3_5MoeForConditionalGeneration").verdict, ArchitectureVerdict::supported);
  // verl-project/verl#5381: vllm 0.15.0 refuses it.
  EXPECT_EQ(check_architecture(c, "vllm", v("0.15.0"), "Qwen3_5MoeForConditionalGeneration").verdict, ArchitectureVerdict::unsupported);
}

TEST(ModelSupport, Issue16_UnlistedArchitectureIsSaidNotRefusedAndOtherEnginesAreNotCovered) {
  const auto& c = shipped();
  const auto unknown = check_architecture(c, "vllm", v("0.7.3"), "SomeNewForCausalLM");
  EXPECT_EQ(unknown.verdict, ArchitectureVerdict::not_listed);
  EXPECT_NE(unknown.message.find("not in preflight's list"), std::string::npos) << unknown.message;
  EXPECT_EQ(check_architecture(c, "llama.cpp", v("0.7.3"), "Qwen3ForCausalLM").verdict, ArchitectureVerdict::not_covered);
  EXPECT_EQ(check_architecture(c, "mindie", v("1.0.0"), "Qwen3ForCausalLM").verdict, ArchitectureVerdict::not_covered);
  EXPECT_EQ(check_architecture(c, "vllm", v("0.7.3"), "").verdict, ArchitectureVerdict::not_covered);
}

TEST(ModelSupport, Issue16_CorruptRecordsAreRefusedNamingFileAndRecord) {
  const std::string head = R"({"schema_version": 1, "note": "n", "records": [)";
  auto dup = parse_text(head + R"({"id": "A", "version_min": "0.8.4", "source": "s"}, {"id": "A", "version_min": "0.9.0", "source": "s"}]})");
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().describe().find("t.json"), std::string::npos);
  auto no_source = parse_text(head + R"({"id": "A", "version_min": "0.8.4", "source": ""}]})");
  ASSERT_FALSE(no_source);
  EXPECT_NE(no_source.error().describe().find("records[A]"), std::string::npos) << no_source.error().describe();
  auto bad_version = parse_text(head + R"({"id": "A", "version_min": "soon", "source": "s"}]})");
  ASSERT_FALSE(bad_version);
  EXPECT_NE(bad_version.error().describe().find("version_min"), std::string::npos);
  auto extra_key = parse_text(head + R"({"id": "A", "version_min": "0.8.4", "source": "s", "engine": "x"}]})");
  EXPECT_FALSE(extra_key);
}

// Issue 19 (hard32): an id that is no architecture class name was taken: "" (a dead record no model names) and one with
// a newline or a quote, which vLLM's message quotes. Corrupt, naming the file and the id.
TEST(ModelSupport, Issue19_IdThatIsNoClassNameIsRefused) {
  const std::string head = R"({"schema_version": 1, "note": "n", "records": [)";
  for (const std::string id : {"", "Qwen3\\nFor", "Qwen3'For", "3Qwen", "Qwen 3"}) {
    const auto c = parse_text(head + R"({"id": ")" + id + R"(", "version_min": "0.8.4", "source": "s"}]})");
    ASSERT_FALSE(c) << id;
    EXPECT_EQ(c.error().kind, ErrorKind::corrupt);
    EXPECT_EQ(c.error().describe().rfind("t.json: records[]: id ", 0), 0u) << c.error().describe();
    EXPECT_NE(c.error().describe().find("is not an architecture class name (letters, digits, '_')"), std::string::npos) << c.error().describe();
  }
  EXPECT_TRUE(parse_text(head + R"({"id": "Qwen3_5MoeForConditionalGeneration", "version_min": "0.17.0", "source": "s"}]})"));
}

// The commands: fit exits 1 with vLLM's line on the named old version and sizes the model on the first version with
// it; plan lists no row for the old version.
TEST(ModelSupportCli, Issue16_FitRefusesQwen3OnVllmAscend073AndPlanMakesNoRow) {
  const std::string model = pftest::shared_path("models/Qwen__Qwen3-8B");
  const auto old = pftest::run_cli("fit " + model + " --device 910B3 --engine vllm-ascend@0.7.3");
  EXPECT_EQ(old.code, 1) << old.out;
  EXPECT_NE(old.out.find("Model architectures ['Qwen3ForCausalLM'] are not supported for now"), std::string::npos) << old.out;
  const auto first = pftest::run_cli("fit " + model + " --device 910B3 --engine vllm-ascend@0.8.4");
  EXPECT_EQ(first.code, 0) << first.out;
  const auto plan = pftest::run_cli("plan " + model + " --devices 910B3 --engine vllm-ascend@0.7.3 --max-devices 2 --json", {.with_stderr = false});
  EXPECT_EQ(plan.code, 1) << plan.out.substr(0, 400);
  auto parsed = parse_json(plan.out, "stdout");
  ASSERT_TRUE(parsed.has_value());
  const Json& j = *parsed;
  EXPECT_TRUE(j["recommended"].empty());
  ASSERT_FALSE(j["rejected"].empty());
  for (const auto& row : j["rejected"]) EXPECT_NE(row.dump().find("are not supported for now"), std::string::npos) << row.dump();
  // Without a version plan picks one that loads Qwen3 (the newest).
  const auto unnamed = pftest::run_cli("plan " + model + " --devices 910B3 --engine vllm-ascend --max-devices 1 --json", {.with_stderr = false});
  EXPECT_EQ(unnamed.code, 0) << unnamed.out.substr(0, 400);
}

// ux31 item 2: "preflight: 0.99: vllm-ascend 0.99.0 is not in..." named neither the flag nor the range of known
// versions. Now the flag as written (--engine E@V, --engine-version V) and the whole known range (vLLM-Ascend's oldest
// profile starts at 0.7.0: data/engines/engines.json vllm-ascend@0.7-0.12), exit 2, in fit and plan alike.
TEST(ModelSupportCli, Issue16_UnknownEngineVersionNamesTheFlagAndTheKnownRange) {
  const auto at = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend@0.99");
  EXPECT_EQ(at.code, 2) << at.out;
  EXPECT_EQ(at.out.rfind("preflight: --engine vllm-ascend@0.99: vllm-ascend 0.99.0 is not in the engine catalogue, which knows vllm-ascend 0.7.0 - ", 0), 0u) << at.out;
  const auto flag = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine-version 0.99");
  EXPECT_EQ(flag.code, 2) << flag.out;
  EXPECT_EQ(flag.out.rfind("preflight: --engine-version 0.99: vllm-ascend 0.99.0 is not in the engine catalogue", 0), 0u) << flag.out;
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B3 --engine vllm-ascend@0.99 --max-devices 1");
  EXPECT_EQ(plan.code, 2) << plan.out;
  EXPECT_EQ(plan.out.rfind("preflight: --engine vllm-ascend@0.99: vllm-ascend 0.99.0 is not in the engine catalogue, which knows vllm-ascend 0.7.0 - ", 0), 0u) << plan.out;
}
