// Issue 19 (plan over the catalogue, start-up): builtin_model_specs builds every catalogue model record by
// record on several workers; it must give, in catalogue order, what model_spec_from_catalog gives for each
// entry of the whole-file parse, whatever the worker count, and keep only what the filter accepts.
#include <gtest/gtest.h>

#include "model/model_catalog.hpp"
#include "model/model_spec.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {

// What a plan reads of a ModelSpec, as text: its identity and source, its size and its per-layer shape.
std::string spec_summary(const ModelSpec& m) {
  std::string out = m.id + "|" + m.source + "|" + m.architecture + "|" + m.model_type + "|" + m.quant.method + "|" + m.quant.detail;
  out += "|" + std::to_string(count_params(m).total) + "|" + std::to_string(m.layers.size()) + "|" + std::to_string(m.weights.size());
  out += "|" + std::to_string(m.provenance.size()) + "|" + std::to_string(m.max_position_embeddings);
  for (const auto& w : m.weights) out += "|" + w.module + ":" + std::to_string(w.rows) + "x" + std::to_string(w.cols) + "x" + std::to_string(w.count);
  return out;
}

}  // namespace

TEST(ModelCatalog, Issue19_ModelSpecsRecordByRecordMatchTheWholeCatalogue) {
  std::vector<std::string> expected;
  for (const auto& entry : builtin_model_catalog().models) {
    auto spec = model_spec_from_catalog(entry);
    ASSERT_TRUE(spec.has_value()) << entry.id << ": " << spec.error().describe();  // none left out
    expected.push_back(spec_summary(*spec));
  }
  ASSERT_GT(expected.size(), 60u);
  for (int threads : {1, 2, 3, 0}) {
    const auto specs = builtin_model_specs({}, threads);
    ASSERT_EQ(specs.size(), expected.size()) << threads;
    for (size_t i = 0; i < specs.size(); ++i) EXPECT_EQ(spec_summary(specs[i]), expected[i]) << threads;
  }
  // A filter: the Qwen3 entries only, in catalogue order.
  std::vector<std::string> qwen3;
  for (const auto& entry : builtin_model_catalog().models)
    if (entry.id.rfind("Qwen/Qwen3-", 0) == 0) qwen3.push_back(entry.id);
  ASSERT_GT(qwen3.size(), 3u);
  const auto some = builtin_model_specs([](const CatalogModel& m) { return m.id.rfind("Qwen/Qwen3-", 0) == 0; }, 2);
  ASSERT_EQ(some.size(), qwen3.size());
  for (size_t i = 0; i < some.size(); ++i) EXPECT_EQ(some[i].id, qwen3[i]);
}
