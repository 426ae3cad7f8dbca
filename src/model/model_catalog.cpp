#include "model/model_catalog.hpp"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

#include "base/embedded.hpp"
#include "base/parallel_for.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "model/hf_config.hpp"

namespace preflight::model {

const CatalogModel* ModelCatalog::find(const std::string& name) const {
  const std::string key = to_lower(trim(name));
  for (const auto& m : models) {
    if (to_lower(m.id) == key) return &m;
  }
  for (const auto& m : models) {
    for (const auto& a : m.aliases) {
      if (to_lower(a) == key) return &m;
    }
  }
  return nullptr;
}

std::vector<std::string> ModelCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& m : models) {
    out.push_back(m.id);
    for (const auto& a : m.aliases) out.push_back(a);
  }
  return out;
}

Expected<ModelCatalog> parse_model_catalog(const Json& root, const std::string& origin) {
  ModelCatalog catalog;
  JsonObject top(root, origin);
  PF_TRY(top_keys, top.only_keys({"schema_version", "note", "models"}));  // issue 15 (v0eng29)
  (void)top_keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("models"));
  for (const auto& item : *list) {
    JsonObject rec(item, origin, "models[]");
    PF_TRY(keys_ok, rec.only_keys({"id", "aliases", "source", "published_params", "published_checkpoint_bytes", "notes", "config", "hf_quant_config"}));
    (void)keys_ok;
    CatalogModel m;
    PF_TRY(id, rec.string("id"));
    m.id = id;
    JsonObject named(item, origin, "models[" + id + "]");
    if (const Json* aliases = named.find("aliases")) {
      if (!aliases->is_array()) return named.wrong_type("aliases", "an array of strings");
      for (const auto& a : *aliases) {
        if (!a.is_string()) return named.wrong_type("aliases", "an array of strings");
        m.aliases.push_back(a.get<std::string>());
      }
    }
    const Json* source = named.find("source");
    if (!source || !source->is_object()) return make_error(ErrorKind::corrupt, format("%s: %s: missing source", origin.c_str(), id.c_str()), origin);
    JsonObject src(*source, origin, "models[" + id + "].source");
    PF_TRY(source_keys, src.only_keys({"url", "retrieved", "kind", "via"}));
    (void)source_keys;
    PF_TRY(url, src.string("url"));
    PF_TRY(retrieved, src.string("retrieved"));
    PF_TRY(kind, src.string("kind"));
    PF_TRY(via, src.opt_string("via"));
    m.source_url = url;
    m.retrieved = retrieved;
    m.source_kind = kind;
    m.source_via = via.value_or("");
    PF_TRY(pp, named.opt_number("published_params"));
    m.published_params = pp;
    PF_TRY(pcb, named.opt_number("published_checkpoint_bytes"));
    m.published_checkpoint_bytes = pcb;
    PF_TRY(notes, named.opt_string("notes"));
    m.notes = notes.value_or("");
    const Json* config = named.find("config");
    if (!config || !config->is_object()) return make_error(ErrorKind::corrupt, format("%s: %s: missing config", origin.c_str(), id.c_str()), origin);
    m.config = *config;
    if (const Json* hq = named.find("hf_quant_config")) m.hf_quant_config = *hq;
    if (catalog.find(id)) return make_error(ErrorKind::corrupt, format("%s: duplicate id %s", origin.c_str(), id.c_str()), origin);
    catalog.models.push_back(std::move(m));
  }
  return catalog;
}

const ModelCatalog& builtin_model_catalog() {
  static const ModelCatalog catalog = [] {
    auto json = parse_json(std::string(embedded_data("architectures/models.json")), "data/architectures/models.json");
    if (!json) return ModelCatalog{};
    auto parsed = parse_model_catalog(*json, "data/architectures/models.json");
    return parsed ? *parsed : ModelCatalog{};
  }();
  return catalog;
}

namespace {

// One indexed record of models.json as a catalogue entry, validated as parse_model_catalog validates it.
Expected<std::optional<CatalogModel>> indexed_model(std::string_view file, const EmbeddedRecord& record, const std::string& origin) {
  const std::string_view text = embedded_record_text(file, record);
  if (text.empty()) return std::optional<CatalogModel>{};
  std::string one_record = "{\"schema_version\":1,\"models\":[";
  one_record.append(text);
  one_record += "]}";
  PF_TRY(json, parse_json(one_record, origin));
  PF_TRY(catalog, parse_model_catalog(json, origin));
  if (catalog.models.size() != 1) return std::optional<CatalogModel>{};
  return std::optional<CatalogModel>{std::move(catalog.models.front())};
}

}  // namespace

Expected<std::optional<CatalogModel>> find_builtin_model(const std::string& name) {
  constexpr std::string_view k_file = "architectures/models.json";
  const std::string origin = "data/architectures/models.json";
  auto from_whole_file = [&]() -> Expected<std::optional<CatalogModel>> {
    if (const CatalogModel* m = builtin_model_catalog().find(name)) return std::optional<CatalogModel>{*m};
    return std::optional<CatalogModel>{};
  };
  const auto records = embedded_records(k_file);
  if (records.empty()) return from_whole_file();
  const std::string key = to_lower(trim(name));
  const EmbeddedRecord* hit = nullptr;
  for (const auto& r : records) {
    if (to_lower(std::string(r.id)) == key) {
      hit = &r;
      break;
    }
  }
  for (size_t i = 0; !hit && i < records.size(); ++i) {
    for (const auto& a : records[i].aliases) {
      if (to_lower(std::string(a)) == key) {
        hit = &records[i];
        break;
      }
    }
  }
  if (!hit) return std::optional<CatalogModel>{};
  PF_TRY(entry, indexed_model(k_file, *hit, origin));
  if (!entry) return from_whole_file();
  return entry;
}


std::vector<ModelSpec> builtin_model_specs(const std::function<bool(const CatalogModel&)>& keep, int threads) {
  constexpr std::string_view k_file = "architectures/models.json";
  const std::string origin = "data/architectures/models.json";
  std::vector<ModelSpec> out;
  const auto records = embedded_records(k_file);
  if (records.empty()) {
    for (const auto& m : builtin_model_catalog().models) {
      if (keep && !keep(m)) continue;
      if (auto spec = model_spec_from_catalog(m)) out.push_back(std::move(*spec));
    }
    return out;
  }
  std::vector<std::optional<ModelSpec>> slots(records.size());
  parallel_for(records.size(), threads, [&](size_t i) {
    auto entry = indexed_model(k_file, records[i], origin);
    if (!entry || !*entry || (keep && !keep(**entry))) return;
    if (auto spec = model_spec_from_catalog(**entry)) slots[i] = std::move(*spec);
  });
  for (auto& spec : slots)
    if (spec) out.push_back(std::move(*spec));
  return out;
}

Expected<ModelSpec> model_spec_from_catalog(const CatalogModel& entry) {
  const std::string origin = "catalog:" + entry.id;
  PF_TRY(spec, parse_hf_config(entry.config, origin));
  spec.id = entry.id;
  spec.source = "data/architectures/models.json [" + entry.id + "] (" + entry.source_kind + ": " + entry.source_url + ", retrieved " + entry.retrieved + ")";
  // config.json's quantization_config wins; hf_quant_config.json describes checkpoints that lack one.
  if (!entry.hf_quant_config.is_null() && !spec.quant.quantized()) {
    PF_TRY(scheme, parse_hf_quant_config(entry.hf_quant_config, origin + " hf_quant_config"));
    spec.quant = scheme;
  }
  for (auto& p : spec.provenance) p.source = spec.source;
  return spec;
}

}  // namespace preflight::model
