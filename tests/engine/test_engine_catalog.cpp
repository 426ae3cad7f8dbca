#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "engine/attention_backends.hpp"
#include "engine/engine_profile.hpp"

using namespace preflight;
using namespace preflight::engine;

namespace {

// One minimal valid profile with `extra` added to it must fail to parse with `fragment` in the error.
struct BadProfileField {
  std::string extra, fragment;
};

template <size_t N>
void expect_profile_errors(const BadProfileField (&bads)[N]) {
  const std::string base = R"({"schema_version": 1, "profiles": [{"id": "x@1", "engine": "x", "version_min": "1.0.0", "version_max": "1.9.0",
      "platform": "npu", "default_gpu_memory_utilization": 0.9, "block_size": 128, "hybrid_block_rule": "cuda_align", "hybrid_mamba_mode": "none",
      "max_num_seqs": 256, "max_num_batched_tokens": 2048, "max_num_batched_tokens_large_device": 8192, "sampler_logit_copies": 1,
      "sampler_source": "s", "requested_rounding": "floor", "tokens_rule": "blocks", "source": "s" EXTRA}]})";
  for (const auto& b : bads) {
    std::string text = base;
    text.replace(text.find("EXTRA"), 5, b.extra);
    auto j = parse_json(text, "engines.json");
    ASSERT_TRUE(j.has_value()) << b.fragment;
    auto e = parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << b.fragment;
    EXPECT_NE(e.error().describe().find(b.fragment), std::string::npos) << e.error().describe();
  }
}

}  // namespace


TEST(EngineCatalog, SelectsByVersionRange) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  struct Row { const char* engine; const char* version; const char* id; };
  const Row rows[] = {
      {"vllm-ascend", "0.23.0", "vllm-ascend@0.23-0.26"}, {"vllm-ascend@0.18", "", "vllm-ascend@0.18-0.20"},
      {"vllm-ascend", "vllm 0.10.2 + vllm-ascend 0.10.2rc1", "vllm-ascend@0.7-0.12"}, {"vllm", "0.10.1.1", "vllm@0.9.2-0.11.0"}, {"vllm", "0.11.2", "vllm@0.11.1-0.13"},
      {"vllm", "", "vllm@0.28-0.30"}, {"vllm-ascend", "0.11.0rc3", "vllm-ascend@0.7-0.12"},
  };
  for (const auto& r : rows) {
    auto p = select_engine(*c, r.engine, r.version);
    ASSERT_TRUE(p.has_value()) << r.engine << " " << r.version;
    EXPECT_EQ(p->id, r.id);
  }
  auto ascend18 = select_engine(*c, "vllm-ascend", "0.18.0");
  EXPECT_FALSE(ascend18->accepts_quantization("fp8"));
  EXPECT_FALSE(ascend18->accepts_quantization("awq"));
  EXPECT_TRUE(ascend18->accepts_quantization("ascend"));
  EXPECT_EQ(ascend18->block_size, 128);
}

TEST(EngineCatalog, UnknownEngineOrVersionSuggests) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value());
  auto e = select_engine(*c, "vlm-ascend", "");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("did you mean vllm-ascend"), std::string::npos);
  auto v = select_engine(*c, "vllm-ascend", "0.3.0");
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message.find("which knows vllm-ascend 0.7.0 - "), std::string::npos) << v.error().message;
  EXPECT_EQ(parse_version("v0.11.0rc3")->minor, 11);
}

// A malformed overheads entry names the file and the key: the rotary-cache size per element is required and
// bounded (it is added to the printed weights).
TEST(EngineCatalog, OverheadsRotaryCacheSizeIsChecked) {
  auto text = [](const std::string& rope) {
    return R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "npu", "non_torch_bytes": 1, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 0.1, )" + rope +
           R"( "evidence": "e", "band_fraction": 0.3, "non_torch_multi_rank_fraction": 0.5, "non_torch_multi_rank_source": "s"}]})";
  };
  auto good = parse_json(text(R"("rope_cache_bytes_per_element": 8, "rope_cache_source": "s",)"), "engines.json");
  ASSERT_TRUE(good.has_value());
  auto ok = parse_engine_catalog(*good, "engines.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  EXPECT_DOUBLE_EQ(ok->overheads.front().rope_cache_bytes_per_element, 8.0);
  for (const std::string bad : {std::string(R"("rope_cache_bytes_per_element": -2, "rope_cache_source": "s",)"), std::string(R"("rope_cache_source": "s",)")}) {
    auto j = parse_json(text(bad), "engines.json");
    ASSERT_TRUE(j.has_value());
    auto e = parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << bad;
    EXPECT_NE(e.error().describe().find("engines.json"), std::string::npos);
    EXPECT_NE(e.error().describe().find("rope_cache_bytes_per_element"), std::string::npos) << e.error().describe();
  }
}

