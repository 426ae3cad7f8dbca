#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "base/embedded.hpp"
#include "base/units.hpp"
#include "device/device_names.hpp"
#include "device/device_spec.hpp"

using namespace preflight;
using namespace preflight::device;

TEST(DeviceCatalog, ShippedCatalogueValidatesAndResolvesAliases) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  EXPECT_GT(catalog->devices.size(), 40u);
  const DeviceSpec* b3 = catalog->find("Ascend910B3");
  ASSERT_NE(b3, nullptr);
  EXPECT_EQ(b3->id, "910B3");
  EXPECT_NEAR(bytes_to_gib(b3->usable_total_bytes()), 60.96, 0.01);
  const DeviceSpec* b4 = catalog->find("910B4");
  ASSERT_NE(b4, nullptr);
  EXPECT_NEAR(bytes_to_gib(b4->usable_total_bytes()), 29.49, 0.01);
  ASSERT_NE(catalog->find("A100-80G"), nullptr);
  ASSERT_NE(catalog->find("h100"), nullptr);
  EXPECT_EQ(match_device_text(*catalog, "NVIDIA H100 80GB (79.18 GiB total)")->id, "H100-SXM");
}

TEST(DeviceCatalog, UnknownDeviceSuggestsNearestNames) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  auto d = find_device(*catalog, "910B5");
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().kind, ErrorKind::not_found);
  EXPECT_NE(d.error().message.find("did you mean"), std::string::npos);
  EXPECT_NE(d.error().message.find("910B"), std::string::npos);
}

TEST(DeviceCatalog, RejectsBadRecordsAndAppliesOverlay) {
  auto bad = parse_json(R"({"schema_version":1,"devices":[{"id":"X","name":"x","vendor":"v","platform":"cuda","memory_bytes":-1,"sources":{"memory":"s"}}]})", "d.json");
  EXPECT_FALSE(parse_device_catalog(*bad, "d.json").has_value());
  auto unknown = parse_json(R"({"schema_version":1,"devices":[{"id":"X","name":"x","vendor":"v","platform":"cuda","memory_bytes":1,"colour":"red","sources":{"memory":"s"}}]})", "d.json");
  auto e = parse_device_catalog(*unknown, "d.json");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("unknown key"), std::string::npos);
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  auto overlay = parse_json(R"({"schema_version":1,"devices":[{"id":"910B3","hbm_bandwidth_bytes_per_s":1.49e12,"source":"preflight bw run"}]})", "mine.json");
  ASSERT_TRUE(apply_device_overlay(*catalog, *overlay, "mine.json").has_value());
  EXPECT_DOUBLE_EQ(*catalog->find("910B3")->hbm_bandwidth_bytes_per_s, 1.49e12);
  EXPECT_EQ(catalog->find("910B3")->overrides.size(), 1u);
}

// #19 item 10: Infinity, NaN and other impossible quantities in devices.json and in the user's overlay are
// errors naming the file, the record and the field (parse_json reads NaN/Infinity as null, which passed
// as "not known").
TEST(DeviceCatalog, Issue19_NonFiniteValuesRejected) {
  struct Case {
    const char* field_and_value;
    const char* fragment;
  };
  const Case cases[] = {
      {R"("memory_bytes":Infinity)", "d.json: devices[X].memory_bytes: expected a finite positive number, found Infinity"},
      {R"("memory_bytes":NaN)", "d.json: devices[X].memory_bytes: expected a finite positive number, found NaN"},
      {R"("memory_bytes":0)", "d.json: devices[X].memory_bytes: expected a finite positive number, found 0"},
      {R"("memory_bytes":1,"hbm_bandwidth_bytes_per_s":Infinity)", "devices[X].hbm_bandwidth_bytes_per_s: expected a finite positive number, found Infinity"},
      {R"("memory_bytes":1,"hbm_bandwidth_bytes_per_s":-Infinity)", "devices[X].hbm_bandwidth_bytes_per_s: expected a finite positive number, found -Infinity"},
      {R"("memory_bytes":1,"bf16_dense_flops":NaN)", "devices[X].bf16_dense_flops: expected a finite positive number, found NaN"},
      {R"("memory_bytes":1,"fp8_dense_flops":0)", "devices[X].fp8_dense_flops: expected a finite positive number, found 0"},
      {R"("memory_bytes":1,"interconnect_bandwidth_bytes_per_s":-5)", "devices[X].interconnect_bandwidth_bytes_per_s: expected a finite positive number, found -5"},
      {R"("memory_bytes":1,"measured_copy_bandwidth_bytes_per_s":Infinity)", "devices[X].measured_copy_bandwidth_bytes_per_s"},
  };
  for (const auto& c : cases) {
    const std::string text = std::string(R"({"schema_version":1,"devices":[{"id":"X","name":"x","vendor":"v","platform":"cuda",)") + c.field_and_value +
                             R"(,"sources":{"memory":"s","bandwidth":"s"}}]})";
    auto parsed = parse_device_catalog_text(text, "d.json");
    ASSERT_FALSE(parsed.has_value()) << c.field_and_value;
    EXPECT_EQ(parsed.error().kind, ErrorKind::corrupt) << c.field_and_value;
    EXPECT_NE(parsed.error().message.find(c.fragment), std::string::npos) << c.field_and_value << " -> " << parsed.error().message;
  }
  // null stays "not known" in the catalogue, and a string holding "Infinity" is still text.
  auto known = parse_device_catalog_text(
      R"({"schema_version":1,"devices":[{"id":"X","name":"x","vendor":"v","platform":"cuda","memory_bytes":1,"memory_kind":"gddr","hbm_bandwidth_bytes_per_s":null,"interconnect":"Infinity Fabric","sources":{"memory":"s"}}]})",
      "d.json");
  ASSERT_TRUE(known.has_value()) << known.error().describe();
  EXPECT_FALSE(known->devices[0].hbm_bandwidth_bytes_per_s.has_value());
  EXPECT_EQ(known->devices[0].interconnect, "Infinity Fabric");
}

