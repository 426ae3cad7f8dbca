// Issue 15 (build): engine builds between release tags, as setuptools-scm names vLLM-Ascend's nightly wheels, and the
// catalogue's build boundaries for PR #7427 and PR #6794.
#include <gtest/gtest.h>

#include "engine/engine_profile.hpp"

using namespace preflight;
using engine::EngineBuild;

namespace {
EngineBuild build(const std::string& text) {
  auto b = engine::parse_engine_build(text, "test");
  EXPECT_TRUE(b.has_value()) << text;
  return b ? *b : EngineBuild{};
}
const engine::EngineProfile& profile(const engine::EngineCatalog& c, const std::string& id) {
  for (const auto& p : c.profiles)
    if (p.id == id) return p;
  ADD_FAILURE() << id;
  return c.profiles.front();
}
}  // namespace

// PEP 440 as setuptools-scm writes it: X.Y.Z, rcN, .devN, +local.
TEST(EngineBuild, Issue15_ParsesSetuptoolsScmVersions) {
  struct Row {
    const char* text;
    int major, minor, patch;
    int64_t rc, dev;
  };
  const Row rows[] = {{"0.17.0rc2.dev66+g9d0b7c8e9", 0, 17, 0, 2, 66}, {"0.15.0rc2.dev46+g566c367a1", 0, 15, 0, 2, 46},
                      {"0.18.0rc1", 0, 18, 0, 1, -1},                 {"0.18.0", 0, 18, 0, -1, -1},
                      {"v0.9.2rc2.dev255+gcf96366", 0, 9, 2, 2, 255},  {"0.18.1.dev4", 0, 18, 1, -1, 4}};
  for (const auto& r : rows) {
    const EngineBuild b = build(r.text);
    EXPECT_EQ(b.version.major, r.major) << r.text;
    EXPECT_EQ(b.version.minor, r.minor) << r.text;
    EXPECT_EQ(b.version.patch, r.patch) << r.text;
    EXPECT_EQ(b.rc, r.rc) << r.text;
    EXPECT_EQ(b.dev, r.dev) << r.text;
    EXPECT_EQ(b.text, r.text);
  }
}

TEST(EngineBuild, Issue15_RejectsTextThatIsNoBuild) {
  for (const char* text : {"", "main", "0.17", "0.17.0rc", "0.17.0rc2.dev", "0.17.0rc2.dev66+", "0.17.0rc2-66", "0.17.0 rc2", "0.17.0rc2.dev66.post1",
                           "0.17.0rc2.dev1234567890"}) {
    auto b = engine::parse_engine_build(text, "case x: engine_build");
    ASSERT_FALSE(b.has_value()) << text;
    EXPECT_EQ(b.error().kind, ErrorKind::invalid_argument) << text;
    EXPECT_NE(b.error().message.find("case x: engine_build"), std::string::npos) << b.error().message;
  }
}

// PEP 440 order: a tag line's dev builds by N, then the tag; rcs before the final release; X.Y.Z.devN before X.Y.ZrcM.
TEST(EngineBuild, Issue15_OrdersAsPep440) {
  const char* ascending[] = {"0.15.0rc1",        "0.15.0rc2.dev46", "0.15.0rc2.dev85", "0.16.0rc1",  "0.16.0rc2.dev45",        "0.17.0rc1",
                             "0.17.0rc2.dev66",  "0.17.0rc2.dev73", "0.17.0rc2.dev93+g8e0789bb3",  "0.17.0rc2", "0.18.0.dev3", "0.18.0rc1", "0.18.0"};
  const size_t n = sizeof(ascending) / sizeof(ascending[0]);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      const int c = engine::compare_engine_builds(build(ascending[i]), build(ascending[j]));
      EXPECT_EQ(c < 0, i < j) << ascending[i] << " vs " << ascending[j];
      EXPECT_EQ(c == 0, i == j) << ascending[i] << " vs " << ascending[j];
    }
  EXPECT_EQ(engine::compare_engine_builds(build("0.17.0rc2.dev66+g9d0b7c8e9"), build("0.17.0rc2.dev66+gffffffff")), 0);  // the hash is not ordered
}

