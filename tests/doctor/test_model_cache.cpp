// doctor's model-cache check (issue 16, llamacpp30): fake Hugging Face and ModelScope cache trees built in a scratch
// directory from Qwen3-8B's real config.json (../shared/models), with an index and safetensors shards whose headers
// name Qwen3-8B's tensors (shapes cut down so that the shards are a few KB).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/file.hpp"
#include "doctor/doctor.hpp"
#include "../test_support.hpp"

namespace fs = std::filesystem;
namespace dr = preflight::doctor;

namespace {

const std::string k_model = "Qwen/Qwen3-8B";
const std::string k_commit = "b968826d9c46dd6066d109eabc6255188de91218";
constexpr int k_shards = 3;

std::string shard_name(int i) { return "model-0000" + std::to_string(i) + "-of-0000" + std::to_string(k_shards) + ".safetensors"; }

std::string real_config() {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/../shared/models/Qwen__Qwen3-8B/config.json");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// A safetensors file: u64 little-endian header length, the JSON header, then the tensors' bytes. Shard i holds
// two of Qwen3-8B's tensors (rows cut to 16 x 64 BF16 values); returns its data bytes.
uint64_t shard_bytes(int i, std::string& out, nlohmann::json& weight_map) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  const std::vector<std::string> names = i == 1 ? std::vector<std::string>{"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight"}
                                         : i == 2 ? std::vector<std::string>{"model.layers.1.self_attn.q_proj.weight", "model.layers.1.mlp.down_proj.weight"}
                                                  : std::vector<std::string>{"model.norm.weight", "lm_head.weight"};
  for (const auto& n : names) {
    const uint64_t bytes = 16 * 64 * 2;
    header[n] = {{"dtype", "BF16"}, {"shape", {16, 64}}, {"data_offsets", {offset, offset + bytes}}};
    weight_map[n] = shard_name(i);
    offset += bytes;
  }
  const std::string text = header.dump();
  out.clear();
  for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((static_cast<uint64_t>(text.size()) >> (8 * b)) & 0xff));
  out += text;
  out += std::string(offset, '\x3c');
  return offset;
}

// A Hugging Face cache under root/cache/hf holding the whole model: blobs named by index, snapshot links into them.
struct HfCache {
  std::string root, hub, repo, snapshot;
  uint64_t total_data = 0;
  std::vector<uint64_t> data;

  explicit HfCache(const std::string& name, uint64_t index_total = 0) : root(pftest::scratch_dir(name)) {
    hub = root + "/cache/hf";
    repo = hub + "/models--Qwen--Qwen3-8B";
    snapshot = repo + "/snapshots/" + k_commit;
    write(repo + "/refs/main", k_commit);
    fs::create_directories(snapshot);
    add_blob("config.json", real_config(), "c0");
    nlohmann::json weight_map = nlohmann::json::object();
    for (int i = 1; i <= k_shards; ++i) {
      std::string bytes;
      data.push_back(shard_bytes(i, bytes, weight_map));
      total_data += data.back();
      add_blob(shard_name(i), bytes, "s" + std::to_string(i));
    }
    const nlohmann::json index = {{"metadata", {{"total_size", index_total ? index_total : total_data}}}, {"weight_map", weight_map}};
    add_blob("model.safetensors.index.json", index.dump(), "i0");
  }
  void add_blob(const std::string& file, const std::string& bytes, const std::string& blob) {
    write(repo + "/blobs/" + blob, bytes);
    fs::create_symlink("../../blobs/" + blob, snapshot + "/" + file);
  }
  dr::DoctorOptions options() const {
    dr::DoctorOptions o;
    o.root = root;
    o.env = {{"HOME", "/home/u"}, {"HF_HUB_CACHE", "/cache/hf"}};
    o.model = k_model;
    return o;
  }
};

const dr::CheckResult* find_check(const dr::DoctorReport& r, const std::string& id) {
  for (const auto& c : r.checks)
    if (c.id == id) return &c;
  return nullptr;
}

dr::DoctorReport run(const dr::DoctorOptions& o) {
  auto compat = dr::load_compat();
  EXPECT_TRUE(compat.has_value());
  return dr::run_doctor(o, *compat);
}

bool has_evidence(const dr::CheckResult& c, const std::string& fragment) {
  for (const auto& e : c.evidence)
    if (e.find(fragment) != std::string::npos) return true;
  return false;
}

// Replaces the first shard of the snapshot by a link to a file elsewhere under the root, out of the cache.
void link_first_shard_out_of_the_cache(const HfCache& cache) {
  std::string bytes;
  nlohmann::json map;
  shard_bytes(1, bytes, map);
  write(cache.root + "/elsewhere/shard.safetensors", bytes);
  fs::remove(cache.snapshot + "/" + shard_name(1));
  fs::create_symlink(cache.root + "/elsewhere/shard.safetensors", cache.snapshot + "/" + shard_name(1));
}

}  // namespace

