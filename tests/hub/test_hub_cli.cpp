// The hub through the real binary: `inspect hf:...` against nginx, the token never reaching stdout,
// stderr or the metadata cache, --offline, the local Hugging Face cache read with no request; and the
// 163-shard DeepSeek-V3-layout sizing benchmark (cold and warm metadata cache).
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <set>

#include "base/json_util.hpp"
#include "hub/model_fetch.hpp"
#include "model/model_source.hpp"
#include "hub_fixture.hpp"

using namespace preflight;
using namespace pfhub;

namespace {

using Run = pftest::CliRun;
// The real binary with the caller's hub variables removed; stdout and stderr together.
Run run_cli(const std::string& env, const std::string& args) {
  return pftest::run_cli(args, {"env -u HF_TOKEN -u HUGGING_FACE_HUB_TOKEN -u HF_ENDPOINT " + env});
}

// Every byte of every file under `dir`.
std::string all_file_bytes(const std::string& dir) {
  std::string out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out += e.path().string() + "\n" + read_file(e.path().string());
  }
  return out;
}

const char* k_secret = "hf_SeCrEt7e1b5c9a";

}  // namespace

TEST(HubCli, TokenIsSentButNeverPrintedOrCached) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-token-cli");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "/private", 2, 1);
  const std::string extra = std::string("    location /private/ { if ($http_authorization != \"Bearer ") + k_secret + "\") { return 401; } }\n";
  Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www", extra));
  const std::string env = "XDG_CACHE_HOME=" + dir + "/xdg HF_HOME=" + dir + "/hfhome HF_ENDPOINT=" + nginx.url("/private");

  // Without the token the server refuses: a clear error naming the repo and file.
  auto denied = run_cli(env, "inspect hf:acme/tiny-sharded");
  EXPECT_EQ(denied.code, 3) << denied.out;  // issue 14: a network-kind error (the environment lacks the token) exits 3
  EXPECT_NE(denied.out.find("hf:acme/tiny-sharded@main: config.json: access denied (HTTP 401)"), std::string::npos) << denied.out;
  EXPECT_NE(denied.out.find("set HF_TOKEN"), std::string::npos) << denied.out;

  auto ok = run_cli(env + " HF_TOKEN=" + k_secret, "inspect hf:acme/tiny-sharded --json");
  EXPECT_EQ(ok.code, 0) << ok.out;
  // 2 shards x 1 tensor x 1,073,741,824 bytes.
  EXPECT_NE(ok.out.find("\"exact_bytes\": 2147483648"), std::string::npos) << ok.out;
  EXPECT_EQ(ok.out.find(k_secret), std::string::npos);

  auto text = run_cli(env + " HF_TOKEN=" + k_secret, "fit hf:acme/tiny-sharded --device H100 --refresh");
  EXPECT_NE(text.out.find("hf:acme/tiny-sharded@main"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(k_secret), std::string::npos);

  // A wrong-token 401 and a 404 with the token set: errors without the token.
  auto wrong = run_cli(env + " HF_TOKEN=" + k_secret + "x", "inspect hf:acme/tiny-sharded --refresh");
  EXPECT_EQ(wrong.code, 3);
  EXPECT_NE(wrong.out.find("check HF_TOKEN"), std::string::npos) << wrong.out;
  EXPECT_EQ(wrong.out.find(k_secret), std::string::npos) << wrong.out;
  auto missing = run_cli(env + " HF_TOKEN=" + k_secret, "inspect hf:acme/absent");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.out.find("hf:acme/absent@main: config.json: not found (HTTP 404)"), std::string::npos) << missing.out;
  EXPECT_EQ(missing.out.find(k_secret), std::string::npos) << missing.out;

  // The token file works too, and nothing under the cache holds the token.
  write_file(dir + "/hfhome/token", std::string(k_secret) + "\n");
  auto from_file = run_cli(env, "inspect hf:acme/tiny-sharded --refresh --json");
  EXPECT_EQ(from_file.code, 0) << from_file.out;
  const std::string cached = all_file_bytes(dir + "/xdg");
  EXPECT_NE(cached.find("manifest.json"), std::string::npos);
  EXPECT_EQ(cached.find(k_secret), std::string::npos);
  EXPECT_EQ(read_file(dir + "/nginx/access.log").find(k_secret), std::string::npos);
}

