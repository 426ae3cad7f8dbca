#include <gtest/gtest.h>

#include "../test_support.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/args.hpp"
#include "cli/help.hpp"

namespace {

using preflight::cli::Option;

// A request of every flag type, for the parser table below.
struct Probe {
  std::optional<int64_t> count;
  std::optional<double> rate;
  std::optional<std::string> mode;
  std::optional<std::vector<int64_t>> levels;
  std::optional<preflight::deploy::Given<int64_t>> tp;
  bool quiet = false;
};

std::vector<Option> probe_options(Probe& p) {
  using namespace preflight::cli;
  return {int_flag("count", "N", p.count, {0, 10}, "a count"),
          real_flag("rate", "R", p.rate, {.most = 5, .unit = "requests/s"}, "a rate"),
          text_flag("mode", "M", p.mode, "a choice", {"chat", "agent"}),
          int_list_flag("levels", "1,4", p.levels, {1, 64}, "a list"),
          given_int("tensor-parallel-size", "N", p.tp, "a deployment flag"),
          switch_flag("quiet", p.quiet, "a switch")};
}

}  // namespace

// Issue 14: values are written straight into the typed request; each type's bad value and each range is
// an invalid_argument naming the flag, with expected versus found.
TEST(Help, Issue14_ParserWritesTypedValuesAndNamesTheFlagOnBadInput) {
  Probe p;
  auto ok = preflight::cli::parse_options({"MODEL", "--count", "3", "--rate=2.5", "--mode", "agent", "--levels", "1,4,16", "--tensor_parallel_size", "2", "--quiet"},
                                          probe_options(p));
  ASSERT_TRUE(ok) << ok.error().describe();
  EXPECT_EQ(*ok, std::vector<std::string>{"MODEL"});
  EXPECT_EQ(p.count, 3);
  EXPECT_EQ(p.rate, 2.5);
  EXPECT_EQ(p.mode, "agent");
  EXPECT_EQ(p.levels, (std::vector<int64_t>{1, 4, 16}));
  ASSERT_TRUE(p.tp);
  EXPECT_EQ(p.tp->value, 2);
  EXPECT_EQ(p.tp->origin, "--tensor-parallel-size");
  EXPECT_TRUE(p.quiet);

  const struct {
    std::vector<std::string> argv;
    const char* fragment;
  } bad[] = {
      {{"--count", "x"}, "--count: expected an integer, got 'x'"},
      {{"--count", "11"}, "--count must be between 0 and 10, found 11"},
      {{"--count", "-1"}, "--count must be between 0 and 10, found -1"},
      {{"--rate", "fast"}, "--rate: expected a decimal number, got 'fast'"},
      {{"--rate", "0"}, "--rate must be positive"},
      {{"--rate", "6"}, "--rate must be at most 5 requests/s, found 6"},
      {{"--mode", "batch"}, "--mode: expected chat or agent, got 'batch'"},
      {{"--levels", "1,x"}, "--levels: expected positive integers like 1,4,16,64, found \"1,x\""},
      {{"--levels", "1,128"}, "--levels must be between 1 and 64, found 128"},
      {{"--tensor-parallel-size", "two"}, "--tensor-parallel-size: expected an integer, got 'two'"},
      {{"--count"}, "--count needs a value"},
      {{"--cuont", "1"}, "unknown flag --cuont; did you mean --count"},
  };
  for (const auto& c : bad) {
    Probe q;
    auto r = preflight::cli::parse_options(c.argv, probe_options(q));
    ASSERT_FALSE(r) << c.fragment;
    EXPECT_EQ(r.error().kind, preflight::ErrorKind::invalid_argument) << c.fragment;
    EXPECT_NE(r.error().message.find(c.fragment), std::string::npos) << r.error().message;
  }
}

