// Issue 16 (llamacpp30): a `plan --engine llama.cpp` row against the real llama.cpp (node-llama-cpp 3.21.1, its CPU
// build): the row's -c / -np are what llama.cpp is created with, its KV tokens the cells llama.cpp allocates, and its
// buffers (estimate_llama_cpp_model, sized from the model's shape and weight bytes, not from the file's tensor list)
// what llama.cpp prints.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include "../bench/service.hpp"
#include "llama_cpp_real.hpp"
#include "../test_support.hpp"
#include "base/json_util.hpp"

using namespace preflight;

namespace {

// "load_tensors:   CPU_Mapped model buffer size =    54.69 MiB" among check.mjs's lines: the mapped file range alone
// (a host with AMX adds an AMX buffer of repacked weights, which a plan row does not size).
double mapped_model_bytes(const Json& real) {
  const std::regex re(R"(CPU_Mapped model buffer size\s*=\s*([\d.]+) MiB)");
  for (const auto& line : real["lines"]) {
    std::smatch m;
    const std::string text = line.get<std::string>();
    if (std::regex_search(text, m, re)) return std::stod(m[1].str()) * 1048576.0;
  }
  return -1;
}

}  // namespace

TEST(LlamaCppReal, Issue16_PlanRowIsWhatRealLlamaCppAllocates) {
  PFTEST_NEED_REAL_LLAMA_CPP();
  // Two requests of 1024 tokens each: llama.cpp created with n_ctx 2048 and 2 sequences (1024 cells each), flash
  // attention on (llama-server's auto turns it on for the CPU); check.mjs's contextSize is per sequence.
  const std::string out = pftest::scratch_dir("llama-cpp-plan-real");
  const auto check = pftest::run_llama_cpp_script("check.mjs", out + " 1024 2 on");
  ASSERT_EQ(check.status, 0) << check.text;
  int compared = 0;
  for (const Json& real : check.json) {
    const std::string what = real["model"].get<std::string>();
    ASSERT_EQ(real["n_seq_max"], 2) << what;
    ASSERT_EQ(real["n_ctx"], 2048) << what;
    const auto run = pftest::run_cli("plan " + real["file"].get<std::string>() + " --engine llama.cpp --device cpu --device-memory 64GiB --context 1024 --concurrency 2 --json",
                                     {.with_stderr = false});
    ASSERT_EQ(run.code, 0) << what << "\n" << run.out;
    const Json row = Json::parse(run.out)["recommended"][0];
    // What the row says and what its command passes are what llama.cpp was created with.
    EXPECT_EQ(row["kv_cache_tokens"].get<int64_t>(), real["n_ctx"].get<int64_t>()) << what;
    EXPECT_EQ(row["max_concurrency"].get<double>(), 2.0) << what;
    EXPECT_NE(row["launch"]["serve"].get<std::string>().find(" -c 2048 -np 2 "), std::string::npos) << row["launch"]["serve"];
    const Json& b = row["llama_cpp"];
    // llama.cpp prints MiB with two decimals: 0.006 MiB on top of each tolerance (those of Issue17_BuffersMatchRealLlamaCpp).
    auto near = [&](double predicted, double printed, double rel, const char* key) {
      EXPECT_LE(std::abs(predicted - printed), rel * printed + 0.006 * 1048576.0) << what << " " << key << ": plan row " << predicted << ", llama.cpp " << printed;
      std::printf("%s %s plan row / llama.cpp = %.4f\n", what.c_str(), key, predicted / printed);
    };
    const double mapped = mapped_model_bytes(real);
    ASSERT_GT(mapped, 0) << what;
    near(b["model_buffer_bytes"].get<double>(), mapped, 0.01, "model (CPU_Mapped)");
    near(b["kv_buffer_bytes"].get<double>(), real["kv_buffer_bytes"].get<double>(), 0.005, "KV");
    near(b["compute_buffer_bytes"].get<double>(), real["compute_buffer_bytes"].get<double>(), 0.10, "compute");
    near(b["output_buffer_bytes"].get<double>(), real["output_buffer_bytes"].get<double>(), 0.0, "output");
    const double real_total = mapped + real["kv_buffer_bytes"].get<double>() + real["compute_buffer_bytes"].get<double>() + real["output_buffer_bytes"].get<double>();
    near(b["device_bytes"].get<double>(), real_total, 0.02, "total");
    ++compared;
  }
  EXPECT_EQ(compared, 4) << check.text;  // llama, qwen3, qwen3moe, gemma3 (sliding window)
  std::filesystem::remove_all(out);
}
