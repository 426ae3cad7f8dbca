#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "model/gguf_reader.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {
struct Writer {
  std::vector<uint8_t> bytes;
  template <typename T>
  void put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    bytes.insert(bytes.end(), b, b + sizeof(T));
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void kv_u32(const std::string& k, uint32_t v) { str(k); put<uint32_t>(4); put<uint32_t>(v); }
  void kv_str(const std::string& k, const std::string& v) { str(k); put<uint32_t>(8); str(v); }
};

// A tiny llama GGUF: 2 layers, hidden 64, with two tensors (Q4_0 and F32).
std::vector<uint8_t> tiny_gguf() {
  Writer w;
  w.put<uint32_t>(0x46554747u);
  w.put<uint32_t>(3);
  w.put<uint64_t>(2);  // tensors
  w.put<uint64_t>(5);  // kvs
  w.kv_str("general.architecture", "llama");
  w.kv_u32("llama.block_count", 2);
  w.kv_u32("llama.embedding_length", 64);
  w.kv_u32("llama.attention.head_count", 8);
  w.str("tokenizer.ggml.tokens");
  w.put<uint32_t>(9);
  w.put<uint32_t>(8);
  w.put<uint64_t>(3);
  w.str("a"); w.str("b"); w.str("c");
  w.str("blk.0.attn_q.weight");
  w.put<uint32_t>(2); w.put<uint64_t>(64); w.put<uint64_t>(64);
  w.put<uint32_t>(2);  // Q4_0: 32 elements per 18 bytes
  w.put<uint64_t>(0);
  w.str("output_norm.weight");
  w.put<uint32_t>(1); w.put<uint64_t>(64);
  w.put<uint32_t>(0);  // F32
  w.put<uint64_t>(4608);
  return w.bytes;
}
}  // namespace

TEST(GgufReader, ExactBytesPerTensorFromBlockSizes) {
  const auto bytes = tiny_gguf();
  auto file = parse_gguf(bytes.data(), bytes.size(), "tiny.gguf");
  ASSERT_TRUE(file.has_value()) << file.error().describe();
  ASSERT_EQ(file->tensors.size(), 2u);
  EXPECT_EQ(file->tensors[0].bytes, 64u * 64u / 32u * 18u);  // 128 blocks x 18 B = 2,304
  EXPECT_EQ(file->tensors[1].bytes, 256u);
  EXPECT_EQ(file->array_lengths.at("tokenizer.ggml.tokens"), 3u);
  auto spec = model_spec_from_gguf(*file, "tiny.gguf");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  EXPECT_EQ(spec->num_hidden_layers, 2);
  EXPECT_EQ(*spec->exact_weight_bytes, 2304u + 256u);
  EXPECT_EQ(spec->vocab_size, 3);
}

TEST(GgufReader, EveryTruncationIsAnErrorNeverACrash) {
  const auto bytes = tiny_gguf();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    auto file = parse_gguf(bytes.data(), cut, "cut.gguf");
    ASSERT_FALSE(file.has_value()) << "cut at " << cut;
    EXPECT_NE(file.error().describe().find("cut.gguf"), std::string::npos);
  }
}

TEST(GgufReader, RejectsBadMagicVersionAndCounts) {
  auto bytes = tiny_gguf();
  auto bad = bytes;
  bad[0] = 'X';
  EXPECT_NE(parse_gguf(bad.data(), bad.size(), "x.gguf").error().describe().find("bad magic"), std::string::npos);
  bad = bytes;
  bad[4] = 9;
  EXPECT_NE(parse_gguf(bad.data(), bad.size(), "x.gguf").error().describe().find("version 9"), std::string::npos);
  bad = bytes;
  bad[8 + 7] = 0x7f;  // tensor_count ~ 2^63
  EXPECT_NE(parse_gguf(bad.data(), bad.size(), "x.gguf").error().describe().find("tensor_count"), std::string::npos);
}
