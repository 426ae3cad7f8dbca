// Session 29's user journeys (ux29) as the seeds' engineers walk them: an Atlas A3 server and a 310P card, the eager
// trap, a wrong node count, a CPU host with llama.cpp, the bench database named as bench names it. Each test runs the
// real binary; expected values come from the engines' own docs and code or the seeds' measurements, named at each test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "../test_support.hpp"

namespace {

// The first number after `key` in `text` (e.g. "single stream   10.6 tok/s": key "single stream"), or -1.
double number_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return -1;
  const auto digit = text.find_first_of("0123456789", at + key.size());
  return digit == std::string::npos ? -1 : std::strtod(text.c_str() + digit, nullptr);
}

}  // namespace

// Issue 15 (ux29): an Atlas 800 A3 server shows its 8 Ascend 910C as 16 dies, and vLLM-Ascend runs TP 16 inside one
// (tutorials GLM5.2.md "Single-node parallelism layout DP1 PP1 TP16"; pd_disaggregation_mooncake_multi_node.md "On each
// server, use 8 NPUs and 16 chips"). plan put a node at 8 devices: 16 x 910C started as "2 nodes x 4 replicas" with
// --headless ranks and NIC exports, and the TP row was TP 8 x PP 2 over two "nodes".
TEST(Ux29, Issue15_AtlasA3ServerHoldsSixteenDies) {
  const auto one = pftest::run_cli("plan deepseek-ai/DeepSeek-V3 --devices 910C --context 8192 --variant w8a8");
  EXPECT_EQ(one.code, 0) << one.out;
  EXPECT_NE(one.out.find("16x TP16 "), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("TP8 PP2"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("--headless"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("GLOO_SOCKET_IFNAME"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("--data-parallel-size 8 --enable-expert-parallel"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("TP inside a node of 8 (910C: 16)"), std::string::npos) << one.out;
  // Two A3 servers: 32 dies over 2 nodes of 16, each running 4 replicas of TP 4; the manifests 2 pods of 16 NPUs.
  const std::string dir = pftest::scratch_dir("ux29-a3");
  const auto two = pftest::run_cli("plan --device 910C --num-devices 32 --model Qwen/Qwen3-235B-A22B --variant w8a8 --kubernetes " + dir + "/a3.yaml");
  EXPECT_EQ(two.code, 0) << two.out;
  EXPECT_NE(two.out.find("# 2 nodes x 4 replicas of 4 device(s)"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("--data-parallel-size 8 --data-parallel-size-local 4"), std::string::npos) << two.out;
  const std::string yaml = pftest::read_all(dir + "/a3.yaml");
  EXPECT_NE(yaml.find("kind: LeaderWorkerSet"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("huawei.com/Ascend910: \"16\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("size: 2"), std::string::npos) << yaml;
  // A 910B3 server stays a node of 8: 32 cards are 4 nodes.
  const auto b3 = pftest::run_cli("plan --device 910B3 --num-devices 32 --model Qwen/Qwen3-235B-A22B --variant w8a8");
  EXPECT_NE(b3.out.find("# 4 nodes x 2 replicas of 4 device(s)"), std::string::npos) << b3.out;
}

// Issue 16 (ux29): a card without bfloat16 (catalogue dtypes: 310P3 / Atlas 300I Duo, 910A, V100, T4) was started on a
// bf16 checkpoint with no --dtype: vLLM-Ascend takes the config's bfloat16 and the 310P cannot compute in it (its GDN
// kernels raise "q/k/v must share float16 dtype on 310P"; the 310P guide: "only supports eager mode and the float16 data
// type"; its own 310P test configs pass --dtype float16), 910A likewise (vllm-ascend #9294: "910A supports float16, not
// bf16"); vLLM on a V100: "Bfloat16 is only supported on GPUs with compute capability of at least 8.0 ... --dtype=half".
TEST(Ux29, Issue16_CardWithoutBf16StartsInFloat16) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-8B --devices 300I-Duo,910A,V100-SXM2-32G,910B3 --context 8192 --commands");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const std::string card : {"300I-Duo", "910A", "V100-SXM2-32G", "910B3"}) {
    const auto at = r.out.find("start Qwen/Qwen3-8B (bf16 as published) on 1x " + card + ":");
    ASSERT_NE(at, std::string::npos) << card << "\n" << r.out;
    const auto line = r.out.find("vllm serve", at);
    const std::string command = r.out.substr(line, r.out.find('\n', line) - line);
    EXPECT_EQ(command.find("--dtype float16") != std::string::npos, card != "910B3") << card << ": " << command;
  }
  // The first row's start names why (plan prints the notes of the first row).
  const auto duo = pftest::run_cli("plan Qwen/Qwen3-8B --devices 300I-Duo --context 8192");
  EXPECT_NE(duo.out.find("--dtype float16: the card has no bfloat16"), std::string::npos) << duo.out;
}

// Issue 16 (ux29): llama.cpp on the host CPU. plan tried 2, 4, 8 and 16 "cpu" devices as tensor parallel (a "2x TP2"
// row on one host) and started llama-server with -ngl 999 on a CPU (a CPU build ignores it with a warning). Now one
// host is one device (devices.json cpu devices_per_node 1; several hosts would be llama.cpp's RPC backend), and the
// command offloads nothing. A GPU keeps -ngl 999.
TEST(Ux29, Issue16_LlamaCppOnTheHostIsOneDeviceWithoutOffload) {
  // llamacpp30: a host of 12 GiB (the host's own MemAvailable now sizes "cpu"), which one BF16 8B model does not fit.
  const auto bf16 = pftest::run_cli("plan Qwen/Qwen3-8B --device cpu --device-memory 12GiB --engine llama.cpp --context 8192 --all");
  EXPECT_EQ(bf16.out.find("2x TP2"), std::string::npos) << bf16.out;
  EXPECT_EQ(bf16.out.find("on 2x cpu"), std::string::npos) << bf16.out;
  EXPECT_NE(bf16.out.find("llama.cpp: no count past one node was tried (devices a node, cpu: 1)"), std::string::npos) << bf16.out;
  const auto q4 = pftest::run_cli("plan Qwen/Qwen3-8B --devices cpu --engine llama.cpp --context 8192 --variant gguf_q4_k_m");
  ASSERT_EQ(q4.code, 0) << q4.out;
  EXPECT_NE(q4.out.find("llama-server -m /models/Qwen3-8B-Q4_K_M.gguf -c 8192 -np 1 --host 0.0.0.0 --port 8000"), std::string::npos) << q4.out;
  const auto serve = q4.out.find("llama-server -m");
  ASSERT_NE(serve, std::string::npos) << q4.out;
  EXPECT_EQ(q4.out.substr(serve, q4.out.find('\n', serve) - serve).find("-ngl"), std::string::npos) << q4.out;
  const auto gpu = pftest::run_cli("plan Qwen/Qwen3-8B --devices RTX4090 --engine llama.cpp --context 8192");
  EXPECT_NE(gpu.out.find("-c 8192 -np 1 -ngl 999 --host"), std::string::npos) << gpu.out;
}

// Issue 15 (ux29): fit --nodes N spread TP x PP ranks as ceil(ranks / N) a node: 32 ranks (TP 8 x PP 4) over 3 nodes
// were priced as nodes of 11 devices, over 64 nodes as nodes of one device, both exit 0. A count that does not divide
// the ranks is bad input, exit 2, naming the flag; 4 nodes of 8 is sized as before (pipeline hand-offs over the NIC).
TEST(Ux29, Issue15_NodeCountThatDoesNotDivideTheRanksIsRefused) {
  const std::string fit = "fit Qwen/Qwen3-235B-A22B --device 910B3 --tensor-parallel-size 8 --pipeline-parallel-size 4 --nodes ";
  const auto three = pftest::run_cli(fit + "3");
  EXPECT_EQ(three.code, 2) << three.out;
  EXPECT_NE(three.out.find("--nodes 3: does not divide the 32 ranks (TP 8 x PP 4)"), std::string::npos) << three.out;
  const auto many = pftest::run_cli(fit + "64");
  EXPECT_EQ(many.code, 2) << many.out;
  EXPECT_NE(many.out.find("--nodes 64: more nodes than the 32 ranks"), std::string::npos) << many.out;
  const auto four = pftest::run_cli(fit + "4");
  EXPECT_EQ(four.code, 0) << four.out;
  EXPECT_NE(four.out.find("pipeline stages span nodes: 3 activation hand-offs per token"), std::string::npos) << four.out;
}

// Issue 16 (ux29): bench and calibrate name the database --db; report took only --from-db, and `report --compare 1 2
// --db runs.db` answered "unknown flag --db; did you mean --run". Both spellings now read the same file.
TEST(Ux29, Issue16_ReportReadsTheDatabaseBenchNamesWithDb) {
  const std::string db = pftest::scratch_dir("ux29-db") + "/missing.db";
  const auto with_db = pftest::run_cli("report --compare 1 2 --db " + db);
  const auto with_from = pftest::run_cli("report --compare 1 2 --from-db " + db);
  EXPECT_EQ(with_db.code, 2) << with_db.out;
  EXPECT_EQ(with_db.out.find("unknown flag"), std::string::npos) << with_db.out;
  EXPECT_NE(with_db.out.find(db + ": no benchmark database"), std::string::npos) << with_db.out;
  EXPECT_EQ(with_db.out, with_from.out);
  EXPECT_NE(pftest::run_cli("report --help").out.find("--db FILE"), std::string::npos);
}

// Issue 16 (ux29), the seed's eager trap (shared/seeds/001 section 5): Qwen3-VL-8B on one 910B3 with vLLM-Ascend 0.23
// decoded 10.3 tok/s with --enforce-eager and 58.9 in graph mode (5.7x). fit --enforce-eager printed the eager figure
// alone; it now says what graph mode gives on the same deployment. Both figures are checked against the seed's
// measurements within 10% (a short context, as the seed measured).
TEST(Ux29, Issue16_EagerFitSaysWhatGraphModeGives) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768 --enforce-eager --decode-context 1024");
  ASSERT_EQ(r.code, 0) << r.out;
  const double eager = number_after(r.out, "single stream");
  EXPECT_NEAR(eager, 10.3, 1.03) << r.out;
  const auto note = r.out.find("in graph mode (the engine's default: drop --enforce-eager");
  ASSERT_NE(note, std::string::npos) << r.out;
  const double graph = number_after(r.out.substr(note), "the same deployment decodes");
  EXPECT_NEAR(graph, 58.9, 5.89) << r.out;
  EXPECT_NE(r.out.find("0.46 GiB of graph capture memory"), std::string::npos) << r.out;
  // A deployment that runs graphs gets no such sentence; --json carries it with the speed's assumptions.
  EXPECT_EQ(pftest::run_cli("fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768").out.find("in graph mode (the engine"),
            std::string::npos);
  EXPECT_NE(pftest::run_cli("fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768 --enforce-eager --json").out.find(
                "in graph mode (the engine's default"),
            std::string::npos);
}

// Issue 16 (ux29): `logs` on a log that ran with enforce_eager=True read the flag and said nothing about it. It now
// says what eager costs (with no card named), and with --device the predicted eager figure beside the graph one.
TEST(Ux29, Issue16_LogsOnAnEagerLogSaysWhatEagerCosts) {
  const std::string path = pftest::scratch_dir("ux29-eager") + "/eager.log";
  std::ofstream(path) << "INFO 09-04 01:02:16 [__init__.py:241] Automatically detected platform cuda.\n"
                         "(APIServer pid=1671) INFO 09-04 01:02:21 [api_server.py:1805] vLLM API server version 0.10.1.1\n"
                         "(APIServer pid=1671) INFO 09-04 01:02:21 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', 'max_model_len': 16384, "
                         "'gpu_memory_utilization': 0.5, 'enforce_eager': True}\n"
                         "(EngineCore_0 pid=1812) INFO 09-04 01:03:03 [gpu_model_runner.py:2007] Model loading took 15.2683 GiB and 4.422213 seconds\n";
  const auto bare = pftest::run_cli("logs " + path);
  EXPECT_EQ(bare.code, 0) << bare.out;
  EXPECT_NE(bare.out.find("note: enforce_eager=true (line 3): no graphs"), std::string::npos) << bare.out;
  const auto h100 = pftest::run_cli("logs " + path + " --device H100-SXM");
  EXPECT_NE(h100.out.find("eager decode predicted at"), std::string::npos) << h100.out;
  EXPECT_NE(h100.out.find("in graph mode (the engine's default"), std::string::npos) << h100.out;
}
