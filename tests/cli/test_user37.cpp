// Session 37's new-user pass (issues 15, 16): bench, report, compare, doctor, hub, multi-node and llama.cpp as a deployer
// meets them, with the README as the only guide. Each test failed before its fix.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "../test_support.hpp"
#include "cli/bench_compare.hpp"
#include "engine/quant_descriptor_checks.hpp"

namespace {

nlohmann::json user37_json(const pftest::CliRun& r) {
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 400);
  return j;
}

}  // namespace

// Issue 16 ("never --quantization X on a checkpoint that is not X"; the known gap: `fit Qwen/Qwen3-32B -q ascend` assumed a
// converted checkpoint and said so in an assumption). vllm-ascend's AscendModelSlimConfig reads quant_model_description.json
// when config.json has no quantization_config: before 0.15 and on 0.16 its get_config_filenames() names the file, so vLLM's
// get_quant_config raises "Cannot find the config file for ascend" when the repo's *.json files hold none; 0.15 and 0.17+
// return [] and raise "ModelSlim Quantization Config Not Found" from maybe_update_config (git show vX:
// vllm_ascend/quantization/modelslim_config.py). Qwen/Qwen3-32B is the BF16 repository (../shared/models config.json:
// torch_dtype bfloat16, no quantization_config). fit said "does not fit (weights_oom)" with "--tensor-parallel-size 2 ...
// 80,768 KV tokens" as its fix, a start that fails on any card count; now the verdict is the engine's refusal, exit 1,
// with --variant, the published vllm-ascend/Qwen3-32B-W8A8 (data/engines/quantized_checkpoints.json) and no flag.
TEST(User37, Issue16_QuantizationAscendOnTheBf16RepoIsTheEnginesRefusal) {
  const auto newest = pftest::run_cli("fit Qwen/Qwen3-32B -q ascend --device 910B4 --engine vllm-ascend@0.23");
  EXPECT_EQ(newest.code, 1) << newest.out.substr(0, 600);
  EXPECT_NE(newest.out.find("does not fit (unsupported_quantization)"), std::string::npos) << newest.out;
  EXPECT_NE(newest.out.find("ValueError: ERROR: ModelSlim Quantization Config Not Found. You have enabled '--quantization ascend' (ModelSlim "
                            "quantization), but the model at 'Qwen/Qwen3-32B' does not contain the required quantization config file "
                            "('quant_model_description.json')."),
            std::string::npos)
      << newest.out;
  EXPECT_NE(newest.out.find("- --variant w8a8 in place of --quantization ascend"), std::string::npos) << newest.out;
  EXPECT_NE(newest.out.find("`preflight fit vllm-ascend/Qwen3-32B-W8A8 --device 910B4`"), std::string::npos) << newest.out;
  EXPECT_EQ(newest.out.find("--tensor-parallel-size 2"), std::string::npos) << newest.out;  // no card count makes it load
  EXPECT_EQ(newest.out.find("the engine will print"), std::string::npos) << newest.out;    // it stops before loading
  EXPECT_EQ(newest.out.find("assumed (no checkpoint descriptor read)\n    -"), std::string::npos) << newest.out;
  // 0.13 - 0.14: vLLM's own lookup names the method.
  const auto older = pftest::run_cli("fit Qwen/Qwen3-32B -q ascend --device 910B4 --engine vllm-ascend@0.13 --json", {.with_stderr = false});
  EXPECT_EQ(older.code, 1);
  const auto j = user37_json(older);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["failure"], "unsupported_quantization");
  EXPECT_EQ(j["failure_message"].get<std::string>().rfind("ValueError: Cannot find the config file for ascend (", 0), 0u) << j["failure_message"];
  // A local folder of the BF16 config with no descriptor is the same start; one naming the published checkpoint is
  // sized as its variant, and --variant itself is the conversion, neither refused.
  const std::string dir = pftest::scratch_dir("user37-bf16-folder");
  std::ofstream(dir + "/config.json") << std::ifstream(pftest::shared_path("models/Qwen__Qwen3-32B/config.json")).rdbuf();
  const auto folder = pftest::run_cli("fit " + dir + " -q ascend --device 910B4");
  EXPECT_EQ(folder.code, 1);
  EXPECT_NE(folder.out.find("but the model at '" + dir + "' does not contain"), std::string::npos) << folder.out;
  for (const std::string& ok : {"fit vllm-ascend/Qwen3-32B-W8A8 -q ascend --device 910B4 --tensor-parallel-size 2",
                                "fit Qwen/Qwen3-32B --variant w8a8 --device 910B4 --tensor-parallel-size 2"}) {
    const auto r = pftest::run_cli(ok);
    EXPECT_EQ(r.code, 0) << ok << ": " << r.out.substr(0, 900);
    EXPECT_EQ(r.out.find("Quantization Config Not Found"), std::string::npos) << ok;
  }
}

