#include <gtest/gtest.h>

#include "model/model_catalog.hpp"
#include "model/model_source.hpp"

using namespace preflight;
using namespace preflight::model;

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
