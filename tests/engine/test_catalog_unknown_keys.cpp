// Issue 15 (v0eng29): every catalogue loader refuses a key it does not read, naming the file, the object path and the
// key. Each case takes the shipped file, misspells one key of one object, and parses it: before, the engine catalogue's
// overheads records and top level, the device records' sources / confidence objects, the model records' source object
// and the three files' top levels dropped the key in silence and took the default.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "model/architecture_traits.hpp"
#include "model/model_catalog.hpp"

using namespace preflight;

namespace {

nlohmann::json shipped(const std::string& relative) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/data/" + relative);
  return nlohmann::json::parse(in);
}

// The error of parsing `root` (after `mutate`) with `parse`, or "" when it parsed.
std::string error_of(nlohmann::json root, const std::function<void(nlohmann::json&)>& mutate,
                     const std::function<std::string(const Json&)>& parse) {
  mutate(root);
  return parse(root);
}

template <typename Parsed>
std::string describe(const Expected<Parsed>& e) {
  return e ? std::string() : e.error().describe();
}

struct Misspelt {
  std::string what;                              // the object and key, for the failure message
  std::function<void(nlohmann::json&)> mutate;   // moves a key to its misspelt name
  std::string expected;                          // "<object path>.<misspelt key>" as the error names it
};

// Renames `key` of `object` to `to`, keeping its value.
void rename_key(nlohmann::json& object, const std::string& key, const std::string& to) {
  ASSERT_TRUE(object.contains(key)) << key;
  object[to] = object[key];
  object.erase(key);
}

}  // namespace

TEST(CatalogKeys, Issue15_EngineCatalogRefusesMisspeltKeys) {
  const std::string origin = "data/engines/engines.json";
  const auto parse = [&](const Json& j) { return describe(engine::parse_engine_catalog(j, origin)); };
  const auto root = shipped("engines/engines.json");
  ASSERT_EQ(error_of(root, [](nlohmann::json&) {}, parse), "");
  const Misspelt cases[] = {
      {"overheads[npu].non_torch_bytes",
       [](nlohmann::json& r) {
         for (auto& o : r["overheads"])
           if (o["platform"] == "npu") rename_key(o, "non_torch_band_bytes", "non_torch_bnad_bytes");
       },
       "unknown key overheads[npu].non_torch_bnad_bytes"},
      {"overheads[cuda].graph_capture_source",
       [](nlohmann::json& r) {
         for (auto& o : r["overheads"])
           if (o["platform"] == "cuda") rename_key(o, "graph_capture_source", "graph_captur_source");
       },
       "unknown key overheads[cuda].graph_captur_source"},
      {"top level", [](nlohmann::json& r) { rename_key(r, "hybrid_group_padding", "hybrid_group_paddings"); }, "unknown key hybrid_group_paddings"},
      {"profiles[vllm@0.6-0.7]",
       [](nlohmann::json& r) {
         for (auto& p : r["profiles"])
           if (p["id"] == "vllm@0.6-0.7") rename_key(p, "unchunked_prefill_up_to", "unchunked_prefil_up_to");
       },
       "unknown key profiles[vllm@0.6-0.7].unchunked_prefil_up_to"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(root, c.mutate, parse);
    EXPECT_NE(e.find(origin), std::string::npos) << c.what << ": " << e;
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.what << ": " << e;
  }
}

TEST(CatalogKeys, Issue15_DeviceModelAndTraitCataloguesRefuseMisspeltKeys) {
  {
    const std::string origin = "data/devices/devices.json";
    const auto parse = [&](const Json& j) { return describe(device::parse_device_catalog(j, origin)); };
    const auto root = shipped("devices/devices.json");
    ASSERT_EQ(error_of(root, [](nlohmann::json&) {}, parse), "");
    auto first_with = [](nlohmann::json& r, const char* object, const char* key) -> nlohmann::json& {
      for (auto& d : r["devices"])
        if (d.contains(object) && d[object].contains(key)) return d;
      ADD_FAILURE() << "no device has " << object << "." << key;
      return r;
    };
    std::string id_sources, id_confidence;
    const std::string e1 = error_of(root, [&](nlohmann::json& r) {
      auto& d = first_with(r, "sources", "runtime_total");
      id_sources = d["id"];
      rename_key(d["sources"], "runtime_total", "runtime_totl");
    }, parse);
    EXPECT_NE(e1.find(origin), std::string::npos) << e1;
    EXPECT_NE(e1.find("unknown key devices[" + id_sources + "].sources.runtime_totl"), std::string::npos) << e1;
    const std::string e2 = error_of(root, [&](nlohmann::json& r) {
      auto& d = first_with(r, "confidence", "bandwidth");
      id_confidence = d["id"];
      rename_key(d["confidence"], "bandwidth", "bandwith");
    }, parse);
    EXPECT_NE(e2.find("unknown key devices[" + id_confidence + "].confidence.bandwith"), std::string::npos) << e2;
    const std::string e3 = error_of(root, [](nlohmann::json& r) { rename_key(r, "ambiguous_names", "ambiguous_name"); }, parse);
    EXPECT_NE(e3.find("unknown key ambiguous_name"), std::string::npos) << e3;
  }
  {
    const std::string origin = "data/architectures/models.json";
    const auto parse = [&](const Json& j) { return describe(model::parse_model_catalog(j, origin)); };
    const auto root = shipped("architectures/models.json");
    ASSERT_EQ(error_of(root, [](nlohmann::json&) {}, parse), "");
    std::string id;
    const std::string e = error_of(root, [&](nlohmann::json& r) {
      id = r["models"][0]["id"];
      rename_key(r["models"][0]["source"], "retrieved", "retreived");
    }, parse);
    EXPECT_NE(e.find(origin), std::string::npos) << e;
    EXPECT_NE(e.find("unknown key models[" + id + "].source.retreived"), std::string::npos) << e;
  }
  {
    const std::string origin = "data/architectures/traits.json";
    const auto parse = [&](const Json& j) { return describe(model::parse_traits_catalog(j, origin)); };
    const auto root = shipped("architectures/traits.json");
    ASSERT_EQ(error_of(root, [](nlohmann::json&) {}, parse), "");
    const std::string e = error_of(root, [](nlohmann::json& r) { r["architecture"] = r["architectures"]; }, parse);
    EXPECT_NE(e.find(origin), std::string::npos) << e;
    EXPECT_NE(e.find("unknown key architecture"), std::string::npos) << e;
  }
}
