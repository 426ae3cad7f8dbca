// hub/model_fetch over the network: sizing a sharded model served by
// a real nginx on loopback (exact weight bytes, bytes and requests on the wire); one test per fault
// (nginx where it can produce the fault, a scripted loopback server where it cannot); the metadata
// cache's atomicity; the token never reaching output or cache; the CLI end to end.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <set>

#include "base/file.hpp"
#include "hub/hub_ref.hpp"
#include "hub/metadata_cache.hpp"
#include "hub/model_fetch.hpp"
#include "model/gguf_reader.hpp"
#include "model/header_stub.hpp"
#include "model/model_source.hpp"
#include "../test_support.hpp"
#include "hub_fixture.hpp"

using namespace preflight;
using namespace pfhub;

namespace {

hub::ModelFetchOptions fast_options(const std::string& endpoint, const std::string& cache_root) {
  hub::ModelFetchOptions o;
  o.endpoint = endpoint;
  o.cache_root = cache_root;
  o.token = std::string();
  o.fetch.backoff_base_ms = 20;
  o.fetch.backoff_max_ms = 2000;
  o.fetch.request_timeout_ms = 10'000;
  return o;
}

// No entry, and no staging directory left behind, anywhere under the cache root.
void expect_no_entry(const std::string& cache_root) {
  if (!pfhub::fs::exists(cache_root)) return;
  for (const auto& e : pfhub::fs::recursive_directory_iterator(cache_root)) {
    EXPECT_FALSE(e.is_regular_file()) << "cache kept " << e.path();
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << "staging left " << e.path();
  }
}

hub::HubRef tiny_ref() { return *hub::parse_hub_ref("hf:acme/tiny-sharded"); }

}  // namespace

// ---------------------------------------------------------------- happy path on real nginx

TEST(HubFetch, ShardedModelFromNginxReadsOnlyHeaders) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-happy");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "", 4, 3);
  pfhub::Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  const std::string cache = dir + "/cache";
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(nginx.url(), cache));
  ASSERT_TRUE(fetched) << fetched.error().describe() << "\n" << nginx.error_log();
  EXPECT_FALSE(fetched->from_cache);
  auto spec = model::load_model_directory(fetched->path);
  ASSERT_TRUE(spec) << spec.error().describe();
  // 4 shards x 3 tensors x (16384 x 32768 BF16 = 1,073,741,824 bytes) = 12,884,901,888 bytes.
  ASSERT_TRUE(spec->exact_weight_bytes);
  EXPECT_EQ(*spec->exact_weight_bytes, 12'884'901'888ull);
  EXPECT_EQ(spec->exact_tensor_count, 12u);
  uint64_t on_server = 0;
  for (int s = 0; s < 4; ++s) on_server += pfhub::fs::file_size(dir + "/www/acme/tiny-sharded/resolve/main/" + shard_name(s, 4));
  EXPECT_EQ(fetched->declared_bytes, on_server);
  EXPECT_GT(on_server, 12ull << 30);

  const auto log = nginx.access_log();
  uint64_t bytes_sent = 0;
  int shard_requests = 0;
  for (const auto& e : log) {
    bytes_sent += e.bytes_sent;
    if (e.uri.find(".safetensors") != std::string::npos && e.uri.find(".json") == std::string::npos) {
      ++shard_requests;
      EXPECT_EQ(e.status, 206) << e.uri;
      EXPECT_EQ(e.range.rfind("bytes=0-", 0), 0u) << e.uri << " " << e.range;
    }
  }
  EXPECT_EQ(shard_requests, 4);
  // The shard round reuses the first round's connections (4 parallel requests, then 4 more).
  std::set<uint64_t> connections;
  for (const auto& e : log) connections.insert(e.connection);
  EXPECT_LT(connections.size(), log.size());
  EXPECT_LT(bytes_sent, 1u << 20) << "bytes sent by nginx";
  EXPECT_LT(log.size(), 4u + 5u) << "requests seen by nginx";
  EXPECT_EQ(fetched->stats.requests, log.size());
  EXPECT_LT(fetched->stats.bytes_received, 1u << 20);
  RecordProperty("nginx_requests", static_cast<int>(log.size()));
  RecordProperty("nginx_bytes_sent", std::to_string(bytes_sent));

  // Warm: the entry answers with no request.
  auto warm = hub::fetch_model_metadata(tiny_ref(), fast_options(nginx.url(), cache));
  ASSERT_TRUE(warm);
  EXPECT_TRUE(warm->from_cache);
  EXPECT_EQ(nginx.access_log().size(), log.size());
  // Refresh refetches and replaces the entry.
  auto opts = fast_options(nginx.url(), cache);
  opts.cache = hub::CachePolicy::refresh;
  auto refreshed = hub::fetch_model_metadata(tiny_ref(), opts);
  ASSERT_TRUE(refreshed) << refreshed.error().describe();
  EXPECT_FALSE(refreshed->from_cache);
  EXPECT_EQ(nginx.access_log().size(), 2 * log.size());
  // Offline with nothing cached for another repo: a clear error, no request.
  auto off = fast_options(nginx.url(), cache);
  off.cache = hub::CachePolicy::offline;
  auto missing = hub::fetch_model_metadata(*hub::parse_hub_ref("hf:acme/other"), off);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  EXPECT_NE(missing.error().message.find("--offline"), std::string::npos);
}