TEST(DeviceCatalog, Issue19_NonFiniteOverlayValuesRejected) {
  struct Case {
    const char* record;
    const char* fragment;
  };
  const Case cases[] = {
      {R"({"id":"910B3","hbm_bandwidth_bytes_per_s":Infinity,"source":"s"})", "devices[910B3].hbm_bandwidth_bytes_per_s: expected a finite positive number, found Infinity"},
      {R"({"id":"910B3","runtime_total_bytes":NaN,"source":"s"})", "devices[910B3].runtime_total_bytes: expected a finite positive number, found NaN"},
      {R"({"id":"910B3","runtime_total_bytes":null,"source":"s"})", "devices[910B3].runtime_total_bytes: expected a finite positive number, found null"},
      {R"({"id":"910B3","measured_copy_bandwidth_bytes_per_s":-Infinity,"source":"s"})", "devices[910B3].measured_copy_bandwidth_bytes_per_s: expected a finite positive number, found -Infinity"},
      {R"({"id":"910B3","runtime_total_bytes":1e15,"source":"s"})", "devices[910B3].runtime_total_bytes: 1000000000000000 exceeds the device's memory_bytes"},
      {R"({"id":"910B3","source":"s","measured_copy_bandwidth":{"median_bytes_per_s":1e12,"min_bytes_per_s":1e12,"max_bytes_per_s":Infinity,"repeats":5,"buffer_bytes":1e9,"date":"d","tool":"t"}})",
       "devices[910B3].measured_copy_bandwidth.max_bytes_per_s: expected a finite positive number, found Infinity"},
  };
  const std::string path = ::testing::TempDir() + "issue19_overlay.json";
  ASSERT_EQ(setenv("PREFLIGHT_DEVICE_OVERRIDES", path.c_str(), 1), 0);
  for (const auto& c : cases) {
    std::ofstream(path) << R"({"schema_version":1,"devices":[)" << c.record << "]}";
    auto catalog = load_device_catalog();
    ASSERT_FALSE(catalog.has_value()) << c.record;
    EXPECT_EQ(catalog.error().kind, ErrorKind::corrupt) << c.record;
    EXPECT_NE(catalog.error().message.find(path + ": " + c.fragment), std::string::npos) << c.record << " -> " << catalog.error().message;
  }
  std::ofstream(path) << R"({"schema_version":1,"devices":[{"id":"910B3","hbm_bandwidth_bytes_per_s":1.5e12,"source":"s"}]})";
  EXPECT_TRUE(load_device_catalog().has_value());
  unsetenv("PREFLIGHT_DEVICE_OVERRIDES");
  std::remove(path.c_str());
}

// Issue 15: free text names the card by its stated size. "NVIDIA A100 40GB" once resolved to the 80 GB A100 through
// the longer alias "NVIDIA A100" (a public two-node log was predicted 181% high).
TEST(DeviceCatalog, Issue15_FreeTextStatedSizePicksTheCard) {
  auto catalog = device::load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  const struct {
    const char* text;
    double memory_gib;
  } cases[] = {
      {"NVIDIA A100 40GB", 40}, {"NVIDIA A100 80GB", 80}, {"NVIDIA A100", 80}, {"A100-SXM4-40GB", 40},
      {"Ascend 910B3 64GB", 64}, {"NVIDIA H100 80GB (79.18 GiB total)", 80}, {"910B4 32GB HBM2e (29.49 GiB usable)", 32},
      // Issue 15 (evid34): a size read as memory in use states nothing about the card. The 310P3 record is the Atlas 300I
      // Pro's 24 GB chip (24e9 B = 22.35 GiB); "1.8 GB in use" disagreed with it and the text named no card. A stated 40GB
      // still picks the 40 GB A100 beside a "3 GB used" reading.
      {"Ascend 310P3 (1.8 GB in use)", 22.35}, {"NVIDIA A100 40GB (3 GB used)", 40}, {"Ascend 910B3 (2.1GB) in use", 64},
  };
  for (const auto& c : cases) {
    const device::DeviceSpec* d = device::match_device_text(*catalog, c.text);
    ASSERT_NE(d, nullptr) << c.text;
    EXPECT_NEAR(d->memory_bytes / (1024.0 * 1024.0 * 1024.0), c.memory_gib, 0.5) << c.text << " -> " << d->id;
  }
}

// Issue 15: names as people, logs, npu-smi and torch.cuda.get_device_name write them -> catalogue id.
TEST(DeviceCatalog, Issue15_DeviceNames) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  const std::vector<std::pair<std::string, std::string>> table = {
      {"A100 40GB", "A100-40G-SXM"},
      {"NVIDIA A100-PCIE-40GB", "A100-40G-PCIe"},
      {"NVIDIA A100-SXM4-80GB", "A100-80G-SXM"},
      {"RTX 4060 Laptop 8GB", "RTX4060-Laptop"},
      {"NVIDIA GeForce RTX 4060 Laptop GPU", "RTX4060-Laptop"},
      {"NVIDIA GeForce RTX 4060", "RTX4060"},
      {"NVIDIA GeForce RTX 4070 Laptop GPU", "RTX4070-Laptop"},
      {"NVIDIA GeForce RTX 4090 Laptop GPU", "RTX4090-Laptop"},
      {"NVIDIA GeForce RTX 4090", "RTX4090"},
      {"NVIDIA GeForce RTX 4060 Ti 16GB", "RTX4060Ti-16G"},
      {"NVIDIA GeForce RTX 4070 Ti SUPER", "RTX4070TiSuper"},
      {"NVIDIA GeForce RTX 4070 Ti", "RTX4070Ti"},
      {"NVIDIA GeForce RTX 4080 SUPER", "RTX4080Super"},
      {"NVIDIA GeForce RTX 5070 Ti", "RTX5070Ti"},
      {"NVIDIA GeForce RTX 5080", "RTX5080"},
      {"NVIDIA GeForce RTX 3060", "RTX3060-12G"},
      {"NVIDIA GeForce RTX 3060 Ti", "RTX3060Ti"},
      {"NVIDIA GeForce RTX 3080 Ti", "RTX3080Ti"},
      {"NVIDIA GeForce RTX 2080 Ti", "RTX2080Ti"},
      {"NVIDIA RTX A6000", "RTXA6000"},
      {"NVIDIA RTX A2000 12GB", "RTXA2000-12G"},
      {"NVIDIA A40", "A40"},
      {"NVIDIA L40", "L40"},
      {"NVIDIA L40S", "L40S"},
      {"Tesla V100-SXM2-32GB", "V100-SXM2-32G"},
      {"AMD Instinct MI100", "MI100"},
      {"AMD Instinct MI300A", "MI300A"},
      {"AMD Instinct MI308X", "MI308X"},
      {"AMD Radeon RX 7900 XTX", "RX7900XTX"},
      {"AMD Radeon PRO W7900", "W7900"},
      {"Atlas 800I A3", "910C"},
      {"Atlas 800T A3", "910C"},
      {"Ascend910_9392", "910C"},
      {"Atlas 800T A2", "910B3"},
      {"Ascend910B2", "910B2"},
      {"Ascend910B4-1", "910B4-1"},
      {"Atlas 300I Duo", "300I-Duo"},
      {"310P3", "310P3"},
      {"Ascend 950PR", "950PR"},
  };
  for (const auto& [text, id] : table) {
    const DeviceSpec* d = match_device_text(*catalog, text);
    ASSERT_NE(d, nullptr) << text;
    EXPECT_EQ(d->id, id) << text;
  }
  // A size the text states picks the card a bare name leaves open (torch prints the same name for both 4060 Ti).
  EXPECT_EQ(match_device_text(*catalog, "NVIDIA GeForce RTX 4060 Ti (15.70 GiB total)")->id, "RTX4060Ti-16G");
  EXPECT_EQ(match_device_text(*catalog, "NVIDIA GeForce RTX 4060 Ti (7.63 GiB total)")->id, "RTX4060Ti-8G");
}

