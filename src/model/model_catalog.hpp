// model/model_catalog: the embedded catalogue of published model architectures
// (data/architectures/models.json): each record is a hub id, its aliases, its source, and the
// config facts in Hugging Face vocabulary, from which a ModelSpec is built like any config.json.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "model/model_spec.hpp"

namespace preflight::model {

struct CatalogModel {
  std::string id;
  std::vector<std::string> aliases;
  std::string source_url;
  std::string source_via;
  std::string retrieved;
  std::string source_kind;
  std::optional<double> published_params;
  std::optional<double> published_checkpoint_bytes;
  std::string notes;
  Json config;
  Json hf_quant_config;  // null when absent
};

struct ModelCatalog {
  std::vector<CatalogModel> models;
  // Exact id (case-insensitive) or alias; nullptr when unknown.
  const CatalogModel* find(const std::string& name) const;
  std::vector<std::string> names() const;
};

Expected<ModelCatalog> parse_model_catalog(const Json& root, const std::string& origin);
// The whole embedded catalogue, parsed once (listing, plan over the catalogue, suggestions).
const ModelCatalog& builtin_model_catalog();
// The embedded record that `name` names (exact id ignoring case first, then an alias, as
// ModelCatalog::find), parsed and validated alone through the build-time record index
// (base/embedded.hpp) instead of parsing the whole file; nullopt when none matches. Corrupt error
// when that record is invalid.
Expected<std::optional<CatalogModel>> find_builtin_model(const std::string& name);

// ModelSpec of a catalogue entry; provenance names the catalogue record and its source.
Expected<ModelSpec> model_spec_from_catalog(const CatalogModel& entry);

// Issue 19 (plan over the catalogue): model_spec_from_catalog of every embedded entry that `keep` accepts
// (every entry when keep is empty), in catalogue order, leaving out entries whose record or ModelSpec is
// invalid (the shipped catalogue has none: a test checks it). Each record is parsed alone through the
// build-time index, the records dealt out to `threads` workers (0: one per hardware thread), so the
// catalogue's start-up work runs on every core instead of one. Without an index: builtin_model_catalog().
std::vector<ModelSpec> builtin_model_specs(const std::function<bool(const CatalogModel&)>& keep, int threads);

}  // namespace preflight::model
