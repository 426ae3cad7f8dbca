#include <gtest/gtest.h>

#include <fstream>

#include "base/file.hpp"
#include "base/units.hpp"
#include "model/header_stub.hpp"
#include "model/model_source.hpp"
#include "model/safetensors_header.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {
// Writes a real safetensors header and extends the file sparsely to hold `data_bytes` of data.
void write_safetensors(const std::string& path, const std::string& header, uint64_t data_bytes, bool exact_length = true) {
  std::ofstream out(path, std::ios::binary);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << header;
  out.close();
  if (exact_length) std::filesystem::resize_file(path, 8 + header.size() + data_bytes);
}

std::string tensor(const std::string& name, const std::string& dtype, uint64_t rows, uint64_t cols, uint64_t begin, uint64_t bytes) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[" + std::to_string(rows) + "," + std::to_string(cols) + "],\"data_offsets\":[" +
         std::to_string(begin) + "," + std::to_string(begin + bytes) + "]}";
}
}  // namespace

TEST(SafetensorsHeader, ReadsOnlyHeadersOfSparseShards) {
  const std::string dir = pftest::scratch_dir("sparse");
  std::ofstream(dir + "/config.json") << R"({"architectures":["Qwen3ForCausalLM"],"hidden_size":8192,"num_hidden_layers":2,"num_attention_heads":64,
    "num_key_value_heads":8,"head_dim":128,"intermediate_size":29568,"vocab_size":152064,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})";
  // Two shards of 175 GB each (sparse: no disk used), 1,000 tensors of 8192 x 21362 bf16 in all.
  uint64_t expected = 0;
  for (int shard = 0; shard < 2; ++shard) {
    std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
    uint64_t offset = 0;
    for (int i = 0; i < 500; ++i) {
      const uint64_t bytes = 8192ull * 21362ull * 2ull;
      header += "," + tensor("model.layers.0.t" + std::to_string(shard * 500 + i) + ".weight", "BF16", 8192, 21362, offset, bytes);
      offset += bytes;
    }
    header += "}";
    write_safetensors(dir + "/model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors", header, offset);
    expected += offset;
  }
  auto spec = load_model_directory(dir);
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  ASSERT_TRUE(spec->exact_weight_bytes.has_value());
  EXPECT_EQ(*spec->exact_weight_bytes, expected);
  EXPECT_GT(expected, 340ull * 1000 * 1000 * 1000);
  EXPECT_EQ(spec->exact_tensor_count, 1000u);
  EXPECT_LT(spec->header_bytes_read, 200u * 1024);  // headers only: never a weight byte
}

struct BadHeader {
  std::string header;
  uint64_t data_bytes;
  const char* fragment;
};

TEST(SafetensorsHeader, RejectsHostileHeaders) {
  const std::string dir = pftest::scratch_dir("hostile");
  const BadHeader cases[] = {
      {"{" + tensor("a", "BF16", 2, 2, 0, 8) + "," + tensor("b", "BF16", 2, 2, 4, 8) + "}", 16, "overlap"},
      {"{" + tensor("a", "BF16", 2, 2, 0, 8) + "}", 4, "outside the data section"},
      {"{" + tensor("a", "Q9", 2, 2, 0, 8) + "}", 8, "unknown dtype Q9"},
      {"{" + tensor("a", "BF16", 2, 2, 0, 6) + "}", 8, "6 bytes for 4 elements"},
      {"{\"a\":{\"dtype\":\"BF16\",\"shape\":\"x\",\"data_offsets\":[0,8]}}", 8, "shape"},
      {"{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]},\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]}}", 8, "appears twice"},
      {"{not json", 0, "not valid JSON"},
      {"{" + tensor("a", "BF16", 4294967296ull, 4294967296ull, 0, 8) + "}", 8, "overflows"},
  };
  for (const auto& c : cases) {
    const std::string path = dir + "/bad.safetensors";
    write_safetensors(path, c.header, c.data_bytes);
    auto h = load_safetensors_header(path);
    ASSERT_FALSE(h.has_value()) << c.header;
    EXPECT_EQ(h.error().kind, ErrorKind::corrupt);
    EXPECT_NE(h.error().describe().find(c.fragment), std::string::npos) << h.error().describe();
    EXPECT_NE(h.error().describe().find("bad.safetensors"), std::string::npos);
  }
}