// Issue 14: the hybrid group padding ratio is a versioned catalogue fact (reference sec 2.1 item 6): no padding
// before vLLM 0.12, padding when most < fewest x 1.25 from about 0.12, x 1.5 from 0.18 (vLLM PR #36684); the
// profile vllm@0.16-0.20 straddles that change, so the ratio follows the requested version, not the profile.
TEST(EngineCatalog, Issue14_HybridGroupPaddingRatioFollowsTheVersion) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  struct Row { const char* engine; const char* version; double ratio; const char* source_fragment; };
  const Row rows[] = {
      {"vllm", "0.10.1", 1.0, "never pads"},      {"vllm", "0.13.0", 1.25, "1.25"},          {"vllm", "0.17.1", 1.25, "1.25"},
      {"vllm", "0.18.0", 1.5, "pull/36684"},     {"vllm", "0.20.0", 1.5, "pull/36684"},     {"vllm", "", 1.5, "pull/36684"},
      {"vllm-ascend", "0.11.0rc3", 1.0, "never pads"}, {"vllm-ascend", "0.15.0", 1.25, "1.25"}, {"vllm-ascend", "0.23.0", 1.5, "pull/36684"},
  };
  for (const auto& r : rows) {
    auto p = select_engine(*c, r.engine, r.version);
    ASSERT_TRUE(p.has_value()) << r.engine << " " << r.version;
    EXPECT_DOUBLE_EQ(p->hybrid_group_padding_ratio, r.ratio) << r.engine << " " << r.version;
    EXPECT_NE(p->hybrid_group_padding_source.find(r.source_fragment), std::string::npos) << r.engine << " " << r.version << ": " << p->hybrid_group_padding_source;
  }
}

// Issue 14: engine facts the code does not read are not in the catalogue (available_kv_rule and concurrency_rule
// were parsed and never used: an overlay carrying them is told so), the padding ratio is bounded and sourced,
// and the multi-rank non-torch fraction is required with its evidence.
TEST(EngineCatalog, Issue14_EngineFactsAreReadOrRejected) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value());
  for (const auto& o : c->overheads) {
    EXPECT_DOUBLE_EQ(o.non_torch_multi_rank_fraction, 0.5) << o.platform;
    EXPECT_FALSE(o.non_torch_multi_rank_source.empty()) << o.platform;
  }
  const std::string profile = R"({"id": "x@1", "engine": "x", "version_min": "1.0.0", "version_max": "1.9.0", "platform": "cuda",
      "default_gpu_memory_utilization": 0.9, "block_size": 16, "hybrid_block_rule": "cuda_align", "hybrid_mamba_mode": "none",
      "max_num_seqs": 256, "max_num_batched_tokens": 2048, "max_num_batched_tokens_large_device": 8192, "sampler_logit_copies": 1,
      "sampler_source": "s", "requested_rounding": "floor", "tokens_rule": "blocks", "source": "s" EXTRA})";
  auto catalog = [&](const std::string& extra, const std::string& padding) {
    std::string p = profile;
    p.replace(p.find("EXTRA"), 5, extra);
    return R"({"schema_version": 1, "profiles": [)" + p + R"(], "hybrid_group_padding": [)" + padding + "]}";
  };
  const std::string padding = R"({"engine": "x", "version_min": "1.0.0", "version_max": "1.9.0", "ratio": 1.25, "source": "s"})";
  auto good = parse_json(catalog("", padding), "engines.json");
  ASSERT_TRUE(good.has_value());
  auto ok = parse_engine_catalog(*good, "engines.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  EXPECT_DOUBLE_EQ(ok->profiles.front().hybrid_group_padding_ratio, 1.25);
  struct Bad { std::string extra, padding, fragment; };
  const Bad bads[] = {
      {R"(, "available_kv_rule": "profile")", padding, "available_kv_rule"},
      {R"(, "concurrency_rule": "sum_then_ceil")", padding, "concurrency_rule"},
      {"", R"({"engine": "x", "version_min": "1.0.0", "version_max": "1.9.0", "ratio": 0.5, "source": "s"})", "ratio"},
      {"", R"({"engine": "x", "version_min": "1.0.0", "version_max": "1.9.0", "ratio": 1.5})", "source"},
  };
  for (const auto& b : bads) {
    auto j = parse_json(catalog(b.extra, b.padding), "engines.json");
    ASSERT_TRUE(j.has_value()) << b.fragment;
    auto e = parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << b.fragment;
    EXPECT_NE(e.error().describe().find(b.fragment), std::string::npos) << e.error().describe();
  }
  auto no_multi = parse_json(R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "npu", "non_torch_bytes": 1, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 0.1, "rope_cache_bytes_per_element": 8, "rope_cache_source": "s",
      "evidence": "e", "band_fraction": 0.3}]})", "engines.json");
  ASSERT_TRUE(no_multi.has_value());
  auto e = parse_engine_catalog(*no_multi, "engines.json");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().describe().find("non_torch_multi_rank_fraction"), std::string::npos) << e.error().describe();
}

// Issue 15: vLLM 0.14-0.15 checks max_model_len under PP against the whole model's KV (vllm#29431, in v0.14.0;
// vllm#32105, vllm#34076); vllm#33698 (after 0.15.2rc1) checks per worker. vllm-ascend keeps the per-stage check.
TEST(EngineCatalog, Issue15_PpMaxModelLenCheckFollowsTheVersion) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  struct Row { const char* engine; const char* version; const char* check; };
  const Row rows[] = {{"vllm", "0.13.0", "per_stage"}, {"vllm", "0.14.0", "whole_model"}, {"vllm", "0.15.2", "whole_model"},
                      {"vllm", "0.16.0", "per_stage"}, {"vllm-ascend", "0.15.0", "per_stage"}};
  for (const auto& r : rows) {
    auto p = select_engine(*c, r.engine, r.version);
    ASSERT_TRUE(p.has_value()) << r.engine << " " << r.version;
    EXPECT_EQ(p->pp_max_model_len_check, r.check) << r.engine << " " << r.version;
    if (p->pp_max_model_len_check == "whole_model") EXPECT_NE(p->pp_max_model_len_check_source.find("pull/33698"), std::string::npos);
  }
  const std::string base = R"({"schema_version": 1, "profiles": [{"id": "x@1", "engine": "x", "version_min": "1.0.0", "version_max": "1.9.0",
      "platform": "cuda", "default_gpu_memory_utilization": 0.9, "block_size": 16, "hybrid_block_rule": "cuda_align", "hybrid_mamba_mode": "none",
      "max_num_seqs": 256, "max_num_batched_tokens": 2048, "max_num_batched_tokens_large_device": 8192, "sampler_logit_copies": 1,
      "sampler_source": "s", "requested_rounding": "floor", "tokens_rule": "blocks", "source": "s" EXTRA}]})";
  for (const std::string extra : {R"(, "pp_max_model_len_check": "per_layer", "pp_max_model_len_check_source": "s")",
                                  R"(, "pp_max_model_len_check": "whole_model")"}) {
    std::string text = base;
    text.replace(text.find("EXTRA"), 5, extra);
    auto j = parse_json(text, "engines.json");
    ASSERT_TRUE(j.has_value());
    auto e = parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << extra;
    EXPECT_NE(e.error().describe().find("pp_max_model_len_check"), std::string::npos) << e.error().describe();
  }
}