TEST(HubFetch, ModelScopeFileApiOnNginx) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-ms");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "/ms", 2, 1);
  pfhub::fs::rename(dir + "/www/ms/acme/tiny-sharded/resolve/main", dir + "/www/ms/acme/tiny-sharded/master");
  pfhub::Nginx nginx;
  const std::string extra = R"(    location ~ ^/api/v1/models/(?<org>[^/]+)/(?<name>[^/]+)/repo$ { rewrite ^ /ms/$org/$name/$arg_Revision/$arg_FilePath break; })";
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www", extra));
  auto fetched = hub::fetch_model_metadata(*hub::parse_hub_ref("ms:acme/tiny-sharded"), fast_options(nginx.url(), dir + "/cache"));
  ASSERT_TRUE(fetched) << fetched.error().describe() << "\n" << nginx.error_log();
  auto spec = model::load_model_directory(fetched->path);
  ASSERT_TRUE(spec) << spec.error().describe();
  // 2 shards x 1 tensor x 1,073,741,824 bytes.
  EXPECT_EQ(spec->exact_weight_bytes.value_or(0), 2'147'483'648ull);
  for (const auto& e : nginx.access_log()) EXPECT_EQ(e.uri.rfind("/api/v1/models/acme/tiny-sharded/repo?Revision=master&FilePath=", 0), 0u) << e.uri;
}

TEST(HubFetch, GgufHeaderByRange) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-gguf");
  const std::string& dir = tree.path;
  // GGUF v3: magic, version, 1 tensor, 4 key-values (general.architecture = "llama" and the three
  // numbers the model reader needs before the entry may be cached), tensor info "w" 2-D
  // [32768, 16384] F16 at offset 0 (1 GiB); then padded to 32 and a sparse data section.
  std::string g;
  auto u32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) g += static_cast<char>((v >> (8 * i)) & 0xff); };
  auto u64 = [&](uint64_t v) { for (int i = 0; i < 8; ++i) g += static_cast<char>((v >> (8 * i)) & 0xff); };
  auto str = [&](const std::string& s) { u64(s.size()); g += s; };
  g += "GGUF";
  u32(3);
  u64(1);
  u64(4);
  str("general.architecture");
  u32(8);
  str("llama");
  for (const auto& [key, value] : {std::pair<const char*, uint32_t>{"llama.block_count", 1}, {"llama.embedding_length", 16384}, {"llama.attention.head_count", 128}}) {
    str(key);
    u32(4);  // UINT32
    u32(value);
  }
  str("w");
  u32(2);
  u64(32768);
  u64(16384);
  u32(1);
  u64(0);
  while (g.size() % 32) g += '\0';
  const std::string file = dir + "/www/acme/m-GGUF/resolve/main/m-F16.gguf";
  pfhub::write_sparse_shard(file, g, k_gib_tensor);
  pfhub::Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  auto fetched = hub::fetch_model_metadata(*hub::parse_hub_ref("hf:acme/m-GGUF/m-F16.gguf"), fast_options(nginx.url(), dir + "/cache"));
  ASSERT_TRUE(fetched) << fetched.error().describe();
  EXPECT_EQ(fetched->declared_bytes, g.size() + k_gib_tensor);
  auto stub = model::load_header_stub(fetched->path);
  ASSERT_TRUE(stub);
  EXPECT_EQ(stub->file_size_bytes, pfhub::fs::file_size(file));
  auto gguf = model::parse_gguf_prefix(stub->prefix.data(), stub->prefix.size(), stub->file_size_bytes, "m-F16.gguf");
  ASSERT_TRUE(gguf) << gguf.error().describe();
  ASSERT_EQ(gguf->tensors.size(), 1u);
  EXPECT_EQ(gguf->tensors[0].bytes, k_gib_tensor);  // 32768 x 16384 F16
  const auto log = nginx.access_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].range, "bytes=0-1048575");
  // One range request for the first MiB (k_gguf_first_read_bytes) of a 1 GiB file, which holds the header.
  EXPECT_EQ(log[0].status, 206);
  EXPECT_LT(log[0].bytes_sent, (1u << 20) + 1024);
}

