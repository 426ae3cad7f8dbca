// Issues 15/16 (arch31): a start command never names a model the engine version cannot load. The first vLLM release
// whose model registry has each architecture (data/engines/model_support.json); fit refuses an older named version with
// vLLM's registry message (exit 1), plan makes no row for it. Expected versions come from the sources the file names
// (vllm-project/vllm#17327: "vLLM v0.8.4 and higher natively supports all Qwen3 and Qwen3MoE models";
// runpod-workers/worker-vllm#279: vLLM 0.16.0 refuses Qwen3_5MoeForConditionalGeneration, 0.17.0 loads it).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "base/json_util.hpp"
#include "engine/flag_versions.hpp"
#include "engine/model_support.hpp"
#include "engine/speculative_methods.hpp"
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

// arch32: every architecture a config under ../shared/models names has a record, so fit never says "not in preflight's
// list" for a model the project ships evidence for.
TEST(ModelSupport, Issue15_EveryArchitectureInSharedModelsHasARecord) {
  const auto& c = shipped();
  int configs = 0;
  for (const auto& dir : std::filesystem::directory_iterator(pftest::shared_path("models"))) {
    const auto path = dir.path() / "config.json";
    if (!std::filesystem::exists(path)) continue;
    auto json = parse_json(pftest::read_all(path.string()), path.string());
    ASSERT_TRUE(json.has_value()) << path;
    const Json& archs = (*json)["architectures"];
    ASSERT_TRUE(archs.is_array() && !archs.empty()) << path;
    const std::string arch = archs[0].get<std::string>();
    EXPECT_NE(c.find(arch), nullptr) << arch << " (" << path << ")";
    ++configs;
  }
  EXPECT_GE(configs, 30);
}

// arch32: and every architecture of the shipped model catalogue (data/architectures/models.json) but a drafter, which
// vLLM loads only through --speculative-config.
TEST(ModelSupport, Issue15_EveryCatalogueArchitectureHasARecord) {
  const auto& c = shipped();
  const std::string path = std::string(PREFLIGHT_SOURCE_DIR) + "/data/architectures/models.json";
  auto json = parse_json(pftest::read_all(path), path);
  ASSERT_TRUE(json.has_value());
  int checked = 0;
  for (const auto& m : (*json)["models"]) {
    const Json& archs = m["config"]["architectures"];
    ASSERT_TRUE(archs.is_array() && !archs.empty()) << m["id"];
    const std::string arch = archs[0].get<std::string>();
    if (arch == "DFlash2DraftModel") continue;  // a drafter (syv-ai/qwen38-27b-rtx3090), never a served model
    EXPECT_NE(c.find(arch), nullptr) << arch << " (" << m["id"] << ")";
    ++checked;
  }
  EXPECT_GE(checked, 60);
}

// arch32: the first vLLM release per architecture, read from vLLM's history (the commit adding the name to
// vllm/model_executor/models/registry.py) and the release notes of the tag that first carried it. Each row: the last
// release without it, the first with it. Llama 4 is the case a merge date gets wrong: v0.8.3 shipped it (release notes
// "Day 0 Support for Llama 4 Scout and Maverick (#16104)") though main's registry gained it a day after the tag.
TEST(ModelSupport, Issue15_FirstVllmReleasePerArchitecture) {
  const auto& c = shipped();
  struct Row {
    const char* arch;
    const char* last_without;
    const char* first_with;
  };
  for (const Row& r : {Row{"DeepseekV3ForCausalLM", "0.6.5", "0.6.6"}, Row{"Qwen2_5_VLForConditionalGeneration", "0.7.1", "0.7.2"},
                       Row{"Gemma3ForCausalLM", "0.7.3", "0.8.0"}, Row{"Gemma3ForConditionalGeneration", "0.7.3", "0.8.0"},
                       Row{"Llama4ForConditionalGeneration", "0.8.2", "0.8.3"}, Row{"NemotronHForCausalLM", "0.9.0", "0.9.1"},
                       Row{"Glm4MoeForCausalLM", "0.9.2", "0.10.0"}, Row{"Qwen3NextForCausalLM", "0.10.1", "0.10.2"},
                       Row{"Qwen3VLMoeForConditionalGeneration", "0.10.2", "0.11.0"}, Row{"MiniMaxM2ForCausalLM", "0.11.0", "0.11.1"}}) {
    const auto before = check_architecture(c, "vllm", v(r.last_without), r.arch);
    EXPECT_EQ(before.verdict, ArchitectureVerdict::unsupported) << r.arch;
    EXPECT_NE(before.message.find(std::string("--engine vllm@") + r.first_with), std::string::npos) << before.message;
    EXPECT_EQ(check_architecture(c, "vllm", v(r.first_with), r.arch).verdict, ArchitectureVerdict::supported) << r.arch;
  }
}

// arch32: vLLM-Ascend runs vLLM's registry but its own Supported Models page marks some architectures ❌ per version:
// LLama4 ❌ (#471) on 0.8.x, ✅ on 0.9.x, ❌ (#1972) from 0.10.0rc1 to v0.25.1rc1; Gemma-3 ❌ (#496) on 0.8.x-0.9.x.
// vLLM itself (GPU) is unaffected.
TEST(ModelSupport, Issue15_VllmAscendRefusesWhatItsPageMarksUnsupported) {
  const auto& c = shipped();
  const auto llama4 = "Llama4ForConditionalGeneration";
  const auto now = check_architecture(c, "vllm-ascend", v("0.13.0"), llama4);
  EXPECT_EQ(now.verdict, ArchitectureVerdict::unsupported);
  EXPECT_NE(now.message.find("LLama4 | ❌ | [1972](https://github.com/vllm-project/vllm-ascend/issues/1972)"), std::string::npos) << now.message;
  EXPECT_NE(now.message.find("vllm-ascend 0.9.x"), std::string::npos) << now.message;
  EXPECT_EQ(check_architecture(c, "vllm", v("0.13.0"), llama4).verdict, ArchitectureVerdict::supported);
  EXPECT_EQ(check_architecture(c, "vllm-ascend", v("0.9.1"), llama4).verdict, ArchitectureVerdict::supported);
  const auto early = check_architecture(c, "vllm-ascend", v("0.8.5"), llama4);
  EXPECT_EQ(early.verdict, ArchitectureVerdict::unsupported);
  EXPECT_NE(early.message.find("[#471]"), std::string::npos) << early.message;
  const auto gemma = check_architecture(c, "vllm-ascend", v("0.9.1"), "Gemma3ForCausalLM");
  EXPECT_EQ(gemma.verdict, ArchitectureVerdict::unsupported);
  EXPECT_NE(gemma.message.find("[#496]"), std::string::npos) << gemma.message;
  EXPECT_EQ(check_architecture(c, "vllm-ascend", v("0.10.0"), "Gemma3ForCausalLM").verdict, ArchitectureVerdict::supported);
  // Before vLLM's own bound the registry message wins (vLLM 0.7.3 has no Gemma 3 at all).
  const auto registry = check_architecture(c, "vllm-ascend", v("0.7.3"), "Gemma3ForCausalLM");
  EXPECT_NE(registry.message.find("are not supported for now"), std::string::npos) << registry.message;
}