// The boundaries, worked out in the vllm-ascend mirror (bare clone, main at 182b75e):
//   PR #7427 on main is 5c0d02f689; `git describe --tags --match 'v*' 5c0d02f689` = v0.17.0rc1-73-g5c0d02f689, and
//   setuptools-scm (guess-next-dev) names the build N commits after v0.17.0rc1 "0.17.0rc2.devN": first build 0.17.0rc2.dev73.
//   (The 03-22 nightly 9d0b7c8e9 describes as v0.17.0rc1-66 = pip's 0.17.0rc2.dev66, the 03-23 one 8e0789bb3 as -93.)
//   PR #6794 on main is 23bf5d4d48; describe = v0.15.0rc1-85-g23bf5d4d48: first build without the copies 0.15.0rc2.dev85.
TEST(EngineBuild, Issue15_CatalogueBoundariesFromGitDescribe) {
  auto catalog = engine::load_engine_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  const auto& p018 = profile(*catalog, "vllm-ascend@0.18-0.20");
  ASSERT_TRUE(p018.non_torch_increase_from_build.has_value());
  EXPECT_EQ(engine::compare_engine_builds(*p018.non_torch_increase_from_build, build("0.17.0rc2.dev73")), 0);
  EXPECT_NE(p018.non_torch_increase_from_build_source.find("v0.17.0rc1-73-g5c0d02f689"), std::string::npos);
  const auto& p015 = profile(*catalog, "vllm-ascend@0.15-0.17");
  const engine::EngineProfile::ExpertScaleCopy* int64 = nullptr;
  for (const auto& c : p015.moe_dynamic_scale_copies)
    if (c.tensors == "fused_w1_scale, fused_w2_scale") int64 = &c;
  ASSERT_NE(int64, nullptr);
  ASSERT_TRUE(int64->rule.before_build.has_value());
  EXPECT_FALSE(int64->rule.from_build.has_value());
  EXPECT_EQ(engine::compare_engine_builds(*int64->rule.before_build, build("0.15.0rc2.dev85")), 0);
  EXPECT_NE(int64->rule.source.find("v0.15.0rc1-85-g23bf5d4d48"), std::string::npos);
  // Issue 15 (evid28): PR #6610 on main is 156976b982, describe v0.14.0rc1-129-g156976b982: first build 0.14.0rc2.dev129,
  // below it the sparse indexer keeps the doubled MLA page (mla_page).
  ASSERT_TRUE(p015.sparse_indexer_cache_from_build.has_value());
  EXPECT_EQ(engine::compare_engine_builds(*p015.sparse_indexer_cache_from_build, build("0.14.0rc2.dev129")), 0);
  EXPECT_EQ(p015.sparse_indexer_cache, "bf16");
  EXPECT_EQ(p015.sparse_indexer_cache_before_build, "mla_page");
  EXPECT_NE(p015.sparse_indexer_cache_from_build_source.find("v0.14.0rc1-129-g156976b982"), std::string::npos);
  {
    engine::EngineProfile q = p015;
    EXPECT_EQ(q.indexer_cache_for_build(), "bf16");  // no build named: the profile's layout
    q.build_named = build("0.14.0rc2.dev128");
    EXPECT_EQ(q.indexer_cache_for_build(), "mla_page");
    q.build_named = build("0.14.0rc2.dev129");
    EXPECT_EQ(q.indexer_cache_for_build(), "bf16");
  }

  // rule_applies: without a build the version range (0.15.0 - 0.15.99) decides; with one, its end is the build's.
  engine::EngineProfile p = p015;
  p.version_named = engine::Version{0, 16, 0};
  EXPECT_FALSE(p.rule_applies(int64->rule));
  p.build_named = build("0.15.0rc2.dev84");
  EXPECT_TRUE(p.rule_applies(int64->rule));
  p.build_named = build("0.15.0rc2.dev85");
  EXPECT_FALSE(p.rule_applies(int64->rule));
  p.version_named = engine::Version{0, 14, 0};  // the start is still the version's: no build boundary there
  p.build_named = build("0.15.0rc2.dev46");
  EXPECT_FALSE(p.rule_applies(int64->rule));
}