TEST(HubFetch, DamagedEntryIsFetchedAgainOrRefusedOffline) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-damaged");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "", 2, 1);
  pfhub::Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  auto first = hub::fetch_model_metadata(tiny_ref(), fast_options(nginx.url(), dir + "/cache"));
  ASSERT_TRUE(first) << first.error().describe();
  const size_t requests = nginx.access_log().size();
  // A crash after the rename could leave a short file: cut a stub in half.
  const std::string stub = first->path + "/" + shard_name(0, 2) + ".header";
  pfhub::fs::resize_file(stub, pfhub::fs::file_size(stub) / 2);
  auto offline = fast_options(nginx.url(), dir + "/cache");
  offline.cache = hub::CachePolicy::offline;
  auto refused = hub::fetch_model_metadata(tiny_ref(), offline);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::corrupt);
  EXPECT_NE(refused.error().message.find("cached entry is damaged (model-00001-of-00002.safetensors.header missing or of the wrong size)"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(nginx.access_log().size(), requests);
  auto again = hub::fetch_model_metadata(tiny_ref(), fast_options(nginx.url(), dir + "/cache"));
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_FALSE(again->from_cache);
  EXPECT_EQ(nginx.access_log().size(), 2 * requests);
  EXPECT_EQ(model::load_model_directory(again->path)->exact_weight_bytes.value_or(0), 2'147'483'648ull);
}

// ---------------------------------------------------------------- faults

TEST(HubFault, RedirectChainOnNginx) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-redirect");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "", 2, 1);
  const std::string extra =
      "    location /hop1/ { rewrite ^/hop1/(.*)$ /hop2/$1 redirect; }\n"
      "    location /hop2/ { rewrite ^/hop2/(.*)$ /$1 redirect; }\n";
  pfhub::Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www", extra));
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(nginx.url("/hop1"), dir + "/cache"));
  ASSERT_TRUE(fetched) << fetched.error().describe();
  auto spec = model::load_model_directory(fetched->path);
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->exact_weight_bytes.value_or(0), 2'147'483'648ull);
  int redirects = 0;
  for (const auto& e : nginx.access_log()) redirects += e.status == 302;
  // config + index + 2 quant descriptors + 2 shards, each through two hops.
  EXPECT_EQ(redirects, 12);
  EXPECT_EQ(fetched->stats.requests, nginx.access_log().size());
}

TEST(HubFault, NotFoundOnOneShardOnNginx) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-404");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "", 3, 1, {1});
  pfhub::Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(nginx.url(), dir + "/cache"));
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().kind, ErrorKind::not_found);
  EXPECT_NE(fetched.error().message.find("hf:acme/tiny-sharded@main: model-00002-of-00003.safetensors: not found (HTTP 404)"), std::string::npos)
      << fetched.error().message;
  expect_no_entry(dir + "/cache");
}