// arch32: 🔵 experimental, 🟡 untested and a missing row are said, never refused.
TEST(ModelSupport, Issue15_VllmAscendExperimentalUntestedAndUnlistedAreNotes) {
  const auto& c = shipped();
  const auto gemma = check_architecture(c, "vllm-ascend", v("0.18.0"), "Gemma3ForConditionalGeneration");
  EXPECT_EQ(gemma.verdict, ArchitectureVerdict::supported_with_note);
  EXPECT_NE(gemma.message.find("experimental"), std::string::npos) << gemma.message;
  const auto minimax = check_architecture(c, "vllm-ascend", v("0.13.0"), "MiniMaxText01ForCausalLM");
  EXPECT_EQ(minimax.verdict, ArchitectureVerdict::supported_with_note);
  EXPECT_NE(minimax.message.find("MiniMax-Text | 🟡 | Need test"), std::string::npos) << minimax.message;
  const auto gpt_oss = check_architecture(c, "vllm-ascend", v("0.13.0"), "GptOssForCausalLM");
  EXPECT_EQ(gpt_oss.verdict, ArchitectureVerdict::supported_with_note);
  EXPECT_NE(gpt_oss.message.find("not listed"), std::string::npos) << gpt_oss.message;
  const auto next = check_architecture(c, "vllm-ascend", v("0.10.2"), "Qwen3NextForCausalLM");
  EXPECT_EQ(next.verdict, ArchitectureVerdict::supported_with_note);
  EXPECT_NE(next.message.find("expert parallel and MTP feature doesn't work"), std::string::npos) << next.message;
  EXPECT_EQ(check_architecture(c, "vllm-ascend", v("0.13.0"), "Qwen3NextForCausalLM").verdict, ArchitectureVerdict::supported);
  EXPECT_EQ(check_architecture(c, "vllm", v("0.13.0"), "GptOssForCausalLM").verdict, ArchitectureVerdict::supported);
}

TEST(ModelSupport, Issue15_CorruptVllmAscendSpansAreRefusedNamingTheSpan) {
  const std::string head = R"({"schema_version": 1, "note": "n", "records": [{"id": "A", "version_min": "0.8.0", "source": "s", "vllm_ascend": [)";
  const std::string span = R"({"version_min": "0.9.0", "version_max": "0.9.99", "status": "untested", "page_words": "w", "source": "s"})";
  ASSERT_TRUE(parse_text(head + span + "]}]}").has_value());
  struct Bad {
    std::string spans, fragment;
  };
  for (const Bad& b : {Bad{R"({"version_min": "0.9.0", "version_max": "0.9.99", "status": "maybe", "page_words": "w", "source": "s"})", "status 'maybe'"},
                       Bad{R"({"version_min": "0.9.0", "version_max": "0.9.99", "status": "unsupported", "page_words": "w", "source": "s"})", "needs a fix"},
                       Bad{R"({"version_min": "0.9.0", "version_max": "0.8.0", "status": "untested", "page_words": "w", "source": "s"})", "is below version_min"},
                       Bad{span + "," + R"({"version_min": "0.9.5", "version_max": "0.10.0", "status": "untested", "page_words": "w", "source": "s"})", "overlaps"},
                       Bad{R"({"version_min": "0.9.0", "version_max": "0.9.99", "status": "untested", "page_words": "", "source": "s"})", "must not be empty"}}) {
    auto parsed = parse_text(head + b.spans + "]}]}");
    ASSERT_FALSE(parsed) << b.spans;
    EXPECT_NE(parsed.error().describe().find("records[A]: vllm_ascend["), std::string::npos) << parsed.error().describe();
    EXPECT_NE(parsed.error().describe().find(b.fragment), std::string::npos) << parsed.error().describe();
  }
}

// arch32: the commands. fit refuses Nemotron-H on vLLM 0.9.0 (the registry gained it for 0.9.1), and on vllm-ascend
// says Nemotron-H is not on the Supported Models page (an assumption next to the estimate, not a refusal).
TEST(ModelSupportCli, Issue15_FitRefusesNemotronHBeforeVllm091AndNotesItOnVllmAscend) {
  const std::string nemotron = pftest::shared_path("models/nvidia__Nemotron-H-56B-Base-8K");
  const auto old = pftest::run_cli("fit " + nemotron + " --device H100 --engine vllm@0.9.0");
  EXPECT_EQ(old.code, 1) << old.out;
  EXPECT_NE(old.out.find("Model architectures ['NemotronHForCausalLM'] are not supported for now"), std::string::npos) << old.out;
  EXPECT_NE(old.out.find("--engine vllm@0.9.1"), std::string::npos) << old.out;
  const auto npu = pftest::run_cli("fit " + nemotron + " --device 910B3 --engine vllm-ascend@0.13.0 --tensor-parallel-size 4");
  EXPECT_NE(npu.out.find("verdict"), std::string::npos) << npu.out;  // sized, not refused
  EXPECT_NE(npu.out.find("NemotronHForCausalLM on vllm-ascend 0.13.0 is not listed by vLLM-Ascend's Supported Models page"), std::string::npos) << npu.out;
  EXPECT_EQ(npu.out.find("are not supported for now"), std::string::npos) << npu.out;
}

// arch32: the speculative flags each vLLM version's argparse has (data/engines/flag_versions.json): --speculative-config
// from 0.8.2 (PR #14434, merged 2025-03-22); --speculative-model, --num-speculative-tokens and
// --speculative-draft-tensor-parallel-size up to 0.8.2 (removed by PR #15466, merged 2025-03-31, before v0.8.3).
TEST(FlagVersions, Issue15_SpeculativeFlagsExistOnlyInTheirReleases) {
  const auto& c = shipped_flag_versions();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  for (const char* engine : {"vllm", "vllm-ascend"}) {
    const auto old = flag_version_refusal(*c, engine, v("0.8.1"), "--speculative-config", "--speculative-config '{}'");
    EXPECT_EQ(old.rfind("vllm serve: error: unrecognized arguments: --speculative-config '{}'", 0), 0u) << old;
    EXPECT_NE(old.find("--speculative-model MODEL --num-speculative-tokens N"), std::string::npos) << old;
    EXPECT_EQ(flag_version_refusal(*c, engine, v("0.8.2"), "--speculative-config", "x"), "");
    EXPECT_EQ(flag_version_refusal(*c, engine, v("0.23.0"), "--speculative-config", "x"), "");
    for (const char* legacy : {"--speculative-model", "--num-speculative-tokens", "--speculative-draft-tensor-parallel-size"}) {
      EXPECT_EQ(flag_version_refusal(*c, engine, v("0.6.0"), legacy, legacy), "") << legacy;
      EXPECT_EQ(flag_version_refusal(*c, engine, v("0.8.2"), legacy, legacy), "") << legacy;
      const auto gone = flag_version_refusal(*c, engine, v("0.8.3"), legacy, legacy);
      EXPECT_EQ(gone.rfind(std::string("vllm serve: error: unrecognized arguments: ") + legacy, 0), 0u) << gone;
      EXPECT_NE(gone.find("--speculative-config '{"), std::string::npos) << gone;
    }
  }
  EXPECT_EQ(flag_version_refusal(*c, "llama.cpp", v("0.7.3"), "--speculative-config", "x"), "");
  EXPECT_EQ(flag_version_refusal(*c, "vllm", v("0.7.3"), "--max-model-len", "x"), "");
}