// Issue 15: an ambiguous name resolves to a stated card and says which card was assumed and why.
TEST(DeviceCatalog, Issue15_AmbiguousNamesSayWhichCard) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  struct Row { std::string text, id; std::vector<std::string> said; };
  const std::vector<Row> rows = {
      {"A100", "A100-80G-SXM", {"'A100' names 4 cards", "A100-40G-PCIe", "assumed A100-80G-SXM"}},
      {"A100 40GB", "A100-40G-SXM", {"A100-40G-PCIe", "assumed A100-40G-SXM"}},
      {"910B", "910B2", {"'910B' names 6 cards", "910B4", "assumed 910B2", "60.96 GiB"}},
      {"4060 Ti", "RTX4060Ti-8G", {"RTX4060Ti-16G", "assumed RTX4060Ti-8G"}},
      {"NVIDIA GeForce RTX 4060 Ti", "RTX4060Ti-8G", {"RTX4060Ti-16G", "assumed RTX4060Ti-8G"}},
      {"Atlas 800I A3", "910C", {"910C-package", "assumed 910C", "one die"}},
      {"H100", "H100-SXM", {"H100-PCIe", "assumed H100-SXM"}},
      {"NVIDIA GeForce RTX 4060 Ti (15.70 GiB total)", "RTX4060Ti-16G", {"the stated size picks RTX4060Ti-16G"}},
      // A validation case's device text: the 64 GB it states leaves out the 32 GB 910B4.
      {"Ascend 910B (64GB HBM class; NPU total memory 65452113920 B = 60.96 GiB)", "910B2",
       {"'Ascend910B' names 6 cards", "the stated size leaves 910B1, 910B2, 910B2C, 910B3, 910B4-1;", "assumed 910B2"}},
  };
  for (const auto& row : rows) {
    const DeviceMatch m = match_device(*catalog, row.text);
    ASSERT_NE(m.device, nullptr) << row.text;
    EXPECT_EQ(m.device->id, row.id) << row.text;
    for (const auto& s : row.said) EXPECT_NE(m.assumption.find(s), std::string::npos) << row.text << ": " << m.assumption;
  }
  for (const std::string exact : {"NVIDIA A100-SXM4-80GB", "A100-40G-PCIe", "910B3", "RTX4060Ti-16G", "NVIDIA GeForce RTX 4060 Laptop GPU"}) {
    EXPECT_EQ(match_device(*catalog, exact).assumption, "") << exact;
  }
  // A name that is both an alias and ambiguous resolves to the same card either way.
  for (const auto& a : catalog->ambiguous_names) {
    if (const DeviceSpec* d = catalog->find(a.name)) EXPECT_EQ(d->id, a.assumed) << a.name;
  }
}

// Issue 15 (pp36): 'H20' is written for both H20 parts, the 96 GB card and the 141 GB HBM3e refresh, which report
// different names (torch 'NVIDIA H20' / 'NVIDIA H20-3e', the names of vLLM's fused-MoE files E=128,N=192,device_name=
// NVIDIA_H20.json / ..._H20-3e.json) and totals. The bare name assumes the 96 GB card and says so; the refresh's own name,
// or a total a log prints beside the bare name, picks the 141 GB card: vLLM 0.11+ prints "Free memory on device (F/T GiB)"
// and the refresh reports 143771 MiB like an H200 (139.81 GiB in torch's total: pub-h200x2 in
// data/evidence/vllm-startup-public.jsonl), against 97871 MiB, "95.33 GiB reported usable" for the 96 GB card
// (vllm-project/aibrix issue #2770). 139.81 is within 15% of 141 GiB and not of 96; 95.33 the reverse.
TEST(DeviceCatalog, Issue15_H20PartByNameOrPrintedTotal) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  struct Row { std::string text, id; std::string said; };
  const std::vector<Row> rows = {
      {"H20", "H20", "'H20' names 2 cards (H20, H20-141G); assumed H20"},
      {"NVIDIA H20", "H20", "'NVIDIA H20' names 2 cards (H20, H20-141G); assumed H20"},
      {"NVIDIA H20 (Free memory on device (138.92/139.81 GiB) on startup)", "H20-141G", "the stated size picks H20-141G"},
      {"NVIDIA H20 (95.33 GiB total)", "H20", "the stated size picks H20 "},
      {"NVIDIA H20-3e", "H20-141G", ""},
      {"NVIDIA_H20-3e", "H20-141G", ""},
  };
  for (const auto& row : rows) {
    const DeviceMatch m = match_device(*catalog, row.text);
    ASSERT_NE(m.device, nullptr) << row.text;
    EXPECT_EQ(m.device->id, row.id) << row.text;
    if (row.said.empty()) EXPECT_EQ(m.assumption, "") << row.text;
    else EXPECT_NE(m.assumption.find(row.said), std::string::npos) << row.text << ": " << m.assumption;
  }
}

