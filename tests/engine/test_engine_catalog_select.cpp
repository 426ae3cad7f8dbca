// Issue 19 (start-up time): fit parses only the engine records that its engine, version and device platform can
// select (load_engine_catalog_for, from the build-time index of engines.json). The index must locate every record of
// the file as a full parse reads it, with the fields it copies (a stale index fails here), and for every engine, every
// version a profile names and every platform, the selected catalogue must give the whole catalogue's profile and
// overheads field by field, or the same error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/embedded.hpp"
#include "engine/engine_profile.hpp"
#include "engine/allreduce_workspace.hpp"
#include "engine/moe_backend_workspace.hpp"
#include "engine/moe_row_padding.hpp"
#include "engine/nccl_buffers.hpp"

using namespace preflight;
using namespace preflight::engine;

namespace {

constexpr const char* k_file = "engines/engines.json";

// Two optional records the same by value (Overheads' own == compares their addresses).
template <class T>
bool same_record(const std::shared_ptr<const T>& a, const std::shared_ptr<const T>& b) {
  return (!a && !b) || (a && b && *a == *b);
}

// Overheads compare field by field, the NCCL buffer, all-reduce workspace and MoE backend workspace records by value.
bool same_overheads(const Overheads* a, const Overheads* b) {
  if (!a || !b) return a == b;
  Overheads x = *a, y = *b;
  const bool same_nccl = same_record(x.nccl_buffers, y.nccl_buffers);
  const bool same_workspace = same_record(x.allreduce_fusion_workspace, y.allreduce_fusion_workspace);
  const bool same_moe_backends = same_record(x.moe_backend_workspaces, y.moe_backend_workspaces);
  const bool same_row_padding = same_record(x.moe_row_padding, y.moe_row_padding);
  x.nccl_buffers.reset();
  y.nccl_buffers.reset();
  x.allreduce_fusion_workspace.reset();
  y.allreduce_fusion_workspace.reset();
  x.moe_backend_workspaces.reset();
  y.moe_backend_workspaces.reset();
  x.moe_row_padding.reset();
  y.moe_row_padding.reset();
  return same_nccl && same_workspace && same_moe_backends && same_row_padding && x == y;
}

// The profiles of `engine`, in file order.
std::vector<EngineProfile> profiles_of(const EngineCatalog& c, const std::string& engine) {
  std::vector<EngineProfile> out;
  for (const auto& p : c.profiles)
    if (p.engine == engine) out.push_back(p);
  return out;
}

}  // namespace

TEST(EngineCatalogSelect, Issue19_IndexLocatesEveryRecordAsAFullParseReadsIt) {
  auto whole = parse_json(std::string(embedded_data(k_file)), "data/engines/engines.json");
  ASSERT_TRUE(whole.has_value()) << whole.error().describe();
  for (const char* key : {"profiles", "overheads", "mxfp4_layouts", "hybrid_group_padding", "quantization_auto_detect"}) {
    const auto records = embedded_records(k_file, key);
    const Json& list = (*whole)[key];
    ASSERT_EQ(records.size(), list.size()) << key;
    const auto fields = embedded_record_fields(k_file, key);
    for (size_t i = 0; i < records.size(); ++i) {
      const std::string_view text = embedded_record_text(k_file, records[i]);
      ASSERT_FALSE(text.empty()) << key << " " << i;
      EXPECT_EQ(Json::parse(text), list[i]) << key << " " << i;
      for (const auto& f : fields) {
        const std::string name(f);
        EXPECT_EQ(std::string(*embedded_record_field(k_file, key, records[i], name)), list[i].value(name, std::string())) << key << " " << i << " " << name;
      }
    }
  }
  // Profiles are named by their id, overheads by their platform.
  EXPECT_EQ(std::string(embedded_records(k_file, "profiles")[0].id), (*whole)["profiles"][0]["id"].get<std::string>());
  EXPECT_EQ(std::string(embedded_records(k_file, "overheads")[0].id), (*whole)["overheads"][0]["platform"].get<std::string>());
}