TEST(FlagVersions, Issue15_CorruptRecordsNameTheFileAndRecord) {
  auto parse = [](const std::string& records) {
    auto json = parse_json(R"({"schema_version": 1, "note": "n", "records": [)" + records + "]}", "f.json");
    return json ? parse_flag_versions(*json, "f.json") : Expected<FlagVersionCatalog>(json.error());
  };
  ASSERT_TRUE(parse(R"({"id": "--a", "version_min": "0.6.0", "version_max": "0.8.2", "replacement": "r", "source": "s"})").has_value());
  struct Bad {
    std::string records, fragment;
  };
  for (const Bad& b : {Bad{R"({"id": "--a", "version_min": "0.9.0", "version_max": "0.8.2", "replacement": "r", "source": "s"})", "is below version_min"},
                       Bad{R"({"id": "--a", "version_min": "0.6.0", "version_max": "0.8.2", "replacement": "r", "source": ""})", "must not be empty"},
                       Bad{R"({"id": "--a", "version_min": "soon", "version_max": "0.8.2", "replacement": "r", "source": "s"})", "version_min 'soon'"},
                       Bad{R"({"id": "--a", "version_min": "0.6.0", "version_max": "0.8.2", "replacement": "r", "source": "s", "x": 1})", "x"}}) {
    auto parsed = parse(b.records);
    ASSERT_FALSE(parsed) << b.records;
    EXPECT_NE(parsed.error().describe().find("records[--a]"), std::string::npos) << parsed.error().describe();
    EXPECT_NE(parsed.error().describe().find(b.fragment), std::string::npos) << parsed.error().describe();
  }
}

// arch32: fit on a named version takes the speculative flags that version's parser has and refuses the others with
// argparse's words (exit 2); on V0 the sizing is V1's, said in the assumptions.
TEST(ModelSupportCli, Issue15_FitTakesEachVersionsSpeculativeFlags) {
  const std::string llama = pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B");
  const auto config_on_v0 = pftest::run_cli("fit " + llama + " --device H100 --engine vllm@0.7.3 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'");
  EXPECT_EQ(config_on_v0.code, 2) << config_on_v0.out;
  EXPECT_NE(config_on_v0.out.find("vllm serve: error: unrecognized arguments: --speculative-config"), std::string::npos) << config_on_v0.out;
  // quant34: V0's '[ngram]' drafter needs --ngram-prompt-lookup-max (vllm/config.py at v0.7.3: 'if ngram_prompt_lookup_max is None
  // or ngram_prompt_lookup_max < 1: raise ValueError(...must be > 0)'); without it the engine does not start (exit 2).
  const auto no_window = pftest::run_cli("fit " + llama + " --device H100 --engine vllm@0.7.3 --speculative-model '[ngram]' --num-speculative-tokens 3");
  EXPECT_EQ(no_window.code, 2) << no_window.out;
  EXPECT_NE(no_window.out.find("needs \"prompt_lookup_max\" in --speculative-config (V0's --ngram-prompt-lookup-max)"), std::string::npos) << no_window.out;
  EXPECT_NE(no_window.out.find("must be > 0"), std::string::npos) << no_window.out;
  const auto legacy = pftest::run_cli("fit " + llama + " --device H100 --engine vllm@0.7.3 --speculative-model '[ngram]' --num-speculative-tokens 3 --ngram-prompt-lookup-max 4");
  EXPECT_EQ(legacy.code, 0) << legacy.out;
  EXPECT_NE(legacy.out.find("speculative decoding (ngram, 3 tokens)"), std::string::npos) << legacy.out;
  EXPECT_NE(legacy.out.find("(V0 spec_decode) sized as V1 sizes it"), std::string::npos) << legacy.out;
  const auto legacy_late = pftest::run_cli("fit " + llama + " --device H100 --engine vllm@0.9.1 --speculative-model '[ngram]' --num-speculative-tokens 3");
  EXPECT_EQ(legacy_late.code, 2) << legacy_late.out;
  EXPECT_NE(legacy_late.out.find("vllm serve: error: unrecognized arguments: --speculative-model"), std::string::npos) << legacy_late.out;
  const auto config_late = pftest::run_cli("fit " + llama + " --device H100 --engine vllm@0.9.1 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'");
  EXPECT_EQ(config_late.code, 0) << config_late.out;
  EXPECT_EQ(config_late.out.find("V0 spec_decode"), std::string::npos) << config_late.out;
  // quant34: plan takes --speculative-config as its own input and writes each row's start in the form the version parses
  // (tests/cli/test_quant34.cpp); V0's ngram has no default prompt_lookup_max, so this config cannot start on 0.7.3 (exit 2).
  const auto plan_v0 = pftest::run_cli("plan " + llama + " --devices H100 --engine vllm@0.7.3 --max-devices 1 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'");
  EXPECT_EQ(plan_v0.code, 2) << plan_v0.out;
  EXPECT_NE(plan_v0.out.find("its ngram form needs \"prompt_lookup_max\""), std::string::npos) << plan_v0.out;
}

