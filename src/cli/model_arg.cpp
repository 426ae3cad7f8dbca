#include "cli/model_arg.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>

#include "base/file.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "hub/hub_ref.hpp"
#include "hub/model_fetch.hpp"
#include "model/model_source.hpp"

namespace preflight::cli {

namespace {

Expected<model::ModelSpec> load_fetched(const hub::HubRef& ref, const std::string& path) {
  if (!ref.gguf_file.empty()) return model::load_gguf_model(path);
  return model::load_model_directory(path);
}

}  // namespace

Expected<model::ModelSpec> resolve_model_arg(const std::string& arg, const ModelArgOptions& options) {
  if (!hub::is_hub_ref(arg)) {
    model::ResolveOptions ro;
    ro.extra_model_dirs = options.extra_model_dirs;
    return model::resolve_model(arg, ro);
  }
  PF_TRY(ref, hub::parse_hub_ref(arg));
  // A model already downloaded by the hub's own client: read it from disk, no request.
  if (options.cache != HubCacheMode::refresh) {
    const std::string snap = model::find_hub_cache_snapshot(ref.repo, ref.revision);
    const std::string local = ref.gguf_file.empty() ? snap : (snap.empty() ? snap : join_path(snap, ref.gguf_file));
    if (!local.empty() && path_exists(local)) {
      PF_TRY(spec, load_fetched(ref, local));
      spec.id = ref.text();
      spec.provenance.push_back({"model files", local, "local hub cache (no request)"});
      return spec;
    }
  }
  hub::ModelFetchOptions fo;
  fo.cache = options.cache == HubCacheMode::offline ? hub::CachePolicy::offline
             : options.cache == HubCacheMode::refresh ? hub::CachePolicy::refresh
                                                        : hub::CachePolicy::use;
  const bool tty = isatty(STDERR_FILENO) != 0;
  const std::string label = ref.text();
  if (tty) {
    fo.fetch.on_progress = [label](const hub::FetchProgress& p) {
      fmt::print(stderr, "\rpreflight: {}: {}/{} files, {:.2f} MiB   ", label, p.requests_done,
                   p.requests_total, static_cast<double>(p.bytes_received) / k_mib);
    };
  }
  auto fetched = hub::fetch_model_metadata(ref, fo);
  if (tty && fo.fetch.on_progress) fmt::print(stderr, "\n");
  if (!fetched) return fetched.error();
  auto loaded = load_fetched(ref, fetched->path);
  if (!loaded && fetched->from_cache) {
    const Error& e = loaded.error();
    return make_error(e.kind, e.message + fmt::format(" (read from the metadata cache entry {}; --refresh fetches it again)", fetched->path), e.context);
  }
  PF_TRY(spec, std::move(loaded));
  spec.id = ref.text();
  const std::string rule = fetched->from_cache
                               ? fmt::format("metadata cache (no request): {} files", fetched->files)
                               : fmt::format("fetched {} files in {} requests, {} bytes received, {} retries", fetched->files,
                                        fetched->stats.requests, fetched->stats.bytes_received,
                                        fetched->stats.retries);
  spec.provenance.push_back({"hub metadata", fetched->path, rule});
  return spec;
}

namespace {

PublishedCheckpointArg published_checkpoint_sizing(const engine::QuantizedCheckpoint& c, const std::string& named, const std::string& how) {
  PublishedCheckpointArg out{c.repo, c.base_model, c.variant, c.quantization_flag, ""};
  const std::string download = c.hub == "modelscope" ? "modelscope download --model " + c.repo : "hf download " + c.repo;
  out.assumption = fmt::format(
      "{}: {}; sized as the checkpoint it is, {} of {} (--variant {}; data/engines/quantized_checkpoints.json: {}), from {}'s "
      "config; `{}` and MODEL = its folder size it from its own files",
      named, how, c.format, c.base_model, c.variant, c.url, c.base_model, download);
  return out;
}

}  // namespace

std::optional<PublishedCheckpointArg> published_checkpoint_arg(const std::string& arg) {
  if (hub::is_hub_ref(arg) || arg.find('/') == std::string::npos || path_exists(arg)) return std::nullopt;
  const auto& catalog = engine::shipped_quantized_catalog();
  if (!catalog) return std::nullopt;
  const engine::QuantizedCheckpoint* c = engine::find_checkpoint_by_repo(*catalog, arg);
  if (!c) return std::nullopt;
  return published_checkpoint_sizing(*c, arg, "not on this machine");
}

Expected<ModelArgResolution> resolve_model_or_checkpoint(const std::string& arg, const ModelArgOptions& options) {
  auto published = published_checkpoint_arg(arg);
  auto own = resolve_model_arg(arg, options);  // a published id is no hub reference: the local copy or the catalogue, no request
  if (own) return ModelArgResolution{std::move(*own), std::nullopt};
  if (!published || own.error().kind != ErrorKind::not_found) return own.error();
  PF_TRY(base, resolve_model_arg(published->base_model, options));
  base.assumptions.push_back(published->assumption);
  return ModelArgResolution{std::move(base), std::move(published)};
}

Expected<std::string> published_checkpoint_variant(const PublishedCheckpointArg& published, const std::string& arg, const std::optional<std::string>& variant,
                                                   const std::optional<std::string>& quantization) {
  if (variant && to_lower(trim(*variant)) != published.variant)
    return make_error(ErrorKind::invalid_argument, fmt::format("--variant {}: {} is published as --variant {} ({}); give the base model {} with --variant {}", *variant,
                                                               arg, published.variant, "data/engines/quantized_checkpoints.json", published.base_model, *variant));
  if (quantization && !published.quantization_flag.empty() && *quantization != published.quantization_flag)
    return make_error(ErrorKind::invalid_argument, fmt::format("--quantization {}: {} is a {} checkpoint, served with --quantization {} "
                                                               "(data/engines/quantized_checkpoints.json)",
                                                               *quantization, arg, published.variant, published.quantization_flag));
  return published.variant;
}

std::optional<PublishedCheckpointArg> published_checkpoint_of_folder(const std::string& path) {
  if (auto exact = published_checkpoint_arg(path)) return exact;
  if (hub::is_hub_ref(path) || path_exists(path)) return std::nullopt;
  std::string folder = path;
  while (!folder.empty() && folder.back() == '/') folder.pop_back();
  folder = folder.substr(folder.find_last_of('/') == std::string::npos ? 0 : folder.find_last_of('/') + 1);
  const auto& catalog = engine::shipped_quantized_catalog();
  if (!catalog || folder.empty()) return std::nullopt;
  const engine::QuantizedCheckpoint* found = nullptr;
  for (const auto& c : catalog->checkpoints) {
    const std::string repo_name = c.repo.substr(c.repo.find('/') + 1);
    if (to_lower(repo_name) != to_lower(folder)) continue;
    if (found) return std::nullopt;  // two publishers' checkpoints of that name: not one
    found = &c;
  }
  if (!found) return std::nullopt;
  return published_checkpoint_sizing(*found, path, "not on this machine, a folder named as the published checkpoint " + found->repo);
}

std::vector<Option> model_options(ModelFlags& f) {
  return under("model resolution:", {models_dir_flag(f.models, "a directory with <org>__<name>/config.json"),
                                     switch_flag("offline", f.offline, "hub models from the local cache only"),
                                     switch_flag("refresh", f.refresh, "refetch hub metadata into the cache")});
}

Expected<ModelArgOptions> model_arg_options(const ModelFlags& f) {
  ModelArgOptions o;
  if (f.models) o.extra_model_dirs.push_back(*f.models);
  if (f.offline && f.refresh) return make_error(ErrorKind::invalid_argument, "--offline and --refresh exclude each other");
  if (f.offline) o.cache = HubCacheMode::offline;
  if (f.refresh) o.cache = HubCacheMode::refresh;
  return o;
}

}  // namespace preflight::cli