// Issue 15 (acc28): the cards a text leaves open, the assumed one first. "NVIDIA A100 80GB" (the shared dl22 cases'
// device) and "H100 80GB" state no form factor, so the PCIe card stays a candidate; a size the text states drops the
// candidates it disagrees with (the H100 NVL's 94 GB); the cards' own names, which state the form factor, leave none.
TEST(DeviceCatalog, Issue15_CandidateDevicesOfAnAmbiguousName) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  const std::vector<std::pair<std::string, std::vector<std::string>>> rows = {
      {"NVIDIA A100 80GB", {"A100-80G-SXM", "A100-80G-PCIe"}},
      {"A100 80GB", {"A100-80G-SXM", "A100-80G-PCIe"}},
      {"NVIDIA A100 40GB", {"A100-40G-SXM", "A100-40G-PCIe"}},
      {"H100", {"H100-SXM", "H100-PCIe", "H100-NVL"}},
      {"NVIDIA H100", {"H100-SXM", "H100-PCIe", "H100-NVL"}},
      {"NVIDIA H100 80GB (79.18 GiB total)", {"H100-SXM", "H100-PCIe"}},
      {"NVIDIA A100-SXM4-80GB", {}},
      {"NVIDIA A100 80GB PCIe", {}},
      {"NVIDIA H100 80GB HBM3", {}},
      {"L40S", {}},
  };
  for (const auto& [text, ids] : rows) {
    std::vector<std::string> got;
    for (const DeviceSpec* d : candidate_devices(*catalog, text)) got.push_back(d->id);
    EXPECT_EQ(got, ids) << text;
    if (!ids.empty()) EXPECT_EQ(match_device(*catalog, text).device->id, ids.front()) << text;
  }
}

// Issue 15: a log that prints only the runtime total ("total memory 61.27 GiB") still names the card.
TEST(DeviceCatalog, Issue15_DeviceByRuntimeTotal) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  const double gib = 1024.0 * 1024.0 * 1024.0;
  // 61.27 GiB: one 910C die as torch_npu reports it (sglang #29838 in the 910C record's sources).
  DeviceMatch c = match_device_total(*catalog, 61.27 * gib, "");
  ASSERT_NE(c.device, nullptr);
  EXPECT_EQ(c.device->id, "910C");
  EXPECT_NE(c.assumption.find("61.27 GiB"), std::string::npos) << c.assumption;
  // 65452113920 B (60.96 GiB): every 64 GB A2 part; the '910B' choice, the others named.
  DeviceMatch b = match_device_total(*catalog, 65452113920.0, "npu");
  ASSERT_NE(b.device, nullptr);
  EXPECT_EQ(b.device->id, "910B2");
  EXPECT_NE(b.assumption.find("910B3"), std::string::npos) << b.assumption;
  EXPECT_EQ(match_device_total(*catalog, 65452113920.0, "cuda").device, nullptr);
  EXPECT_EQ(match_device_total(*catalog, 12.34 * gib, "").device, nullptr);
}

// Issue 15: new records carry the datasheet capacity and peak bandwidth (bus width x data rate, worked by hand).
TEST(DeviceCatalog, Issue15_NewCardsDatasheetFigures) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  struct Row { std::string id; double memory_gib; double bandwidth_gb_s; std::string platform; };
  const std::vector<Row> rows = {
      {"RTX2080Ti", 11, 352 * 14 / 8.0, "cuda"},        // 616
      {"RTX3060-12G", 12, 192 * 15 / 8.0, "cuda"},      // 360
      {"RTX3080Ti", 12, 384 * 19 / 8.0, "cuda"},        // 912
      {"RTX4060", 8, 128 * 17 / 8.0, "cuda"},           // 272
      {"RTX4060Ti-16G", 16, 128 * 18 / 8.0, "cuda"},    // 288
      {"RTX4070TiSuper", 16, 256 * 21 / 8.0, "cuda"},   // 672
      {"RTX4080Super", 16, 256 * 23 / 8.0, "cuda"},     // 736
      {"RTX5070", 12, 192 * 28 / 8.0, "cuda"},          // 672
      {"RTX5080", 16, 256 * 30 / 8.0, "cuda"},          // 960
      {"RTX4060-Laptop", 8, 128 * 16 / 8.0, "cuda"},    // 256
      {"RTX4090-Laptop", 16, 256 * 18 / 8.0, "cuda"},   // 576
      {"RTXA6000", 48, 384 * 16 / 8.0, "cuda"},         // 768
      {"A40", 48, 384 * 14.5 / 8.0, "cuda"},            // 696
      {"L40", 48, 384 * 18 / 8.0, "cuda"},              // 864
      {"MI100", 32, 1228.8, "rocm"},
      {"MI300A", 128, 5300, "rocm"},
      {"RX7900XTX", 24, 384 * 20 / 8.0, "rocm"},        // 960
      {"W7900", 48, 384 * 18 / 8.0, "rocm"},            // 864
  };
  for (const auto& row : rows) {
    const DeviceSpec* d = catalog->find(row.id);
    ASSERT_NE(d, nullptr) << row.id;
    EXPECT_DOUBLE_EQ(d->memory_bytes, row.memory_gib * 1024 * 1024 * 1024) << row.id;
    ASSERT_TRUE(d->hbm_bandwidth_bytes_per_s) << row.id;
    EXPECT_NEAR(*d->hbm_bandwidth_bytes_per_s, row.bandwidth_gb_s * 1e9, 1e6) << row.id;
    EXPECT_EQ(d->platform, row.platform) << row.id;
    EXPECT_NE(d->source_bandwidth.find("https://"), std::string::npos) << row.id;
    EXPECT_NE(d->source_memory.find("https://"), std::string::npos) << row.id;
  }
  EXPECT_FALSE(catalog->find("RTX2080Ti")->supports_dtype("bf16"));  // Turing has no bf16
  // Runtime totals as torch printed them on these cards (OOM texts cited in the records).
  EXPECT_NEAR(bytes_to_gib(catalog->find("RTX3060-12G")->usable_total_bytes()), 11.76, 0.005);
  EXPECT_NEAR(bytes_to_gib(catalog->find("RTXA4000")->usable_total_bytes()), 15.61, 0.005);
  EXPECT_NEAR(bytes_to_gib(catalog->find("RTX4060-Laptop")->usable_total_bytes()), 7.75, 0.005);
}