TEST(EngineCatalogSelect, Issue19_SelectedCatalogueGivesTheWholeCataloguesProfile) {
  auto whole = load_engine_catalog();
  ASSERT_TRUE(whole.has_value()) << whole.error().describe();
  size_t checked = 0, one_profile = 0;
  for (const auto& engine : whole->engines()) {
    std::vector<std::string> versions = {"", "99999.1", "not a version", "0.1"};
    for (const auto& p : profiles_of(*whole, engine)) {
      versions.push_back(p.version_min.text());
      versions.push_back(p.version_max.text());
      if (p.first_release) versions.push_back(p.first_release->version);
    }
    for (const std::string platform : {"npu", "cuda", "rocm", ""}) {
      for (const auto& v : versions) {
        // --engine E --engine-version V, and --engine E@V.
        for (const auto& [text, version] : {std::pair{engine, v}, std::pair{v.empty() ? engine : engine + "@" + v, std::string()}}) {
          auto selected = load_engine_catalog_for({text, version, platform});
          ASSERT_TRUE(selected.has_value()) << text << " " << version << ": " << selected.error().describe();
          const auto expected = select_engine(*whole, text, version);
          const auto got = select_engine(*selected, text, version);
          ++checked;
          ASSERT_EQ(got.has_value(), expected.has_value()) << text << " " << version << " " << platform;
          if (!expected) {
            EXPECT_EQ(got.error().describe(), expected.error().describe());
            continue;
          }
          EXPECT_TRUE(*got == *expected) << text << " " << version << " " << platform << ": " << got->id << " vs " << expected->id;
          EXPECT_TRUE(same_overheads(selected->overheads_for(*got, platform), whole->overheads_for(*expected, platform))) << text << " " << platform;
          // Without a version that a profile covers, every profile of the engine is there (resolve_engine dates an
          // unstated version by them, and fit's version band runs over them).
          if (selected->profiles.size() == 1) ++one_profile;
          else EXPECT_TRUE(selected->profiles == profiles_of(*whole, engine)) << text << " " << version;
        }
      }
    }
  }
  EXPECT_GT(checked, 400u);  // 3 engines, 16 profiles, 4 platforms, 2 forms: 472 selections at 32de68c
  EXPECT_GT(one_profile, checked / 2);
}

TEST(EngineCatalogSelect, Issue19_ParsesOnlyWhatTheSelectionReaches) {
  auto whole = load_engine_catalog();
  ASSERT_TRUE(whole.has_value());
  struct Row {
    EngineCatalogSelection selection;
    size_t profiles, overheads;
  };
  const size_t ascend = profiles_of(*whole, "vllm-ascend").size(), vllm = profiles_of(*whole, "vllm").size();
  const Row rows[] = {
      {{"vllm-ascend@0.23", "", "npu"}, 1, 1},             // the README's fit: one profile, the npu overheads
      {{"vllm", "0.11.2", "cuda"}, 1, 1},                   // --engine vllm --engine-version 0.11.2
      {{"vllm@0.11.2", "", "rocm"}, 1, 1},                  // rocm's own record
      {{"", "", "npu"}, ascend, 1},                         // no engine named: the platform's default, every version
      {{"VLLM", "", "cuda"}, vllm, 1},                      // as select_engine reads it
      {{"vllm@0.11.2", "", ""}, 1, whole->overheads.size()},  // no platform: every overheads record
      {{"vllm-ascend@0.1", "", "npu"}, ascend, 1},          // a version no profile covers: select_engine lists them all
      {{"vlm", "", "cuda"}, whole->profiles.size(), whole->overheads.size()},  // unknown: the whole catalogue suggests
      {{"", "", ""}, whole->profiles.size(), whole->overheads.size()},
  };
  for (const auto& r : rows) {
    auto c = load_engine_catalog_for(r.selection);
    ASSERT_TRUE(c.has_value()) << r.selection.engine;
    EXPECT_EQ(c->profiles.size(), r.profiles) << r.selection.engine << " " << r.selection.device_platform;
    EXPECT_EQ(c->overheads.size(), r.overheads) << r.selection.engine << " " << r.selection.device_platform;
    EXPECT_EQ(c->origin, "data/engines/engines.json");
  }
  // An unknown engine's error and suggestion are the whole catalogue's.
  auto c = load_engine_catalog_for({"vlm", "", "cuda"});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(select_engine(*c, "vlm", "").error().describe(), select_engine(*whole, "vlm", "").error().describe());
}