// arch32: a V0 log's own arguments (vLLM 0.7.3's "args: Namespace(... speculative_model='[ngram]',
// num_speculative_tokens=5 ...)") are read back as the speculative config validate sizes.
TEST(ModelSupportCli, Issue15_LogsReadV0SpeculativeArgsBack) {
  const std::string dir = pftest::scratch_dir("arch32_v0_log");
  const std::string path = dir + "/v0.log";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("INFO 02-25 10:00:01 api_server.py:912] vLLM API server version 0.7.3\n"
               "INFO 02-25 10:00:01 api_server.py:913] args: Namespace(subparser='serve', model_tag='meta-llama/Llama-3.1-8B-Instruct', "
               "model='meta-llama/Llama-3.1-8B-Instruct', tensor_parallel_size=1, gpu_memory_utilization=0.9, speculative_model='[ngram]', "
               "num_speculative_tokens=5, speculative_draft_tensor_parallel_size=None, ngram_prompt_lookup_max=4)\n",
               f);
    std::fclose(f);
  }
  const auto r = pftest::run_cli("logs " + path + " --device H100 --emit-case", {.with_stderr = false});
  auto parsed = parse_json(r.out, "stdout");
  ASSERT_TRUE(parsed.has_value()) << r.out;
  EXPECT_EQ((*parsed)["engine_version"], "0.7.3");
  EXPECT_EQ((*parsed)["speculative_config"]["method"], "ngram") << r.out;
  EXPECT_EQ((*parsed)["speculative_config"]["num_speculative_tokens"], 5) << r.out;
  EXPECT_EQ((*parsed)["speculative_config"]["prompt_lookup_max"], 4) << r.out;  // quant34: ngram_prompt_lookup_max=4 of the Namespace
}

// hard36: V0's --speculative-model-quantization (vllm/engine/arg_utils.py at v0.6.0, v0.7.3, v0.8.2:
// 'type=nullable_str, choices=[*QUANTIZATION_METHODS, None]', as --quantization's) takes the version's quantization
// methods (data/engines/quantization_methods.json list vllm-0.7.3, which starts 'aqlm', 'awq', 'deepspeedfp' and ends
// 'moe_wna16', None); argparse refuses another name before anything runs. The log's Namespace carries the same
// arguments (speculative_model_quantization='fp8', speculative_max_model_len=4096), read back into the config as
// "quantization" and "max_model_len" as 0.8.2's create_speculative_config names them.
TEST(ModelSupportCli, Hard36_SpeculativeModelQuantizationTakesTheVersionsMethods) {
  const std::string v0 = "fit Qwen/Qwen3-8B --device H100 --engine vllm@0.7.3 --speculative-model Qwen/Qwen3-0.6B --num-speculative-tokens 2 ";
  const auto bad = pftest::run_cli(v0 + "--speculative-model-quantization w8a8");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("vllm serve: error: argument --speculative-model-quantization: invalid choice: 'w8a8' (choose from 'aqlm', 'awq', 'deepspeedfp', "),
            std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find("'moe_wna16', None) (vllm 0.7.3, data/engines/quantization_methods.json)"), std::string::npos) << bad.out;
  const auto fp8 = pftest::run_cli(v0 + "--speculative-model-quantization fp8");
  EXPECT_EQ(fp8.out.find("invalid choice"), std::string::npos) << fp8.out;
  EXPECT_NE(fp8.code, 2) << fp8.out;
  // 'torchao' joins the list at 0.8.4, after the flag's last version 0.8.2: refused at 0.8.2.
  const auto torchao = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.8.2 --speculative-model Qwen/Qwen3-0.6B --num-speculative-tokens 2 "
                                       "--speculative-model-quantization torchao");
  EXPECT_EQ(torchao.code, 2) << torchao.out;
  EXPECT_NE(torchao.out.find("invalid choice: 'torchao'"), std::string::npos) << torchao.out;

  const std::string dir = pftest::scratch_dir("hard36_v0_log");
  const std::string path = dir + "/v0.log";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("INFO 02-25 10:00:01 api_server.py:912] vLLM API server version 0.7.3\n"
               "INFO 02-25 10:00:01 api_server.py:913] args: Namespace(subparser='serve', model_tag='Qwen/Qwen3-8B', model='Qwen/Qwen3-8B', "
               "tensor_parallel_size=1, gpu_memory_utilization=0.9, speculative_model='Qwen/Qwen3-0.6B', num_speculative_tokens=2, "
               "speculative_model_quantization='fp8', speculative_max_model_len=4096, speculative_draft_tensor_parallel_size=None)\n",
               f);
    std::fclose(f);
  }
  const auto r = pftest::run_cli("logs " + path + " --device H100 --emit-case", {.with_stderr = false});
  auto parsed = parse_json(r.out, "stdout");
  ASSERT_TRUE(parsed.has_value()) << r.out;
  EXPECT_EQ((*parsed)["speculative_config"]["model"], "Qwen/Qwen3-0.6B") << r.out;
  EXPECT_EQ((*parsed)["speculative_config"]["quantization"], "fp8") << r.out;
  EXPECT_EQ((*parsed)["speculative_config"]["max_model_len"], 4096) << r.out;
}

// Issue 16 (spec35): the names --speculative-config's "method" takes, by vLLM version (data/engines/speculative_methods.json).
// Expected lists are SpeculativeMethod as the tags write it: v0.10.0 vllm/config.py 'SpeculativeMethod = Literal["ngram",
// "eagle", "eagle3", "medusa", "mlp_speculator", "draft_model", "deepseek_mtp"]'; v0.11.0 vllm/config/speculative.py adds
// "ernie_mtp", "qwen3_next_mtp" (both from v0.10.2), "mimo_mtp", "longcat_flash_mtp", "mtp"; v0.11.1 adds "suffix"
// (MTPModelTypes gains "glm4_moe_mtp", "pangu_ultra_moe_mtp"); v0.18.0 adds NgramGPUTypes "ngram_gpu"; v0.20.0 adds
// DFlashModelTypes "dflash"; v0.21.0 MTPModelTypes adds "gemma4_mtp".
namespace {

const SpeculativeMethodCatalog& speculative() {
  const auto& c = shipped_speculative_methods();
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().describe());
  return *c;
}

std::string spec_refusal(const std::string& engine, const std::string& version, const std::string& config, const std::string& model_type) {
  return speculative_method_refusal(speculative(), engine, v(version), config, model_type);
}

}  // namespace

