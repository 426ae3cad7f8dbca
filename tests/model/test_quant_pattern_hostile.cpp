// Issue 19 (no hang on hostile input): the regular expressions of quantization descriptors are matched without
// backtracking (base/safe_regex). Before, std::regex took over a minute of `fit` on one GPTQ `dynamic` key
// "-:(.*.*)*X" (a config.json any hub repository can publish); a lookaround key was accepted by std::regex's
// ECMAScript grammar though vLLM's Python `re` and preflight read it differently, so it is refused by name.
// Fixture: ModelCloud's TinyLlama GPTQ dynamic-cfg descriptor (tests/fixtures/quant, sources in its README).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "base/json_util.hpp"
#include "model/hf_config.hpp"
#include "model/model_spec.hpp"
#include "model/quant_scheme.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {

Json fixture(const std::string& rel) {
  const std::string path = pftest::quant_fixture(rel);
  auto j = parse_json(pftest::read_all(path), path);
  EXPECT_TRUE(j.has_value()) << path;
  return j ? *j : Json{};
}

Json config_with(const std::function<void(Json&)>& patch) {
  Json config = fixture("ModelCloud__TinyLlama-1.1B-Chat-v1.0-GPTQ-4bit-10-25-2024/config.json");
  Json q = fixture("ModelCloud__TinyLlama-1.1B-Chat-v1.0-GPTQ-4bits-dynamic-cfg/quantize_config.json");
  patch(q);
  config["quantization_config"] = q;
  return config;
}

bool ignored(const std::string& pattern, const std::string& module) {
  QuantScheme scheme;
  scheme.ignore = {pattern};
  return module_ignored(scheme, module);
}

double total_bytes(const Json& config) {
  auto spec = parse_hf_config(config, "config.json");
  EXPECT_TRUE(spec.has_value()) << (spec ? "" : spec.error().describe());
  double total = 0;
  if (spec)
    for (const auto& g : spec->weights) total += weight_group_bytes(*spec, g);
  return total;
}

}  // namespace

// Two keys that send a backtracking matcher into exponential time on TinyLlama's module names and match none of them
// (no 'X' in any name; "(a|aa)*$" from the start needs a name of only 'a's): the sizes are the published
// descriptor's own, and the run ends.
TEST(QuantPatternHostile, Issue19_BacktrackingKeysMatchNothingAndEnd) {
  const double published = total_bytes(config_with([](Json&) {}));
  const double hostile = total_bytes(config_with([](Json& q) {
    q["dynamic"]["-:(.*.*)*X"] = Json::object();
    q["dynamic"]["+:(a|aa)*$"] = {{"bits", 8}};
  }));
  EXPECT_GT(published, 2.05e9);
  EXPECT_DOUBLE_EQ(hostile, published);
  Json config = config_with([](Json& q) { q["dynamic"]["-:(.*.*)*X"] = Json::object(); });
  const std::string dir = pftest::scratch_dir("quant-hostile-pattern");
  std::ofstream(dir + "/config.json") << config.dump(2);
  const auto r = pftest::run_cli("fit " + dir + " --device H100-SXM --max-model-len 2048");
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 300);
}

// A "re:" entry of an ignore list or of the variant catalogue's keep_high_precision matches anywhere in the module
// name, as before (data/variants/quant_variants.json writes "re:mlp\\.gate$" for the router and sizes on it).
TEST(QuantPatternHostile, Issue19_IgnorePatternsKeepTheirMeaning) {
  EXPECT_TRUE(ignored("re:.*mlp\\.down_proj$", "model.layers.*.mlp.down_proj"));
  EXPECT_TRUE(ignored("re:mlp\\.gate$", "model.layers.*.mlp.gate"));
  EXPECT_FALSE(ignored("re:mlp\\.gate$", "model.layers.*.mlp.gate_proj"));
  EXPECT_TRUE(ignored("re:model\\.layers\\.\\d+\\.mlp", "model.layers.*.mlp.down_proj"));  // '*' reads as layer 0
  EXPECT_FALSE(ignored("re:(.*.*)*X", "model.layers.*.mlp.experts.*.down_proj"));
  EXPECT_FALSE(ignored("re:mlp(?=x)", "mlpx"));  // outside the subset: matches nothing, as a pattern std::regex refused did
}

// What cannot be matched linearly is refused with the file, the key and the construct (exit 2).
TEST(QuantPatternHostile, Issue19_UnsupportedConstructsAreNamed) {
  struct Row {
    std::string key, fragment;
  };
  const std::vector<Row> rows = {{"-:.*mlp(?=\\.)", "lookaround at offset 5"},
                                 {"-:(.)\\1", "a backreference or octal escape \\1 at offset 3"},
                                 {"+:(a{1000}){1000}", "an automaton over 20000 states"}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.key);
    Json config = config_with([&](Json& q) { q["dynamic"] = {{row.key, Json::object()}}; });
    const std::string dir = pftest::scratch_dir("quant-hostile-refused");
    std::ofstream(dir + "/config.json") << config.dump(2);
    const auto r = pftest::run_cli("fit " + dir + " --device H100-SXM --max-model-len 2048");
    EXPECT_EQ(r.code, 2) << r.out.substr(0, 300);
    EXPECT_NE(r.out.find("config.json: quantization_config.dynamic: '" + row.key + "' is not a regular expression preflight matches: " + row.fragment),
              std::string::npos)
        << r.out.substr(0, 400);
  }
}
