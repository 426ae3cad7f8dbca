#include <gtest/gtest.h>

#include "../test_support.hpp"

#include <regex>
#include <set>
#include <string>

#include "cli/help.hpp"

namespace {

// The --flags a help text names (word-bounded: --max-num-seqs, not --max-num), leaving out quoted
// references to other commands or to the engine (`preflight bw --save`, `--skip-mm-profiling` in a case).
std::set<std::string> flags_named_in(const std::string& help) {
  const std::string text = std::regex_replace(help, std::regex("`[^`]*`"), "");
  std::set<std::string> out;
  const std::regex re(R"(--([a-z][a-z0-9-]*[a-z0-9]))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) out.insert((*it)[1]);
  return out;
}

}  // namespace

// The parser and the help text read their flags from one table, so each command's help names exactly the
// flags it accepts: none missing from the help, none advertised that the parser would reject.
TEST(Help, EveryCommandDocumentsExactlyTheFlagsItAccepts) {
  const auto commands = preflight::cli::documented_commands();
  ASSERT_GE(commands.size(), 13u);
  for (const auto& command : commands) {
    const char* help = preflight::cli::command_help(command);
    ASSERT_NE(help, nullptr) << command;
    const auto named = flags_named_in(help);
    std::set<std::string> accepted;
    for (const auto& f : preflight::cli::command_flags(command)) accepted.insert(f.name);
    ASSERT_FALSE(accepted.empty()) << command;
    for (const auto& f : accepted) EXPECT_TRUE(named.count(f)) << command << " accepts --" << f << " but its help does not name it";
    for (const auto& f : named) EXPECT_TRUE(accepted.count(f)) << command << " help names --" << f << " but the command rejects it";
  }
}

TEST(Help, AliasesShareTheirCommandsTable) {
  EXPECT_STREQ(preflight::cli::command_help("explain"), preflight::cli::command_help("logs"));
  EXPECT_EQ(preflight::cli::command_flags("explain").size(), preflight::cli::command_flags("logs").size());
  EXPECT_EQ(preflight::cli::command_help("no-such-command"), nullptr);
  EXPECT_TRUE(preflight::cli::command_flags("no-such-command").empty());
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
  for (const auto& command : preflight::cli::documented_commands()) {
    const std::string help = preflight::cli::command_help(command);
    EXPECT_NE(help.find("exit: 0"), std::string::npos) << command;
    EXPECT_NE(help.find(" 2 bad input"), std::string::npos) << command;
  }
  for (const char* command : {"fit", "plan", "inspect", "bench"})
    EXPECT_NE(std::string(preflight::cli::command_help(command)).find("3 network"), std::string::npos) << command;
}
