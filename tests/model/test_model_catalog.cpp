#include <gtest/gtest.h>

#include <cctype>

#include "base/embedded.hpp"
#include "model/architecture_traits.hpp"
#include "model/model_catalog.hpp"
#include "model/model_source.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {
std::string to_upper_for_test(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

TEST(ModelCatalog, EveryEntryBuildsAModelSpecWithSource) {
  const auto& c = builtin_model_catalog();
  ASSERT_GT(c.models.size(), 50u);
  for (const auto& m : c.models) {
    auto spec = model_spec_from_catalog(m);
    ASSERT_TRUE(spec.has_value()) << m.id << ": " << spec.error().describe();
    EXPECT_FALSE(m.source_url.empty()) << m.id;
    EXPECT_GT(count_params(*spec).total, 100000000) << m.id;
  }
}

TEST(ModelCatalog, ResolvesAliasesAndSuggests) {
  auto spec = resolve_model("qwen3-8b");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(count_params(*spec).total, 8190735360);
  auto missing = resolve_model("Qwen/Qwen3-9B");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("did you mean"), std::string::npos);
}

// #19 start-up time: one model is resolved from its record alone (build-time index); every id and alias
// must give exactly the record the whole-file parse gives, and every indexed record must be the bytes of
// one object of the embedded file.
TEST(ModelCatalog, Issue19_IndexedLookupMatchesWholeCatalogue) {
  const auto& whole = builtin_model_catalog();
  const auto records = embedded_records("architectures/models.json");
  ASSERT_EQ(records.size(), whole.models.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(std::string(records[i].id), whole.models[i].id);
    EXPECT_FALSE(embedded_record_text("architectures/models.json", records[i]).empty()) << records[i].id;
  }
  for (const auto& m : whole.models) {
    std::vector<std::string> names = m.aliases;
    names.push_back(m.id);
    names.push_back(to_upper_for_test(m.id));
    for (const auto& name : names) {
      auto one = find_builtin_model(name);
      ASSERT_TRUE(one.has_value()) << name << ": " << one.error().describe();
      ASSERT_TRUE(one->has_value()) << name;
      const CatalogModel* expected = whole.find(name);
      ASSERT_NE(expected, nullptr) << name;
      EXPECT_EQ((*one)->id, expected->id) << name;
      EXPECT_EQ((*one)->config.dump(), expected->config.dump()) << name;
      EXPECT_EQ((*one)->hf_quant_config.dump(), expected->hf_quant_config.dump()) << name;
      EXPECT_EQ((*one)->source_url, expected->source_url) << name;
      EXPECT_EQ((*one)->aliases, expected->aliases) << name;
    }
  }
  auto none = find_builtin_model("Qwen/Qwen3-9B");
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

// Issue 15 (hyb): DFlash drafter heads carry the speculative_drafter trait (served only through --speculative-config,
// left out of `plan --device`); a causal LM does not.
TEST(ModelCatalog, Issue15_DrafterHeadsAreMarkedInTheTraits) {
  const auto& traits = builtin_traits();
  for (const char* id : {"DFlashDraftModel", "DFlash2DraftModel"}) {
    const ArchitectureTraits* t = traits.find(id);
    ASSERT_NE(t, nullptr) << id;
    EXPECT_TRUE(t->speculative_drafter) << id;
  }
  const ArchitectureTraits* lm = traits.find("Qwen3ForCausalLM");
  ASSERT_NE(lm, nullptr);
  EXPECT_FALSE(lm->speculative_drafter);
  auto drafter = resolve_model("syvai/Qwen3.8-27B-DFlash2-W4A16");
  ASSERT_TRUE(drafter.has_value()) << drafter.error().describe();
  EXPECT_EQ(drafter->architecture, "DFlash2DraftModel");
  EXPECT_EQ(drafter->num_hidden_layers, 5);
}

// Issue 15 (evid35): Qwen3-Coder-480B-A35B-Instruct, added from its quoted config.json (baidu/vLLM-Kunlun tutorial) so
// that DP + EP start-ups of the FP8 checkpoint can name it by config_hint. Expected values derived by hand from the
// config, not from the code under test:
//   parameters: embed 151,936 x 6,144 = 933,494,784, lm_head the same (untied) -> 1,866,989,568;
//     per layer: q 6,144 x 12,288 = 75,497,472; k, v 6,144 x 1,024 = 6,291,456 each; o 12,288 x 6,144 = 75,497,472;
//     q_norm + k_norm 2 x 128; router 6,144 x 160 = 983,040; experts 160 x 3 x 6,144 x 2,560 = 7,549,747,200;
//     two RMSNorms 2 x 6,144 -> 7,714,320,640 per layer, x 62 = 478,287,879,680; + final norm 6,144
//     = 480,154,875,392 (the card's '480B').
//   KV per token (bf16): 62 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 253,952 B; at 262,144 tokens that is
//     66,571,993,088 B = 62.00 GiB, what vLLM printed for this model in vllm-project/recipes PR #12 ('62.00 GiB KV cache
//     is needed' for 'max seq len (262144)').
TEST(ModelCatalog, Issue15_Qwen3Coder480BRecordFromItsPublishedConfig) {
  auto spec = resolve_model("qwen3-coder-480b");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  EXPECT_EQ(spec->id, "Qwen/Qwen3-Coder-480B-A35B-Instruct");
  EXPECT_EQ(spec->num_hidden_layers, 62);
  EXPECT_EQ(count_params(*spec).total, 480154875392);
  EXPECT_EQ(kv_bytes_per_token(*spec, 2), 253952);
  const double gib = static_cast<double>(kv_bytes_per_token(*spec, 2)) * 262144.0 / (1024.0 * 1024.0 * 1024.0);
  EXPECT_NEAR(gib, 62.00, 0.005);
}
