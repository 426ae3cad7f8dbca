// Helpers shared by the tests that read `fit` / `plan` / `validate --json` through the real binary and the
// shipped variant and checkpoint catalogues (issue 16: tests/deploy/test_variant_agree.cpp, tests/cli/test_variant_cli.cpp,
// tests/plan/test_plan_variants.cpp, tests/model/test_quant_bnb4.cpp).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/json_util.hpp"
#include "model/quant_variant.hpp"
#include "test_support.hpp"

namespace pftest {

// The shipped variant catalogue (data/variants/quant_variants.json), loaded once; a test failure when it does not load.
inline const preflight::model::VariantCatalog& shipped_variants() {
  static const auto c = preflight::model::load_variant_catalog();
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().describe());
  return *c;
}

// A command's stdout parsed as JSON; a test failure (and an empty Json) when it is not JSON.
inline preflight::Json json_of(const CliRun& r) {
  auto j = preflight::parse_json(r.out, "stdout");
  EXPECT_TRUE(j.has_value()) << r.out.substr(0, 400);
  return j ? *j : preflight::Json();
}

// A JSON file of the source tree ("data/variants/quant_variants.json"), parsed.
inline preflight::Json source_json(const std::string& rel) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/" + rel);
  std::stringstream s;
  s << in.rdbuf();
  auto j = preflight::parse_json(s.str(), rel);
  EXPECT_TRUE(j.has_value()) << rel;
  return j ? *j : preflight::Json();
}

// The GiB of one memory term ("weights", "available KV") of a `fit --json` document; -1 when absent.
inline double term_gib(const preflight::Json& fit, const std::string& name) {
  for (const auto& t : fit["memory_per_device"]["terms"])
    if (t["name"] == name) return t["gib"].get<double>();
  return -1;
}

// `fit DIR --device H100-SXM --max-model-len 2048 --json` on a checkpoint directory: its weights term in bytes (-1 when
// the run prints no such term; a failed run fails the calling test).
inline double fit_weights_bytes(const std::string& dir) {
  const auto r = run_cli("fit " + dir + " --device H100-SXM --max-model-len 2048 --json", {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 400);
  auto j = preflight::parse_json(r.out, "stdout");
  const double gib = j ? term_gib(*j, "weights") : -1;
  return gib < 0 ? -1 : gib * 1073741824.0;
}

}  // namespace pftest
