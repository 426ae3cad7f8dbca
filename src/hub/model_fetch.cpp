#include "hub/model_fetch.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "base/checked.hpp"
#include "base/file.hpp"
#include "base/json_util.hpp"
#include "base/json_writer.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "hub/metadata_cache.hpp"
#include "model/gguf_reader.hpp"
#include "model/header_stub.hpp"
#include "model/model_source.hpp"
#include "model/safetensors_header.hpp"

namespace preflight::hub {

namespace {

constexpr uint64_t k_max_json_bytes = 64ull << 20;
// Header range guess per tensor listed in the index: its name plus the JSON around it
// ({"dtype":"BF16","shape":[7168,18432],"data_offsets":[...,...]}, about 80 bytes with 10-digit offsets).
constexpr uint64_t k_guess_bytes_per_tensor = 96;
constexpr uint64_t k_guess_fixed_bytes = 8 + 1024;
constexpr uint64_t k_guess_no_index_bytes = 256 * 1024;
const char* const k_optional_files[] = {"model.safetensors.index.json", "quant_model_description.json", "hf_quant_config.json"};

bool plain_file_name(const std::string& name) {
  return !name.empty() && name.size() < 256 && name.find('/') == std::string::npos && name != "." && name != ".." && name.find('\0') == std::string::npos;
}

struct Stored {
  std::string name;      // repo file
  std::string stored;    // file name in the entry
  uint64_t size_bytes = 0;
};

struct Shard {
  std::string name;
  uint64_t guess = 0;
  std::string prefix;     // bytes 0..prefix.size() of the file
  uint64_t file_size = 0;
};

Error with_label(const Error& e, const std::string& label) {
  if (starts_with(e.message, label)) return e;
  return make_error(e.kind, label + ": " + e.message, e.context);
}

// A committed entry, checked against its manifest: every listed file present with the size written.
// Files are not fsync'ed one by one (a cache; fsync of 160+ stubs cost about a second), so after a
// crash an entry may be damaged: the check finds that and the entry is fetched again.
Expected<ModelFetchResult> from_cache(const std::string& dir, const HubRef& ref) {
  ModelFetchResult result;
  result.from_cache = true;
  result.path = dir;
  const std::string origin = join_path(dir, "manifest.json");
  auto damaged = [&](const std::string& what) {
    return make_error(ErrorKind::corrupt, format("%s: cached entry is damaged (%s); --refresh fetches it again", ref.text().c_str(), what.c_str()), origin);
  };
  auto manifest = load_json_file(origin);
  if (!manifest) return damaged("manifest.json unreadable");
  if (!manifest->contains("files") || !(*manifest)["files"].is_array()) return damaged("manifest.json has no file list");
  for (const auto& f : (*manifest)["files"]) {
    if (!f.is_object() || !f.contains("stored") || !f["stored"].is_string() || !f.contains("stored_bytes") || !f["stored_bytes"].is_number_unsigned()) {
      return damaged("manifest.json: a file entry lacks stored or stored_bytes");
    }
    const std::string stored = f["stored"].get<std::string>();
    std::error_code ec;
    const auto size = std::filesystem::file_size(join_path(dir, stored), ec);
    if (!plain_file_name(stored) || ec || size != f["stored_bytes"].get<uint64_t>()) return damaged(stored + " missing or of the wrong size");
    ++result.files;
    if (ends_with(stored, model::k_header_stub_suffix) && f.contains("size_bytes") && f["size_bytes"].is_number_unsigned()) {
      result.declared_bytes += f["size_bytes"].get<uint64_t>();
    }
  }
  if (!ref.gguf_file.empty()) result.path = join_path(dir, base_name(ref.gguf_file) + model::k_header_stub_suffix);
  return result;
}

// Fetches bytes [have, want) of each shard still short of its header; false when none was short.
Status fetch_safetensors_headers(HttpFetcher& fetcher, const HubRef& ref, const std::string& endpoint, std::vector<Shard>& shards) {
  std::vector<HttpRequest> first;
  for (const auto& s : shards) first.push_back({hub_file_url(ref, endpoint, s.name), s.name, 0, s.guess, 0, false});
  auto answers = fetcher.fetch(first);
  std::vector<size_t> short_of;
  std::vector<HttpRequest> rest;
  for (size_t i = 0; i < shards.size(); ++i) {
    if (!answers[i]) return answers[i].error();
    Shard& s = shards[i];
    s.prefix = std::move(answers[i]->body);
    s.file_size = answers[i]->total_size.value_or(0);
    if (s.prefix.size() < 8) {
      return make_error(ErrorKind::corrupt, format("%s: %s: %llu bytes, too short for a safetensors header", ref.text().c_str(), s.name.c_str(),
                                                   static_cast<unsigned long long>(s.file_size)),
                        s.name);
    }
    auto n = model::parse_safetensors_header_length(reinterpret_cast<const uint8_t*>(s.prefix.data()), s.file_size, s.name);
    if (!n) return with_label(n.error(), ref.text());
    if (s.prefix.size() < 8 + *n) {
      short_of.push_back(i);
      rest.push_back({hub_file_url(ref, endpoint, s.name), s.name, s.prefix.size(), 8 + *n - s.prefix.size(), 0, false});
    }
  }
  if (rest.empty()) return Ok{};
  auto more = fetcher.fetch(rest);
  for (size_t k = 0; k < rest.size(); ++k) {
    if (!more[k]) return more[k].error();
    Shard& s = shards[short_of[k]];
    s.prefix += more[k]->body;
  }
  return Ok{};
}

Expected<ModelFetchResult> fetch_gguf(HttpFetcher& fetcher, const HubRef& ref, const std::string& endpoint, EntryStaging& staging, Json& files) {
  const std::string& name = ref.gguf_file;
  std::string prefix;
  uint64_t file_size = 0;
  uint64_t want = model::k_gguf_first_read_bytes;
  while (true) {
    const uint64_t have = prefix.size();
    auto answer = fetcher.fetch({{hub_file_url(ref, endpoint, name), name, have, want - have, 0, false}});
    if (!answer[0]) return answer[0].error();
    prefix += answer[0]->body;
    file_size = answer[0]->total_size.value_or(0);
    auto parsed = model::parse_gguf_prefix(reinterpret_cast<const uint8_t*>(prefix.data()), prefix.size(), file_size, base_name(name));
    if (parsed) break;
    if (prefix.size() >= file_size || want >= model::k_gguf_max_header_bytes || !model::gguf_prefix_too_short(parsed.error())) {
      return with_label(parsed.error(), ref.text());
    }
    want = std::min(file_size, want * 4);
  }
  const std::string stored = base_name(name) + model::k_header_stub_suffix;
  const auto stub = model::serialize_header_stub({std::vector<uint8_t>(prefix.begin(), prefix.end()), file_size});
  PF_TRY(w, staging.write_file(stored, std::string(stub.begin(), stub.end())));
  (void)w;
  files.push_back({{"name", name}, {"stored", stored}, {"stored_bytes", stub.size()}, {"size_bytes", file_size}, {"header_bytes", prefix.size()}});
  ModelFetchResult result;
  result.files = 1;
  result.declared_bytes = file_size;
  result.path = stored;
  return result;
}

Expected<ModelFetchResult> fetch_safetensors(HttpFetcher& fetcher, const HubRef& ref, const std::string& endpoint, EntryStaging& staging, Json& files) {
  ModelFetchResult result;
  std::vector<HttpRequest> round;
  round.push_back({hub_file_url(ref, endpoint, "config.json"), "config.json", 0, 0, k_max_json_bytes, false});
  for (const char* f : k_optional_files) round.push_back({hub_file_url(ref, endpoint, f), f, 0, 0, k_max_json_bytes, true});
  auto answers = fetcher.fetch(round);
  for (size_t i = 0; i < round.size(); ++i) {
    if (!answers[i]) return answers[i].error();
    if (answers[i]->status == 404) continue;
    PF_TRY(json, parse_json(answers[i]->body, ref.text() + ": " + round[i].file));
    (void)json;
    PF_TRY(w, staging.write_file(round[i].file, answers[i]->body));
    (void)w;
    files.push_back({{"name", round[i].file}, {"stored", round[i].file}, {"stored_bytes", answers[i]->body.size()}, {"size_bytes", answers[i]->body.size()}});
    ++result.files;
  }
  // Shards and their range guesses from the index's weight_map; a single model.safetensors otherwise.
  std::vector<Shard> shards;
  if (answers[1]->status != 404) {
    const std::string origin = ref.text() + ": model.safetensors.index.json";
    PF_TRY(index, parse_json(answers[1]->body, origin));
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
      return make_error(ErrorKind::corrupt, origin + ": weight_map: expected an object", origin);
    }
    std::map<std::string, uint64_t> guess;
    for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
      if (!it->is_string()) return make_error(ErrorKind::corrupt, origin + ": weight_map." + it.key() + ": expected a file name", origin);
      const std::string shard = it->get<std::string>();
      if (!plain_file_name(shard) || !ends_with(shard, ".safetensors")) {
        return make_error(ErrorKind::unsupported, format("%s: shard '%s' is not a .safetensors file at the repo root", origin.c_str(), shard.c_str()), origin);
      }
      guess[shard] += it.key().size() + k_guess_bytes_per_tensor;
    }
    for (const auto& [name, bytes] : guess) shards.push_back({name, ceil_div(k_guess_fixed_bytes + bytes, 1024) * 1024, {}, 0});
  } else {
    auto probe = fetcher.fetch({{hub_file_url(ref, endpoint, "model.safetensors"), "model.safetensors", 0, 8, 0, true}});
    if (!probe[0]) return probe[0].error();
    if (probe[0]->status != 404) shards.push_back({"model.safetensors", k_guess_no_index_bytes, {}, 0});
  }
  PF_TRY(ok, fetch_safetensors_headers(fetcher, ref, endpoint, shards));
  (void)ok;
  for (const auto& s : shards) {
    auto header = model::parse_safetensors_prefix(reinterpret_cast<const uint8_t*>(s.prefix.data()), s.prefix.size(), s.file_size, s.name);
    if (!header) return with_label(header.error(), ref.text());
    // Keep exactly the 8 + N header bytes.
    const auto stub = model::serialize_header_stub({std::vector<uint8_t>(s.prefix.begin(), s.prefix.begin() + static_cast<std::ptrdiff_t>(8 + header->header_length)),
                                                    s.file_size});
    const std::string stored = s.name + model::k_header_stub_suffix;
    PF_TRY(w, staging.write_file(stored, std::string(stub.begin(), stub.end())));
    (void)w;
    files.push_back({{"name", s.name}, {"stored", stored}, {"stored_bytes", stub.size()}, {"size_bytes", s.file_size}, {"header_bytes", 8 + header->header_length}});
    ++result.files;
    result.declared_bytes += s.file_size;
  }
  return result;
}

}  // namespace

