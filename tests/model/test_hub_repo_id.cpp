// Issue 19 (hard31): a hub repo id by huggingface_hub's own rules (utils/_validators.py validate_repo_id), checked before
// any cache path is built from it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/hub_repo_id.hpp"
#include "model/model_catalog.hpp"

using namespace preflight;

TEST(HubRepoId, Issue19_IdsByTheHubsRules) {
  struct Case {
    std::string id;
    std::string problem;  // "" : a repo id
  };
  const std::vector<Case> cases = {
      {"Qwen/Qwen3-8B", ""},
      {"deepseek-ai/DeepSeek-V3.1-Terminus", ""},
      {"unsloth/Qwen3-30B-A3B-GGUF", ""},
      {"a_b/c_", ""},
      {"org/" + std::string(96, 'n'), ""},
      {"org/" + std::string(97, 'n'), "the name has 97 characters, more than 96"},
      {"Qwen3-8B", "no '/' between org and name"},
      {"a/b/c", "more than one '/'"},
      {"/etc/passwd", "more than one '/'"},
      {"/abs", "the org is empty"},
      {"org/", "the name is empty"},
      {"x/..", "the name starts or ends with '-' or '.'"},
      {"x/a..b", "it holds \"--\" or \"..\""},
      {"x--y/name", "it holds \"--\" or \"..\""},
      {"-org/name", "the org starts or ends with '-' or '.'"},
      {"org/name.", "the name starts or ends with '-' or '.'"},
      {"org/name.git", "it ends in \".git\""},
      {"org\\x/name", "the org holds '\\'"},
      {"org/na me", "the name holds ' '"},
      {"org/na;me", "the name holds ';'"},
      {std::string("org/na\0me", 9), "the name holds byte 0x00"},
      {"org/na\xc3\xa9me", "the name holds byte 0xc3"},
  };
  for (const auto& c : cases) EXPECT_EQ(model::hub_repo_id_problem(c.id), c.problem) << c.id;
  const auto r = model::check_hub_repo_id("y/../../victim", "--model");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_argument);
  EXPECT_EQ(r.error().message, "--model: expected a hub repo id org/name (letters, digits, '-', '_', '.'), found \"y/../../victim\": more than one '/'");
}

// Every catalogue model named org/name is a repo id by these rules: the check refuses nothing the catalogue lists.
TEST(HubRepoId, Issue19_CatalogueNamesWithASlashAreRepoIds) {
  int checked = 0;
  for (const auto& name : model::builtin_model_catalog().names()) {
    if (name.find('/') == std::string::npos) continue;
    EXPECT_EQ(model::hub_repo_id_problem(name), "") << name;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}