TEST(HubCli, OfflineUsesTheMetadataCacheAndLocalHubCacheNeedsNoRequest) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-offline-cli");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "", 2, 1);
  Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  const std::string env = "XDG_CACHE_HOME=" + dir + "/xdg HF_HOME=" + dir + "/hfhome";
  auto cold = run_cli(env + " HF_ENDPOINT=" + nginx.url(), "inspect hf:acme/tiny-sharded --json");
  ASSERT_EQ(cold.code, 0) << cold.out;
  const int port = nginx.port();
  nginx.stop();
  // The server is gone: --offline and the default both answer from the metadata cache.
  auto offline = run_cli(env + " HF_ENDPOINT=http://127.0.0.1:" + std::to_string(port), "inspect hf:acme/tiny-sharded --offline --json");
  EXPECT_EQ(offline.code, 0) << offline.out;
  EXPECT_NE(offline.out.find("\"exact_bytes\": 2147483648"), std::string::npos) << offline.out;
  auto not_cached = run_cli(env + " HF_ENDPOINT=http://127.0.0.1:" + std::to_string(port), "inspect hf:acme/other --offline");
  EXPECT_EQ(not_cached.code, 2);
  EXPECT_NE(not_cached.out.find("--offline"), std::string::npos) << not_cached.out;

  // A model in the Hugging Face cache (models--org--name/snapshots/<commit>, refs/main) is read from disk.
  const std::string repo = dir + "/hfhome/hub/models--acme--local";
  write_file(repo + "/refs/main", "0123abcd");
  write_file(repo + "/snapshots/0123abcd/config.json", read_file(pftest::shared_path("models/Qwen__Qwen3-8B/config.json")));
  auto local = run_cli(env + " HF_ENDPOINT=http://127.0.0.1:" + std::to_string(port), "inspect hf:acme/local --json");
  EXPECT_EQ(local.code, 0) << local.out;
  EXPECT_NE(local.out.find("local hub cache (no request)"), std::string::npos) << local.out;
}

// ---------------------------------------------------------------- benchmark

namespace {
// DeepSeek-V3's checkpoint layout: 61 layers + 1 MTP layer, FP8 (F8_E4M3) linear weights with
// 128x128-block F32 scales, 256 routed + 1 shared expert in layers 3..61, spread over 163 shards.
std::vector<TensorDef> deepseek_v3_tensors() {
  std::vector<TensorDef> out;
  auto fp8 = [&](const std::string& name, uint64_t rows, uint64_t cols) {
    out.push_back({name + ".weight", "F8_E4M3", {rows, cols}, rows * cols});
    const uint64_t sr = (rows + 127) / 128, sc = (cols + 127) / 128;
    out.push_back({name + ".weight_scale_inv", "F32", {sr, sc}, sr * sc * 4});
  };
  auto bf16 = [&](const std::string& name, std::vector<uint64_t> shape) {
    uint64_t n = 1;
    for (auto d : shape) n *= d;
    out.push_back({name, "BF16", shape, n * 2});
  };
  bf16("model.embed_tokens.weight", {129280, 7168});
  for (int l = 0; l <= 61; ++l) {
    const std::string p = "model.layers." + std::to_string(l);
    bf16(p + ".input_layernorm.weight", {7168});
    bf16(p + ".post_attention_layernorm.weight", {7168});
    fp8(p + ".self_attn.q_a_proj", 1536, 7168);
    bf16(p + ".self_attn.q_a_layernorm.weight", {1536});
    fp8(p + ".self_attn.q_b_proj", 24576, 1536);
    fp8(p + ".self_attn.kv_a_proj_with_mqa", 576, 7168);
    bf16(p + ".self_attn.kv_a_layernorm.weight", {512});
    fp8(p + ".self_attn.kv_b_proj", 32768, 512);
    fp8(p + ".self_attn.o_proj", 7168, 16384);
    if (l < 3) {
      fp8(p + ".mlp.gate_proj", 18432, 7168);
      fp8(p + ".mlp.up_proj", 18432, 7168);
      fp8(p + ".mlp.down_proj", 7168, 18432);
      continue;
    }
    bf16(p + ".mlp.gate.weight", {256, 7168});
    out.push_back({p + ".mlp.gate.e_score_correction_bias", "F32", {256}, 1024});
    for (int e = 0; e <= 256; ++e) {
      const std::string ep = e < 256 ? p + ".mlp.experts." + std::to_string(e) : p + ".mlp.shared_experts";
      fp8(ep + ".gate_proj", 2048, 7168);
      fp8(ep + ".up_proj", 2048, 7168);
      fp8(ep + ".down_proj", 7168, 2048);
    }
  }
  bf16("model.norm.weight", {7168});
  bf16("lm_head.weight", {129280, 7168});
  return out;
}
}  // namespace