// Issue 15: ambiguous_names entries are validated like records: unknown ids and a stray assumption are errors.
TEST(DeviceCatalog, Issue15_AmbiguousNamesValidated) {
  const std::string device = R"({"id":"X1","name":"x","vendor":"v","platform":"cuda","memory_bytes":1e9,"memory_kind":"gddr","sources":{"memory":"s"}})";
  const std::string device2 = R"({"id":"X2","name":"x","vendor":"v","platform":"cuda","memory_bytes":2e9,"memory_kind":"gddr","sources":{"memory":"s"}})";
  auto with = [&](const std::string& amb) { return R"({"schema_version":1,"devices":[)" + device + "," + device2 + R"(],"ambiguous_names":[)" + amb + "]}"; };
  auto ok = parse_device_catalog_text(with(R"({"name":"XCARD","assumed":"X1","candidates":["X1","X2"],"reason":"smaller"})"), "d.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  ASSERT_EQ(ok->ambiguous_names.size(), 1u);
  const DeviceMatch m = match_device(*ok, "an XCARD");
  ASSERT_NE(m.device, nullptr);
  EXPECT_EQ(m.device->id, "X1");
  EXPECT_NE(m.assumption.find("smaller"), std::string::npos);
  struct Bad { std::string amb, fragment; };
  for (const Bad& bad : std::vector<Bad>{{R"({"name":"X","assumed":"X1","candidates":["X1","X9"],"reason":"r"})", "ambiguous_names[X].candidates: no device X9"},
                                         {R"({"name":"X","assumed":"X2","candidates":["X1"],"reason":"r"})", "X2 is not one of its candidates"},
                                         {R"({"name":"X","assumed":"X1","candidates":[],"reason":"r"})", "candidates"},
                                         {R"({"name":"X","assumed":"X1","candidates":["X1"],"reason":"r","extra":1})", "extra"}}) {
    auto r = parse_device_catalog_text(with(bad.amb), "d.json");
    ASSERT_FALSE(r.has_value()) << bad.amb;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt) << bad.amb;
    EXPECT_NE(r.error().message.find(bad.fragment), std::string::npos) << r.error().message;
  }
}

// Issue 15: --device-memory sizes as people write them.
TEST(DeviceCatalog, Issue15_ParseMemorySize) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const std::vector<std::pair<std::string, double>> good = {
      {"24GiB", 24 * gib}, {"24 GiB", 24 * gib}, {"24gib", 24 * gib}, {"24GB", 24e9}, {"512MiB", 512 * 1024.0 * 1024.0},
      {"1.5TiB", 1.5 * 1024 * gib}, {"80000000000B", 80e9}, {"61.27GiB", 61.27 * gib}};
  for (const auto& [text, bytes] : good) {
    auto v = parse_memory_size(text, "--device-memory");
    ASSERT_TRUE(v.has_value()) << text;
    EXPECT_DOUBLE_EQ(*v, bytes) << text;
  }
  for (const std::string bad : {"24", "24G", "abc", "-1GiB", "0GiB", "GiB", "24 GiBs", "nanGiB"}) {
    auto v = parse_memory_size(bad, "--device-memory");
    ASSERT_FALSE(v.has_value()) << bad;
    EXPECT_EQ(v.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(v.error().message.find("--device-memory"), std::string::npos);
  }
}

