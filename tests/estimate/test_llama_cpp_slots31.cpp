// Issue 16 (quant31): the llama.cpp compute buffer a plan row sizes follows the cells of one sequence, not the number of
// sequences (-np slots), as the real llama.cpp's does. The known gap read "the compute buffer with several slots is 6%
// low"; measured again (tests/llama_cpp/README.md), the Q8_0 qwen3 prints 101.76 MiB at 2,048 cells whether one or two
// sequences hold them, and 95.75 at 1,024 and 4,096: a term that grows with the slots would be wrong.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "../bench/service.hpp"
#include "llama_cpp_real.hpp"
#include "../test_support.hpp"
#include "base/json_util.hpp"

using namespace preflight;

TEST(LlamaCppReal, Issue16_ComputeBufferFollowsTheCellsOfASequenceNotTheSlots) {
  PFTEST_NEED_REAL_LLAMA_CPP();
  const std::string out = pftest::scratch_dir("llama-cpp-slots-real");
  std::map<std::string, double> one_sequence, one_sequence_row;  // model -> compute bytes at 2,048 cells and one sequence: printed, the row's
  for (const int sequences : {1, 2}) {
    const auto check = pftest::run_llama_cpp_script("check.mjs", out + " 2048 " + std::to_string(sequences) + " on");
    ASSERT_EQ(check.status, 0) << check.text;
    int compared = 0;
    for (const Json& real : check.json) {
      const std::string what = real["model"].get<std::string>() + " x" + std::to_string(sequences);
      ASSERT_EQ(real["n_seq_max"], sequences) << what;
      const double printed = real["compute_buffer_bytes"].get<double>();
      if (sequences == 1) one_sequence[real["model"].get<std::string>()] = printed;
      else EXPECT_EQ(printed, one_sequence[real["model"].get<std::string>()]) << what << ": llama.cpp's compute buffer changed with the sequences";
      const auto run = pftest::run_cli("plan " + real["file"].get<std::string>() + " --engine llama.cpp --device cpu --device-memory 64GiB --context 2048 --concurrency " +
                                           std::to_string(sequences) + " --json",
                                       {.with_stderr = false});
      ASSERT_EQ(run.code, 0) << what << "\n" << run.out;
      const Json row = Json::parse(run.out)["recommended"][0];
      EXPECT_NE(row["launch"]["serve"].get<std::string>().find(" -np " + std::to_string(sequences) + " "), std::string::npos) << row["launch"]["serve"];
      const double predicted = row["llama_cpp"]["compute_buffer_bytes"].get<double>();
      if (sequences == 1) one_sequence_row[real["model"].get<std::string>()] = predicted;
      else EXPECT_EQ(predicted, one_sequence_row[real["model"].get<std::string>()]) << what << ": the row's compute buffer changed with the slots";
      // The tolerance of Issue16_PlanRowIsWhatRealLlamaCppAllocates (10 %, plus the 0.006 MiB of the two-decimal print).
      EXPECT_LE(std::abs(predicted - printed), 0.10 * printed + 0.006 * 1048576.0) << what << ": plan row " << predicted << ", llama.cpp " << printed;
      std::printf("%s compute plan row / llama.cpp = %.4f\n", what.c_str(), predicted / printed);
      ++compared;
    }
    EXPECT_EQ(compared, 4) << check.text;
  }
  std::filesystem::remove_all(out);
}
