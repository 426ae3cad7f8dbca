// hub/hub_ref: references, endpoints, URLs, tokens and redaction.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "hub/hub_ref.hpp"
#include "../test_support.hpp"
#include "hub_fixture.hpp"

using namespace preflight;

// ---------------------------------------------------------------- references, endpoints, tokens

TEST(HubRef, ParsesHubRepoRevisionAndGgufFile) {
  struct Case {
    std::string text;
    hub::HubKind hub;
    std::string repo, revision, gguf;
  };
  const std::vector<Case> cases = {
      {"hf:Qwen/Qwen3-8B", hub::HubKind::hugging_face, "Qwen/Qwen3-8B", "main", ""},
      {"hf:Qwen/Qwen3.6-27B@v1.0", hub::HubKind::hugging_face, "Qwen/Qwen3.6-27B", "v1.0", ""},
      {"ms:Qwen/Qwen3-8B", hub::HubKind::modelscope, "Qwen/Qwen3-8B", "master", ""},
      {"hf:org/m-GGUF/m-Q4_K_M.gguf@abc123", hub::HubKind::hugging_face, "org/m-GGUF", "abc123", "m-Q4_K_M.gguf"},
  };
  for (const auto& c : cases) {
    auto ref = hub::parse_hub_ref(c.text);
    ASSERT_TRUE(ref) << c.text << ": " << ref.error().describe();
    EXPECT_EQ(ref->hub, c.hub) << c.text;
    EXPECT_EQ(ref->repo, c.repo) << c.text;
    EXPECT_EQ(ref->revision, c.revision) << c.text;
    EXPECT_EQ(ref->gguf_file, c.gguf) << c.text;
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"hf:Qwen", "org/name"}, {"hf:../x", "path segment"}, {"hf:a/b@", "revision"}, {"hf:a/b/c.bin", ".gguf"}, {"hf:a/b@x y", "revision"}};
  for (const auto& [text, fragment] : bad) {
    auto ref = hub::parse_hub_ref(text);
    ASSERT_FALSE(ref) << text;
    EXPECT_EQ(ref.error().kind, ErrorKind::invalid_argument) << text;
    EXPECT_NE(ref.error().message.find(fragment), std::string::npos) << text << ": " << ref.error().message;
  }
}

TEST(HubRef, UrlsFollowEachHubsLayout) {
  auto hf = *hub::parse_hub_ref("hf:Qwen/Qwen3-8B@main");
  EXPECT_EQ(hub::hub_file_url(hf, "https://hf-mirror.com", "config.json"), "https://hf-mirror.com/Qwen/Qwen3-8B/resolve/main/config.json");
  auto ms = *hub::parse_hub_ref("ms:Qwen/Qwen3-8B");
  EXPECT_EQ(hub::hub_file_url(ms, "https://www.modelscope.cn", "model.safetensors.index.json"),
            "https://www.modelscope.cn/api/v1/models/Qwen/Qwen3-8B/repo?Revision=master&FilePath=model.safetensors.index.json");
  EXPECT_EQ(hub::endpoint_host("http://127.0.0.1:8080/prefix"), "127.0.0.1_8080");
  ::setenv("HF_ENDPOINT", "https://hf-mirror.com/", 1);
  ::setenv("MODELSCOPE_DOMAIN", "modelscope.example", 1);
  EXPECT_EQ(hub::hub_endpoint(hub::HubKind::hugging_face), "https://hf-mirror.com");
  EXPECT_EQ(hub::hub_endpoint(hub::HubKind::modelscope), "https://modelscope.example");
  ::unsetenv("HF_ENDPOINT");
  ::unsetenv("MODELSCOPE_DOMAIN");
  EXPECT_EQ(hub::hub_endpoint(hub::HubKind::hugging_face), "https://huggingface.co");
  EXPECT_EQ(hub::hub_endpoint(hub::HubKind::modelscope), "https://www.modelscope.cn");
}

TEST(HubRef, TokensFromEnvironmentThenTokenFile) {
  const pfhub::TempTree tree("hub-token");
  const std::string& dir = tree.path;
  ::unsetenv("HF_TOKEN");
  ::unsetenv("HUGGING_FACE_HUB_TOKEN");
  ::setenv("HF_HOME", dir.c_str(), 1);
  EXPECT_FALSE(hub::hub_token(hub::HubKind::hugging_face));
  pfhub::write_file(dir + "/token", "hf_fromfile\n");
  EXPECT_EQ(hub::hub_token(hub::HubKind::hugging_face).value_or(""), "hf_fromfile");
  ::setenv("HUGGING_FACE_HUB_TOKEN", "hf_legacy", 1);
  EXPECT_EQ(hub::hub_token(hub::HubKind::hugging_face).value_or(""), "hf_legacy");
  ::setenv("HF_TOKEN", "hf_env", 1);
  EXPECT_EQ(hub::hub_token(hub::HubKind::hugging_face).value_or(""), "hf_env");
  ::setenv("MODELSCOPE_API_TOKEN", "ms_env", 1);
  EXPECT_EQ(hub::hub_token(hub::HubKind::modelscope).value_or(""), "ms_env");
  for (const char* v : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HOME", "MODELSCOPE_API_TOKEN"}) ::unsetenv(v);
  EXPECT_EQ(hub::redact("GET https://x/?t=sekrit and sekrit", "sekrit"), "GET https://x/?t=*** and ***");
  EXPECT_EQ(hub::redact("nothing", ""), "nothing");
}