// Issue 15: vLLM-Ascend's _allocate_kv_cache_tensors allocates a hybrid model's shared KV tensors once per layer
// (v0.10.2rc1 - v0.11.0, PR #2917) or once per layer kind (v0.12.0rc1 - v0.15.0rc1) until PR #6887 (v0.16.0rc1) shares
// them; vLLM has no such rule. A rule needs copies per_layer or per_kind, a version range and a source.
TEST(EngineCatalog, Issue15_HybridKvTensorCopiesFollowTheVersion) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  using Copies = EngineProfile::HybridKvCopies;
  struct Row { const char* engine; const char* version; int copies; };  // -1: none, else the enum value
  const Row rows[] = {{"vllm-ascend", "0.10.1", -1}, {"vllm-ascend", "0.10.2", static_cast<int>(Copies::per_layer)},
                      {"vllm-ascend", "0.11.0", static_cast<int>(Copies::per_layer)}, {"vllm-ascend", "0.12.0", static_cast<int>(Copies::per_kind)},
                      {"vllm-ascend", "0.13.0", static_cast<int>(Copies::per_kind)}, {"vllm-ascend", "0.15.0", static_cast<int>(Copies::per_kind)},
                      {"vllm-ascend", "0.16.0", -1}, {"vllm-ascend", "0.23.0", -1}, {"vllm", "0.12.0", -1}};
  for (const auto& r : rows) {
    auto p = select_engine(*c, r.engine, r.version);
    ASSERT_TRUE(p.has_value()) << r.engine << " " << r.version;
    const auto* rule = p->hybrid_kv_copy_rule();
    if (r.copies < 0) {
      EXPECT_EQ(rule, nullptr) << r.engine << " " << r.version;
      continue;
    }
    ASSERT_NE(rule, nullptr) << r.engine << " " << r.version;
    EXPECT_EQ(static_cast<int>(rule->copies), r.copies) << r.version;
    EXPECT_NE(rule->rule.source.find("_allocate_kv_cache_tensors"), std::string::npos) << r.version;
  }
  const BadProfileField bads[] = {
      {R"(, "hybrid_kv_tensor_copies": [{"copies": "per_tensor", "version_min": "1.0.0", "version_max": "1.9.0", "source": "s"}])", "copies must be per_layer or per_kind"},
      {R"(, "hybrid_kv_tensor_copies": [{"copies": "per_kind", "version_min": "1.0.0", "version_max": "1.9.0"}])", "source"},
      {R"(, "hybrid_kv_tensor_copies": [{"copies": "per_kind", "version_min": "1.9.0", "version_max": "1.0.0", "source": "s"}])", "bad version range"},
      {R"(, "hybrid_kv_tensor_copies": {"copies": "per_kind"})", "must be an array"},
  };
  expect_profile_errors(bads);
}

// Issue 15 (dsv32r): the MTP drafter's profile-run tensors are counted on vLLM-Ascend 0.13 - 0.15 only (EagleProposer
// subclasses vLLM's at v0.13.0, v0.14.0rc1, v0.15.0rc1; spec_decode restructured in v0.16.0rc1). The dummy run's output
// is gathered under sequence parallel from v0.15.0rc1 (_model_forward), not before (_generate_dummy_run_hidden_states).
TEST(EngineCatalog, Issue15_MtpDrafterProfileTensorsFollowTheVersion) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  struct Row { const char* engine; const char* version; int gathered; };  // -1: no rule
  const Row rows[] = {{"vllm-ascend", "0.12.0", -1}, {"vllm-ascend", "0.13.0", 0}, {"vllm-ascend", "0.14.1", 0},
                      {"vllm-ascend", "0.15.0", 1},  {"vllm-ascend", "0.16.0", -1}, {"vllm-ascend", "0.18.0", -1},
                      {"vllm", "0.13.0", -1}};
  for (const auto& r : rows) {
    auto p = select_engine(*c, r.engine, r.version);
    ASSERT_TRUE(p.has_value()) << r.engine << " " << r.version;
    const auto* rule = p->mtp_drafter_profile_rule();
    if (r.gathered < 0) {
      EXPECT_EQ(rule, nullptr) << r.engine << " " << r.version;
      continue;
    }
    ASSERT_NE(rule, nullptr) << r.version;
    EXPECT_EQ(rule->output_gathered_under_sp, r.gathered == 1) << r.version;
    EXPECT_NE(rule->rule.source.find("EagleProposer"), std::string::npos) << r.version;
  }
  const BadProfileField bads[] = {
      {R"(, "mtp_drafter_profile_tensors": [{"version_min": "1.0.0", "version_max": "1.9.0", "source": "s"}])", "needs output_gathered_under_sp"},
      {R"(, "mtp_drafter_profile_tensors": [{"output_gathered_under_sp": true, "version_min": "1.0.0", "version_max": "1.9.0"}])", "source"},
      {R"(, "mtp_drafter_profile_tensors": [{"output_gathered_under_sp": true, "version_min": "1.9.0", "version_max": "1.0.0", "source": "s"}])", "bad version range"},
      {R"(, "mtp_drafter_profile_tensors": {"output_gathered_under_sp": true})", "must be an array"},
  };
  expect_profile_errors(bads);
}