TEST(SpeculativeMethods, Issue16_EachVersionTakesItsOwnList) {
  const auto* v0100 = speculative_method_list(speculative(), "vllm", v("0.10.0"));
  ASSERT_NE(v0100, nullptr);
  EXPECT_TRUE(v0100->checked);
  EXPECT_EQ(v0100->methods, (std::vector<std::string>{"ngram", "eagle", "eagle3", "medusa", "mlp_speculator", "draft_model", "deepseek_mtp"}));
  // 0.8.2 - 0.9.0: a standard-library dataclass (pydantic's from v0.9.1): nothing refused by name.
  const auto* v090 = speculative_method_list(speculative(), "vllm", v("0.9.0"));
  ASSERT_NE(v090, nullptr);
  EXPECT_FALSE(v090->checked);
  EXPECT_EQ(speculative_method_list(speculative(), "vllm", v("0.8.1")), nullptr);  // V0's flags (flag_versions.json)
  EXPECT_EQ(speculative_method_list(speculative(), "llama.cpp", v("0.11.0")), nullptr);
  struct Row {
    std::string method, last_refused, first_taken;
  };
  for (const Row& r : {Row{"mtp", "0.10.2", "0.11.0"}, Row{"qwen3_next_mtp", "0.10.1", "0.10.2"}, Row{"eagle3", "", "0.9.1"}, Row{"suffix", "0.11.0", "0.11.1"},
                       Row{"glm4_moe_mtp", "0.11.0", "0.11.1"}, Row{"ngram_gpu", "0.17.1", "0.18.0"}, Row{"dflash", "0.19.1", "0.20.0"},
                       Row{"gemma4_mtp", "0.20.2", "0.21.0"}}) {
    const std::string config = R"({"method": ")" + r.method + R"(", "model": "x/drafter"})";
    if (!r.last_refused.empty()) {
      const std::string why = spec_refusal("vllm", r.last_refused, config, "llama");
      EXPECT_NE(why.find("[type=literal_error, input_value='" + r.method + "', input_type=str]"), std::string::npos) << r.method << ": " << why;
      // vLLM-Ascend X.Y parses with vLLM X.Y.
      std::string ascend = spec_refusal("vllm-ascend", r.last_refused, config, "llama");
      ascend.replace(ascend.find("(vllm-ascend "), 13, "(vllm ");
      EXPECT_EQ(ascend, why);
    }
    EXPECT_EQ(spec_refusal("vllm", r.first_taken, config, "llama"), "") << r.method << " at " << r.first_taken;
  }
  // pydantic's literal_error lists the version's names in its Literal's order.
  EXPECT_NE(spec_refusal("vllm", "0.10.0", R"({"method": "mtp", "num_speculative_tokens": 1})", "deepseek_v3")
                .find("Input should be 'ngram', 'eagle', 'eagle3', 'medusa', 'mlp_speculator', 'draft_model' or 'deepseek_mtp' [type=literal_error, input_value='mtp'"),
            std::string::npos);
  EXPECT_EQ(spec_refusal("vllm", "0.9.0", R"({"method": "anything", "model": "x/drafter"})", "llama"), "");  // unchecked
  EXPECT_EQ(spec_refusal("mindie", "0.10.0", R"({"method": "mtp"})", "deepseek_v3"), "");
}

// Before 0.11.0 a config without "model" drafts with the target's own MTP layers only for the model types __post_init__
// names ('if self.model is None and self.num_speculative_tokens is not None: if ... model_type == "deepseek_v3" or ... in
// ("mimo", "ernie4_5_moe", "qwen3_next")' at v0.10.2; deepseek_v3 and mimo at v0.9.0 - v0.10.1), else
// 'raise ValueError("num_speculative_tokens was provided without speculative model.")'.
TEST(SpeculativeMethods, Issue16_OwnMtpLayersBefore0110OnlyForTheNamedTargets) {
  const std::string deepseek_mtp = R"({"method": "deepseek_mtp", "num_speculative_tokens": 1})";
  const std::string why = spec_refusal("vllm", "0.10.1", deepseek_mtp, "qwen3_next");
  EXPECT_EQ(why.rfind("ValueError: num_speculative_tokens was provided without speculative model. (vllm 0.10.1", 0), 0u) << why;
  EXPECT_NE(why.find("only for model_type deepseek_v3, mimo, not qwen3_next"), std::string::npos) << why;
  EXPECT_EQ(spec_refusal("vllm", "0.10.1", deepseek_mtp, "deepseek_v3"), "");
  EXPECT_EQ(spec_refusal("vllm", "0.10.2", R"({"method": "qwen3_next_mtp", "num_speculative_tokens": 1})", "qwen3_next"), "");
  EXPECT_EQ(spec_refusal("vllm", "0.11.0", R"({"method": "mtp", "num_speculative_tokens": 1})", "qwen3_next"), "");  // any target from 0.11.0
  EXPECT_EQ(spec_refusal("vllm", "0.10.1", R"({"method": "ngram", "num_speculative_tokens": 3})", "llama"), "");
  EXPECT_EQ(spec_refusal("vllm", "0.10.1", R"({"method": "eagle", "model": "x/EAGLE-llama", "num_speculative_tokens": 3})", "llama"), "");
  // A refused generic 'mtp' says the name this version takes for the target.
  EXPECT_NE(spec_refusal("vllm", "0.10.2", R"({"method": "mtp", "num_speculative_tokens": 1})", "qwen3_next")
                .find("which takes 'qwen3_next_mtp' for qwen3_next's own MTP layers"),
            std::string::npos);
}

// plan writes the name the version takes: 'mtp' from 0.11.0 (which rewrites every name of MTP_MODEL_TYPES / MTPModelTypes
// to it with "method `X` is deprecated and replaced with mtp."), before it the method v0.10.x's detection sets for the
// target's own MTP draft (deepseek_v3 -> deepseek_mtp; v0.10.2: qwen3_next -> qwen3_next_mtp).
TEST(SpeculativeMethods, Issue16_PlanWritesTheNameTheVersionTakes) {
  const auto& c = speculative();
  EXPECT_EQ(speculative_method_for_version(c, "vllm", v("0.10.0"), "mtp", "deepseek_v3"), "deepseek_mtp");
  EXPECT_EQ(speculative_method_for_version(c, "vllm", v("0.10.2"), "mtp", "qwen3_next"), "qwen3_next_mtp");
  EXPECT_EQ(speculative_method_for_version(c, "vllm", v("0.10.2"), "mtp", "llama"), "mtp");  // no own MTP target: left, and refused
  EXPECT_EQ(speculative_method_for_version(c, "vllm-ascend", v("0.13.0"), "deepseek_mtp", "deepseek_v32"), "mtp");
  EXPECT_EQ(speculative_method_for_version(c, "vllm", v("0.11.0"), "glm4_moe_mtp", "glm4_moe"), "mtp");  // 0.11.0's Literal lacks it
  EXPECT_EQ(speculative_method_for_version(c, "vllm", v("0.13.0"), "eagle3", "llama"), "eagle3");
  EXPECT_EQ(speculative_method_for_version(c, "vllm", v("0.9.0"), "mtp", "deepseek_v3"), "mtp");  // unchecked: as given
  EXPECT_EQ(speculative_config_for_version(c, "vllm", v("0.10.0"), R"({"method": "mtp", "num_speculative_tokens": 2})", "deepseek_v3"),
            R"({"method":"deepseek_mtp","num_speculative_tokens":2})");
  const std::string kept = R"({"method": "mtp", "num_speculative_tokens": 2})";
  EXPECT_EQ(speculative_config_for_version(c, "vllm", v("0.13.0"), kept, "deepseek_v3"), kept);  // unchanged text when the name stays
}

