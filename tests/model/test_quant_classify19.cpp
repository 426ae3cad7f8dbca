#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "model/quant_scheme.hpp"

using namespace preflight;
using namespace preflight::model;

// Issue 19 (round 7): the weight groups' modules are classified against a scheme's patterns prepared once per
// pattern list (normal form, '*' or not, regex), not normalized per (module, pattern). HF semantics, expected by
// hand: an entry matches where it occurs in the module path, '*' and layer indices match any run, the
// "language_model" part is left out, "re:" is a regex search (layer index read as 0); ignore first, then the first
// module_formats entry, else the scheme's linear or expert format.
TEST(QuantScheme, Issue19_ClassificationThroughPreparedPatterns) {
  QuantScheme s;
  s.method = "compressed-tensors";
  s.linear_format = WeightFormat::fp8_channel;
  s.expert_format = WeightFormat::int4_group;
  s.ignore = {"lm_head", "model.layers.0.mlp.gate", "re:.*visual.*", "model.language_model.layers.3.self_attn.o_proj", "*.shared_expert_gate"};
  s.module_formats = {{"re:.*\\.mlp\\.down_proj$", WeightFormat::nvfp4}, {"self_attn.q*proj", WeightFormat::mxfp4}, {"model.layers.12.mlp.up_proj", WeightFormat::int8_channel}};
  struct Case {
    const char* module;
    bool expert;
    WeightFormat format;
  };
  const Case cases[] = {
      {"lm_head", false, WeightFormat::native},
      {"model.layers.*.mlp.gate", false, WeightFormat::native},
      {"model.layers.*.mlp.gate_up_proj", false, WeightFormat::native},  // "model.layers.*.mlp.gate" occurs in it
      {"model.visual.blocks.*.attn.qkv", false, WeightFormat::native},
      {"model.language_model.layers.*.self_attn.o_proj", false, WeightFormat::native},
      {"model.layers.*.self_attn.o_proj", false, WeightFormat::native},
      {"model.layers.*.mlp.shared_expert_gate", false, WeightFormat::native},
      {"model.layers.*.mlp.down_proj", false, WeightFormat::nvfp4},
      {"model.layers.*.mlp.experts.*.down_proj", true, WeightFormat::int4_group},
      {"model.layers.*.self_attn.q_proj", false, WeightFormat::mxfp4},
      {"model.layers.*.self_attn.qkv_proj", false, WeightFormat::mxfp4},
      {"model.layers.*.self_attn.k_proj", false, WeightFormat::fp8_channel},
      {"model.layers.*.mlp.up_proj", false, WeightFormat::int8_channel},
      {"model.layers.7.mlp.up_proj", false, WeightFormat::int8_channel},
  };
  const SchemeFormats formats(s);
  for (const auto& c : cases) {
    EXPECT_EQ(module_format(s, c.module, c.expert), c.format) << c.module;
    EXPECT_EQ(formats(c.module, c.expert), c.format) << c.module;
  }
}

// The prepared path against pattern_matches, which module_ignored still takes: for random module paths and patterns
// (layer indices, "language_model", '*', empty parts, "re:"), a scheme that ignores the one pattern classifies the
// module as unquantized exactly when module_ignored says it is ignored.
TEST(QuantScheme, Issue19_PreparedPatternsAgreeWithModuleIgnored) {
  const std::vector<std::string> parts = {"model", "layers", "0", "12", "*", "language_model", "mlp", "gate", "gate_up_proj", "self_attn", "q_proj", "", "experts", "a*b", "mlp.gate"};
  std::mt19937 rng(19);
  std::uniform_int_distribution<size_t> pick(0, parts.size() - 1), length(1, 5), coin(0, 9);
  const auto path = [&] {
    std::string out;
    const size_t n = length(rng);
    for (size_t i = 0; i < n; ++i) out += (i ? "." : "") + parts[pick(rng)];
    return out;
  };
  int ignored = 0;
  for (int i = 0; i < 20000; ++i) {
    QuantScheme s;
    s.method = "fp8";
    s.linear_format = WeightFormat::fp8_tensor;
    std::string pattern = path();
    if (coin(rng) == 0) pattern = "re:" + pattern;
    s.ignore = {pattern};
    const std::string module = path();
    const bool expected = module_ignored(s, module);
    ignored += expected;
    ASSERT_EQ(module_format(s, module, false) == WeightFormat::native, expected) << "pattern '" << pattern << "' module '" << module << "'";
  }
  EXPECT_GT(ignored, 1000);  // the draw matches often enough to test both answers
}