// Issue 19 (start-up time): fit and `plan --device D` load the card they name from its record alone
// (load_device_catalog_for, the build-time index of devices.json). Every id and alias of every card must give
// one record that equals the whole catalogue's card field by field and resolves the name as the whole
// catalogue does; an ambiguous name, a list or an unknown name loads the whole catalogue.
namespace {
std::string device_fields(const DeviceSpec& d) {
  std::string out = d.id + "|" + d.name + "|" + d.vendor + "|" + d.platform + "|" + d.family + "|" + d.interconnect + "|" + d.origin + "|";
  for (const auto& a : d.aliases) out += a + ",";
  for (const auto& t : d.dtypes) out += t + ",";
  for (const auto& o : d.overrides) out += o + ",";
  out += "|" + d.source_memory + "|" + d.source_runtime_total + "|" + d.source_bandwidth + "|" + d.source_compute + "|" + d.source_measured_copy_bandwidth;
  out += "|" + d.confidence_runtime_total + "|" + d.confidence_bandwidth + "|" + d.memory_kind + "|" + d.class_runtime_total_rule;
  for (const auto& v : {std::optional<double>(d.memory_bytes), d.runtime_total_bytes, d.class_runtime_total_bytes, d.hbm_bandwidth_bytes_per_s, d.measured_copy_bandwidth_bytes_per_s,
                        d.bf16_dense_flops, d.fp16_dense_flops, d.fp8_dense_flops, d.int8_dense_ops, d.interconnect_bandwidth_bytes_per_s})
    out += v ? "|" + std::to_string(*v) : std::string("|-");
  // The class rule's parts, to the last bit: the one-record catalogue gives the whole catalogue's (from the index's copied fields).
  char exact[64];
  for (const double v : {d.class_runtime_total_bytes.value_or(-1), d.class_runtime_total_low_bytes, d.class_runtime_total_high_bytes, d.class_runtime_total_ratio}) {
    std::snprintf(exact, sizeof exact, "|%a", v);
    out += exact;
  }
  out += "|" + std::to_string(d.class_runtime_total_cards);
  return out;
}

std::string squashed(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string lowered(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

TEST(DeviceCatalog, Issue19_OneRecordCatalogueMatchesWholeCatalogue) {
  const std::string path = ::testing::TempDir() + "issue19_no_overlay.json";
  std::remove(path.c_str());
  ASSERT_EQ(setenv("PREFLIGHT_DEVICE_OVERRIDES", path.c_str(), 1), 0);
  auto whole = load_device_catalog();
  ASSERT_TRUE(whole.has_value()) << whole.error().describe();
  const auto records = embedded_records("devices/devices.json", "devices");
  ASSERT_EQ(records.size(), whole->devices.size());
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(std::string(records[i].id), whole->devices[i].id);
  const auto ambiguous = embedded_records("devices/devices.json", "ambiguous_names");
  ASSERT_EQ(ambiguous.size(), whole->ambiguous_names.size());
  for (size_t i = 0; i < ambiguous.size(); ++i) EXPECT_EQ(std::string(ambiguous[i].id), whole->ambiguous_names[i].name);
  size_t one_record = 0, names = 0;
  for (const auto& d : whole->devices) {
    std::vector<std::string> all = d.aliases;
    all.push_back(d.id);
    all.push_back(lowered(d.id));
    for (const auto& name : all) {
      ++names;
      auto one = load_device_catalog_for(name);
      ASSERT_TRUE(one.has_value()) << name << ": " << one.error().describe();
      const DeviceMatch expected = match_device(*whole, name), got = match_device(*one, name);
      ASSERT_NE(expected.device, nullptr) << name;
      ASSERT_NE(got.device, nullptr) << name;
      EXPECT_EQ(device_fields(*got.device), device_fields(*expected.device)) << name;
      EXPECT_EQ(got.assumption, expected.assumption) << name;
      auto found = find_device(*one, name);
      ASSERT_TRUE(found.has_value()) << name;
      EXPECT_EQ(found->id, d.id) << name;
      // Only a name that ambiguous_names lists needs the whole catalogue (case, spaces, hyphens, underscores ignored).
      const bool listed = std::any_of(whole->ambiguous_names.begin(), whole->ambiguous_names.end(), [&](const AmbiguousName& a) { return squashed(a.name) == squashed(name); });
      EXPECT_EQ(one->devices.size(), listed ? whole->devices.size() : 1u) << name;
      if (!listed) ++one_record;
    }
  }
  EXPECT_GT(one_record, names * 9 / 10);
  EXPECT_EQ(load_device_catalog_for("910B3")->devices.size(), 1u);
  EXPECT_EQ(load_device_catalog_for("ascend 910b3")->devices.size(), 1u);
  for (const char* whole_needed : {"A100", "910B", "910B3,910B4", "NVIDIA H100 80GB (79.18 GiB total)", "910B5", ""}) {
    auto c = load_device_catalog_for(whole_needed);
    ASSERT_TRUE(c.has_value()) << whole_needed;
    EXPECT_EQ(c->devices.size(), whole->devices.size()) << whole_needed;
  }
  unsetenv("PREFLIGHT_DEVICE_OVERRIDES");
}

// The overlay applies to the named card as on the whole catalogue, a card it names besides is loaded with it, and a
// bad overlay gives the whole catalogue's error.
TEST(DeviceCatalog, Issue19_OneRecordCatalogueTakesTheOverlay) {
  const std::string path = ::testing::TempDir() + "issue19_one_record_overlay.json";
  ASSERT_EQ(setenv("PREFLIGHT_DEVICE_OVERRIDES", path.c_str(), 1), 0);
  std::ofstream(path) << R"({"schema_version":1,"devices":[{"id":"Ascend910B3","hbm_bandwidth_bytes_per_s":1.5e12,"source":"s"},)"
                      << R"({"id":"H100-SXM","runtime_total_bytes":8.0e10,"source":"t"}]})";
  auto whole = load_device_catalog();
  ASSERT_TRUE(whole.has_value()) << whole.error().describe();
  auto one = load_device_catalog_for("910B3");
  ASSERT_TRUE(one.has_value()) << one.error().describe();
  ASSERT_EQ(one->devices.size(), 2u);
  for (const char* id : {"910B3", "H100-SXM"}) {
    ASSERT_NE(one->find(id), nullptr) << id;
    EXPECT_EQ(device_fields(*one->find(id)), device_fields(*whole->find(id))) << id;
  }
  EXPECT_EQ(one->find("910B3")->hbm_bandwidth_bytes_per_s, 1.5e12);
  EXPECT_EQ(one->find("910B3")->overrides, std::vector<std::string>{"hbm_bandwidth_bytes_per_s"});
  for (const char* bad : {R"({"id":"910B9","runtime_total_bytes":1e9,"source":"s"})", R"({"id":"910B3","runtime_total_bytes":NaN,"source":"s"})",
                          R"({"id":"910B3","runtime_total_bytes":1e15,"source":"s"})"}) {
    std::ofstream(path) << R"({"schema_version":1,"devices":[)" << bad << "]}";
    auto expected = load_device_catalog();
    ASSERT_FALSE(expected.has_value()) << bad;
    auto got = load_device_catalog_for("910B3");
    ASSERT_FALSE(got.has_value()) << bad;
    EXPECT_EQ(got.error().message, expected.error().message) << bad;
    EXPECT_EQ(got.error().kind, expected.error().kind) << bad;
  }
  unsetenv("PREFLIGHT_DEVICE_OVERRIDES");
  std::remove(path.c_str());
}

// Issue 15: a card with a total torch printed uses it. RTX 4070 Ti: Kwai-Kolors/Kolors #11 prints "11.70 GiB total
// capacity" next to nvidia-smi's "NVIDIA GeForce RTX 4070 Ti ... 12282MiB"; 11.70 x 2^30 = 12562779340.8 -> 12562779341 B.
TEST(DeviceCatalog, Issue15_SourcedRuntimeTotalIsUsed) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  const DeviceSpec* d = catalog->find("RTX 4070 Ti");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->id, "RTX4070Ti");
  ASSERT_TRUE(d->runtime_total_bytes);
  EXPECT_DOUBLE_EQ(d->usable_total_bytes(), 12562779341.0);
  EXPECT_EQ(d->confidence_runtime_total, "measured");
  EXPECT_NE(d->source_runtime_total.find("Kwai-Kolors/Kolors issue #11"), std::string::npos);
  EXPECT_FALSE(d->class_runtime_total_bytes);
  EXPECT_TRUE(d->class_runtime_total_rule.empty());
  // Every card says how its memory is attached; each GDDR card with ECC on by default says where that is stated.
  for (const auto& dev : catalog->devices) {
    EXPECT_FALSE(dev.memory_kind.empty()) << dev.id;
  }
  EXPECT_EQ(catalog->find("L4")->memory_kind, "gddr_ecc");
  EXPECT_EQ(catalog->find("H100-SXM")->memory_kind, "hbm");
}

// Issue 15: an unknown card takes the median runtime/nominal ratio of its vendor's measured cards of the same memory
// kind, with the band. A small catalogue so the numbers are worked by hand:
//   G1 16 GiB, total 15.5 GiB  -> 15.5 / 16 = 0.96875
//   G2  8 GiB, total 7.9 GiB   -> 7.9 / 8   = 0.98750
//   G3 12 GiB, total 11.7 GiB  -> 11.7 / 12 = 0.97500   (measured)
//   G4 24 GiB, total 20 GiB, "derived"    -> left out (not printed on that card)
//   E1 24 GiB gddr_ecc, total 22 GiB      -> another kind, left out
//   O1 another vendor's gddr card         -> left out
//   median of {0.96875, 0.975, 0.9875} = 0.975; U (12 GiB gddr, unknown) -> 12 x 0.975 = 11.7 GiB = 12562779340.8 B;
//   band 0.96875-0.9875: 12 x 0.96875 = 11.625 GiB (exact in binary, printed "11.62": printf rounds a tie to even),
//   12 x 0.9875 = 11.85 GiB.
//   An even count (G2 and G3 only, vendor w) gives the mean of the middle two: (0.975 + 0.9875) / 2 = 0.98125.
TEST(DeviceCatalog, Issue15_UnknownCardUsesItsMemoryClass) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  auto card = [&](const std::string& id, const std::string& vendor, const std::string& kind, double nominal_gib, const std::string& total, const std::string& confidence) {
    std::string rec = R"({"id":")" + id + R"(","name":"x","vendor":")" + vendor + R"(","platform":"cuda","memory_bytes":)" + std::to_string(nominal_gib * gib) +
                      R"(,"memory_kind":")" + kind + R"(","runtime_total_bytes":)" + total;
    rec += R"(,"confidence":{"runtime_total":")" + confidence + R"("},"sources":{"memory":"s","runtime_total":"r","memory_kind":"k"}})";
    return rec;
  };
  const std::string text = R"({"schema_version":1,"devices":[)" + card("G1", "v", "gddr", 16, std::to_string(15.5 * gib), "measured") + "," +
                           card("G2", "v", "gddr", 8, std::to_string(7.9 * gib), "measured") + "," + card("G3", "v", "gddr", 12, std::to_string(11.7 * gib), "measured") +
                           "," + card("G4", "v", "gddr", 24, std::to_string(20 * gib), "derived") + "," + card("E1", "v", "gddr_ecc", 24, std::to_string(22 * gib), "measured") +
                           "," + card("O1", "o", "gddr", 8, std::to_string(4 * gib), "measured") + "," + card("U", "v", "gddr", 12, "null", "estimate") + "," +
                           card("N", "v", "unified", 64, "null", "estimate") + "," + card("W1", "w", "gddr", 8, std::to_string(7.9 * gib), "measured") + "," +
                           card("W2", "w", "gddr", 12, std::to_string(11.7 * gib), "measured") + "," + card("WU", "w", "gddr", 16, "null", "estimate") + "]}";
  auto catalog = parse_device_catalog_text(text, "d.json");
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  const DeviceSpec* u = catalog->find("U");
  ASSERT_NE(u, nullptr);
  ASSERT_TRUE(u->class_runtime_total_bytes);
  EXPECT_NEAR(*u->class_runtime_total_bytes, 12562779340.8, 1.0);
  EXPECT_NEAR(u->usable_total_bytes(), 12562779340.8, 1.0);
  const std::string& rule = u->class_runtime_total_rule;
  EXPECT_NE(rule.find("U: runtime total unknown; assumed 11.70 GiB = nominal 12.00 GiB x 0.9750"), std::string::npos) << rule;
  EXPECT_NE(rule.find("3 measured v gddr cards (G1 0.9688, G2 0.9875, G3 0.9750)"), std::string::npos) << rule;
  EXPECT_NE(rule.find("band 0.9688-0.9875 (11.62-11.85 GiB)"), std::string::npos) << rule;
  EXPECT_EQ(rule.find("G4"), std::string::npos) << rule;
  EXPECT_EQ(rule.find("E1"), std::string::npos) << rule;
  EXPECT_EQ(rule.find("O1"), std::string::npos) << rule;
  // Even count: 16 GiB x 0.98125 = 15.7 GiB.
  ASSERT_TRUE(catalog->find("WU")->class_runtime_total_bytes);
  EXPECT_NEAR(*catalog->find("WU")->class_runtime_total_bytes, 15.7 * gib, 1.0);
  // No measured card of its class: nominal, no rule.
  EXPECT_FALSE(catalog->find("N")->class_runtime_total_bytes);
  EXPECT_DOUBLE_EQ(catalog->find("N")->usable_total_bytes(), 64 * gib);
  // A measured card keeps its own total.
  EXPECT_DOUBLE_EQ(catalog->find("G1")->usable_total_bytes(), std::stod(std::to_string(15.5 * gib)));
  // The overlay's measured total replaces the class rule.
  auto overlay = parse_json(R"({"schema_version":1,"devices":[{"id":"U","runtime_total_bytes":12000000000,"source":"mine"}]})", "mine.json");
  ASSERT_TRUE(apply_device_overlay(*catalog, *overlay, "mine.json").has_value());
  EXPECT_DOUBLE_EQ(catalog->find("U")->usable_total_bytes(), 12000000000.0);
  EXPECT_TRUE(catalog->find("U")->class_runtime_total_rule.empty());
}