TEST(HubBench, DeepSeekV3Layout163ShardsColdAndWarm) {
  REQUIRE_NGINX();
#if defined(__SANITIZE_ADDRESS__)
  // Parsing 20 MB of headers takes minutes in a Debug+ASan build, and its timings mean nothing; the
  // same code paths run under the sanitizers in HubFetch.* and HubFault.*.
  GTEST_SKIP() << "benchmark skipped in a sanitized build; run bench/hub_sizing.sh";
#endif
  const pfhub::TempTree tree("hub-bench");
  const std::string& dir = tree.path;
  const std::string base = dir + "/www/deepseek-ai/DeepSeek-V3/resolve/main/";
  write_file(base + "config.json", read_file(pftest::shared_path("models/deepseek-ai__DeepSeek-V3/config.json")));
  const auto tensors = deepseek_v3_tensors();
  constexpr int k_shards = 163;
  nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  uint64_t expected_weight_bytes = 0, declared = 0;
  const size_t per = (tensors.size() + k_shards - 1) / k_shards;
  for (int s = 0; s < k_shards; ++s) {
    const size_t b = static_cast<size_t>(s) * per, e = std::min(tensors.size(), b + per);
    std::vector<TensorDef> part(tensors.begin() + static_cast<std::ptrdiff_t>(b), tensors.begin() + static_cast<std::ptrdiff_t>(e));
    for (const auto& t : part) {
      index["weight_map"][t.name] = shard_name(s, k_shards);
      if (t.name.rfind("model.layers.61.", 0) != 0) expected_weight_bytes += t.bytes;  // MTP layer excluded
    }
    uint64_t data = 0;
    const std::string prefix = safetensors_prefix(part, &data);
    declared += write_sparse_shard(base + shard_name(s, k_shards), prefix, data);
  }
  write_file(base + "model.safetensors.index.json", index.dump());
  Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  hub::ModelFetchOptions o;
  o.endpoint = nginx.url();
  o.cache_root = dir + "/cache";
  o.token = std::string();
  const auto ref = *hub::parse_hub_ref("hf:deepseek-ai/DeepSeek-V3");
  using clk = std::chrono::steady_clock;
  auto ms_since = [](clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); };
  auto t0 = clk::now();
  auto cold = hub::fetch_model_metadata(ref, o);
  const double cold_fetch_ms = ms_since(t0);
  ASSERT_TRUE(cold) << cold.error().describe();
  t0 = clk::now();
  auto cold_spec = model::load_model_directory(cold->path);
  const double cold_parse_ms = ms_since(t0);
  ASSERT_TRUE(cold_spec) << cold_spec.error().describe();
  EXPECT_EQ(cold_spec->exact_weight_bytes.value_or(0), expected_weight_bytes);
  EXPECT_EQ(cold->declared_bytes, declared);
  const auto log = nginx.access_log();
  uint64_t sent = 0;
  std::set<uint64_t> connections;
  for (const auto& e : log) {
    sent += e.bytes_sent;
    connections.insert(e.connection);
  }
  EXPECT_LT(log.size(), static_cast<size_t>(k_shards + 5));
  // Connection reuse: 167 requests over at most max_parallel (16) connections.
  EXPECT_LE(connections.size(), 16u);
  t0 = clk::now();
  auto warm = hub::fetch_model_metadata(ref, o);
  const double warm_fetch_ms = ms_since(t0);
  ASSERT_TRUE(warm);
  t0 = clk::now();
  auto warm_spec = model::load_model_directory(warm->path);
  const double warm_parse_ms = ms_since(t0);
  ASSERT_TRUE(warm_spec);
  EXPECT_TRUE(warm->from_cache);
  EXPECT_EQ(nginx.access_log().size(), log.size());
  EXPECT_EQ(warm_spec->exact_weight_bytes, cold_spec->exact_weight_bytes);
  uint64_t cache_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/cache")) cache_bytes += e.is_regular_file() ? e.file_size() : 0;
  const nlohmann::json record = {{"fixture", "DeepSeek-V3 layout, 163 shards"}, {"tensors", tensors.size()}, {"declared_bytes", declared},
                                 {"exact_weight_bytes", expected_weight_bytes}, {"cold_fetch_ms", cold_fetch_ms}, {"cold_parse_ms", cold_parse_ms}, {"cold_requests", log.size()}, {"cold_connections", connections.size()},
                                 {"cold_bytes_sent_by_nginx", sent}, {"cold_bytes_received", cold->stats.bytes_received},
                                 {"warm_fetch_ms", warm_fetch_ms}, {"warm_parse_ms", warm_parse_ms}, {"warm_requests", nginx.access_log().size() - log.size()}, {"cache_bytes", cache_bytes}};
  RecordProperty("record", record.dump());
  if (const char* out = std::getenv("PREFLIGHT_HUB_BENCH_OUT")) write_file(out, record.dump(2) + "\n");
  std::printf("hub sizing benchmark: %s\n", record.dump().c_str());
}

