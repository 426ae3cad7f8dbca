// Issue 19, session 33's hostile pass over what sessions 30-32 added: --speculative-config's token count, the
// multi-node sizes multiplied into a device count, hostile logs and what `logs --emit-case` writes of them, a case's
// redundant experts, and the help of every command on a flag given twice.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "cli/help.hpp"

namespace {

pftest::CliRun run_bounded(const std::string& args) { return pftest::run_cli(args, {.env = "timeout 60"}); }

std::string first_line(const std::string& out) { return out.substr(0, out.find('\n')); }

// A vLLM start-up log (tests/fuzz/corpus/engine_log/none.1.log's lines) whose non-default args end with `extra_args`.
std::string write_log(const std::string& name, const std::string& extra_args) {
  const std::string path = pftest::scratch_dir("input-bounds33") + "/" + name;
  std::ofstream(path) << "(APIServer pid=1671) INFO 09-04 01:02:21 [api_server.py:1805] vLLM API server version 0.10.1.1\n"
                         "(APIServer pid=1671) INFO 09-04 01:02:21 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', 'max_model_len': 16384, "
                         "'gpu_memory_utilization': 0.5"
                      << extra_args
                      << "}\n"
                         "(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [gpu_worker.py:276] Available KV cache memory: 22.75 GiB\n";
  return path;
}

}  // namespace

// Issue 19 (hard33): num_speculative_tokens of 2^63 - 1 was taken, and 1 + n (the decode query length the graph capture
// sizes round to) overflowed: fit said "fits". 2.0 (an integer to pydantic's lax mode) was refused as "not greater than
// 0", as were 2^64 - 1 and 1e308. Now read as vLLM's SpeculativeConfig reads it, and bounded where 1 + n leaves vLLM's
// int32 query lengths.
TEST(InputBounds33, Issue19_SpeculativeTokenCountIsReadAsPydanticReadsItAndBounded) {
  struct Case {
    std::string count;
    int code;
    std::string message;
  };
  const std::string bound = "is above 2147483646, the most for which a decode step's query length (1 + num_speculative_tokens) fits the int32 query_start_loc";
  const std::vector<Case> cases = {
      {"9223372036854775807", 2, "num_speculative_tokens: 9223372036854775807 " + bound},
      {"18446744073709551615", 2, "num_speculative_tokens: 18446744073709551615 " + bound},
      {"1e308", 2, "num_speculative_tokens: 1e+308 " + bound},
      {"2.5", 2, "num_speculative_tokens: Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=2.5]"},
      {"[1]", 2, "num_speculative_tokens: Input should be a valid integer, found [1]"},
      {"0", 2, "num_speculative_tokens: Input should be greater than 0"},
      {"-2.0", 2, "num_speculative_tokens: Input should be greater than 0"},
      {"2.0", 0, "speculative decoding (ngram, 2 tokens)"},
      {"\"3\"", 0, "speculative decoding (ngram, 3 tokens)"},
  };
  for (const auto& c : cases) {
    const auto r = run_bounded("fit Qwen/Qwen3-8B --device H100 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": " + c.count + "}'");
    EXPECT_EQ(r.code, c.code) << c.count << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.count << "\n" << r.out.substr(0, 400);
  }
  // Under the bound, the engine's own refusal: no graph size is a multiple of 2^31 - 1.
  const auto most = run_bounded("fit Qwen/Qwen3-8B --device H100 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 2147483646}'");
  EXPECT_EQ(most.code, 2) << most.out.substr(0, 300);
  EXPECT_NE(most.out.find("No valid cudagraph sizes after rounding to multiple of 2147483647"), std::string::npos) << most.out.substr(0, 300);
}