TEST(HubFault, HeaderLengthLargerThanFileOnNginx) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-hugeheader");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "", 2, 1);
  // Shard 2 claims a 50 MB header in a 1 MB file.
  std::string bogus(8, '\0');
  const uint64_t n = 50'000'000;
  for (int i = 0; i < 8; ++i) bogus[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  const std::string shard = dir + "/www/acme/tiny-sharded/resolve/main/" + shard_name(1, 2);
  pfhub::write_sparse_shard(shard, bogus + "{}", 1'000'000);
  pfhub::Nginx nginx;
  ASSERT_TRUE(nginx.start(dir + "/nginx", dir + "/www"));
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(nginx.url(), dir + "/cache"));
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().kind, ErrorKind::corrupt);
  EXPECT_NE(fetched.error().message.find("model-00002-of-00002.safetensors: header length 47.7 MiB exceeds file size 1,000,010 bytes"), std::string::npos)
      << fetched.error().message;
  expect_no_entry(dir + "/cache");
  uint64_t sent = 0;
  for (const auto& e : nginx.access_log()) sent += e.bytes_sent;
  EXPECT_LT(sent, 64u * 1024);
}

namespace {
// The fault server serves the same 2-shard repo as make_repo(…, 2, 1).
std::map<std::string, pfhub::ServedFile> fault_repo(const std::string& dir) { return make_repo(dir + "/www", "", 2, 1); }
const std::string k_shard1 = "/acme/tiny-sharded/resolve/main/model-00001-of-00002.safetensors";
const std::string k_config = "/acme/tiny-sharded/resolve/main/config.json";
}  // namespace

TEST(HubFault, ConnectionClosedMidHeaderThenServed) {
  const pfhub::TempTree tree("hub-midclose");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string& p, int nth) {
    return p == k_shard1 && nth == 0 ? pfhub::Fault::close_mid_body : pfhub::Fault::serve;
  });
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(server.url(), dir + "/cache"));
  ASSERT_TRUE(fetched) << fetched.error().describe();
  EXPECT_EQ(fetched->stats.retries, 1u);
  auto spec = model::load_model_directory(fetched->path);
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->exact_weight_bytes.value_or(0), 2'147'483'648ull);
}

TEST(HubFault, ConnectionAlwaysClosedMidHeaderIsAClearError) {
  const pfhub::TempTree tree("hub-midclose-always");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string& p, int) { return p == k_shard1 ? pfhub::Fault::close_mid_body : pfhub::Fault::serve; });
  auto opts = fast_options(server.url(), dir + "/cache");
  opts.fetch.max_attempts = 3;
  auto fetched = hub::fetch_model_metadata(tiny_ref(), opts);
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().kind, ErrorKind::network);
  EXPECT_NE(fetched.error().message.find("model-00001-of-00002.safetensors"), std::string::npos) << fetched.error().message;
  EXPECT_NE(fetched.error().message.find("after 3 attempts"), std::string::npos) << fetched.error().message;
  expect_no_entry(dir + "/cache");
}

TEST(HubFault, ServerError500ThenOk) {
  const pfhub::TempTree tree("hub-500");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string& p, int nth) {
    return p == k_config && nth == 0 ? pfhub::Fault::status_500 : pfhub::Fault::serve;
  });
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(server.url(), dir + "/cache"));
  ASSERT_TRUE(fetched) << fetched.error().describe();
  EXPECT_EQ(fetched->stats.retries, 1u);
  EXPECT_EQ(model::load_model_directory(fetched->path)->exact_weight_bytes.value_or(0), 2'147'483'648ull);
}

TEST(HubFault, TooManyRequestsHonoursRetryAfter) {
  const pfhub::TempTree tree("hub-429");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string& p, int nth) {
    return p == k_config && nth == 0 ? pfhub::Fault::status_429 : pfhub::Fault::serve;
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(server.url(), dir + "/cache"));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(fetched) << fetched.error().describe();
  EXPECT_EQ(fetched->stats.retries, 1u);
  EXPECT_GE(ms, 950) << "Retry-After: 1 was not honoured (backoff base is 20 ms)";
  EXPECT_LT(ms, 5000);
}

TEST(HubFault, ServerIgnoringRangeIsCutAfterTheHeader) {
  const pfhub::TempTree tree("hub-norange");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string&, int) { return pfhub::Fault::ignore_range; });
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(server.url(), dir + "/cache"));
  ASSERT_TRUE(fetched) << fetched.error().describe();
  EXPECT_EQ(model::load_model_directory(fetched->path)->exact_weight_bytes.value_or(0), 2'147'483'648ull);
  // Each shard is 1 GiB; the client stops reading once the header guess is in. What the server
  // managed to push before the close is bounded by socket buffers, not by the file.
  EXPECT_LT(fetched->stats.bytes_received, 1u << 20);
  EXPECT_LT(server.max_bytes_written_one_request(), 32u << 20);
}