// Issue 15, dating evidence: every vLLM-Ascend profile names its first release and that release's date (vLLM-Ascend's
// versioning_policy.md release window: v0.13.0rc1 2025-12-27, v0.23.0rc1 2026-07-20); a malformed record is an error
// naming the profile and the field.
TEST(EngineCatalog, Issue15_FirstReleaseDatesOfEveryAscendProfile) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  int ascend = 0;
  for (const auto& p : c->profiles) {
    if (p.engine != "vllm-ascend") continue;
    ++ascend;
    ASSERT_TRUE(p.first_release.has_value()) << p.id;
    EXPECT_NE(p.first_release->source.find("versioning_policy.md"), std::string::npos) << p.id;
  }
  EXPECT_EQ(ascend, 6);
  auto p13 = select_engine(*c, "vllm-ascend", "0.13.0");
  ASSERT_TRUE(p13.has_value());
  EXPECT_EQ(p13->first_release->version, "0.13.0rc1");
  EXPECT_EQ(p13->first_release->date, 20251227);
  auto p23 = select_engine(*c, "vllm-ascend", "0.23.0");
  ASSERT_TRUE(p23.has_value());
  EXPECT_EQ(p23->first_release->date, 20260720);

  const BadProfileField bads[] = {
      {R"(, "first_release": {"version": "1.0.0", "date": "2026-02-30", "source": "s"})", "profiles[x@1].first_release.date: expected YYYY-MM-DD, found '2026-02-30'"},
      {R"(, "first_release": {"version": "1.0.0", "date": "2026-1-5", "source": "s"})", "expected YYYY-MM-DD"},
      {R"(, "first_release": {"version": "1.0.0", "date": "2026-01-05", "source": ""})", "every fact names its source"},
      {R"(, "first_release": {"version": "1.0.0", "date": "2026-01-05"})", "source"},
      {R"(, "first_release": "2026-01-05")", "expected an object"},
  };
  expect_profile_errors(bads);
  // 2024 is a leap year, 2100 is not.
  EXPECT_EQ(parse_iso_date("2024-02-29"), std::optional<int32_t>(20240229));
  EXPECT_EQ(parse_iso_date("2100-02-29"), std::nullopt);
  EXPECT_EQ(parse_iso_date("2026-13-01"), std::nullopt);
  ASSERT_TRUE(find_iso_date("issue 5993 (2026-01-19), log 2026-02-01").has_value());
  EXPECT_EQ(find_iso_date("issue 5993 (2026-01-19), log 2026-02-01")->text, "2026-01-19");
  EXPECT_EQ(find_iso_date("build 12026-01-190"), std::nullopt);
}