// Issue 19 (hard33): a JSON flag's value is quoted cut, and a list nested 60,000 deep (a 120 KB argument) is not written
// out (nlohmann's dump recurses once per level). attack37: vLLM reads the whole --compilation-config with pydantic's
// validate_json, whose parser stops past 201 levels, so the engine's json_invalid refusal is given, not the deepest
// value's type (vLLM never reaches it): the 202nd level opens at byte 229 of line 1 (28 bytes of '{"cudagraph_capture_sizes": '
// hold level 1, then level k's '[' is byte 27 + k).
TEST(InputBounds33, Issue19_JsonFlagValuesAreQuotedCut) {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  const auto nested = run_bounded("fit Qwen/Qwen3-8B --device H100 --compilation-config '{\"cudagraph_capture_sizes\": [" + deep + "]}'");
  EXPECT_EQ(nested.code, 2) << nested.out.substr(0, 300);
  EXPECT_NE(nested.out.find("1 validation error for CompilationConfig\n  Invalid JSON: recursion limit exceeded at line 1 column 229 [type=json_invalid, "
                            "input_value='{\"cudagraph_capture_size...]]]]]]]]]]]]]]]]]]]]]]}', input_type=str]"),
            std::string::npos)
      << nested.out.substr(0, 600);
  // A dotted key's value is copied into the flag's JSON and written out again (recursive): 60,000 deep overflowed the
  // stack under ASan; past 64 levels it is refused, and 64 levels are read.
  const auto dotted = run_bounded("fit Qwen/Qwen3-8B --device H100 -cc.cudagraph_capture_sizes='" + deep + "'");
  EXPECT_EQ(dotted.code, 2) << dotted.out.substr(0, 300);
  EXPECT_EQ(first_line(dotted.out), "preflight: --compilation-config.cudagraph_capture_sizes: JSON nested 60000 levels deep, more than the 64 read");
  const auto most = run_bounded("fit Qwen/Qwen3-8B --device H100 -cc.cudagraph_capture_sizes='" + std::string(64, '[') + std::string(64, ']') + "'");
  EXPECT_EQ(most.code, 2) << most.out.substr(0, 300);
  EXPECT_NE(most.out.find("cudagraph_capture_sizes: Input should be a valid integer (vLLM CompilationConfig), found an array"), std::string::npos)
      << most.out.substr(0, 300);
  const auto method = run_bounded("fit Qwen/Qwen3-8B --device H100 --speculative-config '{\"method\": \"" + std::string(100000, 'm') + "\"}'");
  EXPECT_EQ(method.code, 2);
  EXPECT_NE(method.out.find("input_value='" + std::string(80, 'm') + "... (100000 bytes in all)'"), std::string::npos) << method.out.substr(0, 600);
  EXPECT_LT(method.out.size(), 2000u);
  const auto text = run_bounded("fit Qwen/Qwen3-8B --device H100 --speculative-config '" + std::string(100000, '{') + "'");
  EXPECT_EQ(text.code, 2);
  EXPECT_NE(text.out.find("found '" + std::string(200, '{') + "... (100000 bytes in all)'"), std::string::npos) << text.out.substr(0, 600);
  EXPECT_LT(text.out.size(), 2000u);
}

// Issue 19 (hard33): DP x TP x PP was multiplied unchecked: --data-parallel-size 10^18 with TP 16 printed
// "-2446744073709551616 x H100-SXM" and fit exited 0. Exit 2 naming the flag, in fit and in a case.
TEST(InputBounds33, Issue19_ParallelSizesThatOverflowTheDeviceCountAreRefused) {
  const auto fit = run_bounded("fit Qwen/Qwen3-8B --device H100 --data-parallel-size 1000000000000000000 --tensor-parallel-size 16");
  EXPECT_EQ(fit.code, 2) << fit.out.substr(0, 300);
  EXPECT_EQ(first_line(fit.out),
            "preflight: --data-parallel-size: data x tensor x pipeline parallel sizes (1000000000000000000 x 16 x 1) multiply past a 64-bit device count");
  const auto pp = run_bounded("fit Qwen/Qwen3-8B --device H100 --tensor-parallel-size 4294967296 --pipeline-parallel-size 4294967296");
  EXPECT_EQ(pp.code, 2) << pp.out.substr(0, 300);
  EXPECT_NE(pp.out.find("--tensor-parallel-size: data x tensor x pipeline parallel sizes (1 x 4294967296 x 4294967296) multiply past"), std::string::npos)
      << pp.out.substr(0, 300);
  const std::string dir = pftest::scratch_dir("input-bounds33");
  std::ofstream(dir + "/dp.jsonl") << R"({"id": "dp", "engine": "vllm", "device": "H100", "num_devices": 4, "model": "Qwen/Qwen3-8B", "tensor_parallel_size": 4, )"
                                   << R"("data_parallel_size": 9223372036854775807, "available_kv_gib": 20})" << "\n";
  const auto validate = run_bounded("validate " + dir + "/dp.jsonl");
  EXPECT_EQ(validate.code, 2) << validate.out.substr(0, 400);
  EXPECT_NE(validate.out.find("dp.jsonl:1 (case dp): data_parallel_size: data x tensor x pipeline parallel sizes (9223372036854775807 x 4 x 1) multiply past"),
            std::string::npos)
      << validate.out.substr(0, 400);
}