TEST(HubFault, StalledServerTimesOut) {
  const pfhub::TempTree tree("hub-stall");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string& p, int) { return p == k_config ? pfhub::Fault::stall : pfhub::Fault::serve; });
  auto opts = fast_options(server.url(), dir + "/cache");
  opts.fetch.request_timeout_ms = 700;
  opts.fetch.stall_timeout_ms = 1000;
  opts.fetch.max_attempts = 2;
  const auto t0 = std::chrono::steady_clock::now();
  auto fetched = hub::fetch_model_metadata(tiny_ref(), opts);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().kind, ErrorKind::timeout);
  EXPECT_NE(fetched.error().message.find("config.json"), std::string::npos) << fetched.error().message;
  EXPECT_LT(ms, 5000);
  expect_no_entry(dir + "/cache");
}


// Issue 19 item 7: a CR/LF inside HF_TOKEN would end the Authorization header and start another.
// The token is refused before any request, with the variable named; the server sees nothing.
TEST(HubFault, Issue19_TokenWithLineBreakIsRefusedBeforeAnyRequest) {
  const pfhub::TempTree tree("hub-token-crlf");
  const std::string& dir = tree.path;
  std::atomic<int> requests{0};
  pfhub::FaultServer server(fault_repo(dir), [&](const std::string&, int) {
    ++requests;
    return pfhub::Fault::serve;
  });
  for (const std::string token : {std::string("hf_abc\r\nX-Injected: yes"), std::string("hf_abc\nX-Injected: yes"), std::string("hf_\x01" "abc")}) {
    setenv("HF_TOKEN", token.c_str(), 1);
    auto opts = fast_options(server.url(), dir + "/cache");
    opts.token.reset();  // read from the environment, as the CLI does
    auto fetched = hub::fetch_model_metadata(tiny_ref(), opts);
    unsetenv("HF_TOKEN");
    ASSERT_FALSE(fetched) << "token of " << token.size() << " bytes";
    EXPECT_EQ(fetched.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(fetched.error().message.find("HF_TOKEN: the token holds control character"), std::string::npos) << fetched.error().message;
    EXPECT_EQ(fetched.error().describe().find("X-Injected"), std::string::npos) << fetched.error().describe();
  }
  EXPECT_EQ(requests.load(), 0);
  expect_no_entry(dir + "/cache");
}

// Issue 19 item 11: a hub that sends 1 byte/s passed the old 1 byte/s low-speed rule and held a
// run for 528 s (request timeout x attempts). The low-speed limit now fails it, and the total
// deadline bounds all attempts; each error says which limit fired. Limits are shortened here.
TEST(HubFault, Issue19_DrippingServerHitsTheLowSpeedLimit) {
  const pfhub::TempTree tree("hub-drip");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string& p, int) { return p == k_config ? pfhub::Fault::drip : pfhub::Fault::serve; });
  auto opts = fast_options(server.url(), dir + "/cache");
  opts.fetch.low_speed_bytes_per_s = 100;  // the server sends 5 bytes/s
  opts.fetch.stall_timeout_ms = 1000;
  opts.fetch.request_timeout_ms = 60'000;
  opts.fetch.max_attempts = 2;
  const auto t0 = std::chrono::steady_clock::now();
  auto fetched = hub::fetch_model_metadata(tiny_ref(), opts);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().kind, ErrorKind::timeout);
  EXPECT_NE(fetched.error().message.find("config.json: low-speed limit (under 100 bytes/s for 1000 ms) after 2 attempts"), std::string::npos)
      << fetched.error().message;
  EXPECT_LT(ms, 6000);
  expect_no_entry(dir + "/cache");
}

TEST(HubFault, Issue19_TotalDeadlineBoundsEveryAttempt) {
  const pfhub::TempTree tree("hub-deadline");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string& p, int) { return p == k_config ? pfhub::Fault::drip : pfhub::Fault::serve; });
  auto opts = fast_options(server.url(), dir + "/cache");
  opts.fetch.low_speed_bytes_per_s = 1;   // 5 bytes/s passes the low-speed rule
  opts.fetch.request_timeout_ms = 60'000;
  opts.fetch.total_deadline_ms = 1500;
  const auto t0 = std::chrono::steady_clock::now();
  auto fetched = hub::fetch_model_metadata(tiny_ref(), opts);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().kind, ErrorKind::timeout);
  EXPECT_NE(fetched.error().message.find("config.json: total deadline (1500 ms for all requests, retries included) passed"), std::string::npos)
      << fetched.error().message;
  EXPECT_GE(ms, 1400);
  EXPECT_LT(ms, 4000);
  expect_no_entry(dir + "/cache");
}

