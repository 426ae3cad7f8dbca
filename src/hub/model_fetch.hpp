// hub/model_fetch: sizes a model on a hub without downloading it. For a safetensors repo it fetches
// config.json, model.safetensors.index.json and the quantization descriptors (quant_model_description.json,
// hf_quant_config.json) in one parallel round, then one range request per shard for its 8-byte
// length and JSON header (the range is sized from the index's tensor names, and a second request
// fetches the rest when a header is longer), never a weight byte. A GGUF reference fetches the
// file's header and tensor infos (1 MiB, growing x4 while the header runs on). Everything fetched is
// validated by the model readers before it is committed to the metadata cache
// (hub/metadata_cache), and the result is a directory (or a .gguf.header stub) that
// model::load_model_directory / model::load_gguf_model read like a local download.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.hpp"
#include "hub/http_fetcher.hpp"
#include "hub/hub_ref.hpp"

namespace preflight::hub {

enum class CachePolicy { use, refresh, offline };

struct ModelFetchOptions {
  std::string endpoint;                // empty: hub_endpoint(ref.hub)
  std::string cache_root;              // empty: metadata_cache_root()
  std::optional<std::string> token;    // nullopt: hub_token(ref.hub)
  CachePolicy cache = CachePolicy::use;  // offline: cache only, no request; refresh: refetch
  FetchOptions fetch;                  // timeouts, retries, parallelism, progress (token and label are set here)
};

struct ModelFetchResult {
  std::string path;            // entry directory, or the .gguf.header stub for a GGUF reference
  bool from_cache = false;     // no request was made
  FetchStats stats;
  uint64_t files = 0;          // files stored in the entry (manifest excluded)
  uint64_t declared_bytes = 0;  // sum of the real sizes of the shards / GGUF file
};

// Errors name the reference and the file: not_found (a required file is 404, or --offline with no
// entry), network (401/403, failures after retries), timeout, corrupt (a header longer than its
// file, an unparsable header or index), environment (the cache directory cannot be written), and whatever the model reader
// (model::load_model_directory / load_gguf_model) says about the fetched files: an entry is
// committed to the cache only when the reader accepts it.
Expected<ModelFetchResult> fetch_model_metadata(const HubRef& ref, const ModelFetchOptions& options);

}  // namespace preflight::hub