// Issue 19 (hard33): `logs` multiplied the logged TP x PP x DP for --emit-case's num_devices unchecked, and took
// 'api_server_count': 10^20 as 2^63 - 1. The overflowing sizes are the log line's bad input (exit 2, the line named),
// with --emit-case too; the integer past 64 bits is not read.
TEST(InputBounds33, Issue19_LoggedSizesThatOverflowAreTheLinesError) {
  const std::string overflow = write_log("overflow.log", ", 'data_parallel_size': 9223372036854775807, 'tensor_parallel_size': 4");
  for (const std::string extra : {"", " --emit-case"}) {
    const auto r = run_bounded("logs " + overflow + " --device H100" + extra);
    EXPECT_EQ(r.code, 2) << extra << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find("overflow.log: log line 2: data_parallel_size: data x tensor x pipeline parallel sizes (9223372036854775807 x 4 x 1) multiply past"),
              std::string::npos)
        << extra << "\n" << r.out.substr(0, 400);
  }
  const std::string huge = write_log("huge.log", ", 'api_server_count': 100000000000000000000");
  const auto emitted = run_bounded("logs " + huge + " --device H100 --emit-case");
  ASSERT_EQ(emitted.code, 0) << emitted.out.substr(0, 400);
  EXPECT_EQ(emitted.out.find("api_server_count"), std::string::npos) << emitted.out.substr(0, 600);
  EXPECT_EQ(emitted.out.find("9223372036854775807"), std::string::npos) << emitted.out.substr(0, 600);
}

// Issue 19 (hard33): a case's additional_config.eplb_config.num_redundant_experts of 2^63 - 1 was added to the model's
// 128 experts in int64 (wrapped negative) and the case predicted 1.9e18 GiB of KV cache. Now the case is skipped with
// the field named.
TEST(InputBounds33, Issue19_RedundantExpertsThatOverflowTheExpertCountAreNamed) {
  const std::string dir = pftest::scratch_dir("input-bounds33");
  std::ofstream(dir + "/eplb.jsonl") << R"({"id": "eplb", "engine": "vllm-ascend", "device": "910B3", "num_devices": 2, "model": "Qwen/Qwen3-30B-A3B", )"
                                     << R"("tensor_parallel_size": 2, "enable_expert_parallel": true, "available_kv_gib": 20, )"
                                     << R"("additional_config": {"eplb_config": {"num_redundant_experts": 9223372036854775807}}})" << "\n";
  const auto r = run_bounded("validate " + dir + "/eplb.jsonl");
  EXPECT_NE(r.out.find("eplb.jsonl:1 (case eplb): additional_config.eplb_config.num_redundant_experts: 9223372036854775807 redundant experts beside the "
                       "model's 128 overflow a 64-bit expert count"),
            std::string::npos)
      << r.out.substr(0, 600);
  EXPECT_EQ(r.out.find("e+18"), std::string::npos) << r.out.substr(0, 600);
}

// Issue 19 (hard33, session 32's leftover): every command refuses a flag given twice (exit 2), and fit's --help alone said
// so. Each command's help now names it, and each command does refuse it.
TEST(InputBounds33, Issue19_EveryCommandsHelpNamesAFlagGivenTwice) {
  struct Case {
    std::string command, args;
  };
  const std::vector<Case> cases = {
      {"inspect", "inspect Qwen/Qwen3-8B"}, {"fit", "fit Qwen/Qwen3-8B --device H100"}, {"plan", "plan --device H100"},
      {"validate", "validate x.jsonl"},     {"logs", "logs x.log"},                       {"doctor", "doctor"},
      {"devices", "devices"},               {"engines", "engines"},                       {"models", "models"},
      {"version", "version"},               {"bw", "bw"},                                 {"bench", "bench --url http://127.0.0.1:9 --model m"},
      {"calibrate", "calibrate"},           {"report", "report --html x.html"},
  };
  for (const auto& c : cases) {
    const auto* command = preflight::cli::find_command(c.command);
    ASSERT_NE(command, nullptr) << c.command;
    const std::string help = command->help ? preflight::cli::render_help(command->help()) : std::string();
    const std::string exits = help.substr(help.rfind("exit:") == std::string::npos ? help.size() : help.rfind("exit:"));
    EXPECT_NE(exits.find("given twice"), std::string::npos) << c.command << ": " << exits;
    const auto r = run_bounded(c.args + " --json --json");
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_EQ(first_line(r.out), "preflight: --json is given twice; give it once") << c.args;
  }
  // MindIE's and llama.cpp's fit have help texts of their own.
  for (const std::string engine : {"mindie", "llama.cpp"}) {
    const auto help = run_bounded("fit --engine " + engine + " --help");
    EXPECT_NE(help.out.find("given twice"), std::string::npos) << engine << ": " << help.out.substr(help.out.rfind("exit:") == std::string::npos ? 0 : help.out.rfind("exit:"));
  }
}

