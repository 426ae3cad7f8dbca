#pragma once
// Every model of the built-in catalogue as a ModelSpec, for the plan tests that sweep the whole catalogue
// (a model the catalogue cannot build is a test failure naming it).
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/model_catalog.hpp"

namespace preflight::test {

inline std::vector<model::ModelSpec> catalogue_model_specs() {
  std::vector<model::ModelSpec> models;
  for (const auto& e : model::builtin_model_catalog().models) {
    auto s = model::model_spec_from_catalog(e);
    EXPECT_TRUE(s.has_value()) << e.id;
    if (s) models.push_back(std::move(*s));
  }
  return models;
}

}  // namespace preflight::test
