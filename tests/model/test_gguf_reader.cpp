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
  void kv_f64(const std::string& k, double v) { str(k); put<uint32_t>(12); put<double>(v); }
};

// A one-layer llama GGUF with no tensors and the given extra metadata (written by `extra`).
template <typename Extra>
std::vector<uint8_t> gguf_with(uint64_t extra_kvs, Extra extra) {
  Writer w;
  w.put<uint32_t>(0x46554747u);
  w.put<uint32_t>(3);
  w.put<uint64_t>(0);
  w.put<uint64_t>(4 + extra_kvs);
  w.kv_str("general.architecture", "llama");
  w.kv_u32("llama.block_count", 1);
  w.kv_u32("llama.embedding_length", 64);
  w.kv_u32("llama.attention.head_count", 8);
  extra(w);
  return w.bytes;
}

// The one-layer llama GGUF above with its head count written once, as the float64 `heads` (a key listed twice is refused,
// as llama.cpp's gguf_init_from_file refuses it: issue 19, attack36).
std::vector<uint8_t> gguf_with_heads(double heads) {
  Writer w;
  w.put<uint32_t>(0x46554747u);
  w.put<uint32_t>(3);
  w.put<uint64_t>(0);
  w.put<uint64_t>(4);
  w.kv_str("general.architecture", "llama");
  w.kv_u32("llama.block_count", 1);
  w.kv_u32("llama.embedding_length", 64);
  w.kv_f64("llama.attention.head_count", heads);
  return w.bytes;
}

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
  w.put<uint64_t>(2304);  // where blk.0.attn_q.weight (2,304 B, a multiple of the 32-byte alignment) ends: llama.cpp takes only contiguous data (attack37)
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

// Issue 19 item 10: impossible attention geometry was accepted (head_count 8e15, key_length 0 gave
// a KV cache of 0 bytes per token, head_count_kv 3 of 8 heads). Each is an error naming the key.
struct BadGeometry {
  const char* key;
  double value;
  const char* fragment;
};

TEST(GgufReader, Issue19_ImpossibleAttentionGeometryNamesTheKey) {
  const BadGeometry cases[] = {
      {"llama.attention.head_count_kv", 3, "llama.attention.head_count (8) is not a multiple of llama.attention.head_count_kv (3)"},
      {"llama.attention.key_length", 0, "llama.attention.key_length is 0, expected an integer from 1 to 4194304"},
      {"llama.attention.value_length", 0, "llama.attention.value_length is 0"},
      {"llama.attention.head_count_kv", 16, "llama.attention.head_count_kv is 16, expected an integer from 1 to 8"},
      {"llama.attention.key_length", 2.5, "llama.attention.key_length is 2.5"},
      {"llama.context_length", -1, "llama.context_length is -1"},
      {"llama.expert_used_count", 2, "llama.expert_used_count is 2, expected an integer from 0 to 0"},
  };
  for (const auto& c : cases) {
    const auto bytes = gguf_with(1, [&](Writer& w) { w.kv_f64(c.key, c.value); });
    auto file = parse_gguf(bytes.data(), bytes.size(), "geo.gguf");
    ASSERT_TRUE(file.has_value()) << file.error().describe();
    auto spec = model_spec_from_gguf(*file, "geo.gguf");
    ASSERT_FALSE(spec.has_value()) << c.key;
    EXPECT_EQ(spec.error().kind, ErrorKind::corrupt);
    EXPECT_NE(spec.error().message.find(c.fragment), std::string::npos) << spec.error().message;
    EXPECT_NE(spec.error().message.find("geo.gguf"), std::string::npos);
  }
  // head_count 8e15.
  const auto huge = gguf_with_heads(8e15);
  auto file = parse_gguf(huge.data(), huge.size(), "geo.gguf");
  ASSERT_TRUE(file.has_value());
  auto spec = model_spec_from_gguf(*file, "geo.gguf");
  ASSERT_FALSE(spec.has_value());
  EXPECT_NE(spec.error().message.find("llama.attention.head_count is 8000000000000000, expected an integer from 1 to 4194304"), std::string::npos)
      << spec.error().message;
  // The valid file still reads: 8 heads of 64 / 8 = 8 dims, KV heads default to the heads.
  const auto ok = gguf_with(0, [](Writer&) {});
  auto good = model_spec_from_gguf(*parse_gguf(ok.data(), ok.size(), "ok.gguf"), "ok.gguf");
  ASSERT_TRUE(good.has_value()) << good.error().describe();
  EXPECT_EQ(good->head_dim, 8);
  EXPECT_EQ(kv_bytes_per_token(*good, 2), 8 * (8 + 8) * 2);
}

// Issue 19 item 12: alignment 1e30 was converted to an integer (undefined; it read as 0) and
// reported as "0 is not a power of two".
TEST(GgufReader, Issue19_AlignmentShownAsWritten) {
  const struct {
    double value;
    const char* fragment;
  } cases[] = {
      {1e30, "general.alignment 1e+30 is not a power of two from 1 to 65536"},
      {48, "general.alignment 48 is not a power of two"},
      {0, "general.alignment 0 is not a power of two"},
      {131072, "general.alignment 131072 is not a power of two from 1 to 65536"},
  };
  for (const auto& c : cases) {
    const auto bytes = gguf_with(1, [&](Writer& w) { w.kv_f64("general.alignment", c.value); });
    auto file = parse_gguf(bytes.data(), bytes.size(), "align.gguf");
    ASSERT_FALSE(file.has_value()) << c.value;
    EXPECT_NE(file.error().message.find(c.fragment), std::string::npos) << file.error().message;
  }
  const auto fine = gguf_with(1, [](Writer& w) { w.kv_u32("general.alignment", 64); });
  auto file = parse_gguf(fine.data(), fine.size(), "align.gguf");
  ASSERT_TRUE(file.has_value()) << file.error().describe();
  EXPECT_EQ(file->alignment, 64u);
}
