#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/header_stub.hpp"
#include "model/model_source.hpp"
#include "model/safetensors_header.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {
std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// A safetensors prefix: 8-byte length + JSON for one BF16 tensor of 1024 x 1024 (2,097,152 bytes).
std::string one_tensor_prefix() {
  const std::string json = R"({"model.layers.0.mlp.down_proj.weight":{"dtype":"BF16","shape":[1024,1024],"data_offsets":[0,2097152]}})";
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json;
}
}  // namespace

TEST(HeaderStub, RoundTripsPrefixAndDeclaredSize) {
  const HeaderStub stub{bytes_of("abcdef"), 5'000'000'000ull};
  auto parsed = parse_header_stub(serialize_header_stub(stub), "x.safetensors.header");
  ASSERT_TRUE(parsed) << parsed.error().describe();
  EXPECT_EQ(parsed->prefix, stub.prefix);
  EXPECT_EQ(parsed->file_size_bytes, 5'000'000'000ull);
}

TEST(HeaderStub, RejectsCorruptStubs) {
  auto good = serialize_header_stub({bytes_of("abcdef"), 100});
  auto bad_magic = good;
  bad_magic.back() = 'X';
  auto too_small = serialize_header_stub({bytes_of("abcdef"), 3});
  const std::vector<std::pair<std::vector<uint8_t>, std::string>> cases = {
      {{}, "no PFSTUB01 trailer"}, {bytes_of("short"), "no PFSTUB01 trailer"}, {bad_magic, "no PFSTUB01 trailer"}, {too_small, "declared as 3 bytes"}};
  for (const auto& [bytes, fragment] : cases) {
    auto parsed = parse_header_stub(bytes, "s.header");
    ASSERT_FALSE(parsed) << fragment;
    EXPECT_EQ(parsed.error().kind, ErrorKind::corrupt);
    EXPECT_NE(parsed.error().message.find(fragment), std::string::npos) << parsed.error().message;
  }
}

TEST(HeaderStub, DirectoryOfStubsReadsLikeShards) {
  const std::string dir = pftest::scratch_dir("header-stub-dir");
  std::ifstream cfg(pftest::shared_path("models/Qwen__Qwen3-8B/config.json"));
  std::ofstream(dir + "/config.json") << cfg.rdbuf();
  const std::string prefix = one_tensor_prefix();
  const auto stub = serialize_header_stub({bytes_of(prefix), prefix.size() + 2'097'152});
  std::ofstream(dir + "/model.safetensors.header", std::ios::binary).write(reinterpret_cast<const char*>(stub.data()), static_cast<std::streamsize>(stub.size()));
  auto spec = load_model_directory(dir);
  ASSERT_TRUE(spec) << spec.error().describe();
  EXPECT_EQ(spec->exact_weight_bytes.value_or(0), 2'097'152u);  // 1024 x 1024 x 2 bytes
  // A stub whose declared size cannot hold the tensor data is corrupt, named after the shard.
  const auto short_stub = serialize_header_stub({bytes_of(prefix), prefix.size() + 1000});
  std::ofstream(dir + "/model.safetensors.header", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(short_stub.data()), static_cast<std::streamsize>(short_stub.size()));
  auto bad = load_model_directory(dir);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::corrupt);
  EXPECT_NE(bad.error().message.find("model.safetensors: tensor model.layers.0.mlp.down_proj.weight: data_offsets"), std::string::npos) << bad.error().message;
}