// Issue 15, dating vLLM (CUDA) evidence: every vLLM profile names the final release of its lowest version and the
// earliest date found that it was out (engines.json first_release: v0.6.0 2024-09-05 happy_vllm #31, v0.8.0
// 2025-03-19 dependabot, v0.9.2 2025-07-08 vllm-ascend's 'vLLM version' line, v0.11.1 2025-11-19 IBM/ado #223,
// v0.14.0 2026-01-21 dependabot, v0.16.0 2026-02-26 dynamo #6614, v0.21.0 2026-05-15, v0.26.0 2026-07-26 and v0.28.0 2026-08-26
// vllm-metal's bumps), each an upper bound the source says so. A release outside the profile's range, or a newer range
// released before an older one, is an error naming both.
TEST(EngineCatalog, Issue15_FirstReleaseDatesOfEveryVllmProfile) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  const std::map<std::string, std::pair<std::string, int32_t>> want = {
      {"vllm@0.6-0.7", {"0.6.0", 20240905}},       {"vllm@0.8-0.9.1", {"0.8.0", 20250319}}, {"vllm@0.9.2-0.11.0", {"0.9.2", 20250708}},
      {"vllm@0.11.1-0.13", {"0.11.1", 20251119}},  {"vllm@0.14-0.15", {"0.14.0", 20260121}}, {"vllm@0.16-0.20", {"0.16.0", 20260226}},
      {"vllm@0.21-0.25", {"0.21.0", 20260515}},    {"vllm@0.26-0.27", {"0.26.0", 20260726}}, {"vllm@0.28-0.30", {"0.28.0", 20260826}}};
  size_t vllm = 0;
  for (const auto& p : c->profiles) {
    if (p.engine != "vllm") continue;
    ++vllm;
    ASSERT_TRUE(p.first_release.has_value()) << p.id;
    const auto w = want.find(p.id);
    ASSERT_NE(w, want.end()) << p.id;
    EXPECT_EQ(p.first_release->version, w->second.first) << p.id;
    EXPECT_EQ(p.first_release->version, p.version_min.text()) << p.id;  // the lowest version of the range
    EXPECT_EQ(p.first_release->date, w->second.second) << p.id;
    EXPECT_NE(p.first_release->source.find("upper bound"), std::string::npos) << p.id;
    EXPECT_NE(p.first_release->source.find("https://"), std::string::npos) << p.id;
  }
  EXPECT_EQ(vllm, want.size());

  const BadProfileField bads[] = {
      {R"(, "first_release": {"version": "2.0.0", "date": "2026-01-05", "source": "s"})", "profiles[x@1].first_release.version: '2.0.0' is not a version of the profile's range 1.0.0-1.9.0"},
      {R"(, "first_release": {"version": "0.9.9rc1", "date": "2026-01-05", "source": "s"})", "'0.9.9rc1' is not a version of the profile's range"},
      {R"(, "first_release": {"version": "rc1", "date": "2026-01-05", "source": "s"})", "'rc1' is not a version"},
      {R"(, "first_release": {"version": "1.0.0", "date": "05/01/2026", "source": "s"})", "profiles[x@1].first_release.date: expected YYYY-MM-DD, found '05/01/2026'"},
      {R"(, "first_release": {"version": "1.0.0", "date": "2025-09-31", "source": "s"})", "found '2025-09-31'"},
      {R"(, "first_release": {"version": "1.0.0", "date": "2026-01-05", "source": "s", "tag": "v1.0.0"})", "tag"},
  };
  expect_profile_errors(bads);

  // Two ranges of one engine whose release dates go back in time: v1.2 out before v1.0.
  auto profile = [](const std::string& id, const std::string& lo, const std::string& hi, const std::string& date) {
    return R"({"id": ")" + id + R"(", "engine": "x", "version_min": ")" + lo + R"(", "version_max": ")" + hi +
           R"(", "platform": "cuda", "default_gpu_memory_utilization": 0.9, "block_size": 16, "hybrid_block_rule": "cuda_align",
           "hybrid_mamba_mode": "none", "max_num_seqs": 256, "max_num_batched_tokens": 2048, "max_num_batched_tokens_large_device": 8192,
           "sampler_logit_copies": 1, "sampler_source": "s", "requested_rounding": "floor", "tokens_rule": "blocks", "source": "s",
           "first_release": {"version": ")" + lo + R"(", "date": ")" + date + R"(", "source": "s"}})";
  };
  auto catalog_of = [&](const std::string& d1, const std::string& d2) {
    auto j = parse_json(R"({"schema_version": 1, "profiles": [)" + profile("x@1.0", "1.0.0", "1.1.99", d1) + ", " + profile("x@1.2", "1.2.0", "1.9.0", d2) + "]}",
                        "engines.json");
    EXPECT_TRUE(j.has_value());
    return parse_engine_catalog(*j, "engines.json");
  };
  auto backwards = catalog_of("2026-03-01", "2026-02-01");
  ASSERT_FALSE(backwards.has_value());
  EXPECT_NE(backwards.error().describe().find("profiles[x@1.2].first_release.date 2026-02-01 is before profiles[x@1.0].first_release.date 2026-03-01"),
            std::string::npos)
      << backwards.error().describe();
  EXPECT_TRUE(catalog_of("2026-02-01", "2026-02-01").has_value());  // the same day is possible
  EXPECT_TRUE(catalog_of("2026-02-01", "2026-03-01").has_value());
}

// Issue 19 (cleanup): EngineProfile::applies, the one test of an optional version rule: unset never applies; a set rule
// applies when it covers rule_version(), the version named (--engine E@X.Y.Z) or, when none is named, the profile's
// version_max. The rule here is 0.18.0 - 0.20.9; the profile's range 0.13.0 - 0.25.1.
TEST(EngineCatalog, Issue19_AppliesTestsTheRuleAgainstRuleVersion) {
  const EngineProfile::VersionRule rule{{0, 18, 0}, {0, 20, 9}, "t"};
  struct Row {
    std::optional<EngineProfile::VersionRule> rule;
    std::optional<Version> named;
    bool applies;
  };
  const Row rows[] = {
      {std::nullopt, Version{0, 19, 0}, false},  // no rule
      {rule, Version{0, 18, 0}, true},           // the rule's first version
      {rule, Version{0, 20, 9}, true},           // its last
      {rule, Version{0, 17, 9}, false},          // below it, inside the profile
      {rule, Version{0, 21, 0}, false},          // above it
      {rule, std::nullopt, false},               // none named: version_max 0.25.1, above the rule
  };
  for (const Row& r : rows) {
    EngineProfile p;
    p.version_min = {0, 13, 0};
    p.version_max = {0, 25, 1};
    p.version_named = r.named;
    EXPECT_EQ(p.applies(r.rule), r.applies) << (r.named ? r.named->text() : "none named") << (r.rule ? "" : ", no rule");
  }
  EngineProfile upto;  // none named and version_max inside the rule: applies
  upto.version_max = {0, 20, 0};
  EXPECT_TRUE(upto.applies(rule));
}

