// model/model_source: a local model folder as a download leaves it. Issue 16/19 (ux29): a folder whose
// model.safetensors.index.json names shards that are not there (a download cut short) was sized from the shards
// present: Qwen3-8B with one of five shards was "0.70 GiB of weights, fits", exit 0.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "model/model_source.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {

// A real safetensors header of `tensors` bf16 tensors of 4096 x 12288, extended sparsely to its declared size; the
// tensors' bytes (each 4096 x 12288 x 2 = 100,663,296 B).
uint64_t write_shard(const std::string& path, int first_layer, int tensors) {
  std::string header = "{";
  uint64_t offset = 0;
  for (int i = 0; i < tensors; ++i) {
    const uint64_t bytes = 4096ull * 12288ull * 2ull;
    header += (i ? "," : "") + std::string("\"model.layers.") + std::to_string(first_layer + i) + ".mlp.down_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[4096,12288],"
              "\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << header;
  out.close();
  std::filesystem::resize_file(path, 8 + header.size() + offset);
  return offset;
}

std::string shard_name(int i) { return "model-0000" + std::to_string(i) + "-of-00005.safetensors"; }

// Qwen3-8B's published config.json (../shared/models) in `dir`, and an index naming five shards of 7 tensors each.
void write_folder(const std::string& dir) {
  std::filesystem::copy_file(pftest::shared_path("models/Qwen__Qwen3-8B/config.json"), dir + "/config.json");
  std::string map;
  for (int s = 1; s <= 5; ++s)
    for (int l = (s - 1) * 7; l < s * 7; ++l) map += (map.empty() ? "" : ",") + std::string("\"model.layers.") + std::to_string(l) + ".mlp.down_proj.weight\":\"" + shard_name(s) + "\"";
  std::ofstream(dir + "/model.safetensors.index.json") << "{\"metadata\":{\"total_size\":16381470720},\"weight_map\":{" << map << "}}";
}

}  // namespace

// One shard of five present and ModelScope's ._____temp folder holding an unfinished one: the weights are computed from
// the architecture, as for a folder with no shard at all, and the assumption names what is missing. Qwen3-8B by hand:
// embeddings and lm_head 2 x 151,936 x 4,096 = 1,244,659,712; per layer q/o 2 x 4096^2, k/v 2 x 4096 x 1024, MLP
// 3 x 4096 x 12288, norms 2 x 4096 + 2 x 128 = 192,946,432, x 36 = 6,946,071,552; final norm 4,096: 8,190,735,360
// parameters, x 2 B = 16,381,470,720 B = 15.26 GiB (the 0.66 GiB of the one shard summed before).
TEST(ModelSource, Issue16_HalfDownloadedFolderIsSizedFromTheArchitecture) {
  const std::string dir = pftest::scratch_dir("half-download");
  write_folder(dir);
  write_shard(dir + "/" + shard_name(1), 0, 7);
  std::filesystem::create_directories(dir + "/._____temp");
  write_shard(dir + "/._____temp/" + shard_name(2), 7, 2);
  auto spec = load_model_directory(dir);
  ASSERT_TRUE(spec) << spec.error().describe();
  EXPECT_FALSE(spec->exact_weight_bytes.has_value());
  EXPECT_EQ(spec->exact_tensor_count, 0u);
  std::string said;
  for (const auto& a : spec->assumptions) said += a + "\n";
  EXPECT_NE(said.find("names 5 shard files and 4 of them are not in the folder (model-00002-of-00005.safetensors, model-00003-of-00005.safetensors, "
                      "model-00004-of-00005.safetensors and 1 more)"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("ModelScope's ._____temp"), std::string::npos) << said;
  EXPECT_NE(said.find("computed from the architecture"), std::string::npos) << said;

  // fit's weights per device are those 15.26 GiB plus what the engine adds at load (15.30 on vLLM-Ascend), never the 0.70.
  const auto fit = pftest::run_cli("fit " + dir + " --device 910B4 --max-model-len 8192");
  const auto at = fit.out.find("    weights ");
  ASSERT_NE(at, std::string::npos) << fit.out;
  const double weights_gib = std::strtod(fit.out.c_str() + fit.out.find_first_of("0123456789", at), nullptr);
  EXPECT_GE(weights_gib, 15.26) << fit.out;
  EXPECT_LT(weights_gib, 15.40) << fit.out;
  EXPECT_NE(fit.out.find("4 of them are not in the folder"), std::string::npos) << fit.out;
  const auto inspect = pftest::run_cli("inspect " + dir);
  EXPECT_EQ(inspect.code, 0) << inspect.out;
  EXPECT_EQ(inspect.out.find("weights (exact)"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("15.26 GiB computed"), std::string::npos) << inspect.out;
}

// Every shard the index names present (or its header stub, as the hub cache keeps them): the exact sum of the headers,
// 5 x 7 x 100,663,296 B, as before.
TEST(ModelSource, Issue16_CompleteFolderKeepsTheExactShardSum) {
  const std::string dir = pftest::scratch_dir("whole-download");
  write_folder(dir);
  uint64_t total = 0;
  for (int s = 1; s <= 5; ++s) total += write_shard(dir + "/" + shard_name(s), (s - 1) * 7, 7);
  auto spec = load_model_directory(dir);
  ASSERT_TRUE(spec) << spec.error().describe();
  ASSERT_TRUE(spec->exact_weight_bytes.has_value());
  EXPECT_EQ(total, 35ull * 100663296ull);
  EXPECT_EQ(*spec->exact_weight_bytes, total);
  for (const auto& a : spec->assumptions) EXPECT_EQ(a.find("not in the folder"), std::string::npos) << a;
}

// An index whose weight_map is not a map of tensor -> shard is a corrupt file named with its field, exit 2.
TEST(ModelSource, Issue19_IndexWithoutAWeightMapIsCorrupt) {
  const std::string dir = pftest::scratch_dir("bad-index");
  std::filesystem::copy_file(pftest::shared_path("models/Qwen__Qwen3-8B/config.json"), dir + "/config.json");
  write_shard(dir + "/" + shard_name(1), 0, 1);
  for (const std::string& index : {std::string("{\"weight_map\":[\"model-00001-of-00005.safetensors\"]}"), std::string("{\"weight_map\":{\"a\":7}}")}) {
    std::ofstream(dir + "/model.safetensors.index.json") << index;
    auto spec = load_model_directory(dir);
    ASSERT_FALSE(spec) << index;
    EXPECT_EQ(spec.error().kind, ErrorKind::corrupt);
    EXPECT_NE(spec.error().message.find("model.safetensors.index.json: weight_map"), std::string::npos) << spec.error().message;
    const auto fit = pftest::run_cli("fit " + dir + " --device 910B4");
    EXPECT_EQ(fit.code, 2) << fit.out;
  }
}