TEST(SpeculativeMethods, Issue16_CorruptListsNameTheFileAndRecord) {
  auto parse = [](const std::string& lists) {
    auto json = parse_json(R"({"schema_version": 1, "note": "n", "lists": [)" + lists + "]}", "s.json");
    return json ? parse_speculative_methods(*json, "s.json") : Expected<SpeculativeMethodCatalog>(json.error());
  };
  const std::string good = R"({"id": "a", "version_min": "0.11.0", "version_max": "0.11.0", "checked": true, "methods": ["ngram", "mtp", "deepseek_mtp"], "mtp_aliases": ["deepseek_mtp"], "source": "s"})";
  ASSERT_TRUE(parse(good).has_value()) << parse(good).error().describe();
  struct Bad {
    std::string lists, fragment;
  };
  for (const Bad& b : {Bad{R"({"id": "a", "version_min": "0.11.0", "version_max": "0.10.0", "checked": true, "methods": ["ngram"], "source": "s"})", "is below version_min"},
                       Bad{R"({"id": "a", "version_min": "0.11.0", "version_max": "0.11.0", "methods": ["ngram"], "source": "s"})", "checked"},
                       Bad{R"({"id": "a", "version_min": "0.11.0", "version_max": "0.11.0", "checked": true, "methods": [], "source": "s"})", "methods must not be empty"},
                       Bad{R"({"id": "a", "version_min": "0.11.0", "version_max": "0.11.0", "checked": true, "methods": ["ngram"], "mtp_aliases": ["deepseek_mtp"], "source": "s"})", "mtp alias 'deepseek_mtp'"},
                       Bad{R"({"id": "a", "version_min": "0.10.0", "version_max": "0.10.0", "checked": true, "methods": ["ngram"], "own_mtp_targets": [{"model_type": "deepseek_v3", "method": "deepseek_mtp"}], "source": "s"})", "own_mtp_targets[deepseek_v3]"},
                       Bad{R"({"id": "a", "version_min": "0.11.0", "version_max": "0.11.0", "checked": true, "methods": ["ngram"], "source": ""})", "source must not be empty"},
                       Bad{good + "," + R"({"id": "b", "version_min": "0.11.0", "version_max": "0.12.0", "checked": true, "methods": ["ngram"], "source": "s"})", "overlap a's"}}) {
    auto parsed = parse(b.lists);
    ASSERT_FALSE(parsed) << b.lists;
    EXPECT_NE(parsed.error().describe().find("s.json: lists["), std::string::npos) << parsed.error().describe();
    EXPECT_NE(parsed.error().describe().find(b.fragment), std::string::npos) << parsed.error().describe();
  }
}

// spec35: a value check without "{value}" in its message (or with no minimum and no choices) is refused naming it.
TEST(SpeculativeMethods, Issue16_CorruptValueChecksNameTheFileAndRecord) {
  const std::string lists = R"("lists": [{"id": "a", "version_min": "0.11.0", "version_max": "0.11.0", "checked": true, "methods": ["ngram"], "source": "s"}])";
  const auto parse = [&](const std::string& check) {
    auto json = parse_json(R"({"schema_version": 1, "note": "n", )" + lists + R"(, "value_checks": [)" + check + "]}", "s.json");
    return json ? parse_speculative_methods(*json, "s.json") : Expected<SpeculativeMethodCatalog>(json.error());
  };
  EXPECT_TRUE(parse(R"({"id": "c", "key": "k", "minimum": 2, "version_min": "0.8.2", "version_max": "0.9.0", "message": "got {value}", "source": "s"})").has_value());
  for (const std::string bad : {R"({"id": "c", "key": "k", "minimum": 2, "version_min": "0.8.2", "version_max": "0.9.0", "message": "got it", "source": "s"})",
                                R"({"id": "c", "key": "k", "version_min": "0.8.2", "version_max": "0.9.0", "message": "got {value}", "source": "s"})",
                                R"({"id": "c", "key": "k", "minimum": 2, "flag": "x", "version_min": "0.8.2", "version_max": "0.9.0", "message": "got {value}", "source": "s"})",
                                R"({"id": "c", "key": "k", "choices": ["1"], "skip_methods": "ngram", "version_min": "0.8.2", "version_max": "0.9.0", "message": "got {value}", "source": "s"})",
                                R"({"id": "c", "key": "k", "choices": ["1"], "or_target_tp": 1, "version_min": "0.8.2", "version_max": "0.9.0", "message": "got {value}", "source": "s"})"}) {
    const auto parsed = parse(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().describe().find("s.json: value_checks[c]"), std::string::npos) << parsed.error().describe();
  }
}

// specdraft35: a draft tensor_parallel_size vLLM refuses. vllm/config.py at v0.6.0 - v0.6.3.post1
// (create_draft_parallel_config): 'elif speculative_draft_tensor_parallel_size != 1: raise ValueError(
// f"{speculative_draft_tensor_parallel_size=} cannot be " f"other value than 1")'; from v0.6.4 (_verify_and_get_draft_tp,
// vllm/config/speculative.py at v0.11.0 - v0.23.0 too): 'elif speculative_draft_tensor_parallel_size not in (1,
// target_parallel_config.tensor_parallel_size): raise ValueError(... f"other value than 1 or target model
// tensor_parallel_size")'. Python's f"{x=}" prints "speculative_draft_tensor_parallel_size=4". ngram (V0's "[ngram]"
// drafter too) takes the target's parallel config ('self.draft_parallel_config = self.target_parallel_config'): no check.
TEST(SpeculativeMethods, SpecDraft35_DraftTensorParallelSizeIsOneOrTheTargets) {
  const auto refusal = [](const std::string& version, const std::string& config, int64_t target_tp) {
    return speculative_value_refusal(speculative(), "vllm", v(version), config, {}, SpeculativeValueStage::config, target_tp);
  };
  const std::string mtp4 = R"({"method": "mtp", "num_speculative_tokens": 1, "draft_tensor_parallel_size": 4})";
  const std::string refused = refusal("0.13.0", mtp4, 8);
  EXPECT_EQ(refused.rfind("ValueError: speculative_draft_tensor_parallel_size=4 cannot be other value than 1 or target model tensor_parallel_size (vllm 0.13.0; ", 0), 0u)
      << refused;
  EXPECT_EQ(refusal("0.13.0", mtp4, 4), "");  // the target's own TP
  EXPECT_EQ(refusal("0.13.0", R"({"method": "mtp", "num_speculative_tokens": 1, "draft_tensor_parallel_size": 1})", 8), "");
  EXPECT_EQ(refusal("0.13.0", R"({"method": "ngram", "prompt_lookup_max": 4, "num_speculative_tokens": 1, "draft_tensor_parallel_size": 4})", 8), "");
  // The same check on vllm-ascend 0.13.0 (it runs vLLM 0.13.0) and on the V1 config of 0.8.2.
  EXPECT_NE(speculative_value_refusal(speculative(), "vllm-ascend", v("0.13.0"), mtp4, {}, SpeculativeValueStage::config, 8), "");
  EXPECT_NE(refusal("0.8.2", R"({"model": "d", "num_speculative_tokens": 1, "draft_tensor_parallel_size": 2})", 4), "");
  // Before 0.6.4 only 1: the target's TP is refused too, with the shorter message.
  const std::string draft2 = R"({"model": "d", "num_speculative_tokens": 3, "draft_tensor_parallel_size": 2})";
  const std::string v063 = refusal("0.6.3", draft2, 2);
  EXPECT_EQ(v063.rfind("ValueError: speculative_draft_tensor_parallel_size=2 cannot be other value than 1 (vllm 0.6.3; ", 0), 0u) << v063;
  EXPECT_EQ(refusal("0.6.4", draft2, 2), "");
  EXPECT_EQ(refusal("0.6.3", R"({"model": "[ngram]", "num_speculative_tokens": 3, "draft_tensor_parallel_size": 2})", 2), "");
  // argparse's stage never runs this config check.
  EXPECT_EQ(speculative_value_refusal(speculative(), "vllm", v("0.13.0"), mtp4, {}, SpeculativeValueStage::argparse, 8), "");
}

