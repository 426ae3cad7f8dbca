// Issue 19, session 32's hostile pass: values quoted whole in errors, a flag given twice, and the memory a safetensors
// header takes.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../test_support.hpp"

namespace {

pftest::CliRun run_bounded(const std::string& args, const std::string& env = "") { return pftest::run_cli(args, {.env = env + " timeout 60"}); }

// The first line of `out`.
std::string first_line(const std::string& out) { return out.substr(0, out.find('\n')); }

}  // namespace

// Issue 19 (hard32): a 100 KB --variant was quoted whole (to the 8 KB limit of a message) and the error began with the
// catalogue's file, "data/variants/quant_variants.json: --variant: unknown variant ...", as if the file were at fault.
// The name is cut to 60 bytes, the error is the flag's, and the file it was looked up in follows the list.
TEST(InputBounds32, Issue19_UnknownVariantIsCutAndTheErrorIsTheFlags) {
  const std::string name(100000, 'x');
  for (const std::string cmd : {"fit Qwen/Qwen3-8B --device H100 --variant ", "plan Qwen/Qwen3-8B --devices H100 --variant "}) {
    const auto r = run_bounded(cmd + name);
    EXPECT_EQ(r.code, 2) << cmd;
    const std::string line = first_line(r.out);
    EXPECT_EQ(line.rfind("preflight: --variant: unknown variant '" + std::string(60, 'x') + "... (100000 bytes in all)'; known variants: bf16, w8a8", 0), 0u)
        << line.substr(0, 300);
    EXPECT_NE(line.find(" (data/variants/quant_variants.json)"), std::string::npos) << line.substr(0, 300);
    EXPECT_LT(r.out.size(), 1500u) << cmd;
  }
}

// Issue 19 (hard32): a flag given twice kept its last value in silence ("--variant w8a8 --variant awq" sized awq); the
// rule is now one for every command: each flag once, by any of its spellings, except --env with different names; a
// switch with its --no- opposite is refused too. Exit 2 naming the flag and both values.
TEST(InputBounds32, Issue19_FlagGivenTwiceIsRefused) {
  struct Case {
    std::string args, message;
  };
  const std::string fit = "fit Qwen/Qwen3-8B --device H100 ";
  const std::vector<Case> cases = {
      {fit + "--variant w8a8 --variant awq", "--variant is given twice ('w8a8', then 'awq'); give it once"},
      {fit + "--max-model-len 4096 --max-model-len=8192", "--max-model-len is given twice ('4096', then '8192')"},
      {fit + "-O3 --optimization-level 2", "--optimization-level is given twice ('3', then '2')"},
      {fit + "--json --json", "--json is given twice; give it once"},
      {fit + "--flashinfer-sampler --no-flashinfer-sampler", "--flashinfer-sampler and --no-flashinfer-sampler contradict each other; give one"},
      {fit + "--env HCCL_BUFFSIZE=64 --env HCCL_BUFFSIZE=128", "--env HCCL_BUFFSIZE is given twice; give it once"},
      {"plan Qwen/Qwen3-8B --devices H100 --variant w8a8 --variant awq", "--variant is given twice ('w8a8', then 'awq')"},
      {"fit Qwen/Qwen3-8B --device 910B3 --engine mindie --engine mindie", "--engine is given twice ('mindie', then 'mindie')"},
      {"fit Qwen/Qwen3-8B --device 910B3 --engine mindie --engine vllm-ascend", "--engine is given twice ('mindie', then 'vllm-ascend')"},
  };
  for (const auto& c : cases) {
    const auto r = run_bounded(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << "\n" << r.out.substr(0, 400);
  }
  // --env stays repeatable for different names, and a JSON flag's dotted keys merge into it.
  const auto env = run_bounded(fit + "--env VLLM_USE_FLASHINFER_SAMPLER=1 --env VLLM_ROCM_MOE_PADDING=0");
  EXPECT_EQ(env.code, 0) << env.out.substr(0, 400);
  const auto dotted = run_bounded(fit + "-cc '{\"cudagraph_mode\": \"PIECEWISE\"}' -cc.max_cudagraph_capture_size=16");
  EXPECT_EQ(dotted.code, 0) << dotted.out.substr(0, 400);
}

// Issue 19 (hard32): other values quoted whole: an --attention-backend name, a --max-model-len of 100,000 digits, an
// integer flag's text; and an integer flag took a leading space (strtoll skips it) but refused a trailing one.
TEST(InputBounds32, Issue19_FlagValuesAreCutWhereQuoted) {
  const std::string fit = "fit Qwen/Qwen3-8B --device H100 ";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {fit + "--attention-backend " + std::string(100000, 'A'), "Unknown attention backend: '" + std::string(60, 'A') + "... (100000 bytes in all)'"},
      {fit + "--max-model-len " + std::string(100000, '9') + "k", "--max-model-len: '" + std::string(60, '9') + "... (100001 bytes in all)' is past the largest"},
      {fit + "--tensor-parallel-size " + std::string(100000, '7'), "--tensor-parallel-size: expected an integer, got '" + std::string(60, '7') + "... (100000 bytes in all)'"},
      {fit + "--gpu-memory-utilization " + std::string(100000, 'u'), "--gpu-memory-utilization: expected a decimal number, got '" + std::string(60, 'u') + "..."},
      {fit + "--tensor-parallel-size ' 2'", "--tensor-parallel-size: expected an integer, got ' 2'"},
      {fit + "--tensor-parallel-size '2 '", "--tensor-parallel-size: expected an integer, got '2 '"},
  };
  for (const auto& c : cases) {
    const auto r = run_bounded(c.args);
    EXPECT_EQ(r.code, 2) << c.args.substr(0, 120) << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args.substr(0, 120) << "\n" << r.out.substr(0, 400);
    EXPECT_LT(r.out.size(), 2000u) << c.args.substr(0, 120);
  }
  // --max-model-len keeps vLLM's reading: int() and human_readable_int strip spaces.
  const auto spaced = run_bounded(fit + "--max-model-len ' 4096 '");
  EXPECT_EQ(spaced.code, 0) << spaced.out.substr(0, 400);
  EXPECT_NE(spaced.out.find("max_model_len 4,096"), std::string::npos) << spaced.out.substr(0, 400);
}