// Issue 14: --help is generated from the declarations: every declared flag of every command appears with
// its value name and its help, and the top-level usage lists every command from the same table.
TEST(Help, Issue14_GeneratedHelpShowsEveryDeclaredFlagWithItsHelp) {
  const auto& commands = preflight::cli::commands();
  ASSERT_GE(commands.size(), 14u);
  const auto top = pftest::run_cli("--help");
  EXPECT_EQ(top.code, 0);
  for (const auto& command : commands) {
    EXPECT_NE(top.out.find("\n  " + command.name), std::string::npos) << command.name;
    ASSERT_TRUE(command.help) << command.name << " has no help (and so no declared --json)";
    const auto help = command.help();
    ASSERT_FALSE(help.options.empty()) << command.name;
    const std::string text = preflight::cli::render_help(help);
    bool json = false;
    for (const auto& o : help.options) {
      const std::string line = "  --" + o.name + (o.value.empty() ? "" : " " + o.value);
      EXPECT_NE(text.find(line), std::string::npos) << command.name << ": " << line;
      EXPECT_NE(text.find(o.help.substr(0, o.help.find('\n'))), std::string::npos) << command.name << ": help of --" << o.name;
      json = json || o.name == "json";
    }
    EXPECT_TRUE(json) << command.name << " has no --json";
    // The binary prints the same text.
    EXPECT_EQ(pftest::run_cli(command.name + " --help").out, text) << command.name;
  }
}

// Issue 14: a bad value of each type, on the real binary, is exit 2 naming the flag; so is a range check.
TEST(Help, Issue14_BadValuesOfEachTypeExitTwoNamingTheFlag) {
  const struct {
    const char* args;
    const char* fragment;
  } cases[] = {
      // arch31: 4k is vLLM's human-readable 4,000 (test_human_readable_int); 4x is nothing.
      {"fit Qwen/Qwen3-8B --device H100 --max-model-len 4x", "--max-model-len: expected an integer, got '4x'"},
      {"fit Qwen/Qwen3-8B --device H100 --gpu-memory-utilization high", "--gpu-memory-utilization: expected a decimal number, got 'high'"},
      {"fit Qwen/Qwen3-8B --device H100 --concurrency 1,x", "--concurrency: expected positive integers"},
      {"fit Qwen/Qwen3-8B --device H100 --input-len 0", "--input-len must be between 1 and"},
      {"plan --device H100 --bandwidth 200000", "--bandwidth must be at most 100000 GB/s, found 200000"},
      {"plan Qwen/Qwen3-8B --devices H100 --workload batch", "--workload: expected chat or agent, got 'batch'"},
      {"bw --warmup -1", "--warmup must be between 0 and 1000000, found -1"},
      {"report --html /tmp/x.html --run zero", "--run: expected an integer, got 'zero'"},
      {"doctor --root", "--root needs a value"},
  };
  for (const auto& c : cases) {
    const auto r = pftest::run_cli(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.fragment), std::string::npos) << c.args << "\n" << r.out;
  }
}

TEST(Help, AliasesShareTheirCommand) {
  ASSERT_NE(preflight::cli::find_command("explain"), nullptr);
  EXPECT_EQ(preflight::cli::find_command("explain"), preflight::cli::find_command("logs"));
  EXPECT_EQ(preflight::cli::find_command("no-such-command"), nullptr);
  EXPECT_EQ(pftest::run_cli("explain --help").out, pftest::run_cli("logs --help").out);
}

// A usage error prints the usage lines of the command's own help (all of them, for plan's two forms) and
// points at --help, exit 2.
TEST(Help, UsageErrorsQuoteTheHelpsUsageLines) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B");
  EXPECT_EQ(fit.code, 2);
  EXPECT_NE(fit.out.find("usage: preflight fit MODEL --device D [flags] [--json]"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("preflight fit --help"), std::string::npos) << fit.out;
  const auto plan = pftest::run_cli("plan");
  EXPECT_EQ(plan.code, 2);
  EXPECT_NE(plan.out.find("preflight plan MODEL [--devices 910B4,910B3,H100]"), std::string::npos) << plan.out;
  EXPECT_EQ(plan.out.find("What a device runs"), std::string::npos) << "only the usage lines, not the whole help";
  const auto usage = preflight::cli::command_usage("doctor");
  EXPECT_EQ(usage.rfind("usage: preflight doctor", 0), 0u) << usage;
}