// Issue 15: the shipped catalogue's GeForce class. RTX 4070 (12 GiB GDDR6X) has no printed total; the nvidia gddr cards
// with a measured total and their ratios (runtime / nominal):
//   RTX3090 23.58/24 = 0.98250, RTX4080 15.99/16 (16376 MiB: 16376/16384 = 0.99951), RTX4090 23.64/24 = 0.98500,
//   RTX5090 31.36/32 = 0.98000, P40 23.87/24 = 0.99458, RTX2080Ti 10.76/11 = 0.97818, RTX3060-12G 11.76/12 = 0.98000,
//   RTX3070 7.78/8 = 0.97250, RTX3080 9.78/10 = 0.97800, RTX4070Ti 11.70/12 = 0.97500, RTX4080Super 15.60/16 = 0.97500,
//   RTXA4000 15.61/16 = 0.97563, RTX5060Ti-16G 15.48/16 = 0.96750, RTXPRO6000 94.97/96 = 0.98927 (issue 15, cudatp).
//   Sorted (14): 0.96750 0.97250 0.97500 0.97500 0.97563 0.97800 0.97818 0.98000 0.98000 0.98250 0.98500 0.98927 0.99458
//   0.99951; even count, so the median is the mean of the 7th and 8th: RTX2080Ti 11,553,462,026 / 11,811,160,064 B =
//   0.9781818 and RTX3060-12G 12,627,203,850 / 12,884,901,888 B = 0.9800000, mean 0.9790909 -> 12 GiB x 0.9790909 =
//   11.7491 GiB = 12,615,490,302.8 B; band 0.9675-0.9995 -> 12 x 0.9675 = 11.61, 12 x 0.99951 = 11.99 GiB.
TEST(DeviceCatalog, Issue15_UnknownGeForceUsesTheGddrRule) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  const DeviceSpec* d = catalog->find("RTX4070");
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->runtime_total_bytes);
  EXPECT_EQ(d->memory_kind, "gddr");
  ASSERT_TRUE(d->class_runtime_total_bytes);
  EXPECT_NEAR(d->usable_total_bytes(), 12615490302.8, 1.0);
  EXPECT_NE(d->class_runtime_total_rule.find("assumed 11.75 GiB = nominal 12.00 GiB x 0.9791, the median runtime/nominal ratio of the 14 measured nvidia gddr cards"),
            std::string::npos) << d->class_runtime_total_rule;
  EXPECT_NE(d->class_runtime_total_rule.find("band 0.9675-0.9995 (11.61-11.99 GiB)"), std::string::npos) << d->class_runtime_total_rule;
  // The one-record catalogue (issue 19) gives the same rule.
  auto one = load_device_catalog_for("RTX 4070");
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->devices.size(), 1u);
  EXPECT_EQ(one->devices[0].class_runtime_total_rule, d->class_runtime_total_rule);
}