TEST(ModelCache, Issue16_WholeHuggingFaceSnapshotIsOk) {
  const HfCache cache("mc-whole");
  const auto report = run(cache.options());
  const auto* hf = find_check(report, "model_cache.huggingface");
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(hf->status, dr::CheckStatus::ok) << hf->summary;
  EXPECT_NE(hf->summary.find("3 shards"), std::string::npos) << hf->summary;
  ASSERT_EQ(report.model_caches.size(), 2u);
  EXPECT_EQ(report.model_caches[0].state, dr::CacheState::complete);
  EXPECT_EQ(report.model_caches[0].revision, k_commit);
  // config.json, the index and three shards, each shard at its header's size: 8 + header + 4096 bytes.
  ASSERT_EQ(report.model_caches[0].files.size(), 5u);
  for (const auto& f : report.model_caches[0].files) {
    EXPECT_EQ(f.state, dr::CachedFileState::ok) << f.name;
    if (f.expected_bytes) EXPECT_EQ(*f.size_bytes, *f.expected_bytes) << f.name;
  }
  const auto* ms = find_check(report, "model_cache.modelscope");
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(ms->status, dr::CheckStatus::skip);
  EXPECT_EQ(report.model_caches[1].state, dr::CacheState::absent);
}

TEST(ModelCache, Issue16_MissingShardIsNamedWithTheCommandThatFinishesIt) {
  const HfCache cache("mc-missing");
  fs::remove(cache.snapshot + "/" + shard_name(2));
  fs::rename(cache.repo + "/blobs/s2", cache.repo + "/blobs/s2.incomplete");
  fs::resize_file(cache.repo + "/blobs/s2.incomplete", 1000);
  const auto report = run(cache.options());
  const auto* hf = find_check(report, "model_cache.huggingface");
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(hf->status, dr::CheckStatus::fail);
  EXPECT_NE(hf->summary.find("missing " + shard_name(2)), std::string::npos) << hf->summary;
  EXPECT_EQ(hf->fix.rfind("hf download Qwen/Qwen3-8B ", 0), 0u) << hf->fix;
  EXPECT_TRUE(has_evidence(*hf, "blobs/s2.incomplete: a download cut short"));
  const auto& st = report.model_caches[0];
  EXPECT_EQ(st.state, dr::CacheState::incomplete);
  // Still to download: the index's total_size less the two whole shards' data = shard 2's 4096 bytes.
  ASSERT_TRUE(st.missing_bytes.has_value());
  EXPECT_EQ(*st.missing_bytes, cache.data[1]);
  EXPECT_TRUE(st.free_bytes.has_value());
  ASSERT_EQ(st.partial.size(), 1u);
  EXPECT_EQ(*st.partial[0].size_bytes, 1000u);
  // Nothing deleted.
  EXPECT_TRUE(fs::exists(cache.repo + "/blobs/s2.incomplete"));
}

TEST(ModelCache, Issue16_ShardShorterThanItsHeaderSaysIsCutShort) {
  const HfCache cache("mc-cut");
  const uint64_t full = fs::file_size(cache.repo + "/blobs/s3");
  fs::resize_file(cache.repo + "/blobs/s3", full - 100);
  const auto report = run(cache.options());
  const auto* hf = find_check(report, "model_cache.huggingface");
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(hf->status, dr::CheckStatus::fail);
  EXPECT_NE(hf->summary.find("cut short " + shard_name(3)), std::string::npos) << hf->summary;
  bool seen = false;
  for (const auto& f : report.model_caches[0].files) {
    if (f.name != shard_name(3)) continue;
    seen = true;
    EXPECT_EQ(f.state, dr::CachedFileState::truncated);
    EXPECT_EQ(*f.size_bytes + 100, *f.expected_bytes);
  }
  EXPECT_TRUE(seen);
}

TEST(ModelCache, Issue16_LinkOutOfTheCacheRootIsNotFollowed) {
  const HfCache cache("mc-outside");
  // A shard link to a file elsewhere under the root (a symlink out of the cache): its size is not read.
  link_first_shard_out_of_the_cache(cache);
  const auto report = run(cache.options());
  const auto* hf = find_check(report, "model_cache.huggingface");
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(hf->status, dr::CheckStatus::warn) << hf->summary;
  EXPECT_EQ(report.model_caches[0].state, dr::CacheState::unverified);
  for (const auto& f : report.model_caches[0].files) {
    if (f.name != shard_name(1)) continue;
    EXPECT_EQ(f.state, dr::CachedFileState::outside_cache);
    EXPECT_FALSE(f.size_bytes.has_value());
  }
}

