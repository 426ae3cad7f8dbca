// Set-up shared by the issue-15 tests of validate and estimate: the public start-up evidence validated against the
// configs in shared/models, and a start-up log parsed with the shipped signatures.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "logs/engine_log.hpp"
#include "validate/validation.hpp"
#include "../test_support.hpp"

namespace pftest {

// Case files validated with shared/models as the model folder.
inline preflight::Expected<preflight::validate::ValidationReport> validate_with_models(const std::vector<std::string>& files) {
  preflight::validate::ValidateOptions o;
  o.model_dirs.push_back(shared_path("models"));
  return preflight::validate::run_validation(files, o);
}

// data/evidence/vllm-startup-public.jsonl, validated as above.
inline preflight::Expected<preflight::validate::ValidationReport> validate_public_evidence() {
  return validate_with_models({std::string(PREFLIGHT_SOURCE_DIR) + "/data/evidence/vllm-startup-public.jsonl"});
}

// The lines of data/evidence/vllm-startup-public.jsonl whose case id `keep` takes, validated as above (ci35: a test that
// reads some rows need not predict all 185 lines; each line is validated alone, so its row is the same either way). A
// line that is no JSON object with a string id is kept, so that it still fails the validation.
inline preflight::Expected<preflight::validate::ValidationReport> validate_public_evidence(const std::function<bool(const std::string&)>& keep) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/data/evidence/vllm-startup-public.jsonl");
  const std::string path = ::testing::TempDir() + "/public-evidence-" + std::to_string(::getpid()) + ".jsonl";
  std::ofstream out(path);
  for (std::string line; std::getline(in, line);) {
    const auto j = preflight::parse_json(line, "evidence line");
    const bool named = j && j->is_object() && j->contains("id") && (*j)["id"].is_string();
    if (!named || keep((*j)["id"].get<std::string>())) out << line << "\n";
  }
  out.close();
  auto report = validate_with_models({path});
  std::filesystem::remove(path);
  return report;
}

// A start-up log (or command line) parsed with the shipped signatures; a catalogue that does not load fails the test.
inline preflight::logs::EngineLog parse_log(const std::string& text) {
  static const auto signatures = preflight::logs::load_signatures();
  if (!signatures.has_value()) {
    ADD_FAILURE() << "log signatures: " << signatures.error().describe();
    return {};
  }
  return preflight::logs::parse_engine_log(text, *signatures);
}

}  // namespace pftest