// Issue 19 (hard33, session 32's leftover): --port went through a digit loop of its own (5 digits at most, no sign);
// it is read by the integer flags' parser, as Python's int() reads it for vLLM's argparse.
TEST(InputBounds33, Issue19_PortIsReadByTheIntegerFlagsParser) {
  const std::string fit = "fit Qwen/Qwen3-8B --device 910B4 --max-model-len 4096 --port ";
  for (const std::string ok : {"8000", "+8000", "0008000", "65535"}) EXPECT_EQ(run_bounded(fit + ok).code, 0) << ok;
  for (const std::string bad : {"0", "65536", "-1", "80 00", "0x1f40", "99999999999999999999"}) {
    const auto r = run_bounded(fit + "'" + bad + "'");
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.out.find("--port: expected a port number 1 - 65535, found '" + bad + "'"), std::string::npos) << bad << "\n" << r.out.substr(0, 300);
  }
}

// Issue 19 (hard33): every line of a log is held as a string while it is read: 60 MB of empty lines (inside the 64 MiB
// text-file limit) took 2.1 GB and 8 minutes. A log of more lines than logs::k_max_log_lines is refused at once, '\r'
// lines counted as the reader splits them.
TEST(InputBounds33, Issue19_LogOfMoreLinesThanTheReaderHoldsIsRefused) {
  const std::string dir = pftest::scratch_dir("input-bounds33");
  std::ofstream(dir + "/lines.log") << std::string(1000001, '\n');
  std::ofstream(dir + "/cr.log") << std::string(1000001, '\r');
  for (const std::string name : {"lines.log", "cr.log"}) {
    const auto r = run_bounded("logs " + dir + "/" + name);
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_EQ(first_line(r.out), "preflight: " + dir + "/" + name + ": 1000001 lines, more than the 1000000 a log is read for (each line is held while it is "
                                                                     "read); cut it to the start-up and the failure")
        << name;
  }
}