// Issue 19 item 7: a password in HF_ENDPOINT was printed with every error (the URL is the error's
// context). Now the userinfo is replaced by "***" wherever a URL is shown.
TEST(HubCli, Issue19_EndpointPasswordIsNeverPrinted) {
  const pfhub::TempTree tree("hub-endpoint-password");
  const int port = pfhub::free_port();  // nothing listens: every attempt fails with a connection error
  const std::string env = "XDG_CACHE_HOME=" + tree.path + "/xdg HF_HOME=" + tree.path + "/hfhome HF_ENDPOINT=http://alice:pw-Zq81xK@127.0.0.1:" + std::to_string(port);
  auto r = run_cli(env, "inspect hf:acme/tiny-sharded");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("http://***@127.0.0.1:" + std::to_string(port)), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("pw-Zq81xK"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("alice"), std::string::npos) << r.out;
  EXPECT_EQ(all_file_bytes(tree.path).find("pw-Zq81xK"), std::string::npos);
}

// Issue 19 item 9: a config.json that parses but that the model reader rejects was cached, and every
// later run failed from the cache without a hint. Now the fetch is refused before the commit, and
// an entry that a reader rejects later (cached by an older version) says --refresh.
TEST(HubCli, Issue19_InvalidConfigIsNotCachedAndACachedOneSaysRefresh) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-invalid-config");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "", 2, 1);
  const std::string served_config = dir + "/www/acme/tiny-sharded/resolve/main/config.json";
  const std::string good = read_file(served_config);
  std::string bad = good;
  const auto kv = bad.find("\"num_key_value_heads\": 8");
  ASSERT_NE(kv, std::string::npos);
  bad.replace(kv, 24, "\"num_key_value_heads\": 7");  // 32 heads are not a multiple of 7; same length
  write_file(served_config, bad);
  Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  const std::string env = "XDG_CACHE_HOME=" + dir + "/xdg HF_HOME=" + dir + "/hfhome HF_ENDPOINT=" + nginx.url();

  auto refused = run_cli(env, "inspect hf:acme/tiny-sharded");
  EXPECT_NE(refused.code, 0) << refused.out;
  EXPECT_NE(refused.out.find("hf:acme/tiny-sharded@main: fetched metadata rejected, not cached"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("num_attention_heads (32) is not a multiple of num_key_value_heads (7)"), std::string::npos) << refused.out;
  EXPECT_EQ(refused.out.find(".tmp-"), std::string::npos) << refused.out;
  EXPECT_EQ(all_file_bytes(dir + "/xdg"), "");  // nothing committed, no staging left

  // The hub fixes the file: the next run fetches it (nothing stale in the way) and caches it.
  write_file(served_config, good);
  auto fixed = run_cli(env, "inspect hf:acme/tiny-sharded --json");
  ASSERT_EQ(fixed.code, 0) << fixed.out;

  // An entry cached before the reader got stricter: same size, so the manifest check passes.
  std::string cached_config;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/xdg")) {
    if (e.path().filename() == "config.json") cached_config = e.path().string();
  }
  ASSERT_FALSE(cached_config.empty());
  write_file(cached_config, bad);
  auto stale = run_cli(env, "inspect hf:acme/tiny-sharded");
  EXPECT_NE(stale.code, 0) << stale.out;
  EXPECT_NE(stale.out.find("is not a multiple of num_key_value_heads (7)"), std::string::npos) << stale.out;
  EXPECT_NE(stale.out.find("--refresh fetches it again"), std::string::npos) << stale.out;
  auto refreshed = run_cli(env, "inspect hf:acme/tiny-sharded --refresh --json");
  EXPECT_EQ(refreshed.code, 0) << refreshed.out;
  EXPECT_EQ(read_file(cached_config), good);
}

