// Issue 16: validate reads a case's `quantization` as people write it and applies that variant to the
// base config the case names, with the same sizing as `fit --variant`.
#include <gtest/gtest.h>

#include <fstream>

#include "base/json_util.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {
double fit_weights_gib(const std::string& args) {
  const auto r = pftest::run_cli("fit " + args + " --json", {.with_stderr = false});
  auto j = parse_json(r.out, "stdout");
  EXPECT_TRUE(j.has_value()) << r.out.substr(0, 300);
  if (!j) return -1;
  for (const auto& t : (*j)["memory_per_device"]["terms"])
    if (t["name"] == "weights") return t["gib"].get<double>();
  return -1;
}
}  // namespace

TEST(VariantValidate, Issue16_CaseQuantizationTextAppliesTheVariantToTheBaseConfig) {
  struct Case {
    std::string id, quantization, device, variant;
  };
  const std::vector<Case> cases = {
      {"v-w8a8dyn", "w8a8 (ascend w8a8_dynamic)", "910B3", "w8a8_dynamic"},
      {"v-awq", "AWQ int4", "H100-SXM", "awq"},
      {"v-autoround", "auto_round (int4)", "H100-SXM", "autoround"},
      {"v-nvfp4", "modelopt (NVFP4)", "B200", "modelopt_nvfp4"},
      {"v-ctint8", "compressed-tensors W8A8 (INT8)", "H100-SXM", "ct_w8a8_int8"},
      {"v-fp8marlin", "fp8 (Marlin weight-only fallback)", "A100-80G-SXM", "fp8_block"},
  };
  const std::string dir = pftest::scratch_dir("variant-validate");
  const std::string file = dir + "/cases.jsonl";
  {
    std::ofstream out(file);
    for (const auto& c : cases) {
      Json line = {{"id", c.id}, {"engine", c.device == "910B3" ? "vllm-ascend" : "vllm"}, {"device", c.device}, {"num_devices", 1},
                   {"model", "Qwen/Qwen3-32B"}, {"quantization", c.quantization}, {"tensor_parallel_size", 1}, {"max_model_len", 4096},
                   {"weights_gib", 17.0}};
      out << line.dump() << "\n";
    }
  }
  const auto r = pftest::run_cli("validate " + file + " --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  auto j = parse_json(r.out, "stdout");
  ASSERT_TRUE(j.has_value());
  for (const auto& c : cases) {
    const Json* row = nullptr;
    for (const auto& x : (*j)["rows"]) if (x["id"] == c.id) row = &x;
    ASSERT_NE(row, nullptr) << c.id;
    ASSERT_TRUE((*row).contains("fields") && (*row)["fields"].contains("weights_gib")) << c.id << ": " << row->dump().substr(0, 300);
    const double got = (*row)["fields"]["weights_gib"]["predicted"].get<double>();
    const std::string engine = c.device == "910B3" ? "vllm-ascend" : "vllm";
    const double want = fit_weights_gib("Qwen/Qwen3-32B --device " + c.device + " --engine " + engine + " --max-model-len 4096 --variant " + c.variant);
    EXPECT_DOUBLE_EQ(got, want) << c.id;
    bool named = false;
    for (const auto& a : (*row)["assumptions"]) named |= a.get<std::string>().find("read as variant " + c.variant + " ") != std::string::npos;
    EXPECT_TRUE(named) << c.id;
  }
}