// Issue 15 (mc2): NPU driver versions as npu-smi prints them ("npu-smi 24.1.rc3.7", "25.5.0"; vllm-ascend #4093, #8725)
// and as #9005 states them ("npu driver 23.0.7"), ordered part by part, a release candidate below the release.
TEST(EngineCatalog, Issue15_NpuDriverVersionsCompare) {
  struct Row { const char* a; const char* b; int order; };
  const Row rows[] = {{"23.0.7", "25.5.0", -1},     {"25.5.0", "25.5.0", 0},  {"25.5.1", "25.5.0", 1},   {"24.1.rc3.7", "25.5.0", -1},
                      {"25.3.RC1", "25.3.0", -1},   {"25.5", "25.5.0", 0},    {"25.5.RC1", "25.5.0", -1}, {"25.10.0", "25.5.0", 1},
                      {"23.0.7", "23.0.7", 0},      {"23.0.8", "23.0.7", 1}};
  for (const auto& r : rows) {
    auto a = parse_npu_driver_version(r.a, "t");
    auto b = parse_npu_driver_version(r.b, "t");
    ASSERT_TRUE(a.has_value() && b.has_value()) << r.a << " " << r.b;
    EXPECT_EQ(compare_npu_driver_versions(*a, *b), r.order) << r.a << " vs " << r.b;
    EXPECT_EQ(compare_npu_driver_versions(*b, *a), -r.order) << r.b << " vs " << r.a;
  }
  for (const char* bad : {"", "25..0", "v25.5.0", "25.5.0-1", "rc", "25.x.0", "1234567890.0"}) {
    auto v = parse_npu_driver_version(bad, "--npu-driver-version");
    ASSERT_FALSE(v.has_value()) << bad;
    EXPECT_EQ(v.error().kind, ErrorKind::invalid_argument) << bad;
    EXPECT_NE(v.error().message.find("--npu-driver-version: NPU driver version"), std::string::npos) << v.error().message;
  }
}

// Issue 15 (mc2): the shipped A2 profiles carry the driver versions #9005 reports (23.0.7 failing, 25.5.0 starting), and a
// catalogue that gives one without the other, without a source or without the A2 families, or in the wrong order, is rejected.
TEST(EngineCatalog, Issue15_Mc2TransportDriverRule) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  for (const char* v : {"0.13.0", "0.18.0", "0.25.0"}) {
    auto p = select_engine(*c, "vllm-ascend", v);
    ASSERT_TRUE(p.has_value()) << v;
    EXPECT_EQ(p->mc2_transport_driver_failing.text, "23.0.7") << v;
    EXPECT_EQ(p->mc2_transport_driver_fixed.text, "25.5.0") << v;
    // Parsed once by the loader: 23.0.7 is the parts (release 23, release 0, release 7), 25.5.0 (25, 5, 0).
    const std::vector<std::pair<int, int64_t>> lo{{1, 23}, {1, 0}, {1, 7}}, hi{{1, 25}, {1, 5}, {1, 0}};
    EXPECT_EQ(p->mc2_transport_driver_failing.parts, lo) << v;
    EXPECT_EQ(p->mc2_transport_driver_fixed.parts, hi) << v;
    EXPECT_NE(p->mc2_transport_source.find("#9005"), std::string::npos) << v;
  }
  auto vllm = select_engine(*c, "vllm", "0.13.0");
  ASSERT_TRUE(vllm.has_value());
  EXPECT_TRUE(vllm->mc2_transport_driver_fixed.text.empty());
  const std::string head = R"({"schema_version": 1, "profiles": [{"id": "x@1", "engine": "x", "version_min": "1.0.0", "version_max": "1.9.0", "platform": "npu",
      "default_gpu_memory_utilization": 0.9, "block_size": 128, "hybrid_block_rule": "cuda_align", "hybrid_mamba_mode": "none",
      "max_num_seqs": 256, "max_num_batched_tokens": 2048, "max_num_batched_tokens_large_device": 8192, "sampler_logit_copies": 1,
      "sampler_source": "s", "requested_rounding": "floor", "tokens_rule": "blocks", "source": "s")";
  const std::string a2 = R"(, "moe_allgather_families": ["ascend-a2"], "moe_allgather_source": "s")";
  struct Case { std::string extra; const char* fragment; };
  const Case cases[] = {
      {a2 + R"(, "mc2_transport_driver_failing": "23.0.7", "mc2_transport_driver_fixed": "25.5.0", "mc2_transport_source": "s")", ""},
      {a2 + R"(, "mc2_transport_driver_fixed": "25.5.0", "mc2_transport_source": "s")", "go together"},
      {a2 + R"(, "mc2_transport_driver_failing": "23.0.7", "mc2_transport_driver_fixed": "25.5.0")", "go together"},
      {R"(, "mc2_transport_driver_failing": "23.0.7", "mc2_transport_driver_fixed": "25.5.0", "mc2_transport_source": "s")", "go together"},
      {a2 + R"(, "mc2_transport_driver_failing": "25.5.0", "mc2_transport_driver_fixed": "23.0.7", "mc2_transport_source": "s")", "must be below"},
      {a2 + R"(, "mc2_transport_driver_failing": "23.0.x", "mc2_transport_driver_fixed": "25.5.0", "mc2_transport_source": "s")", "mc2_transport_driver_failing"},
  };
  for (const auto& k : cases) {
    auto j = parse_json(head + k.extra + "}]}", "engines.json");
    ASSERT_TRUE(j.has_value()) << k.extra;
    auto e = parse_engine_catalog(*j, "engines.json");
    if (!*k.fragment) {
      ASSERT_TRUE(e.has_value()) << e.error().describe();
      EXPECT_EQ(e->profiles.front().mc2_transport_driver_fixed.text, "25.5.0");
      continue;
    }
    ASSERT_FALSE(e.has_value()) << k.extra;
    EXPECT_NE(e.error().describe().find(k.fragment), std::string::npos) << e.error().describe();
  }
}