// The records' own checks: overlapping versions of one engine and method, an empty message, a method not in lowercase.
TEST(User37, Issue16_DescriptorCheckRecordsAreChecked) {
  const auto& shipped = preflight::engine::shipped_quant_descriptor_checks();
  ASSERT_TRUE(shipped) << shipped.error().describe();
  EXPECT_EQ(shipped->records.size(), 4u);
  const std::string rec = R"({"id": "a", "engines": ["vllm-ascend"], "version_min": "0.7.0", "version_max": "0.9.0", "method": "ascend",
                             "file": "f.json", "message": "m", "source": "s"})";
  struct Bad {
    std::string records, fragment;
  };
  for (const Bad& b : {Bad{rec + "," + R"({"id": "b", "engines": ["vllm-ascend"], "version_min": "0.9.0", "version_max": "0.10.0", "method": "ascend",
                                             "file": "f.json", "message": "m", "source": "s"})",
                           "overlap record a"},
                       Bad{R"({"id": "a", "engines": ["vllm-ascend"], "version_min": "0.7.0", "version_max": "0.9.0", "method": "Ascend",
                               "file": "f.json", "message": "m", "source": "s"})",
                           "expected lowercase"},
                       Bad{R"({"id": "a", "engines": ["vllm-ascend"], "version_min": "0.7.0", "version_max": "0.9.0", "method": "ascend",
                               "file": "f.json", "message": "", "source": "s"})",
                           "must not be empty"}}) {
    const auto json = nlohmann::json::parse(R"({"schema_version": 1, "records": [)" + b.records + "]}");
    const auto parsed = preflight::engine::parse_quant_descriptor_checks(json, "x.json");
    ASSERT_FALSE(parsed) << b.fragment;
    EXPECT_NE(parsed.error().describe().find(b.fragment), std::string::npos) << parsed.error().describe();
  }
}