// Issue 15: memory_kind is one of the listed kinds, and gddr_ecc names where its ECC default is stated.
TEST(DeviceCatalog, Issue15_MemoryKindValidated) {
  auto with = [](const std::string& fields) {
    return R"({"schema_version":1,"devices":[{"id":"X","name":"x","vendor":"v","platform":"cuda","memory_bytes":1e9)" + fields + "}]}";
  };
  struct Case { std::string fields; std::string fragment; };
  const std::vector<Case> bad = {
      {R"(,"memory_kind":"gddr7","sources":{"memory":"s"})", "d.json: devices[X].memory_kind: expected one of hbm, gddr_ecc, gddr, unified, lpddr, host, found 'gddr7'"},
      {R"(,"memory_kind":"HBM","sources":{"memory":"s"})", "found 'HBM'"},
      {R"(,"sources":{"memory":"s"})", "memory_kind"},
      {R"(,"memory_kind":"gddr_ecc","sources":{"memory":"s"})", "d.json: X: memory_kind gddr_ecc needs sources.memory_kind"},
  };
  for (const auto& c : bad) {
    auto parsed = parse_device_catalog_text(with(c.fields), "d.json");
    ASSERT_FALSE(parsed.has_value()) << c.fields;
    EXPECT_EQ(parsed.error().kind, ErrorKind::corrupt) << c.fields;
    EXPECT_NE(parsed.error().message.find(c.fragment), std::string::npos) << c.fields << " -> " << parsed.error().message;
  }
  auto ok = parse_device_catalog_text(with(R"(,"memory_kind":"gddr_ecc","sources":{"memory":"s","memory_kind":"ECC on by default"})"), "d.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  EXPECT_EQ(ok->devices[0].memory_kind, "gddr_ecc");
}

// Review of issue 15/19: the build-time index copies the fields the memory-class rule reads from every device record
// (CMakeLists.txt), so a card without a runtime total is loaded from its own record alone. 910A in devices.json:
// vendor "huawei", memory_kind "hbm", memory_bytes 34359738368 (32 GiB), runtime_total_bytes null (""),
// confidence.runtime_total "estimate"; 910B3: runtime_total_bytes 65452113920, "measured".
TEST(DeviceCatalog, Review19_IndexCopiesTheClassRuleFields) {
  const auto names = embedded_record_fields("devices/devices.json", "devices");
  ASSERT_EQ(names.size(), 7u);
  EXPECT_EQ(names[0], "vendor");
  EXPECT_EQ(names[4], "confidence.runtime_total");
  EXPECT_EQ(names[5], "family");    // issue 16: the launch rules' device families (load_device_families)
  EXPECT_EQ(names[6], "platform");  // issue 19: fit's flag checks (device/device_platform.hpp)
  const auto index = embedded_records("devices/devices.json", "devices");
  const auto a5 = std::find_if(index.begin(), index.end(), [](const EmbeddedRecord& r) { return r.id == "950DT"; });
  ASSERT_NE(a5, index.end());
  EXPECT_EQ(embedded_record_field("devices/devices.json", "devices", *a5, "family"), "ascend-950");  // devices.json 950DT "family"
  EXPECT_TRUE(embedded_record_fields("devices/devices.json", "ambiguous_names").empty());
  const auto records = embedded_records("devices/devices.json", "devices");
  struct Want {
    const char* id;
    const char* vendor;
    const char* kind;
    const char* memory;
    const char* total;
    const char* confidence;
  };
  for (const Want& w : {Want{"910A", "huawei", "hbm", "34359738368", "", "estimate"}, Want{"910B3", "huawei", "hbm", "68719476736", "65452113920", "measured"}}) {
    const auto r = std::find_if(records.begin(), records.end(), [&](const EmbeddedRecord& x) { return x.id == w.id; });
    ASSERT_NE(r, records.end()) << w.id;
    auto field = [&](std::string_view name) { return std::string(embedded_record_field("devices/devices.json", "devices", *r, name).value_or("<none>")); };
    EXPECT_EQ(field("vendor"), w.vendor);
    EXPECT_EQ(field("memory_kind"), w.kind);
    EXPECT_EQ(field("memory_bytes"), w.memory);
    EXPECT_EQ(field("runtime_total_bytes"), w.total);
    EXPECT_EQ(field("confidence.runtime_total"), w.confidence);
    EXPECT_EQ(field("name"), "<none>");  // not copied
  }
  // The one-record catalogue of 910A holds 910A alone and the class rule of the five measured huawei hbm cards
  // (test_cli's Review15_DevicesListShowsTheClassRule derives 32 GiB x 0.95245361328125 = 30.478515625 GiB).
  auto one = load_device_catalog_for("910A");
  ASSERT_TRUE(one.has_value()) << one.error().describe();
  ASSERT_EQ(one->devices.size(), 1u);
  ASSERT_TRUE(one->devices[0].class_runtime_total_bytes);
  EXPECT_DOUBLE_EQ(*one->devices[0].class_runtime_total_bytes, 30.478515625 * 1024 * 1024 * 1024);
  EXPECT_EQ(one->devices[0].class_runtime_total_cards, 5u);
}