// Issue 19 (hard33): `logs --emit-case` wrote the log's speculative_config as a JSON object however deep it nested, and
// writing it recursed once per level (a 30,000-deep list overflowed the stack under ASan). Deeper than a flag's JSON is
// read (64 levels), it is written as its text; validate reads the emitted case.
TEST(InputBounds33, Issue19_EmittedCaseKeepsADeepSpeculativeConfigAsText) {
  const std::string deep = std::string(30000, '[') + std::string(30000, ']');
  const std::string log = write_log("deep.log", ", 'speculative_config': {'method': 'ngram', 'x': " + deep + "}");
  const auto emitted = pftest::run_cli("logs " + log + " --device H100 --emit-case", {.env = "timeout 60", .with_stderr = false});
  ASSERT_EQ(emitted.code, 0) << emitted.out.substr(0, 300);
  EXPECT_NE(emitted.out.find(R"("speculative_config":"{\"method\": \"ngram\", \"x\": [[[)"), std::string::npos) << emitted.out.substr(0, 600);
  const std::string dir = pftest::scratch_dir("input-bounds33");
  std::ofstream(dir + "/emitted.jsonl") << emitted.out;
  const auto validate = run_bounded("validate " + dir + "/emitted.jsonl");
  EXPECT_EQ(validate.code, 0) << validate.out.substr(0, 400);
  EXPECT_NE(validate.out.find("1 cases, 1 evaluated"), std::string::npos) << validate.out.substr(0, 400);
}

// Issue 19 (hard33): the node's last DP rank, start rank + local ranks - 1, was summed unchecked: start rank 2^63 - 2
// with 2^63 - 1 local ranks (each inside --data-parallel-size 2^63 - 1) printed "DP ranks 9223372036854775806--4" and
// fit exited 0. Exit 2, the ranks said without the overflow; the in-range refusal keeps its words.
TEST(InputBounds33, Issue19_NodeRanksPastTheDataParallelSizeWithoutOverflow) {
  const std::string fit = "fit Qwen/Qwen3-8B --device H100 --headless ";
  const auto huge = run_bounded(fit + "--data-parallel-size 9223372036854775807 --data-parallel-start-rank 9223372036854775806 --data-parallel-size-local 9223372036854775807");
  EXPECT_EQ(huge.code, 2) << huge.out.substr(0, 400);
  EXPECT_NE(huge.out.find("ranks 9223372036854775806..9223372036854775806 + 9223372036854775807 - 1 of this node pass the 9223372036854775807 ranks of --data-parallel-size"),
            std::string::npos)
      << huge.out.substr(0, 400);
  const auto small = run_bounded(fit + "--data-parallel-size 4 --data-parallel-start-rank 3 --data-parallel-size-local 4");
  EXPECT_EQ(small.code, 2) << small.out.substr(0, 400);
  EXPECT_NE(small.out.find("ranks 3..6 of this node pass the 4 ranks of --data-parallel-size"), std::string::npos) << small.out.substr(0, 400);
}

// Issue 19 (hard33's findings, fixed by the lead): a case's env or additional_config of another type than an object was
// ignored without a word; a case's attention_backend was not checked as fit checks --attention-backend; a data-parallel
// RPC port or master port outside 0-65535 was taken.
TEST(InputBounds33, Issue19_CaseObjectsBackendsAndPortsAreChecked) {
  const std::string dir = pftest::scratch_dir("input-bounds33");
  const std::string base = R"({"id": "c", "engine": "vllm", "engine_version": "0.11.0", "device": "H100", "num_devices": 1, "model": "Qwen/Qwen3-8B", "available_kv_gib": 60, )";
  std::ofstream(dir + "/extra.jsonl") << base << R"("additional_config": [1]})" << "\n";
  const auto extra = run_bounded("validate " + dir + "/extra.jsonl");
  EXPECT_EQ(extra.code, 2) << extra.out.substr(0, 400);
  EXPECT_NE(extra.out.find("additional_config: expected an object of names and values (vLLM-Ascend's --additional-config JSON), found array"), std::string::npos)
      << extra.out.substr(0, 400);
  std::ofstream(dir + "/env.jsonl") << base << R"("env": "HCCL_BUFFSIZE=1024"})" << "\n";
  const auto env = run_bounded("validate " + dir + "/env.jsonl");
  EXPECT_EQ(env.code, 2) << env.out.substr(0, 400);
  EXPECT_NE(env.out.find("env: expected an object of names and values"), std::string::npos) << env.out.substr(0, 400);
  EXPECT_NE(env.out.find("found string"), std::string::npos) << env.out.substr(0, 400);

  // The backend: vLLM 0.11.0's enum has no NOPE; fit refuses it with vLLM's ValueError, validate lists the case as skipped
  // ("unreadable: ...", as a quantization naming no variant), evaluates the other and exits 2.
  const auto fit = run_bounded("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.11.0 --attention-backend NOPE");
  EXPECT_EQ(fit.code, 2) << fit.out.substr(0, 400);
  EXPECT_NE(fit.out.find("ValueError: Invalid attention backend: 'NOPE'"), std::string::npos) << fit.out.substr(0, 400);
  std::ofstream(dir + "/backend.jsonl") << base << R"("attention_backend": "NOPE"})" << "\n" << base << R"("attention_backend": "FLASH_ATTN"})" << "\n";
  const auto backend = run_bounded("validate " + dir + "/backend.jsonl --json");
  EXPECT_EQ(backend.code, 2) << backend.out.substr(0, 400);
  EXPECT_NE(backend.out.find("unreadable: "), std::string::npos) << backend.out.substr(0, 600);
  EXPECT_NE(backend.out.find("Invalid attention backend: 'NOPE'"), std::string::npos) << backend.out.substr(0, 600);
  EXPECT_NE(backend.out.find("\"evaluated\": 1"), std::string::npos) << backend.out.substr(0, 600);

  for (const std::string port : {"--data-parallel-rpc-port 70000", "--data-parallel-rpc-port -1", "--nnodes 2 --node-rank 0 --master-port 65536"}) {
    const auto r = run_bounded("fit Qwen/Qwen3-8B --device H100 -dp 2 " + port);
    EXPECT_EQ(r.code, 2) << port << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find("is not a TCP port (0-65535)"), std::string::npos) << port << "\n" << r.out.substr(0, 400);
  }
  const auto ok = run_bounded("fit Qwen/Qwen3-8B --device H100 -dp 2 --data-parallel-rpc-port 65535");
  EXPECT_NE(ok.code, 2) << ok.out.substr(0, 400);
}

