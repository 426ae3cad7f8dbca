// Issue 16 (quant31): every exit code a command's --help documents is what the command returns on that path. fit's help
// said "1 does not fit" while fit also exits 1 for a variant the engine rejects on the card and for a variant no
// command produces (no published checkpoint, no conversion recipe: plan's rejected row), and exits 2 for an unknown
// --variant and for a --quantization name vLLM's argument parser refuses; its help now names each. The table runs the
// real binary on one input per documented path and checks the code, a fragment of the output, and that the command's
// own help states that path. Paths tested elsewhere with a fixture of their own are named, not repeated: doctor's 1
// (DoctorCli.JsonEnvelopeAndExitCodes, a fake root with a failing stack), calibrate's 1 and 3 and report's 3 (tests/bench).
#include <gtest/gtest.h>

#include "../test_support.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/help.hpp"

namespace {

struct ExitPath {
  std::string command;        // the command whose help is read
  std::string args;           // the command line after `preflight`
  int code;                   // what the command returns
  std::string output;         // a fragment of its output on that path
  std::string help_fragment;  // what its --help says of that path
  std::string env;            // prefixed to the command line
};

std::string help_of(const std::string& command) {
  const auto* c = preflight::cli::find_command(command);
  return c && c->help ? preflight::cli::render_help(c->help()) : std::string();
}

TEST(HelpExits, Issue16_EveryDocumentedExitPathIsWhatTheCommandReturns) {
  const std::string dir = pftest::scratch_dir("help-exits31");
  std::ofstream(dir + "/malformed.jsonl") << "not json\n";
  std::ofstream(dir + "/plain.log") << "hello\n";
  const std::string synthetic = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/synthetic";
  // A hub nobody answers (the discard port on loopback), with caches of the test's own: the fetch fails after its retries.
  const std::string no_hub = "HF_ENDPOINT=http://127.0.0.1:9 XDG_CACHE_HOME=" + dir + "/cache HF_HOME=" + dir + "/hf";
  const std::vector<ExitPath> paths = {
      {"inspect", "inspect Qwen/Qwen3-8B", 0, "Qwen3ForCausalLM", "exit: 0", ""},
      {"inspect", "inspect " + dir + "/no-such-model", 2, "is not a local path", "2 bad input (the model cannot be read", ""},
      {"inspect", "inspect hf:Qwen/Qwen3-8B --refresh", 3, "Couldn't connect", "3 network or environment failure", no_hub},
      {"fit", "fit Qwen/Qwen3-8B --device H100", 0, "fits", "exit: 0 fits", ""},
      {"fit", "fit Qwen/Qwen3-235B-A22B --device H100", 1, "does not fit (weights_oom)", "1 does not fit (too large", ""},
      // The engine's rule for the card: the MX scheme runs on the Ascend 950 only.
      {"fit", "fit Qwen/Qwen3-8B --device 910B4 --variant w8a8_mxfp8", 1, "runs on Ascend 950 (A5) only",
       "the engine rejects the variant or the\n      checkpoint's quantization on that card", ""},
      // msModelSlim W4A16 of a MoE: no published checkpoint and no conversion recipe, the reason plan rejects the row with.
      {"fit", "fit Qwen/Qwen3-30B-A3B --device 910B4 --variant w4a16", 1, "no start command: no published checkpoint of Qwen/Qwen3-30B-A3B",
       "or no start command for this variant", ""},
      {"fit", "fit Qwen/Qwen3-8B --device H100 --variant no-such-variant", 2, "no-such-variant", "an unknown --variant", ""},
      {"fit", "fit Qwen/Qwen3-8B --device H100 --engine vllm@0.12.0 --quantization ascend", 2, "argument --quantization/-q: invalid choice: 'ascend'",
       "a --quantization name the engine version\n      refuses", ""},
      // quant33: fbgemm_fp8 is in vLLM 0.23.0's QuantizationMethods and in its DEPRECATED_QUANTIZATION_METHODS.
      {"fit", "fit Qwen/Qwen3-8B --device H100 --engine vllm@0.23.0 --quantization fbgemm_fp8", 2, "The quantization method %s is deprecated",
       "a method the version deprecates, unless --allow-deprecated-quantization is given", ""},
      {"fit", "fit hf:Qwen/Qwen3-8B --device H100 --refresh", 3, "Couldn't connect", "3 network or environment failure", no_hub},
      {"plan", "plan Qwen/Qwen3-8B --devices H100", 0, "bf16 as published", "exit: 0 something fits", ""},
      {"plan", "plan Qwen/Qwen3-235B-A22B --devices T4 --max-devices 1", 1, "nothing meets the targets", "1 nothing fits", ""},
      {"plan", "plan Qwen/Qwen3-8B --devices H100 --context abc", 2, "--context: expected an integer", "2 bad input", ""},
      {"plan", "plan hf:Qwen/Qwen3-8B --devices H100 --refresh", 3, "Couldn't connect", "3 network or environment failure", no_hub},
      {"validate", "validate " + pftest::shared_path("validation/seed-cases.jsonl") + " --models " + pftest::shared_path("models"), 0, "", "exit: 0", ""},
      {"validate", "validate " + dir + "/malformed.jsonl", 2, "malformed.jsonl:1: malformed JSON", "2 bad input: a malformed file", ""},
      {"models", "models", 0, "Qwen/Qwen3-8B", "exit: 0", ""},
      {"models", "models extra", 2, "usage: preflight devices | engines | models", "2 bad input", ""},
      {"devices", "devices", 0, "910B4", "exit: 0", ""},
      {"engines", "engines --json extra", 2, "usage: preflight devices | engines | models", "2 bad input", ""},
      {"version", "version", 0, "preflight ", "exit: 0", ""},
      {"version", "version --bogus", 2, "unknown flag --bogus", "2 bad input", ""},
      {"logs", "logs " + dir + "/plain.log", 0, "no failure found", "exit: 0 no failure in the log", ""},
      {"logs", "logs " + synthetic + "/kv_too_small.1.log", 1, "", "1 the log shows a failure", ""},
      {"logs", "logs " + dir + "/no-such.log", 2, "cannot open", "2 bad input: unreadable", ""},
      {"doctor", "doctor --root " + dir, 0, "preflight doctor: root", "exit: 0 all checks pass", ""},
      {"doctor", "doctor --root " + dir + "/no-such-root", 2, "not a directory", "2 bad input", ""},
      {"bench", "bench --url http://127.0.0.1:9 --model m --concurrency 1 --num-prompts 1", 1, "0/1", "1 when requests failed (an unreachable server included)", ""},
      {"bench", "bench --url http://127.0.0.1:9 --model m --bogus", 2, "unknown flag --bogus", "2 bad input", ""},
      {"calibrate", "calibrate --db " + dir + "/none.db", 2, "no benchmark database", "2 bad input", ""},
      {"report", "report --html " + dir + "/x.html --from-db " + dir + "/none.db", 2, "no benchmark database", "2 bad input (a missing database or run", ""},
      {"bw", "bw --target nowhere", 2, "--target", "2 bad input", ""},
  };
  for (const auto& p : paths) {
    const auto r = pftest::run_cli(p.args, {.env = p.env});
    EXPECT_EQ(r.code, p.code) << p.args << "\n" << r.out;
    EXPECT_NE(r.out.find(p.output), std::string::npos) << p.args << "\n" << r.out;
    const std::string help = help_of(p.command);
    EXPECT_NE(help.find(p.help_fragment), std::string::npos) << p.command << " --help does not state exit " << p.code << " (" << p.help_fragment << "):\n" << help;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