// Issue 15 (nt018): which non-torch memory a worker subtracts is read per profile; the shipped vLLM-Ascend profiles
// count the absolute non-torch memory up to 0.17 and the increase since the init snapshot from 0.18 (PR #7427), except
// on 310P (its own worker). A bad value, a missing source, or absolute families without the increase count are errors.
TEST(EngineCatalog, Issue15_NonTorchCountedFollowsTheVersion) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value());
  const std::map<std::string, NonTorchCounted> expected = {{"0.11.0", NonTorchCounted::absolute}, {"0.14.0", NonTorchCounted::absolute},
                                                           {"0.17.0", NonTorchCounted::absolute}, {"0.18.0", NonTorchCounted::increase},
                                                           {"0.21.0", NonTorchCounted::increase}, {"0.23.0", NonTorchCounted::increase}};
  for (const auto& [version, counted] : expected) {
    auto p = select_engine(*c, "vllm-ascend", version);
    ASSERT_TRUE(p.has_value()) << version;
    EXPECT_EQ(p->non_torch_counted, counted) << version;
    EXPECT_FALSE(p->non_torch_counted_source.empty()) << version;
    const bool only_310p = p->non_torch_absolute_families == std::vector<std::string>{"ascend-310p"};
    EXPECT_EQ(only_310p, counted == NonTorchCounted::increase) << version;
  }
  const BadProfileField bads[] = {
      {R"(, "non_torch_counted": "delta", "non_torch_counted_source": "s")", "non_torch_counted must be"},
      {R"(, "non_torch_counted": "increase")", "non_torch_counted needs non_torch_counted_source"},
      {R"(, "non_torch_absolute_families": ["ascend-310p"])", "non_torch_absolute_families needs non_torch_counted"},
      // Issue 15 (build): a build boundary that is no build, lacks its source, or sits on an absolute count.
      {R"(, "non_torch_counted": "increase", "non_torch_counted_source": "s", "non_torch_increase_from_build": "dev73", "non_torch_increase_from_build_source": "s")",
       "non_torch_increase_from_build: engine build 'dev73'"},
      {R"(, "non_torch_counted": "increase", "non_torch_counted_source": "s", "non_torch_increase_from_build": "0.17.0rc2.dev73")",
       "non_torch_increase_from_build needs non_torch_increase_from_build_source"},
      {R"(, "non_torch_increase_from_build": "0.17.0rc2.dev73", "non_torch_increase_from_build_source": "s")", "non_torch_increase_from_build needs non_torch_counted"},
      {R"(, "moe_dynamic_scale_copies": [{"tensors": "t", "w13_bytes_per_channel": 8, "w2_bytes_per_channel": 8, "families": ["ascend-a3"], "version_min": "1.0.0",
          "version_max": "1.9.0", "source": "s", "before_build": "1.1.0rc2.dev85"}])", "with from_build / before_build needs build_source"},
      {R"(, "moe_dynamic_scale_copies": [{"tensors": "t", "w13_bytes_per_channel": 8, "w2_bytes_per_channel": 8, "families": ["ascend-a3"], "version_min": "1.0.0",
          "version_max": "1.9.0", "source": "s", "before_build": "main", "build_source": "s"}])", "moe_dynamic_scale_copies before_build: engine build 'main'"},
  };
  expect_profile_errors(bads);
  auto no_source = parse_json(R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "npu", "non_torch_bytes": 100, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 0.1, "rope_cache_bytes_per_element": 8, "rope_cache_source": "s",
      "evidence": "e", "band_fraction": 0.3, "non_torch_multi_rank_fraction": 0.5, "non_torch_multi_rank_source": "s", "non_torch_snapshot_bytes": 50}]})",
                              "engines.json");
  ASSERT_TRUE(no_source.has_value());
  auto e = parse_engine_catalog(*no_source, "engines.json");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().describe().find("non_torch_snapshot_bytes has no non_torch_snapshot_source"), std::string::npos) << e.error().describe();
}

// Issue 15 (acc28): a vision factor that tools/fit_overheads.py holds instead of refitting names the code read and the
// printed figure; the shipped NPU record does, and an empty text is corrupt.
TEST(EngineCatalog, Issue15_HeldVisionFactorNamesItsSource) {
  const auto shipped = nlohmann::json::parse(std::ifstream(std::string(PREFLIGHT_SOURCE_DIR) + "/data/engines/engines.json"));
  bool npu_held = false;
  for (const auto& oh : shipped.at("overheads"))
    if (oh.at("platform") == "npu") npu_held = oh.contains("vision_activation_factor_source") && !oh.at("vision_activation_factor_source").get<std::string>().empty();
  EXPECT_TRUE(npu_held);
  auto empty_vision_source = parse_json(R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "npu", "non_torch_bytes": 100, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 3.1, "vision_activation_factor_source": " ", "rope_cache_bytes_per_element": 8,
      "rope_cache_source": "s", "evidence": "e", "band_fraction": 0.3, "non_torch_multi_rank_fraction": 0.5, "non_torch_multi_rank_source": "s"}]})",
                                        "engines.json");
  ASSERT_TRUE(empty_vision_source.has_value());
  auto ev = parse_engine_catalog(*empty_vision_source, "engines.json");
  ASSERT_FALSE(ev.has_value());
  EXPECT_NE(ev.error().describe().find("overheads[npu].vision_activation_factor_source is empty"), std::string::npos) << ev.error().describe();
}