// Issue 19: a failed fetch removed its staging directory but kept the folders it had made for the entry (the cache
// root, the endpoint's and the repo's): every failure left empty directories behind. Now the cache is as it was: no
// folder when there was none, and only what was there before when another entry exists.
TEST(HubFault, Issue19_FailedFetchLeavesTheCacheAsItFoundIt) {
  const pfhub::TempTree tree("hub-failed-leaves-nothing");
  const std::string& dir = tree.path;
  pfhub::FaultServer server(fault_repo(dir), [](const std::string& p, int) { return p == k_config ? pfhub::Fault::not_found : pfhub::Fault::serve; });
  const std::string cache = dir + "/cache/preflight/hub";
  auto fetched = hub::fetch_model_metadata(tiny_ref(), fast_options(server.url(), cache));
  ASSERT_FALSE(fetched);
  EXPECT_EQ(fetched.error().kind, ErrorKind::not_found);
  EXPECT_FALSE(pfhub::fs::exists(dir + "/cache")) << "a failed fetch made " << dir << "/cache";
  // With another entry in the cache: the same host and org folders hold it, and stay; nothing else is added.
  const std::string other = cache + "/127.0.0.1_" + server.url().substr(server.url().rfind(':') + 1) + "/acme/other/main";
  pfhub::fs::create_directories(other);
  pfhub::write_file(other + "/manifest.json", "{}");
  std::vector<std::string> before;
  for (const auto& e : pfhub::fs::recursive_directory_iterator(dir + "/cache")) before.push_back(e.path().string());
  auto again = hub::fetch_model_metadata(tiny_ref(), fast_options(server.url(), cache));
  ASSERT_FALSE(again);
  std::vector<std::string> after;
  for (const auto& e : pfhub::fs::recursive_directory_iterator(dir + "/cache")) after.push_back(e.path().string());
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, before);
}

// Issue 19 (hostile hub): a redirect to another host or port must not carry the token (curl drops a custom
// Authorization header there since 7.58, and on another port of the same host since 7.83; preflight loads whatever
// libcurl the machine has). The second server answers 418 to any request with an Authorization header, so a
// forwarded token fails the fetch; the first server redirects every file to it, once by address and once by name.
TEST(HubFault, Issue19_RedirectToAnotherHostOrPortCarriesNoToken) {
  REQUIRE_NGINX();
  const pfhub::TempTree tree("hub-redirect-token");
  const std::string& dir = tree.path;
  make_repo(dir + "/www", "", 2, 1);
  pfhub::Nginx other;
  ASSERT_TRUE(other.start(dir + "/nginx-other", dir + "/www", "    location / { if ($http_authorization != \"\") { return 418; } }\n"));
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    pfhub::Nginx first;
    const std::string target = "http://" + host + ":" + std::to_string(other.port());
    ASSERT_TRUE(first.start(dir + "/nginx-first-" + host, dir + "/www", "    location / { return 302 " + target + "$request_uri; }\n"));
    auto o = fast_options(first.url(), dir + "/cache-" + host);
    o.token = std::string("hf_SECRET_REDIRECT");
    auto fetched = hub::fetch_model_metadata(tiny_ref(), o);
    ASSERT_TRUE(fetched) << host << ": " << fetched.error().describe();
    EXPECT_EQ(model::load_model_directory(fetched->path)->exact_weight_bytes.value_or(0), 2'147'483'648ull);
    int redirected = 0;
    for (const auto& e : first.access_log()) redirected += e.status == 302;
    EXPECT_EQ(redirected, 6) << host;  // config, index, 2 quant descriptors, 2 shards
    for (const auto& e : other.access_log()) EXPECT_NE(e.status, 418) << host << ": " << e.uri << " reached the other server with the token";
    other.clear_access_log();
  }
}