// Issue 14: every command's --help lists its exit codes; the commands that reach the network name exit 3.
TEST(Help, Issue14_EveryHelpListsItsExitCodes) {
  for (const auto& command : preflight::cli::commands()) {
    ASSERT_TRUE(command.help) << command.name << " has no help (and so no declared --json)";
    const std::string help = preflight::cli::render_help(command.help());
    EXPECT_NE(help.find("exit: 0"), std::string::npos) << command.name;
    EXPECT_NE(help.find(" 2 bad input"), std::string::npos) << command.name;
  }
  for (const char* command : {"fit", "plan", "inspect", "bench"})
    EXPECT_NE(preflight::cli::render_help(preflight::cli::find_command(command)->help()).find("3 network"), std::string::npos) << command;
}

// Issue 14 item 2: a config whose values overflow 64 bits is bad input (exit 2, the field named), never
// "does not fit" (exit 1). The config reader already refuses ssm_state_size 2^62 (its state-size total
// check), so this pins the exit code end to end; fit's own overflow path (try_estimate_fit) returns the
// same error kind, checked in tests/estimate (Fit.Issue19_OverflowingModelValuesAreErrors).
TEST(Help, Issue14_FitOnAnOverflowingModelIsExitTwo) {
  const std::string dir = pftest::scratch_dir("overflow") + "/nvidia__Nemotron-H-56B-Base-8K";
  std::filesystem::create_directories(dir);
  std::ifstream in(pftest::shared_path("models/nvidia__Nemotron-H-56B-Base-8K/config.json"));
  ASSERT_TRUE(in) << "needs ../shared/models";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "\"ssm_state_size\": 256";
  const auto at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, key.size(), "\"ssm_state_size\": 4611686018427387904");  // 2^62
  std::ofstream(dir + "/config.json") << text;
  const auto r = pftest::run_cli("fit " + dir + " --device H100");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("ssm_state_size"), std::string::npos) << r.out;
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

// Issue 14 item 2, through fit's own estimate: a sliding-window model with the largest
// --max-num-batched-tokens overflows sliding_window + max_num_batched_tokens inside try_estimate_fit. That is
// exit 2 with the estimate's message (it was exit 1, "does not fit").
TEST(Help, Issue14_FitEstimateOverflowIsExitTwo) {
  const auto r = pftest::run_cli("fit openai/gpt-oss-20b --device H100 --max-num-batched-tokens 9223372036854775807");
  EXPECT_EQ(r.code, 2) << r.out;
  // hard35b: the flag itself is bounded now (vLLM's int32 token tensors: 2^31 - 1), before the estimate adds to it.
  EXPECT_NE(r.out.find("--max-num-batched-tokens: max_num_batched_tokens 9223372036854775807 is above 2147483647"), std::string::npos) << r.out;
}

// Issue 14 item 3: --workload agent reaches the start command: the model family's tool-call and
// reasoning parsers are added.
TEST(Help, Issue14_PlanWorkloadAgentAddsTheParsers) {
  const auto agent = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100 --workload agent");
  EXPECT_EQ(agent.code, 0) << agent.out;
  EXPECT_NE(agent.out.find("--enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3"), std::string::npos) << agent.out;
  const auto chat = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100");
  EXPECT_EQ(chat.code, 0) << chat.out;
  EXPECT_EQ(chat.out.find("--tool-call-parser"), std::string::npos) << chat.out;
}