// Issue 19: data/engines/attention_backends.json, the names vLLM's --attention-backend takes. The shipped file loads,
// holds the names the evidence records, and a corrupt record is refused naming the file and the record.
TEST(EngineCatalog, Issue19_AttentionBackendNamesLoadAndCheck) {
  auto shipped = engine::load_attention_backends();
  ASSERT_TRUE(shipped.has_value()) << shipped.error().describe();
  ASSERT_EQ(shipped->records.size(), 8u);  // issue 15 (eng31): one record per enum of vLLM's versions; arch32 split 0.10.1 / 0.10.2 and 0.11.x / 0.12
  engine::EngineProfile vllm;
  vllm.engine = "vllm";
  vllm.version_min = {0, 23, 0};
  vllm.version_max = {0, 23, 99};
  // XFORMERS and TRITON_ATTN_VLLM_V1 are names of older versions (EngineCore.Issue15_AttentionBackendNamesOfEachVllmVersion).
  for (const char* name : {"FLASH_ATTN", "flashinfer", " TRITON_ATTN ", "auto"})
    EXPECT_TRUE(engine::check_attention_backend(*shipped, vllm, name, "--attention-backend").has_value()) << name;
  const auto refused = engine::check_attention_backend(*shipped, vllm, "flash-attn", "--attention-backend");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid_argument);
  EXPECT_EQ(refused.error().message.rfind("--attention-backend: ValueError: Unknown attention backend: 'FLASH-ATTN'. Valid options are: FLASH_ATTN, ", 0), 0u)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find(", TURBOQUANT, CUSTOM"), std::string::npos) << refused.error().message;
  engine::EngineProfile llama;
  llama.engine = "llama.cpp";
  EXPECT_TRUE(engine::check_attention_backend(*shipped, llama, "anything", "--attention-backend").has_value());

  const std::string good = R"({"id": "a", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "0.9.0", "names": ["FLASH_ATTN"], "valid_options": ["FLASH_ATTN"], "rejection": "ValueError: '{name}'", "source": "s"})";
  const std::pair<std::string, std::string> corrupt[] = {
      {"[" + good + ", " + good + "]", "records[a]: duplicate id"},
      {R"([{"id": "a", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "0.9.0", "names": ["flash_attn"], "valid_options": [], "rejection": "'{name}'", "source": "s"}])",
       "records[a]: names: 'flash_attn' is not an upper-case enum name"},
      {R"([{"id": "a", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "0.9.0", "names": ["FLASH_ATTN"], "valid_options": ["XFORMERS"], "rejection": "'{name}'", "source": "s"}])",
       "records[a]: valid_options: 'XFORMERS' is not among names"},
      {R"([{"id": "a", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "0.9.0", "names": ["FLASH_ATTN"], "valid_options": [], "rejection": "'{name}'", "source": ""}])",
       "records[a]: source is empty"},
      {R"([{"id": "a", "engines": ["vllm"], "version_min": "0.9.0", "version_max": "0.6.0", "names": ["FLASH_ATTN"], "valid_options": [], "rejection": "'{name}'", "source": "s"}])",
       "records[a]: bad version range"},
      {R"([{"id": "a", "engine": "vllm"}])", "engine"},
      // Issue 15 (eng31): what a version does with an unknown name, and the suffix it removes.
      {R"([{"id": "a", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "0.9.0", "names": ["FLASH_ATTN"], "valid_options": ["FLASH_ATTN"], "rejection": "'{name}'", "unknown": "warned", "source": "s"}])",
       "records[a]: unknown: expected refused or ignored, found 'warned'"},
      {R"([{"id": "a", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "0.9.0", "names": ["FLASH_ATTN"], "valid_options": [], "rejection": "'{name}'", "unknown": "refused", "source": "s"}])",
       "records[a]: valid_options is empty where names are refused"},
      {R"([{"id": "a", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "0.9.0", "names": ["FLASH_ATTN"], "valid_options": ["FLASH_ATTN"], "rejection": "'{name}'", "removed_suffix": "_v1", "source": "s"}])",
       "records[a]: removed_suffix: '_v1' is not an upper-case enum suffix"},
  };
  for (const auto& [records, fragment] : corrupt) {
    auto json = parse_json(R"({"schema_version": 1, "records": )" + records + "}", "x.json");
    ASSERT_TRUE(json.has_value());
    auto parsed = engine::parse_attention_backends(*json, "x.json");
    ASSERT_FALSE(parsed.has_value()) << records;
    EXPECT_EQ(parsed.error().kind, ErrorKind::corrupt);
    EXPECT_NE(parsed.error().message.find(fragment), std::string::npos) << parsed.error().message;
  }
}

// Issue 16 (llamacpp32): `--engine llama.cpp@b7342` was refused ("cannot read a version in 'b7342' (expected X.Y[.Z])"):
// llama.cpp names its builds bNNNN (the logs print 'build: 7342 (2fbe3b7bb)'), and the number orders them.
TEST(EngineCatalog, Issue16_LlamaCppBuildNamesAreVersionsInBuildOrder) {
  ASSERT_TRUE(parse_version("b7342", "llama.cpp"));
  EXPECT_EQ(*parse_version("b7342", "llama.cpp"), (Version{7342, 0, 0}));
  EXPECT_EQ(*parse_version("llama.cpp@b10453", "llama.cpp"), (Version{10453, 0, 0}));
  EXPECT_LT(*parse_version("b5622"), *parse_version("b7342"));
  EXPECT_LT(*parse_version("b7342"), *parse_version("b10453"));  // by number, not as text ("b1..." < "b7..." as text)
  EXPECT_FALSE(parse_version("b7342", "vllm"));   // a vLLM version is X.Y.Z
  EXPECT_FALSE(parse_version("b", "llama.cpp"));
  EXPECT_FALSE(parse_version("b73x2", "llama.cpp"));
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value());
  auto e = select_engine(*c, "llama.cpp", "b7342");
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_EQ(e->engine, "llama.cpp");
  ASSERT_TRUE(e->version_named);
  EXPECT_EQ(e->version_named->major, 7342);
}