namespace {

// The script of the `role` pod (leader / worker) in a LeaderWorkerSet manifest plan wrote: the block scalar after the
// template's `- |` line, its indentation removed.
std::string lws_pod_script(const std::string& yaml, const std::string& template_key) {
  const size_t at = yaml.find(template_key + ":");
  if (at == std::string::npos) return "";
  const size_t bar = yaml.find("- |\n", at);
  if (bar == std::string::npos) return "";
  std::string out;
  size_t indent = std::string::npos;
  for (size_t pos = bar + 4; pos < yaml.size();) {
    const size_t end = yaml.find('\n', pos);
    const std::string line = yaml.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    const size_t text = line.find_first_not_of(' ');
    if (indent == std::string::npos) indent = text;
    if (text == std::string::npos || text < indent) break;
    out += line.substr(indent) + "\n";
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

}  // namespace

// Issue 15 ("multi-node output ... do they run as written?"): plan --kubernetes for a model over two nodes with Ray
// (Qwen2.5-72B in BF16 on 16 x L4, TP 8 x PP 2) wrote a worker pod whose script ends `ray start --address=$HEAD_IP:6379
// --block`, run once. LWS creates the worker pods as soon as the leader pod exists, so a worker can start before the
// leader's `ray start --head` listens or its address resolves; that `ray start` fails, the container exits, and
// RecreateGroupOnPodRestart recreates the group. vLLM's examples/online_serving/multi-node-serving.sh (what LWS's vLLM
// example runs) retries the join every 5 s. The worker script is run here with a `ray` that refuses the first join (no
// head yet) and accepts the second, and a `sleep` that returns at once: it must end joined (exit 0, two attempts).
TEST(User37, Issue15_KubernetesRayWorkerRetriesTheJoin) {
  const std::string dir = pftest::scratch_dir("user37-lws-ray");
  const auto plan = pftest::run_cli("plan Qwen/Qwen2.5-72B --devices L4 --variant bf16 --context 32768 --concurrency 4 --kubernetes " + dir + "/k.yaml");
  ASSERT_EQ(plan.code, 0) << plan.out.substr(0, 600);
  std::ifstream in(dir + "/k.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(yaml.find("kind: LeaderWorkerSet"), std::string::npos) << yaml.substr(0, 600);
  const std::string worker = lws_pod_script(yaml, "workerTemplate");
  ASSERT_NE(worker.find("ray start --address="), std::string::npos) << worker;
  std::ofstream(dir + "/worker.sh") << worker;
  // The stubs: `ray` fails its first call (the head is not up) and succeeds after; `sleep` returns at once.
  std::ofstream(dir + "/ray") << "#!/bin/sh\nn=$(cat " << dir << "/calls 2>/dev/null || echo 0); n=$((n + 1)); echo $n > " << dir
                              << "/calls\necho \"ray $*\" >> " << dir << "/ray.log\n[ $n -ge 2 ]\n";
  std::ofstream(dir + "/sleep") << "#!/bin/sh\nexit 0\n";
  const std::string run = "chmod +x " + dir + "/ray " + dir + "/sleep && cd " + dir + " && PATH=" + dir +
                          ":$PATH LWS_LEADER_ADDRESS=qwen2-5-72b-0.qwen2-5-72b LWS_WORKER_INDEX=1 timeout 10 bash " + dir + "/worker.sh >/dev/null 2>&1";
  EXPECT_EQ(std::system(run.c_str()), 0) << worker;
  std::ifstream calls(dir + "/calls");
  int n = 0;
  calls >> n;
  EXPECT_EQ(n, 2) << worker;
  std::ifstream log(dir + "/ray.log");
  const std::string joined((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(joined.find("ray start --address=qwen2-5-72b-0.qwen2-5-72b:6379 --block"), std::string::npos) << joined;
}

// Issue 15/16 (the first seed: "对比vLLM-Ascend与MindIE的易用性和性能表现", MindIE beside vLLM-Ascend on the same model): `bench
// --endpoint generate_stream --spec Qwen/Qwen3-8B --device 910B4 --engine mindie` against a MindIE server printed "note:
// unknown engine 'mindie'" and no prediction, although `fit --engine mindie` predicts MindIE's decode speed from the speed
// catalogue's mindie/npu profile. The bench prediction now takes that profile (and no vLLM "GPU KV cache size" line: MindIE's
// pool is its own); a MindIE on a CUDA card is bad input.
TEST(User37, Issue16_BenchPredictsMindieWithItsOwnSpeedProfile) {
  using preflight::cli::predict_for_bench;
  const auto mindie = predict_for_bench({"Qwen/Qwen3-8B", "910B4", "mindie", 128, 8, {1, 4}});
  ASSERT_TRUE(mindie) << mindie.error().describe();
  ASSERT_TRUE(mindie->decode_tok_s_single.has_value());
  EXPECT_NE(mindie->source.find("mindie"), std::string::npos) << mindie->source;
  EXPECT_EQ(mindie->throughput_tok_s.size(), 2u);
  EXPECT_FALSE(mindie->kv_tokens.has_value());
  const auto vllm_ascend = predict_for_bench({"Qwen/Qwen3-8B", "910B4", "vllm-ascend", 128, 8, {1, 4}});
  ASSERT_TRUE(vllm_ascend) << vllm_ascend.error().describe();
  EXPECT_NE(*mindie->decode_tok_s_single, *vllm_ascend->decode_tok_s_single);  // another profile, not vLLM-Ascend's under another name
  const auto cuda = predict_for_bench({"Qwen/Qwen3-8B", "H100", "mindie", 128, 8, {1}});
  ASSERT_FALSE(cuda);
  EXPECT_EQ(cuda.error().kind, preflight::ErrorKind::invalid_argument);
  EXPECT_NE(cuda.error().message.find("MindIE Service runs on Ascend NPUs"), std::string::npos) << cuda.error().message;
}

// Issue 15 (bad input: "clear error naming the file/field, exit 2 (3 network/environment)"): bench --spec/--device/--engine
// that did not resolve (a card typo, a model not in the catalogue, an engine that does not run on the card) printed a note
// and measured anyway, exit 0 with no prediction; its --help promises exit 3 for a --spec hub model that cannot be fetched.
// Now such input stops bench before the first request (the URL below has no server: a measurement would exit 1).
TEST(User37, Issue15_BenchPredictionInputsThatDoNotResolveAreBadInput) {
  const std::string bench = "bench --url http://127.0.0.1:9 --model qwen --num-prompts 1 --output-len 4 --timeout 2 ";
  struct Case {
    std::string flags, fragment;
  };
  for (const Case& c : {Case{"--spec Qwen/Qwen3-8B --device FooCard", "--device: unknown device 'FooCard'"},
                        Case{"--spec Nope/Nope --device 910B4", "model 'Nope/Nope' is not a local path"},
                        Case{"--spec Qwen/Qwen3-8B --device 910B4 --engine vllm", "runs on cuda devices; 910B4 is a device of platform 'npu'"}}) {
    const auto r = pftest::run_cli(bench + c.flags);
    EXPECT_EQ(r.code, 2) << c.flags << ": " << r.out;
    EXPECT_NE(r.out.find(c.fragment), std::string::npos) << c.flags << ": " << r.out;
    EXPECT_EQ(r.out.find("preflight bench: concurrency"), std::string::npos) << c.flags << ": measured before refusing: " << r.out;
  }
}

// Issue 15 (doctor, "--fix dry runs on a scratch root"): (1) `doctor --root R --cache-dir /kc` with no /kc under R said
// "no compile-cache directory found (pass a build tree with --cache-dir)" to a user who had passed one; it now names the
// directory and the root it was looked for under (warn). (2) `--fix` removed the stale lock (a pid no process has) and
// exited 0, but the report below the removal still said "[fail] ... 1 stale lock file(s)" with "fix: preflight doctor
// --fix ..."; the check now says what --fix did. The lock whose pid is alive (pid 1) is kept either way.
TEST(User37, Issue15_DoctorNamesAMissingCacheDirAndReportsWhatFixDid) {
  const std::string root = pftest::scratch_dir("user37-doctor-root");
  const auto missing = pftest::run_cli("doctor --root " + root + " --cache-dir /kc --json", {.with_stderr = false});
  const auto jm = user37_json(missing);
  bool seen = false;
  for (const auto& c : jm["checks"])
    if (c["id"] == "locks") {
      seen = true;
      EXPECT_EQ(c["status"], "warn") << c.dump();
      EXPECT_EQ(c["summary"], "--cache-dir /kc: no such directory under the root " + root + "; nothing scanned") << c.dump();
    }
  EXPECT_TRUE(seen) << missing.out.substr(0, 400);
  std::filesystem::create_directories(root + "/kc/kernel_meta");
  std::ofstream(root + "/kc/kernel_meta/stale.lock") << "4194303\n";  // above any pid_max: no such process
  std::ofstream(root + "/kc/kernel_meta/alive.lock") << "1\n";
  std::ofstream(root + "/kc/kernel_meta/block_table.py") << "# not a lock\n";
  const auto before = pftest::run_cli("doctor --root " + root + " --cache-dir /kc");
  EXPECT_EQ(before.code, 1) << before.out;
  EXPECT_NE(before.out.find("[fail] stale compiler lock files (*.lock): 1 stale lock file(s)"), std::string::npos) << before.out;
  const auto fixed = pftest::run_cli("doctor --root " + root + " --cache-dir /kc --fix");
  EXPECT_EQ(fixed.code, 0) << fixed.out;
  EXPECT_NE(fixed.out.find("removing /kc/kernel_meta/stale.lock"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("[ok] stale compiler lock files (*.lock): 1 stale lock file(s) removed by --fix"), std::string::npos) << fixed.out;
  EXPECT_EQ(fixed.out.find("[fail] stale compiler lock files"), std::string::npos) << fixed.out;
  EXPECT_FALSE(std::filesystem::exists(root + "/kc/kernel_meta/stale.lock"));
  EXPECT_TRUE(std::filesystem::exists(root + "/kc/kernel_meta/alive.lock"));
  EXPECT_TRUE(std::filesystem::exists(root + "/kc/kernel_meta/block_table.py"));
}

// Issue 15 ("--help of each command"): `preflight help fit` printed the command list, not fit's flags; it is `fit --help`
// now, the engine's own help included (`help fit --engine mindie` is MindIE's), and an unknown name is still exit 2.
TEST(User37, Issue15_HelpCommandShowsThatCommandsHelp) {
  for (const std::string cmd : {"fit", "plan", "bench", "doctor", "report"}) {
    const auto via_help = pftest::run_cli("help " + cmd);
    const auto flag = pftest::run_cli(cmd + " --help");
    EXPECT_EQ(via_help.code, 0) << cmd;
    EXPECT_EQ(via_help.out, flag.out) << cmd;
    EXPECT_EQ(via_help.out.rfind("usage: preflight " + cmd, 0), 0u) << via_help.out.substr(0, 200);
  }
  const auto mindie = pftest::run_cli("help fit --engine mindie");
  EXPECT_EQ(mindie.out, pftest::run_cli("fit --engine mindie --help").out);
  EXPECT_EQ(pftest::run_cli("help frobnicate").code, 2);
  EXPECT_EQ(pftest::run_cli("help").code, 0);
}

// Issue 15 (exit codes, bad input): `bench --url ftp://host --save` was refused (exit 2) only when its first level started,
// after the database had stored an empty, unfinished run, which `report` then showed as the latest sweep. The scheme is
// now checked with the other --url checks, before anything runs or is stored (the database is not even created).
TEST(User37, Issue15_BenchRefusesANonHttpUrlBeforeStoringARun) {
  const std::string dir = pftest::scratch_dir("user37-bench-scheme");
  const auto r = pftest::run_cli("bench --url ftp://user:secret@example.invalid --model x --num-prompts 1 --db " + dir + "/bench.db");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("ftp://***@example.invalid: url must start with http:// or https://"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("secret"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("preflight bench: concurrency"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/bench.db"));
}

// user37's finding, fixed by the lead: `bench --engine llama.cpp` noted "predicted GPU KV cache size N tokens", vLLM's line,
// which llama-server never prints (its KV is the -c cells it was started with: llama_kv_cache's "N cells"). The speed
// prediction stays; the token figure is left out, as for MindIE; vLLM on the same card keeps it.
TEST(User37, Issue16_BenchPredictsNoVllmTokenLineForLlamaCpp) {
  using preflight::cli::predict_for_bench;
  const auto llama = predict_for_bench({"Qwen/Qwen3-8B", "RTX4090", "llama.cpp", 128, 8, {1}});
  ASSERT_TRUE(llama) << llama.error().describe();
  EXPECT_TRUE(llama->decode_tok_s_single.has_value());
  EXPECT_FALSE(llama->kv_tokens.has_value()) << *llama->kv_tokens;
  const auto vllm = predict_for_bench({"Qwen/Qwen3-8B", "RTX4090", "vllm", 128, 8, {1}});
  ASSERT_TRUE(vllm) << vllm.error().describe();
  EXPECT_TRUE(vllm->kv_tokens.has_value());
}