// Issue 15: vLLM's spellings of the capture flags, as its FlexibleArgumentParser takes them (vllm/utils/argparse_utils.py):
// -O3, -O=2, -O 1 and --optimization-level; -cc JSON and --compilation-config JSON; the dotted forms -cc.KEY=VALUE,
// --compilation-config.KEY VALUE (and -O.KEY=VALUE, vLLM < 0.12's compilation config), merged into one JSON object.
TEST(Help, Issue15_CompilationFlagsInVllmsSpellings) {
  using preflight::cli::parse_options;
  auto parse = [](std::vector<std::string> argv) {
    preflight::deploy::Flags f;
    const auto options = preflight::cli::deployment_options(f);
    auto r = parse_options(argv, options);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().describe());
    if (r) EXPECT_EQ(*r, std::vector<std::string>{"model"});
    return f;
  };
  for (const auto& [argv, level] : {std::pair{std::vector<std::string>{"model", "-O3"}, 3}, std::pair{std::vector<std::string>{"model", "-O=2"}, 2},
                                    std::pair{std::vector<std::string>{"model", "-O", "1"}, 1},
                                    std::pair{std::vector<std::string>{"model", "--optimization-level", "0"}, 0}}) {
    const auto f = parse(argv);
    ASSERT_TRUE(f.optimization_level.has_value()) << argv[1];
    EXPECT_EQ(f.optimization_level->value, level) << argv[1];
  }
  const auto dotted = parse({"model", "-cc.cudagraph_mode=PIECEWISE", "--compilation-config.max_cudagraph_capture_size", "16", "--attention-backend", "FLASHINFER"});
  ASSERT_TRUE(dotted.compilation_config.has_value());
  EXPECT_EQ(dotted.compilation_config->value, R"({"cudagraph_mode":"PIECEWISE","max_cudagraph_capture_size":16})");
  ASSERT_TRUE(dotted.attention_backend.has_value());
  EXPECT_EQ(dotted.attention_backend->value, "FLASHINFER");
  const auto whole = parse({"model", "-cc", R"({"cudagraph_capture_sizes": [1, 2, 4]})"});
  ASSERT_TRUE(whole.compilation_config.has_value());
  EXPECT_EQ(whole.compilation_config->value, R"({"cudagraph_capture_sizes": [1, 2, 4]})");
  const auto old = parse({"model", "-O.cudagraph_mode=FULL_DECODE_ONLY"});
  ASSERT_TRUE(old.compilation_config.has_value());
  EXPECT_EQ(old.compilation_config->value, R"({"cudagraph_mode":"FULL_DECODE_ONLY"})");
}

// Issue 15: bad capture settings on the real binary: exit 2, the flag named, vLLM's wording.
TEST(Help, Issue15_BadCompilationConfigExitsTwo) {
  const struct {
    const char* args;
    const char* fragment;
  } cases[] = {
      {"fit Qwen/Qwen3-8B --device H100 --compilation-config {bad", "--compilation-config: expected a JSON object"},
      {"fit Qwen/Qwen3-8B --device H100 -cc.cudagraph_capture_sizes=[0,8]", "cudagraph_capture_sizes: 0 is not a positive token count"},
      {"fit Qwen/Qwen3-8B --device H100 -cc.cudagraph_mode=SOMETIMES", "cudagraph_mode: KeyError: 'SOMETIMES'"},
      {"fit Qwen/Qwen3-8B --device H100 -O7", "expected an optimization level 0, 1, 2 or 3"},
  };
  for (const auto& c : cases) {
    const auto r = pftest::run_cli(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.fragment), std::string::npos) << c.args << "\n" << r.out;
  }
}

// Issue 15: a validation case's capture fields go through the same checks: a bad cudagraph_mode is exit 2 naming the
// file, line and field with vLLM's wording; the good one validates.
TEST(Help, Issue15_CaseCompilationConfigIsChecked) {
  const std::string dir = pftest::scratch_dir("graph13-case");
  const std::string bad = dir + "/bad.jsonl", good = dir + "/good.jsonl";
  const std::string head = R"({"id": "g13", "engine": "vllm", "engine_version": "0.23.0", "device": "H100-SXM", "num_devices": 1, "model": "Qwen/Qwen3-8B", )"
                           R"("max_model_len": 4096, "weights_gib": 15.0, )";
  std::ofstream(bad) << head << R"("compilation_config": {"cudagraph_mode": "SOMETIMES"}})" << "\n";
  std::ofstream(good) << head << R"("compilation_config": {"cudagraph_capture_sizes": [1, 2, 4, 8]}, "optimization_level": 3, "attention_backend": "FLASH_ATTN"})" << "\n";
  const auto v = pftest::run_cli("validate " + bad + " --json");
  EXPECT_EQ(v.code, 2) << v.out.substr(0, 400);
  EXPECT_NE(v.out.find("bad.jsonl:1"), std::string::npos) << v.out.substr(0, 400);
  EXPECT_NE(v.out.find("compilation_config: cudagraph_mode: KeyError: 'SOMETIMES'"), std::string::npos) << v.out.substr(0, 400);
  EXPECT_EQ(pftest::run_cli("validate " + good + " --json", {.with_stderr = false}).code, 0);
}