// ---------------------------------------------------------------- issue 16: quantized checkpoints on the hub

namespace {
Json json_out(const Run& r) {
  auto j = parse_json(r.out, "stdout");
  EXPECT_TRUE(j.has_value()) << r.out.substr(0, 400);
  return j ? *j : Json();
}

double weights_term_gib(const Json& fit) {
  for (const auto& t : fit["memory_per_device"]["terms"])
    if (t["name"] == "weights") return t["gib"].get<double>();
  return -1;
}

// Serves `files` (name -> path under ../shared/models) as the repo org/name at revision main.
void serve_repo(const std::string& www, const std::string& repo, const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, shared] : files) write_file(www + "/" + repo + "/resolve/main/" + name, read_file(pftest::shared_path(shared)));
}
}  // namespace

// A repository whose descriptor says what it is, fetched through nginx in hub mode: `fit hf:org/name` sizes
// it as that variant and `plan hf:org/name` serves that repo id with no --quantization (vLLM reads the
// format from config.json's quantization_config / hf_quant_config.json) and no conversion step.
// Both repos publish only config.json (+ hf_quant_config.json), so the weights come from the descriptor.
// Qwen3-32B (hidden 5120, intermediate 25600, 64 layers, 64 x 128 query and 8 x 128 KV heads, vocab 151936,
// untied, max_position_embeddings 40960), per layer: q, o 8192x5120 = 41,943,040 elements each; k, v 1024x5120
// = 5,242,880 each; gate, up, down 25600x5120 = 131,072,000 each; norms (5120 + 5120 + 128 + 128) x 2 B = 20,992.
// Outside the layers: embed_tokens + lm_head bf16 2 x 151936 x 5120 x 2 B = 3,111,649,280; final norm 10,240;
// vLLM's rotary cos/sin cache 40960 x 128 x 2 B = 10,485,760.
//  - Qwen/Qwen3-32B-FP8 (config.json quantization_config: fp8, e4m3, weight_block_size [128, 128]): 1 byte per
//    weight + an fp32 scale per 128x128 block: q, o 41,943,040 + 64 x 40 x 4 = 41,953,280 each; k, v 5,242,880
//    + 8 x 40 x 4 = 5,244,160 each; gate, up, down 131,072,000 + 200 x 40 x 4 = 131,104,000 each;
//    layer 487,727,872 (norms included), x 64 = 31,214,583,808; + 3,121,659,520 + 10,240 + 10,485,760
//    = 34,336,729,088 bytes = 31.978 GiB on one H100.
//  - nvidia/Qwen3-32B-NVFP4 (hf_quant_config.json: ModelOpt NVFP4, group 16, lm_head excluded): 0.5 byte per
//    weight + one fp8 scale per 16 = 0.5625 B: 487,587,840 linear elements x 0.5625 = 274,268,160 + norms
//    20,992 = 274,289,152 per layer, x 64 = 17,554,505,728; + 3,111,649,280 + 10,240 + 10,485,760
//    = 20,676,651,008 bytes = 19.257 GiB on one B200.
TEST(HubCli, Issue16_PublishedQuantizedRepoThroughNginxIsSizedAsItsVariant) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-quantized-repo");
  const std::string& dir = tree.path;
  serve_repo(dir + "/www", "Qwen/Qwen3-32B-FP8", {{"config.json", "models/Qwen__Qwen3-32B-FP8/config.json"}});
  serve_repo(dir + "/www", "nvidia/Qwen3-32B-NVFP4",
             {{"config.json", "models/nvidia__Qwen3-32B-NVFP4/config.json"}, {"hf_quant_config.json", "models/nvidia__Qwen3-32B-NVFP4/hf_quant_config.json"}});
  Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  const std::string env = "XDG_CACHE_HOME=" + dir + "/xdg HF_HOME=" + dir + "/hfhome HF_ENDPOINT=" + nginx.url();
  struct Case {
    std::string repo, device;
    double weight_bytes;
    std::string variant_name, scheme_words;
  };
  const std::vector<Case> cases = {
      {"Qwen/Qwen3-32B-FP8", "H100-SXM", 34336729088.0, "FP8 block 128x128 (DeepSeek / Qwen FP8 checkpoints)", "fp32 scale per 128x128 block"},
      {"nvidia/Qwen3-32B-NVFP4", "B200", 20676651008.0, "ModelOpt NVFP4 (fp4 e2m1, fp8 scale per 16)", "ModelOpt NVFP4"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.repo);
    const auto fit = run_cli(env, "fit hf:" + c.repo + " --device " + c.device + " --json");
    ASSERT_EQ(fit.code, 0) << fit.out.substr(0, 600);
    const Json f = json_out(fit);
    const double want = c.weight_bytes / 1073741824.0;
    EXPECT_NEAR(weights_term_gib(f), want, 0.001 * want);
    EXPECT_NE(f["settings"]["weight_scheme"].get<std::string>().find(c.scheme_words), std::string::npos) << f["settings"].dump();
    // The descriptor files came through nginx: the hub's own quantization descriptor was asked for.
    bool asked_descriptor = false;
    for (const auto& e : nginx.access_log())
      if (e.uri == "/" + c.repo + "/resolve/main/hf_quant_config.json") asked_descriptor = true;
    EXPECT_TRUE(asked_descriptor);

    const auto plan = run_cli(env, "plan hf:" + c.repo + " --devices " + c.device + " --context 32768 --json");
    ASSERT_EQ(plan.code, 0) << plan.out.substr(0, 600);
    const Json p = json_out(plan);
    ASSERT_FALSE(p["recommended"].empty()) << plan.out.substr(0, 600);
    const Json& row = p["recommended"][0];
    EXPECT_NEAR(row["weights_gib_per_device"].get<double>(), want, 0.001 * want);
    EXPECT_EQ(row["variant"], c.variant_name);  // the variant's full name, not the storage detail
    const std::string serve = row["launch"]["serve"].get<std::string>();
    EXPECT_EQ(serve.rfind("vllm serve " + c.repo + " ", 0), 0u) << serve;
    EXPECT_EQ(serve.find("--quantization"), std::string::npos) << serve;  // vLLM reads the format from the checkpoint
    EXPECT_TRUE(row["launch"]["prepare"].empty()) << row["launch"].dump();  // no conversion: it already has the format
    EXPECT_EQ(row["launch"]["checkpoint"], c.repo);
  }
}