// hard36: max_model_len_checks (vLLM's _maybe_override_draft_max_model_len, v0.6.0 - v0.23.0): the draft's length is
// compared first, then the target's; equal is taken ("if speculative_max_model_len > draft_max_model_len"); a float or
// an absent value is not compared; ngram has no draft model config. Records are checked: both placeholders of each
// message, no overlapping versions.
TEST(SpeculativeMethods, Hard36_MaxModelLenAgainstDraftAndTarget) {
  const auto refusal = [](const std::string& version, const std::string& config, std::optional<int64_t> draft, std::optional<int64_t> target) {
    return speculative_max_len_refusal(speculative(), "vllm", v(version), config, draft, target);
  };
  const std::string len9 = R"({"method": "eagle", "model": "d", "num_speculative_tokens": 1, "max_model_len": 9000})";
  const std::string both = refusal("0.13.0", len9, 8000, 4000);
  EXPECT_EQ(both.rfind("pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig\n  Value error, speculative_max_model_len=9000 cannot be "
                       "larger than draft_max_model_len=8000 (vllm 0.13.0; ", 0),
            0u)
      << both;
  EXPECT_NE(refusal("0.13.0", len9, 9000, 4000).find("larger than target_max_model_len=4000"), std::string::npos);
  EXPECT_EQ(refusal("0.13.0", len9, 9000, 9000), "");
  EXPECT_EQ(refusal("0.13.0", len9, std::nullopt, std::nullopt), "");
  EXPECT_EQ(refusal("0.9.0", len9, 8000, 9000).rfind("ValueError: speculative_max_model_len=9000 cannot be larger than draft_max_model_len=8000 (vllm 0.9.0; ", 0), 0u);
  EXPECT_EQ(refusal("0.13.0", R"({"method": "ngram", "prompt_lookup_max": 4, "num_speculative_tokens": 1, "max_model_len": 9000})", 8000, 4000), "");
  EXPECT_EQ(refusal("0.13.0", R"({"method": "eagle", "model": "d", "max_model_len": 9000.5})", 8000, 4000), "");
  EXPECT_EQ(speculative_max_len_refusal(speculative(), "sglang", v("0.13.0"), len9, 8000, 4000), "");
  const std::string lists = R"("lists": [{"id": "a", "version_min": "0.11.0", "version_max": "0.11.0", "checked": true, "methods": ["ngram"], "source": "s"}])";
  const auto parse = [&](const std::string& checks) {
    auto json = parse_json(R"({"schema_version": 1, "note": "n", )" + lists + R"(, "max_model_len_checks": [)" + checks + "]}", "s.json");
    return json ? parse_speculative_methods(*json, "s.json") : Expected<SpeculativeMethodCatalog>(json.error());
  };
  const std::string good = R"({"id": "c", "version_min": "0.6.0", "version_max": "0.9.0", "message_draft": "{value} > {draft}", "message_target": "{value} > {target}", "source": "s"})";
  EXPECT_TRUE(parse(good).has_value());
  for (const std::string& bad : std::vector<std::string>{R"({"id": "c", "version_min": "0.6.0", "version_max": "0.9.0", "message_draft": "{value} >", "message_target": "{value} > {target}", "source": "s"})",
                                R"({"id": "c", "version_min": "0.6.0", "version_max": "0.9.0", "message_draft": "{value} > {draft}", "message_target": "{value} > {target}", "source": ""})",
                                good + R"(, {"id": "d", "version_min": "0.9.0", "version_max": "1.0.0", "message_draft": "{value} {draft}", "message_target": "{value} {target}", "source": "s"})"}) {
    const auto parsed = parse(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().describe().find("s.json: max_model_len_checks["), std::string::npos) << parsed.error().describe();
  }
}

// specdraft35: fit says it with exit 2, through --speculative-config and V0's -spec-draft-tp alike.
TEST(ModelSupportCli, SpecDraft35_FitRefusesADraftTensorParallelSizeVllmRefuses) {
  const std::string dsv3 = "fit " + pftest::shared_path("models/deepseek-ai__DeepSeek-V3") + " --device H200 --engine vllm@0.13.0 --tensor-parallel-size 8";
  const auto refused = pftest::run_cli(dsv3 + R"( --speculative-config '{"method": "mtp", "num_speculative_tokens": 1, "draft_tensor_parallel_size": 4}')");
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("--speculative-config: ValueError: speculative_draft_tensor_parallel_size=4 cannot be other value than 1 or target model tensor_parallel_size"),
            std::string::npos)
      << refused.out;
  const auto same = pftest::run_cli(dsv3 + R"( --speculative-config '{"method": "mtp", "num_speculative_tokens": 1, "draft_tensor_parallel_size": 8}')");
  EXPECT_EQ(same.code, 0) << same.out;
  // The target's TP as the deployment resolves it: --num-devices 8 alone runs TP 8 (deployment.cpp: num_devices / (pp x dp)).
  const auto by_devices = pftest::run_cli("fit " + pftest::shared_path("models/deepseek-ai__DeepSeek-V3") + " --device H200 --engine vllm@0.13.0 --num-devices 8" +
                                          R"( --speculative-config '{"method": "mtp", "num_speculative_tokens": 1, "draft_tensor_parallel_size": 8}')");
  EXPECT_EQ(by_devices.code, 0) << by_devices.out;
  const auto v0 = pftest::run_cli("fit " + pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B") + " --device H100 --engine vllm@0.6.3 --tensor-parallel-size 2 --speculative-model " +
                                  pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B") + " --num-speculative-tokens 3 -spec-draft-tp 2");
  EXPECT_EQ(v0.code, 2) << v0.out;
  EXPECT_NE(v0.out.find("ValueError: speculative_draft_tensor_parallel_size=2 cannot be other value than 1 (vllm 0.6.3"), std::string::npos) << v0.out;
}