TEST(ModelCache, Issue16_TooLittleSpaceForTheRestFails) {
  // The index says the weights are 2^60 bytes and a shard is missing: no filesystem here holds the rest.
  const HfCache cache("mc-space", 1ull << 60);
  fs::remove(cache.snapshot + "/" + shard_name(2));
  const auto report = run(cache.options());
  const auto* hf = find_check(report, "model_cache.huggingface");
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(hf->status, dr::CheckStatus::fail);
  EXPECT_NE(hf->summary.find("free for about"), std::string::npos) << hf->summary;
  EXPECT_NE(hf->fix.find("HF_HUB_CACHE"), std::string::npos) << hf->fix;
}

TEST(ModelCache, Issue16_ModelScopeLayoutWithUnfinishedFiles) {
  const std::string root = pftest::scratch_dir("mc-modelscope");
  const std::string dir = root + "/home/u/.cache/modelscope/hub/models/Qwen/Qwen3-8B";
  write(dir + "/config.json", real_config());
  nlohmann::json weight_map = nlohmann::json::object();
  uint64_t total = 0;
  for (int i = 1; i <= k_shards; ++i) {
    std::string bytes;
    total += shard_bytes(i, bytes, weight_map);
    write((i == 3 ? dir + "/._____temp/" : dir + "/") + shard_name(i), i == 3 ? bytes.substr(0, 500) : bytes);
  }
  write(dir + "/model.safetensors.index.json", nlohmann::json({{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}}).dump());
  dr::DoctorOptions o;
  o.root = root;
  o.env = {{"HOME", "/home/u"}};
  o.model = k_model;
  const auto report = run(o);
  const auto* ms = find_check(report, "model_cache.modelscope");
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(ms->status, dr::CheckStatus::fail);
  EXPECT_NE(ms->summary.find("missing " + shard_name(3)), std::string::npos) << ms->summary;
  EXPECT_EQ(ms->fix.rfind("modelscope download --model Qwen/Qwen3-8B", 0), 0u) << ms->fix;
  EXPECT_TRUE(has_evidence(*ms, "._____temp/" + shard_name(3)));
  EXPECT_EQ(find_check(report, "model_cache.huggingface")->status, dr::CheckStatus::skip);
}

TEST(ModelCache, Issue16_DoctorCommandExitsOneOnAnIncompleteCache) {
  const HfCache cache("mc-cli");
  const std::string env = "HOME=/home/u HF_HUB_CACHE=/cache/hf";
  auto whole = pftest::run_cli("doctor " + k_model + " --root " + cache.root + " --json", {.env = env, .with_stderr = false});
  EXPECT_EQ(whole.code, 0) << whole.out;  // nothing else under this root fails either
  const auto j = nlohmann::json::parse(whole.out);
  ASSERT_TRUE(j.contains("model_caches")) << whole.out;
  EXPECT_EQ(j["model_caches"][0]["state"], "complete");
  EXPECT_EQ(j["model_caches"][0]["files"].size(), 5u);
  fs::remove(cache.snapshot + "/" + shard_name(1));
  auto cut = pftest::run_cli("doctor --model " + k_model + " --root " + cache.root, {.env = env});
  EXPECT_EQ(cut.code, 1) << cut.out;
  EXPECT_NE(cut.out.find("incomplete: missing " + shard_name(1)), std::string::npos) << cut.out;
  EXPECT_NE(cut.out.find("fix: hf download Qwen/Qwen3-8B"), std::string::npos) << cut.out;
}

// Issue 19 (hard31): a shard linked out of the cache beside a shard that is a FIFO (a blob replaced by a named pipe):
// neither is followed or waited on, both are named, and the summary listed them run together
// ("model-00001-of-00003.safetensorsmodel-00002-of-00003.safetensors could not be checked").
TEST(ModelCache, Issue19_LinkOutAndFifoShardAreBothNamedApart) {
  const HfCache cache("mc-fifo");
  link_first_shard_out_of_the_cache(cache);
  fs::remove(cache.repo + "/blobs/s2");
  ASSERT_EQ(::mkfifo((cache.repo + "/blobs/s2").c_str(), 0600), 0);
  const auto report = run(cache.options());
  const auto* hf = find_check(report, "model_cache.huggingface");
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(hf->status, dr::CheckStatus::warn) << hf->summary;
  EXPECT_EQ(hf->summary, "present, but " + shard_name(1) + ", " + shard_name(2) + " could not be checked");
  EXPECT_TRUE(has_evidence(*hf, shard_name(2) + ": unreadable (not a regular file)")) << hf->summary;
}