// Issue 19 item 12 (hard33's finding): a GGUF error named the file twice ("/dir/x.gguf: x.gguf: truncated ..."): the
// parser's message began with the base name and the error's context was the path.
TEST(InputBounds33, Issue19_GgufErrorNamesTheFileOnce) {
  const std::string path = pftest::scratch_dir("input-bounds33") + "/short.gguf";
  std::ofstream(path, std::ios::binary).write("GGUF\x03\x00\x00\x00", 8);
  const auto r = run_bounded("inspect " + path);
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find(path + ": truncated at byte 8 while reading tensor_count"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_EQ(r.out.find("short.gguf: short.gguf"), std::string::npos) << r.out.substr(0, 400);
}

// Issue 16 (quant33's leftover): --allow-deprecated-quantization was taken by fit but not read back from a log's args
// (the non-default args dict or a serve command line) nor from a case. vLLM 0.14 deprecates auto-round
// (DEPRECATED_QUANTIZATION_METHODS): without the flag ModelConfig refuses it, with it the engine starts.
TEST(InputBounds33, Issue16_AllowDeprecatedQuantizationIsReadFromLogsAndCases) {
  const std::string dir = pftest::scratch_dir("input-bounds33");
  const std::string head = "(APIServer pid=1671) INFO 09-04 01:02:21 [api_server.py:1805] vLLM API server version 0.14.0\n";
  std::ofstream(dir + "/dict.log") << head << "(APIServer pid=1671) INFO 09-04 01:02:21 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', "
                                      "'quantization': 'auto-round', 'allow_deprecated_quantization': True}\n";
  std::ofstream(dir + "/serve.log") << "$ vllm serve Qwen/Qwen3-8B --quantization auto-round --allow-deprecated-quantization\n" << head;
  for (const std::string log : {"dict.log", "serve.log"}) {
    const auto r = run_bounded("logs " + dir + "/" + log + " --json");
    EXPECT_EQ(r.code, 0) << log << "\n" << r.out.substr(0, 400);
    const size_t at = r.out.find("\"allow_deprecated_quantization\": {");
    ASSERT_NE(at, std::string::npos) << log << "\n" << r.out.substr(0, 1200);
    EXPECT_NE(r.out.substr(at, 80).find("\"value\": true"), std::string::npos) << log << "\n" << r.out.substr(at, 200);
  }
  const std::string base = R"({"id": "d", "engine": "vllm", "engine_version": "0.14.0", "device": "H100", "num_devices": 1, "model": "Qwen/Qwen3-8B", )"
                           R"x("quantization": "auto_round (int4)", "max_model_len": 16384, "fits": true)x";
  std::ofstream(dir + "/refused.jsonl") << base << "}\n";
  std::ofstream(dir + "/allowed.jsonl") << base << R"(, "allow_deprecated_quantization": true})" << "\n";
  const auto refused = run_bounded("validate " + dir + "/refused.jsonl");
  EXPECT_NE(refused.out.find("predicted unsupported_quantization"), std::string::npos) << refused.out.substr(0, 600);
  EXPECT_NE(refused.out.find("The quantization method %s is deprecated"), std::string::npos) << refused.out.substr(0, 600);
  const auto allowed = run_bounded("validate " + dir + "/allowed.jsonl");
  EXPECT_NE(allowed.out.find("observed         fits  predicted         fits"), std::string::npos) << allowed.out.substr(0, 600);
  EXPECT_NE(allowed.out.find("verdicts           1/1 correct"), std::string::npos) << allowed.out.substr(0, 600);
}