TEST(SafetensorsHeader, HeaderLengthBeyondFileOrLimit) {
  const std::string dir = pftest::scratch_dir("length");
  {
    std::ofstream out(dir + "/long.safetensors", std::ios::binary);
    const uint64_t n = 5000;  // claims 5000 header bytes, file holds 10
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << "{\"a\":1}";
  }
  auto h = load_safetensors_header(dir + "/long.safetensors");
  ASSERT_FALSE(h.has_value());
  EXPECT_NE(h.error().describe().find("exceeds file size"), std::string::npos) << h.error().describe();
  // Issue 19 item 12: a 10,000-byte header read "header length 0.0 MB exceeds file size 0.0 MB".
  EXPECT_NE(h.error().describe().find("header length 5,000 bytes exceeds file size 15 bytes"), std::string::npos) << h.error().describe();
  {
    std::ofstream out(dir + "/huge.safetensors", std::ios::binary);
    const uint64_t n = 200ull * 1024 * 1024;
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  std::filesystem::resize_file(dir + "/huge.safetensors", 300ull * 1024 * 1024);
  auto h2 = load_safetensors_header(dir + "/huge.safetensors");
  ASSERT_FALSE(h2.has_value());
  EXPECT_NE(h2.error().describe().find("header length 200.0 MiB is above the 100 MiB limit"), std::string::npos) << h2.error().describe();
}

// Issue 19 item 3: the duplicate-key check made parsing quadratic (100,000 tensors ran past 60 s).
// A 100,000-tensor header parses, every tensor kept in file order and the total exact.
TEST(SafetensorsHeader, Issue19_HundredThousandTensorsParse) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  uint64_t offset = 0;
  for (int i = 0; i < 100000; ++i) {
    header += "," + tensor("model.layers." + std::to_string(i) + ".mlp.down_proj.weight", "BF16", 64, 32, offset, 64 * 32 * 2);
    offset += 64 * 32 * 2;
  }
  header += "}";
  auto h = parse_safetensors_header(header, offset, "big.safetensors");
  ASSERT_TRUE(h.has_value()) << h.error().describe();
  ASSERT_EQ(h->tensors.size(), 100000u);
  EXPECT_EQ(h->data_bytes(), 100000ull * 4096);
  // A duplicate at the very end is still found.
  const std::string dup = header.substr(0, header.size() - 1) + "," + tensor("model.layers.7.mlp.down_proj.weight", "BF16", 64, 32, offset, 4096) + "}";
  auto d = parse_safetensors_header(dup, offset + 4096, "big.safetensors");
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().message.find("tensor model.layers.7.mlp.down_proj.weight appears twice"), std::string::npos) << d.error().message;
}

// Issue 19 (hard31): one repeated-key finder (base/json_keys) for the header as for the overlays, where the header had
// its own that looked at the top level only: a tensor naming "dtype" twice ({"dtype":"F32",...,"dtype":"BF16"}) was
// sized in the last dtype, where the safetensors crate refuses it (a serde struct: "duplicate field `dtype`").
TEST(SafetensorsHeader, Issue19_RepeatedKeyInsideATensorIsRefused) {
  struct Case {
    std::string header, message;
  };
  const std::vector<Case> cases = {
      {R"({"model.layers.0.w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,8],"dtype":"BF16"}})", "t.safetensors: tensor model.layers.0.w: dtype appears twice"},
      {R"({"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8],"shape":[4]}})", "t.safetensors: tensor a: shape appears twice"},
      {R"({"__metadata__":{"format":"pt","format":"np"},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}})",
       "t.safetensors: header __metadata__: format appears twice"},
      {R"({"m.w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"m.w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}})",
       "t.safetensors: tensor m.w appears twice in the header"},
  };
  for (const auto& c : cases) {
    const auto h = parse_safetensors_header(c.header, 8, "t.safetensors");
    ASSERT_FALSE(h) << c.header;
    EXPECT_EQ(h.error().kind, ErrorKind::corrupt);
    EXPECT_EQ(h.error().message, c.message) << c.header;
  }
}