// Issue 19 (hard32): a safetensors header (up to 100 MiB) was parsed as one nlohmann tree of the whole header, about
// ten times its text, after two more copies of the text: a 100 MB header of 890,000 tensors took 1.1 GB and 8.1 s of CPU
// (/usr/bin/time on `fit DIR --device H100`; 225 MB and 2.9 s since). The header is read as a stream, one tensor's tree
// at a time, and the table keeps what preflight uses of each tensor. Here 220,000 tensors (a 25 MB header) under a
// 160 MB address-space limit: the whole-tree parse stopped on the allocation (SIGABRT at 150 and 200 MB), the stream
// runs in about 80 MB. The weights are every tensor's 2 bytes.
TEST(InputBounds32, Issue19_SafetensorsHeaderParsedWithinAMemoryBound) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit does not hold AddressSanitizer's shadow memory";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "an address-space limit does not hold AddressSanitizer's shadow memory";
#endif
#endif
  const std::string dir = pftest::scratch_dir("ib32-big-header");
  std::filesystem::copy_file(pftest::shared_path("models/Qwen__Qwen3-0.6B/config.json"), dir + "/config.json");
  const uint64_t tensors = 220000;
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  header.reserve(26u << 20);
  for (uint64_t i = 0; i < tensors; ++i)
    header += ",\"model.layers." + std::to_string(i % 28) + ".mlp.experts." + std::to_string(i) + ".down_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[1,1],\"data_offsets\":[" +
              std::to_string(2 * i) + "," + std::to_string(2 * i + 2) + "]}";
  header += "}";
  ASSERT_GT(header.size(), 25'000'000u);
  {
    std::ofstream out(dir + "/model.safetensors", std::ios::binary);
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << header;
  }
  std::filesystem::resize_file(dir + "/model.safetensors", 8 + header.size() + 2 * tensors);
  const auto r = pftest::run_cli("fit " + dir + " --device H100 --json", {.env = "ulimit -v 160000;", .with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("\"checkpoint_bytes\": 440000.0,"), std::string::npos) << r.out.substr(0, 400);  // 2 B x 220,000 tensors
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard32): the llama.cpp conversion's comment quotes the local folder, and a newline in the folder's name ended
// the comment: `plan $'n\ntouch PWNED;#' --engine llama.cpp` printed a line "touch PWNED;# (read here, not a hub repo)
// holds safetensors..." that a pasted script runs. The vLLM rows' comments were kept on one line since hard30; the
// llama.cpp rows now go through the same step. The conversion's own argument stays one quoted shell word.
TEST(InputBounds32, Issue19_LlamaCppConversionCommentStaysOneLine) {
  const std::string dir = pftest::scratch_dir("ib32-llama-newline");
  const std::string name = "n\ntouch PWNED;#";
  std::filesystem::create_directories(dir + "/" + name);
  std::filesystem::copy_file(pftest::shared_path("models/Qwen__Qwen3-0.6B/config.json"), dir + "/" + name + "/config.json");
  const auto r = pftest::run_cli("plan \"$(printf 'n\\ntouch PWNED;#')\" --engine llama.cpp --device H100", {"cd " + dir + " &&"});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("# llama.cpp loads GGUF files only and the local folder n touch PWNED;# (read here, not a hub repo) holds safetensors"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("\ntouch PWNED;# (read here"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("python3 llama.cpp/convert_hf_to_gguf.py 'n\ntouch PWNED;#' --outtype bf16"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard32): doctor --revision took "-rf" (printed as `hf download org/name --revision -rf`, an option to the
// command it is pasted into), "." (joined as refs/., the refs folder itself) and "x.": git's ref names begin with
// neither '-' nor '.' and do not end with '.' (git check-ref-format). Exit 2 before any check runs.
TEST(InputBounds32, Issue19_DoctorRevisionThatGitRefusesIsRefused) {
  const std::string dir = pftest::scratch_dir("ib32-doctor-revision");
  const std::string env = "HOME=" + dir + " HF_HUB_CACHE=" + dir + "/hf MODELSCOPE_CACHE=" + dir + "/ms";
  for (const std::string revision : {"-rf", ".", ".x", "x."}) {
    const auto r = pftest::run_cli("doctor org/name --revision=" + revision, {env});
    EXPECT_EQ(r.code, 2) << revision << "\n" << r.out;
    EXPECT_NE(r.out.find("not beginning with '-' or '.', not ending with '.'), found \"" + revision + "\""), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("fix: hf download"), std::string::npos) << r.out;
  }
  const auto ok = pftest::run_cli("doctor org/name --revision v1.0-rc_2.x", {env});
  EXPECT_NE(ok.out.find("fix: hf download org/name --revision v1.0-rc_2.x "), std::string::npos) << ok.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard32): `--env HCCL_BUFFSIZE=0x10` on an Ascend card was sized as 16 MB (strtod reads hex); CANN reads
// decimal digits. Exit 2 naming the variable (Deploy.Issue19_HcclBuffsizeReadAsCannReadsIt has the forms).
TEST(InputBounds32, Issue19_EnvHcclBuffsizeInHexIsRefused) {
  const auto r = run_bounded("fit Qwen/Qwen3-8B --device 910B3 --env HCCL_BUFFSIZE=0x10");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("--env HCCL_BUFFSIZE: HCCL_BUFFSIZE must be an integer greater than or equal to 1 (MB, in decimal digits as CANN reads it"), std::string::npos)
      << r.out.substr(0, 400);
  const auto ok = run_bounded("fit Qwen/Qwen3-8B --device 910B3 --env HCCL_BUFFSIZE=1024");
  EXPECT_EQ(ok.code, 0) << ok.out.substr(0, 400);
}