// fit refuses a name the named version refuses (exit 2, vLLM's own words) and says a rewrite; plan writes the version's name.
TEST(ModelSupportCli, Issue16_FitAndPlanTakeTheSpeculativeMethodTheirVersionTakes) {
  const std::string dsv3 = pftest::shared_path("models/deepseek-ai__DeepSeek-V3");
  const std::string mtp = " --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'";
  const auto refused = pftest::run_cli("fit " + dsv3 + " --device H200 --engine vllm@0.10.0" + mtp);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("1 validation error for SpeculativeConfig"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("input_value='mtp'"), std::string::npos) << refused.out;
  const auto alias = pftest::run_cli("fit " + dsv3 + " --device H200 --engine vllm@0.13.0 --speculative-config '{\"method\": \"deepseek_mtp\", \"num_speculative_tokens\": 1}'");
  EXPECT_NE(alias.code, 2) << alias.out;
  EXPECT_NE(alias.out.find("vllm 0.13.0 takes speculative method 'deepseek_mtp' as 'mtp'"), std::string::npos) << alias.out;
  const auto plan = pftest::run_cli("plan " + dsv3 + " --devices H200 --engine vllm@0.10.0" + mtp + " --json", {.with_stderr = false});
  EXPECT_EQ(plan.code, 0) << plan.out.substr(0, 400);
  auto rows = parse_json(plan.out, "stdout");
  ASSERT_TRUE(rows.has_value()) << plan.out.substr(0, 400);
  ASSERT_FALSE((*rows)["recommended"].empty()) << plan.out.substr(0, 400);
  for (const auto& row : (*rows)["recommended"]) {
    const std::string serve = row["launch"]["serve"].get<std::string>();
    EXPECT_NE(serve.find(R"(--speculative-config '{"method":"deepseek_mtp","num_speculative_tokens":1}')"), std::string::npos) << serve;
  }
}

// spec35: the rest of V0's speculative flags (vllm/engine/arg_utils.py at v0.6.0 - v0.8.2): --speculative-model-quantization,
// --speculative-max-model-len, --speculative-disable-by-batch-size (type=int), --speculative-disable-mqa-scorer (store_true,
// from v0.6.3), --spec-decoding-acceptance-method (choices rejection_sampler / typical_acceptance_sampler),
// --typical-acceptance-sampler-posterior-threshold / -alpha (type=float). Bad values get vLLM's words: argparse's
// "invalid choice" / "invalid int value"; maybe_create_spec_config at v0.7.3 'raise ValueError("Expect the batch size
// threshold of disabling speculative decoding is > 1, but got " f"{speculative_disable_by_batch_size=}")', from v0.8.2
// SpeculativeConfig._verify_args's f"{self.disable_by_batch_size=}" (to v0.16.x, the field gone at v0.17.0).
TEST(ModelSupportCli, Issue16_FitTakesV0sRarerSpeculativeFlags) {
  const std::string v0 = "fit " + pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B") +
                         " --device H100 --engine vllm@0.7.3 --speculative-model '[ngram]' --num-speculative-tokens 3 --ngram-prompt-lookup-max 4";
  const auto all = pftest::run_cli(v0 + " --spec-decoding-acceptance-method typical_acceptance_sampler --typical-acceptance-sampler-posterior-alpha 0.2"
                                        " --speculative-disable-mqa-scorer --speculative-disable-by-batch-size 8 -spec-draft-tp 1");
  EXPECT_EQ(all.code, 0) << all.out;
  const auto choice = pftest::run_cli(v0 + " --spec-decoding-acceptance-method greedy");
  EXPECT_EQ(choice.code, 2) << choice.out;
  EXPECT_NE(choice.out.find("argument --spec-decoding-acceptance-method: invalid choice: 'greedy' (choose from 'rejection_sampler', 'typical_acceptance_sampler')"),
            std::string::npos)
      << choice.out;
  const auto not_int = pftest::run_cli(v0 + " --speculative-disable-by-batch-size many");
  EXPECT_EQ(not_int.code, 2) << not_int.out;
  EXPECT_NE(not_int.out.find("vllm serve: error: argument --speculative-disable-by-batch-size: invalid int value: 'many'"), std::string::npos) << not_int.out;
  const auto one = pftest::run_cli(v0 + " --speculative-disable-by-batch-size 1");
  EXPECT_EQ(one.code, 2) << one.out;
  EXPECT_NE(one.out.find("is > 1, but got speculative_disable_by_batch_size=1"), std::string::npos) << one.out;
  const auto json = pftest::run_cli("fit " + pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B") +
                                    " --device H100 --engine vllm@0.10.0 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"disable_by_batch_size\": 1}'");
  EXPECT_EQ(json.code, 2) << json.out;
  EXPECT_NE(json.out.find("is > 1, but got self.disable_by_batch_size=1"), std::string::npos) << json.out;
  const auto late = pftest::run_cli("fit " + pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B") +
                                    " --device H100 --engine vllm@0.9.1 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}' --speculative-disable-mqa-scorer");
  EXPECT_EQ(late.code, 2) << late.out;
  EXPECT_NE(late.out.find("vllm serve: error: unrecognized arguments: --speculative-disable-mqa-scorer"), std::string::npos) << late.out;
}

// spec35: plan's V0 start line writes a store_true key as the flag alone (true) or not at all (false).
TEST(FlagVersions, Issue16_V0SwitchKeysAreWrittenAsTheFlagAlone) {
  const auto& c = shipped_flag_versions();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  const std::string base = R"("method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "acceptance_method": "typical_acceptance_sampler")";
  const auto on = speculative_serve_args(*c, "vllm", v("0.7.3"), "{" + base + R"(, "disable_mqa_scorer": true})", "llama");
  ASSERT_TRUE(on.has_value()) << on.error().describe();
  std::string text;
  for (const auto& a : *on) text += " " + a.flag + (a.value.empty() ? "" : "=" + a.value);
  EXPECT_NE(text.find(" --speculative-disable-mqa-scorer"), std::string::npos) << text;
  EXPECT_EQ(text.find("--speculative-disable-mqa-scorer="), std::string::npos) << text;
  EXPECT_NE(text.find(" --spec-decoding-acceptance-method=typical_acceptance_sampler"), std::string::npos) << text;
  const auto off = speculative_serve_args(*c, "vllm", v("0.7.3"), "{" + base + R"(, "disable_mqa_scorer": false})", "llama");
  ASSERT_TRUE(off.has_value());
  for (const auto& a : *off) EXPECT_NE(a.flag, "--speculative-disable-mqa-scorer");
}