Expected<ModelFetchResult> fetch_model_metadata(const HubRef& ref, const ModelFetchOptions& options) {
  const std::string endpoint = options.endpoint.empty() ? hub_endpoint(ref.hub) : options.endpoint;
  const std::string entry = metadata_entry_dir(metadata_cache_root(options.cache_root), endpoint, ref);
  if (options.cache != CachePolicy::refresh && metadata_entry_complete(entry)) {
    auto cached = from_cache(entry, ref);
    // A damaged entry is an error offline, and fetched again (replaced) otherwise.
    if (cached || options.cache == CachePolicy::offline) return cached;
  }
  if (options.cache == CachePolicy::offline) {
    return make_error(ErrorKind::not_found, format("%s: not in the metadata cache (%s) and --offline forbids fetching it", ref.text().c_str(), entry.c_str()), entry);
  }
  FetchOptions fo = options.fetch;
  if (options.token) {
    fo.token = *options.token;
    fo.token_source = "the token given";
    PF_TRY(token_ok, check_token_characters(fo.token, fo.token_source));
    (void)token_ok;
  } else {
    // Checked where it is read, so an error names the variable or file it came from (issue 19).
    PF_TRY(token, load_hub_token(ref.hub));
    if (token) {
      fo.token = token->value;
      fo.token_source = token->source;
    }
  }
  fo.label = ref.text();
  HttpFetcher fetcher(fo);
  PF_TRY(staging, EntryStaging::begin(entry));
  Json files = Json::array();
  auto fetched = ref.gguf_file.empty() ? fetch_safetensors(fetcher, ref, endpoint, staging, files) : fetch_gguf(fetcher, ref, endpoint, staging, files);
  if (!fetched) return fetched.error();
  Json manifest = {{"schema_version", 1},
                   {"hub", ref.hub == HubKind::hugging_face ? "hf" : "ms"},
                   {"endpoint_host", endpoint_host(endpoint)},
                   {"repo", ref.repo},
                   {"revision", ref.revision},
                   {"fetched_at", utc_now_rfc3339()},
                   {"files", files}};
  if (!ref.gguf_file.empty()) manifest["gguf_file"] = ref.gguf_file;
  // Only what the model reader accepts is cached: a config that parses but is not a model we can
  // read would otherwise fail every later run from the cache. Paths in the error name the entry,
  // not the staging directory that is about to be removed.
  {
    const std::string staged = ref.gguf_file.empty() ? staging.dir() : join_path(staging.dir(), fetched->path);
    auto readable = ref.gguf_file.empty() ? model::load_model_directory(staged) : model::load_gguf_model(staged);
    if (!readable) {
      auto unstage = [&](std::string text) {
        for (size_t pos = text.find(staging.dir()); pos != std::string::npos; pos = text.find(staging.dir(), pos + entry.size())) text.replace(pos, staging.dir().size(), entry);
        return text;
      };
      const Error& e = readable.error();
      return make_error(e.kind, format("%s: fetched metadata rejected, not cached: %s", ref.text().c_str(), unstage(e.message).c_str()), unstage(e.context));
    }
  }
  PF_TRY(committed, staging.commit(dump_json(manifest, 2) + "\n"));
  (void)committed;
  ModelFetchResult result = std::move(*fetched);
  result.path = ref.gguf_file.empty() ? entry : join_path(entry, result.path);
  result.stats = fetcher.stats();
  return result;
}

}  // namespace preflight::hub