// Issue 19 item 5: 16 shards each declaring 2^60 bytes of tensors summed to 2^64, which wrapped to
// "0.00 GiB, fits". Header stubs (model/header_stub) declare the huge file sizes without disk.
TEST(SafetensorsHeader, Issue19_ShardSumOverflowIsAnError) {
  const std::string dir = pftest::scratch_dir("shard-sum");
  std::ofstream(dir + "/config.json") << R"({"architectures":["Qwen3ForCausalLM"],"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":8,
    "num_key_value_heads":8,"head_dim":8,"intermediate_size":128,"vocab_size":1000,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})";
  const uint64_t bytes = 1ull << 60;  // 2^30 x 2^29 bf16 elements
  for (int shard = 1; shard <= 16; ++shard) {
    const std::string header = "{" + tensor("model.layers.0.t" + std::to_string(shard) + ".weight", "BF16", 1ull << 30, 1ull << 29, 0, bytes) + "}";
    HeaderStub stub;
    for (int i = 0; i < 8; ++i) stub.prefix.push_back(static_cast<uint8_t>((header.size() >> (8 * i)) & 0xff));
    stub.prefix.insert(stub.prefix.end(), header.begin(), header.end());
    stub.file_size_bytes = 8 + header.size() + bytes;
    const auto serialized = serialize_header_stub(stub);
    std::ofstream(dir + format("/model-%05d-of-00016.safetensors.header", shard), std::ios::binary)
        .write(reinterpret_cast<const char*>(serialized.data()), static_cast<std::streamsize>(serialized.size()));
  }
  auto spec = load_model_directory(dir);
  ASSERT_FALSE(spec.has_value()) << (spec->exact_weight_bytes ? *spec->exact_weight_bytes : 0);
  EXPECT_EQ(spec.error().kind, ErrorKind::corrupt);
  EXPECT_NE(spec.error().message.find("weight bytes summed over the shards overflow"), std::string::npos) << spec.error().message;
  const auto run = pftest::run_cli("fit " + dir + " --device H100-SXM");
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.out.find("overflow"), std::string::npos) << run.out;
}

// Issue 19 (hard32): the header is read as a stream, one tensor's tree at a time (memory: the tensor table, not a tree
// of the whole header; InputBounds32.Issue19_SafetensorsHeaderParsedWithinAMemoryBound). What the whole-header tree
// refused is still refused, each naming the file: a root that is no object or a second root, a tensor that is no object,
// __metadata__ twice, a key repeated deeper inside a tensor, a shape nested past its 8 integers; tensors come in file order.
TEST(SafetensorsHeader, Issue19_StreamedHeaderRefusesWhatTheTreeRefused) {
  struct Case {
    std::string header, message;
  };
  const std::vector<Case> cases = {
      {R"([{"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}])", "t.safetensors: header is not a JSON object"},
      {R"(5)", "t.safetensors: header is not a JSON object"},
      {R"({"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}} {"b":1})", "t.safetensors: header is not valid JSON ("},
      {R"({"a":5})", "t.safetensors: tensor a: expected an object"},
      {R"({"__metadata__":{},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"__metadata__":{}})", "t.safetensors: tensor __metadata__ appears twice in the header"},
      {R"({"a":{"dtype":"BF16","shape":[{"x":1,"x":2}],"data_offsets":[0,8]}})", "t.safetensors: tensor a: shape[].x appears twice"},
      {R"({"a":{"dtype":"BF16","shape":[[[2]]],"data_offsets":[0,8]}})", "t.safetensors: a.shape: expected non-negative integers, found array"},
      {R"({"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]})", "t.safetensors: header is not valid JSON ("},
  };
  for (const auto& c : cases) {
    const auto h = parse_safetensors_header(c.header, 8, "t.safetensors");
    ASSERT_FALSE(h) << c.header;
    EXPECT_EQ(h.error().kind, ErrorKind::corrupt) << c.header;
    EXPECT_EQ(h.error().message.rfind(c.message, 0), 0u) << c.header << "\n" << h.error().message;
  }
  const auto ordered = parse_safetensors_header(
      R"({"z":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8,
      "t.safetensors");
  ASSERT_TRUE(ordered) << ordered.error().message;
  ASSERT_EQ(ordered->tensors.size(), 2u);
  EXPECT_EQ(ordered->tensors[0].name, "z");
  EXPECT_EQ(ordered->tensors[1].name, "a");
  EXPECT_EQ(ordered->tensors[1].dtype, Dtype::f32);
  EXPECT_EQ(ordered->tensors[1].bytes(), 4u);
  EXPECT_EQ(ordered->header_length, 139u);
}
