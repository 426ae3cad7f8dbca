#include "signatures_support.hpp"
#include "logs/engine_log.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "base/file.hpp"
#include "../test_support.hpp"

namespace pf = preflight;
namespace lg = preflight::logs;

namespace {

const auto& sigs = pftest::shipped_signatures;

std::string read(const std::string& path) {
  auto t = pf::read_text_file(path);
  return t ? *t : std::string();
}

bool oom_family(const std::string& c) { return c == "weights_oom" || c == "kv_alloc_oom"; }

using Run = pftest::CliRun;
// Runs the real binary; stdout and stderr together.
Run run(const std::string& args) { return pftest::run_cli(args); }

const std::string k_synthetic = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/synthetic";

}  // namespace

TEST(Signatures, ShippedFileLoads) {
  auto s = lg::load_signatures();
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_GE(s->classes.size(), 15u);
  for (const auto& r : s->rules) EXPECT_FALSE(r.source.empty()) << r.id;
}

TEST(Signatures, RejectsBadFiles) {
  const std::string cls = R"({"id": "weights_oom", "title": "t", "fix": "f", "source": "s"}, {"id": "kv_alloc_oom", "title": "t", "fix": "f", "source": "s"})";
  const std::string phase = R"("oom_phase": {"weights_markers": ["load_model"], "kv_markers": ["profile_run"], "source": "s"})";
  auto doc = [&](const std::string& rules, const std::string& extra = "") {
    return R"({"schema_version": 1, "classes": [)" + cls + R"(], "rules": [)" + rules + "], " + phase + extra + "}";
  };
  const std::string good_rule = R"({"id": "r", "class": "weights_oom", "severity": "error", "priority": 5, "patterns": ["x"], "source": "s"})";
  ASSERT_TRUE(lg::parse_signatures(doc(good_rule), "sig.json"));
  const struct {
    std::string text, fragment;
  } cases[] = {
      {doc(R"({"id": "r", "class": "weights_oom", "severity": "error", "priority": 5, "patterns": ["x"], "source": "s", "extra": 1})"), "extra"},
      {doc(R"({"id": "r", "class": "weights_oom", "severity": "error", "priority": 5, "patterns": ["x"]})"), "source"},
      {doc(R"({"id": "r", "class": "weights_oom", "severity": "error", "priority": 5, "patterns": ["x"], "source": ""})"), "source is empty"},
      {doc(good_rule + "," + good_rule), "duplicate rule id r"},
      {doc(R"({"id": "r", "class": "nope", "severity": "error", "priority": 5, "patterns": ["x"], "source": "s"})"), "unknown class nope"},
      {doc(R"({"id": "r", "class": "weights_oom", "severity": "fatal", "priority": 5, "patterns": ["x"], "source": "s"})"), "severity"},
      {doc(R"({"id": "r", "class": "weights_oom", "severity": "error", "priority": 5, "patterns": [], "source": "s"})"), "empty"},
      {doc(good_rule, R"(, "surprise": 1)"), "surprise"},
      {R"({"schema_version": 2})", "schema_version 2"},
      {"[1, 2", "sig.json"},
  };
  for (const auto& c : cases) {
    auto r = lg::parse_signatures(c.text, "sig.json");
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().describe().find(c.fragment), std::string::npos) << r.error().describe();
    EXPECT_NE(r.error().describe().find("sig.json"), std::string::npos) << r.error().describe();
  }
}

TEST(EngineLog, ParsesVersionsArgsAndPrintedLinesWithLineNumbers) {
  const auto log = lg::parse_engine_log(read(k_synthetic + "/none.1.log"), sigs());
  EXPECT_EQ(log.engine, "vllm");
  ASSERT_TRUE(log.versions.vllm);
  EXPECT_EQ(log.versions.vllm->value, "0.10.1.1");
  EXPECT_EQ(log.versions.vllm->line, 2);
  ASSERT_TRUE(log.args.model && log.args.max_model_len && log.args.gpu_memory_utilization && log.args.tensor_parallel_size && log.args.dtype);
  EXPECT_EQ(log.args.model->value, "Qwen/Qwen3-8B");
  EXPECT_EQ(log.args.max_model_len->value, 16384);
  EXPECT_EQ(log.args.max_model_len->line, 4);  // the resolved config line wins over the non-default dict
  EXPECT_DOUBLE_EQ(log.args.gpu_memory_utilization->value, 0.5);
  EXPECT_EQ(log.args.gpu_memory_utilization->line, 3);
  EXPECT_EQ(log.args.tensor_parallel_size->value, 1);
  EXPECT_EQ(log.args.dtype->value, "bfloat16");
  ASSERT_TRUE(log.args.enforce_eager);
  EXPECT_FALSE(log.args.enforce_eager->value);
  EXPECT_FALSE(log.args.quantization);  // "quantization=None"
  ASSERT_TRUE(log.printed.weights_gib && log.printed.available_kv_gib && log.printed.kv_cache_tokens && log.printed.max_concurrency && log.printed.graph_gib);
  EXPECT_DOUBLE_EQ(log.printed.weights_gib->value, 15.2683);
  EXPECT_EQ(log.printed.weights_gib->line, 5);
  EXPECT_DOUBLE_EQ(log.printed.available_kv_gib->value, 22.75);
  EXPECT_EQ(log.printed.kv_cache_tokens->value, 165648);
  EXPECT_DOUBLE_EQ(log.printed.max_concurrency->value, 10.11);
  EXPECT_EQ(log.printed.concurrency_len->value, 16384);
  EXPECT_DOUBLE_EQ(log.printed.graph_gib->value, 0.50);
  EXPECT_TRUE(log.started);
  EXPECT_TRUE(log.diagnosis.class_id.empty());
}

TEST(EngineLog, CommandLineAndWrappedRecords) {
  const std::string text =
      "$ vllm serve /data/models/Qwen3.6-27B-w8a8 --quantization ascend --dtype bfloat16 --max-model-len 512 --gpu-memory-utilization 0.98 "
      "--max-num-seqs 1 --max-num-batched-tokens 512 -tp 2 --enforce-eager\n"
      "(APIServer pid=1) INFO [utils.py:326] non-default args: {'model_tag': 'Qwen2-7B-Instruct', 'model': 'Qwe\n"
      "n2-7B-Instruct', 'max_model_len': 16384, 'gpu_memory_utilization': 0.25}\n";
  const auto log = lg::parse_engine_log(text, sigs());
  ASSERT_TRUE(log.args.model && log.args.quantization && log.args.max_num_seqs && log.args.max_num_batched_tokens && log.args.tensor_parallel_size);
  // The dict (line 2, joined with its wrapped continuation) is preferred over the command line.
  EXPECT_EQ(log.args.model->value, "Qwen2-7B-Instruct");
  EXPECT_EQ(log.args.max_model_len->value, 16384);
  EXPECT_DOUBLE_EQ(log.args.gpu_memory_utilization->value, 0.25);
  EXPECT_EQ(log.args.quantization->value, "ascend");
  EXPECT_EQ(log.args.max_num_seqs->value, 1);
  EXPECT_EQ(log.args.max_num_batched_tokens->value, 512);
  EXPECT_EQ(log.args.tensor_parallel_size->value, 2);
  EXPECT_TRUE(log.args.enforce_eager->value);
}

TEST(EngineLog, OomFiguresFromTheFirstReport) {
  // seeds/000 4.3.1, attempt 1 (the report wraps the message over two lines; joined here).
  const auto log = lg::parse_engine_log(
      "RuntimeError: NPU out of memory. Tried to allocate 172.00 MiB (NPU 0; 29.49 GiB total capacity; 28.79 GiB already allocated; 118.31 MiB free)\n", sigs());
  ASSERT_TRUE(log.diagnosis.oom);
  EXPECT_DOUBLE_EQ(log.diagnosis.oom->requested_bytes, 172.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*log.diagnosis.oom->total_bytes, 29.49 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*log.diagnosis.oom->allocated_bytes, 28.79 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*log.diagnosis.oom->free_bytes, 118.31 * 1024 * 1024);
  EXPECT_EQ(log.diagnosis.class_id, "weights_oom");
  EXPECT_EQ(log.engine, "vllm-ascend");
}

// Issue 19 (cleanup): one size reader for the OOM message and the memory summaries. The OOM figures take every unit
// torch and the NPU stack print (bytes worked out by hand: 1 KiB = 1024 B, 1 GB = 10^9 B), and reject what the summary
// lines reject (an exponent, a second point, a thousands comma, an unknown unit): that figure is then absent.
TEST(EngineLog, Issue19_OomSizesInEveryUnitAndMalformedOnesSkipped) {
  struct Row {
    const char* requested;
    std::optional<double> bytes;
  };
  const Row rows[] = {
      {"2.00 GiB", 2.0 * 1073741824},   // 2,147,483,648 B
      {"172.00 MiB", 172.0 * 1048576},  // 180,355,072 B
      {"512 KiB", 512.0 * 1024},        // 524,288 B
      {"1.50 GB", 1.5e9},
      {"20.00MB", 2.0e7},               // no space before the unit
      {"-1.00 GiB", -1.0 * 1073741824},  // a sign is read (a damaged figure still parses as the line prints it)
      {"1e3 MiB", std::nullopt},
      {"1.2.3 MiB", std::nullopt},
      {"1,024.00 MiB", std::nullopt},
      {"7.00 TiB", std::nullopt},
      {". MiB", std::nullopt},
  };
  for (const Row& r : rows) {
    const auto log = lg::parse_engine_log(std::string("RuntimeError: NPU out of memory. Tried to allocate ") + r.requested +
                                              " (NPU 0; 29.49 GiB total capacity; 28.79 GiB already allocated; 118.31 MiB free)\n",
                                          sigs());
    if (!r.bytes) {
      EXPECT_FALSE(log.diagnosis.oom) << r.requested;
      continue;
    }
    ASSERT_TRUE(log.diagnosis.oom) << r.requested;
    EXPECT_DOUBLE_EQ(log.diagnosis.oom->requested_bytes, *r.bytes) << r.requested;
    EXPECT_DOUBLE_EQ(*log.diagnosis.oom->total_bytes, 29.49 * 1073741824) << r.requested;
  }
}

TEST(EngineLog, RootCauseNotTheLastLine) {
  const auto log = lg::parse_engine_log(read(k_synthetic + "/missing_fused_op.1.log"), sigs());
  EXPECT_EQ(log.diagnosis.class_id, "missing_fused_op");
  ASSERT_FALSE(log.diagnosis.symptoms.empty());
  EXPECT_NE(log.diagnosis.symptoms.back().text.find("Engine core initialization failed"), std::string::npos);
  ASSERT_FALSE(log.diagnosis.evidence.empty());
  EXPECT_NE(log.diagnosis.evidence[0].text.find("'function' object is not subscriptable"), std::string::npos);
  EXPECT_EQ(log.diagnosis.evidence[0].line, 11);
  ASSERT_EQ(log.diagnosis.warnings.size(), 1u);  // the triton warning is reported, never the cause
}

// Every synthetic log is named <expected class>.<n>.log ("none": no failure).
TEST(EngineLog, SyntheticCorpus) {
  int total = 0, correct = 0;
  std::string wrong;
  std::set<std::string> classes;
  for (const auto& e : std::filesystem::directory_iterator(k_synthetic)) {
    const std::string name = e.path().filename().string();
    std::string expected = name.substr(0, name.find('.'));
    classes.insert(expected);
    if (expected == "none") expected.clear();
    const auto log = lg::parse_engine_log(read(e.path().string()), sigs());
    ++total;
    if (log.diagnosis.class_id == expected) ++correct;
    else wrong += name + " -> '" + log.diagnosis.class_id + "'; ";
  }
  for (const auto& c : sigs().classes) EXPECT_TRUE(classes.count(c.id)) << "no synthetic log for class " << c.id;
  RecordProperty("synthetic_correct", correct);
  RecordProperty("synthetic_total", total);
  EXPECT_EQ(correct, total) << wrong;
  EXPECT_GE(total, 20);
}

namespace {

// Section 8 of the reference: its table's backticked strings, with the class each symptom row maps to.
std::vector<std::pair<std::string, std::string>> reference_excerpts() {
  const std::map<std::string, std::string> row_class = {
      {"NPU environment not sourced", "missing_library"}, {"triton / triton-ascend conflict", "missing_fused_op"},
      {"FlashComm on VL models", "flashcomm_vision"},     {"NPU OOM", "oom"},
      {"negative or zero KV", "kv_negative"},             {"free < requested", "kv_negative"},
      {"KV too small", "kv_too_small"},                   {"ModelSlim weights without", "unsupported_quantization"},
      {"unsupported quant", "unsupported_quantization"},  {"hybrid page alignment", "hybrid_page_alignment"},
      {"ACL graph stream exhaustion", "graph_stream_exhaustion"}, {"MLA graph heads", "mla_graph_heads"},
      {"missing op binaries", "missing_op_binaries"},     {"InvalidVersion", "version_mismatch"},
      {"device query failure", "device_query_failure"},   {"V0 on", "version_mismatch"}};
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(read(pftest::shared_path("reference/engine-memory-accounting.md")));
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line.rfind("## 8.", 0) == 0;
    if (!in_section || line.rfind("| ", 0) != 0) continue;
    std::string row = line;
    for (size_t p; (p = row.find("\\|")) != std::string::npos;) row.replace(p, 2, "/");
    std::vector<std::string> cells;
    std::stringstream ss(row);
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(cell);
    if (cells.size() < 4) continue;
    std::string cls;
    for (const auto& [k, v] : row_class) if (cells[1].find(k) != std::string::npos) cls = v;
    if (cls.empty()) continue;
    const std::string& text = cells[2];
    for (size_t a = text.find('`'); a != std::string::npos; a = text.find('`', a + 1)) {
      const size_t b = text.find('`', a + 1);
      if (b == std::string::npos) break;
      const std::string excerpt = text.substr(a + 1, b - a - 1);
      if (excerpt.find('\\') == std::string::npos) out.push_back({excerpt, cls});  // skip the regex form
      a = b;
    }
  }
  return out;
}

// The field reports: lines holding an anchor (plus the next line, where the report wraps a message).
std::vector<std::pair<std::string, std::string>> seed_excerpts() {
  const struct {
    const char* file;
    const char* anchor;
    const char* cls;
  } anchors[] = {
      {"seeds/000_4948bf09d896064c.txt", "OSError: libatb.so", "missing_library"},
      {"seeds/000_4948bf09d896064c.txt", "RuntimeError: NPU out of memory", "weights_oom"},  // the report places all of them at weight load
      {"seeds/000_4948bf09d896064c.txt", "Value error, fp8 quantization", "unsupported_quantization"},
      {"seeds/000_4948bf09d896064c.txt", "Value error, awq quantization", "unsupported_quantization"},
      {"seeds/000_4948bf09d896064c.txt", "WARNING: Triton is installed", ""},              // non-blocking per the report
      {"seeds/000_4948bf09d896064c.txt", "has no attribute 'major'", ""},                  // non-blocking per the report
      {"seeds/001_f1698fdf80e33bc6.txt", "TypeError: 'function' object is not subscriptable", "missing_fused_op"},
      {"seeds/001_f1698fdf80e33bc6.txt", "ModuleNotFoundError: No module named 'decorator'", "tbe_python_dependency"},
      {"seeds/001_f1698fdf80e33bc6.txt", "RuntimeError: Another process is using this dir", "stale_compiler_lock"},
      {"seeds/001_f1698fdf80e33bc6.txt", "has no attribute 'o_groups'", "unsupported_quantization"},
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& a : anchors) {
    std::vector<std::string> lines;
    std::istringstream in(read(pftest::shared_path(a.file)));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find(a.anchor) == std::string::npos) continue;
      out.push_back({lines[i] + "\n" + (i + 1 < lines.size() ? lines[i + 1] : "") + "\n", a.cls});
    }
  }
  return out;
}

}  // namespace

TEST(EngineLog, RealExcerptsFromTheReferenceAndTheFieldReports) {
  auto cases = reference_excerpts();
  const size_t from_reference = cases.size();
  for (auto& c : seed_excerpts()) cases.push_back(c);
  ASSERT_GE(from_reference, 30u) << "section 8 of the reference was not read";
  ASSERT_GE(cases.size() - from_reference, 12u) << "the field reports were not read";
  int correct = 0;
  std::string wrong;
  for (const auto& [text, expected] : cases) {
    const auto log = lg::parse_engine_log(text, sigs());
    const bool ok = expected == "oom" ? oom_family(log.diagnosis.class_id) : log.diagnosis.class_id == expected;
    correct += ok;
    if (!ok) wrong += "[" + text + "] expected '" + expected + "', got '" + log.diagnosis.class_id + "'\n";
  }
  RecordProperty("real_correct", correct);
  RecordProperty("real_total", static_cast<int>(cases.size()));
  EXPECT_EQ(correct, static_cast<int>(cases.size())) << wrong;
}

TEST(EngineLog, OddInputNeverCrashes) {
  std::string binary;
  for (int i = 0; i < 5000; ++i) binary.push_back(static_cast<char>(i * 37 % 256));
  const std::string huge_line(200000, 'x');
  for (const std::string& text : {std::string(), binary, huge_line, std::string("Traceback (most recent call last)\n"),
                                  std::string("GPU KV cache size: tokens\nMaximum concurrency for : x\nModel loading took GiB\n"),
                                  std::string("non-default args: {'model': 'a', 'max_model_len': 'oops', ((((\n"),
                                  std::string("Tried to allocate 1e999999 MiB (NPU 0; -5 GiB total capacity;\n")}) {
    const auto log = lg::parse_engine_log(text, sigs());
    EXPECT_GE(log.line_count, 0);
  }
}

TEST(LogsCli, ExplainIsTheSameCommandAsLogs) {
  const auto a = run("logs " + k_synthetic + "/kv_too_small.1.log --json");
  const auto b = run("explain " + k_synthetic + "/kv_too_small.1.log --json");
  EXPECT_EQ(a.code, 1);
  EXPECT_EQ(a.out, b.out);
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["command"], "logs");
  EXPECT_TRUE(j.contains("schema_version"));
  EXPECT_EQ(j["diagnosis"]["class"], "kv_too_small");
  EXPECT_EQ(j["engine_args"]["model"]["value"], "Qwen/Qwen3-8B");
}

// --skip-mm-profiling from the command line, the args dict, or vLLM's own line saying it skipped the encoder
// profile (rocm80-qwen38-27b's log: "[gpu_model_runner.py:6563] Skipping memory profiling for multimodal encoder
// and encoder cache."), with the line it came from.
TEST(EngineLog, SkipMmProfilingFromFlagDictOrEngineLine) {
  const auto cmd = lg::parse_engine_log("$ vllm serve Qwen/Qwen3.5-27B --skip-mm-profiling --max-model-len 32768\n", sigs());
  ASSERT_TRUE(cmd.args.skip_mm_profiling);
  EXPECT_TRUE(cmd.args.skip_mm_profiling->value);
  const auto dict = lg::parse_engine_log("INFO [utils.py:326] non-default args: {'model': 'Qwen/Qwen3.5-27B', 'skip_mm_profiling': True}\n", sigs());
  ASSERT_TRUE(dict.args.skip_mm_profiling);
  EXPECT_TRUE(dict.args.skip_mm_profiling->value);
  const auto engine_line = lg::parse_engine_log(
      "INFO 08-17 02:54:36 [gpu_model_runner.py:5515] Model loading took 51.1 GiB memory and 41.914650 seconds\n"
      "(EngineCore pid=3403212) INFO 08-17 02:54:36 [gpu_model_runner.py:6563] Skipping memory profiling for multimodal encoder and encoder cache.\n",
      sigs());
  ASSERT_TRUE(engine_line.args.skip_mm_profiling);
  EXPECT_EQ(engine_line.args.skip_mm_profiling->line, 2);
  const auto none = lg::parse_engine_log("$ vllm serve Qwen/Qwen3.5-27B --max-model-len 32768\n", sigs());
  EXPECT_FALSE(none.args.skip_mm_profiling);
}

// Issue 15 (dcp): --decode-context-parallel-size from vLLM's short name on the command line (#40585's '-dcp 4'), the
// long name, or the non-default args dict, with the line it came from.
TEST(EngineLog, Issue15_DecodeContextParallelFromFlagOrDict) {
  const auto short_name = lg::parse_engine_log("$ vllm serve /dev/shm/Qwen3.5-35B-A3B --enable-expert-parallel --tensor-parallel-size 8 -dcp 4\n", sigs());
  ASSERT_TRUE(short_name.args.decode_context_parallel_size);
  EXPECT_EQ(short_name.args.decode_context_parallel_size->value, 4);
  const auto long_name = lg::parse_engine_log("$ vllm serve Qwen/Qwen3-32B --tensor-parallel-size 16 --decode-context-parallel-size 2\n", sigs());
  ASSERT_TRUE(long_name.args.decode_context_parallel_size);
  EXPECT_EQ(long_name.args.decode_context_parallel_size->value, 2);
  const auto dict = lg::parse_engine_log("INFO [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-32B', 'decode_context_parallel_size': 2}\n", sigs());
  ASSERT_TRUE(dict.args.decode_context_parallel_size);
  EXPECT_EQ(dict.args.decode_context_parallel_size->value, 2);
  EXPECT_EQ(dict.args.decode_context_parallel_size->line, 1);
  const auto none = lg::parse_engine_log("$ vllm serve Qwen/Qwen3-32B --tensor-parallel-size 16\n", sigs());
  EXPECT_FALSE(none.args.decode_context_parallel_size);
}

TEST(LogsCli, PrintedVersusPredictedForAResolvableModel) {
  const auto r = run("logs " + k_synthetic + "/none.1.log --device A100-80G-SXM --json");
  EXPECT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("fit")) << r.out;
  EXPECT_EQ(j["fit"]["device"], "A100-80G-SXM");
  ASSERT_GE(j["printed_vs_predicted"].size(), 4u);
  EXPECT_DOUBLE_EQ(j["printed_vs_predicted"][0]["printed"].get<double>(), 15.2683);
  EXPECT_TRUE(j["printed_vs_predicted"][0]["predicted"].is_number());
}

// vLLM's encoder-cache line states the profile run's encoder pass: its budget, how many items and which
// modality. `logs` sets it beside the prediction: Qwen2.5-VL-7B at the default 128,000 context profiles one
// 114,688-token dummy video (an A100 log, vllm-openai v0.23.0), -14.28 GiB printed.
TEST(LogsCli, EncoderPassPrintedVersusPredicted) {
  const auto parsed = lg::parse_engine_log(read(k_synthetic + "/kv_negative.3.log"), sigs());
  ASSERT_TRUE(parsed.printed.encoder_budget_tokens);
  EXPECT_EQ(parsed.printed.encoder_budget_tokens->value, 114688);
  EXPECT_EQ(parsed.printed.encoder_budget_tokens->line, 6);
  ASSERT_TRUE(parsed.printed.encoder_items);
  EXPECT_EQ(parsed.printed.encoder_items->value, 1);
  ASSERT_TRUE(parsed.printed.encoder_modality);
  EXPECT_EQ(parsed.printed.encoder_modality->value, "video");
  const auto r = run("logs " + k_synthetic + "/kv_negative.3.log --device A100-80G-SXM --json");
  EXPECT_EQ(r.code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  bool budget = false, items = false;
  for (const auto& row : j["printed_vs_predicted"]) {
    const std::string what = row["what"];
    if (what == "encoder budget (tokens)") {
      budget = true;
      EXPECT_DOUBLE_EQ(row["printed"].get<double>(), 114688.0);
      EXPECT_DOUBLE_EQ(row["predicted"].get<double>(), 114688.0);
    }
    if (what == "encoder video items profiled") {
      items = true;
      EXPECT_DOUBLE_EQ(row["predicted"].get<double>(), 1.0);
    }
    if (what == "available KV cache (GiB)") EXPECT_NEAR(row["predicted"].get<double>(), -14.28, 14.28 * 0.1);
  }
  EXPECT_TRUE(budget) << r.out;
  EXPECT_TRUE(items) << r.out;
}

TEST(LogsCli, UnresolvableModelIsSaidAndClassificationContinues) {
  const auto r = run("logs " + k_synthetic + "/weights_oom.1.log");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("root cause: out of device memory while loading the weights"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix:"), std::string::npos);
}

// --skip-mm-profiling travels as the emitted case's skip_mm_profiling field, which validate reads (issue 14:
// never from the notes): the emitted case round-trips through `preflight validate`, and without the field the
// encoder pass is back in the prediction.
TEST(LogsCli, EmitCaseCarriesSkipMmProfilingToValidate) {
  const std::string dir = ::testing::TempDir();
  const std::string log = dir + "/vl_skip.log";
  std::ofstream(log) << "(APIServer pid=1) INFO [api_server.py:1805] vLLM API server version 0.11.0\n"
                     << "(APIServer pid=1) INFO [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-VL-8B-Instruct', 'max_model_len': 32768}\n"
                     << "(EngineCore pid=2) INFO [gpu_model_runner.py:2007] Model loading took 16.3 GiB and 9.1 seconds\n"
                     << "(EngineCore pid=2) INFO [gpu_model_runner.py:3000] Skipping memory profiling for multimodal encoder and encoder cache.\n"
                     << "(EngineCore pid=2) INFO [gpu_worker.py:276] Available KV cache memory: 50.00 GiB\n";
  const auto r = run("logs " + log + " --device H100-SXM --emit-case");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["notes"].get<std::string>().find("--skip-mm-profiling (line 4)"), std::string::npos) << j["notes"];
  const std::string cases = dir + "/vl_skip.jsonl";
  std::ofstream(cases) << j.dump() << "\n";
  const auto v = run("validate " + cases + " --json");
  ASSERT_EQ(v.code, 0) << v.out;
  EXPECT_EQ(j["skip_mm_profiling"], true);
  auto predicted_kv = [](const std::string& out) { return nlohmann::json::parse(out)["rows"][0]["fields"]["available_kv_gib"]["predicted"].get<double>(); };
  auto without = j;
  without.erase("skip_mm_profiling");
  std::ofstream(cases) << without.dump() << "\n";
  const auto w = run("validate " + cases + " --json");
  ASSERT_EQ(w.code, 0) << w.out;
  EXPECT_GT(predicted_kv(v.out), predicted_kv(w.out));
}

// Issue 15 round 2: the emitted case carries the environment and the DP+EP layout the log showed, in the fields
// validate reads (env, data_parallel_size, enable_expert_parallel; num_devices = TP x local DP ranks). Round trip:
// with env.HCCL_BUFFSIZE 1024 the MC2 communicator holds 2 x 1024 MiB instead of CANN's default 2 x 200 MiB, so
// validate's predicted budget is 2 x (1024 - 200) MiB = 1.609 GiB lower than without the env field.
TEST(LogsCli, Issue15_EmitCaseWritesTheEnvironment) {
  const std::string dir = ::testing::TempDir();
  const std::string log = dir + "/dp_ep.log";
  std::ofstream(log) << "INFO 01-21 10:00:00 [__init__.py:43] vllm-ascend version 0.13.0rc1\n"
                     << "export HCCL_BUFFSIZE=1024\n"
                     << "VLLM_ASCEND_ENABLE_FLASHCOMM1=0 vllm serve Qwen/Qwen3-30B-A3B --tensor-parallel-size 2 --data-parallel-size 2 "
                        "--enable-expert-parallel --max-model-len 8192\n"
                     << "(EngineCore_DP0 pid=2) INFO [worker_v1.py:300] Available KV cache memory: 20.00 GiB\n";
  const auto r = run("logs " + log + " --device 910B3 --models " + pftest::shared_path("models") + " --emit-case");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["env"], nlohmann::json::parse(R"({"HCCL_BUFFSIZE": 1024, "VLLM_ASCEND_ENABLE_FLASHCOMM1": 0})"));
  EXPECT_EQ(j["data_parallel_size"], 2);
  EXPECT_EQ(j["enable_expert_parallel"], true);
  EXPECT_EQ(j["num_devices"], 4);
  const std::string cases = dir + "/dp_ep.jsonl";
  auto predicted_kv = [&](const nlohmann::json& c) {
    std::ofstream(cases) << c.dump() << "\n";
    const auto v = run("validate " + cases + " --models " + pftest::shared_path("models") + " --json");
    EXPECT_EQ(v.code, 0) << v.out;
    return nlohmann::json::parse(v.out)["rows"][0]["fields"]["available_kv_gib"]["predicted"].get<double>();
  };
  auto without = j;
  without.erase("env");
  EXPECT_NEAR(predicted_kv(without) - predicted_kv(j), 2.0 * (1024 - 200) / 1024.0, 0.01);
  // A log without an environment writes env null.
  const auto plain = nlohmann::json::parse(run("logs " + k_synthetic + "/none.1.log --emit-case").out);
  EXPECT_TRUE(plain["env"].is_null());
}

// Issue 15 (ev): a vllm-ascend nightly multi-node job log (github.com/starmountain1997/gDS, 2026-03-04, vllm-ascend
// f8315f5, DeepSeek-V3_2-W8A8-A3-dual-nodes.yaml; lines shortened to the keys read) prints the environment as the
// runner's Python dict and the MTP setting only in the non-default args dict. The emitted case carries both, in the
// fields validate reads: env {HCCL_BUFFSIZE 1024, FLASHCOMM1 1, MLAPO 1} and speculative_config {deepseek_mtp, 3}.
TEST(LogsCli, Issue15_EmitCaseWritesTheSpeculativeConfigAndTheRunnerEnvironment) {
  const std::string dir = ::testing::TempDir();
  const std::string log = dir + "/dsv32_nightly.log";
  std::ofstream(log) << "INFO 03-04 18:34:40 [__init__.py:43] vllm-ascend version 0.15.0rc2.dev46+g566c367a1\n"
                     << "[2026-03-04 18:34:46] [INFO] Node 0 envs: {'HCCL_OP_EXPANSION_MODE': 'AIV', 'HCCL_BUFFSIZE': '1024', "
                        "'OMP_NUM_THREADS': '1', 'VLLM_ASCEND_ENABLE_MLAPO': '1', 'VLLM_ASCEND_ENABLE_FLASHCOMM1': '1', 'ASCEND_A3_EBA_ENABLE': '1'}\n"
                     << "(APIServer pid=146) INFO 03-04 18:34:58 [utils.py:223] non-default args: {'model': 'Qwen/Qwen3-30B-A3B', "
                        "'max_model_len': 68000, 'tensor_parallel_size': 8, 'data_parallel_size': 4, 'data_parallel_size_local': 2, "
                        "'enable_expert_parallel': True, 'gpu_memory_utilization': 0.85, 'speculative_config': {'num_speculative_tokens': 3, "
                        "'method': 'deepseek_mtp'}}\n";
  const auto r = run("logs " + log + " --emit-case");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["env"], nlohmann::json::parse(R"({"HCCL_BUFFSIZE": 1024, "VLLM_ASCEND_ENABLE_FLASHCOMM1": 1, "VLLM_ASCEND_ENABLE_MLAPO": 1})"));
  EXPECT_EQ(j["speculative_config"], nlohmann::json::parse(R"({"num_speculative_tokens": 3, "method": "deepseek_mtp"})"));
  EXPECT_EQ(j["data_parallel_size"], 4);
  EXPECT_EQ(j["num_devices"], 16);  // TP 8 x 2 local DP ranks on this node
}

TEST(LogsCli, EmitCaseFollowsTheValidationSchema) {
  const auto r = run("logs " + k_synthetic + "/none.1.log --emit-case");
  EXPECT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"id", "source", "engine", "engine_version", "device", "num_devices", "model", "dtype", "quantization", "kv_cache_dtype",
                          "tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "weights_gib", "available_kv_gib", "kv_cache_tokens",
                          "max_concurrency", "concurrency_len", "cuda_graph_gib", "fits", "failure", "notes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["kv_cache_tokens"], 165648);
  EXPECT_EQ(j["engine_version"], "0.10.1.1");
  EXPECT_EQ(j["fits"], true);
  const auto f = nlohmann::json::parse(run("logs " + k_synthetic + "/kv_negative.1.log --emit-case").out);
  EXPECT_EQ(f["fits"], false);
  EXPECT_EQ(f["failure"], "kv_negative");
}

TEST(LogsCli, MissingFileIsExitTwo) {
  const auto r = run("logs /nonexistent/engine.log");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("/nonexistent/engine.log"), std::string::npos);
  EXPECT_EQ(run("logs").code, 2);
}

TEST(EngineLog, WeightsLineIsASizeNotADuration) {
  // vLLM 0.10 prints both; only the second is the weights (dennislee22/vLLM-benchmarking log).
  const auto log = lg::parse_engine_log(
      "INFO [default_loader.py:262] Loading weights took 3.03 seconds\n"
      "INFO [gpu_model_runner.py:2007] Model loading took 14.2488 GiB and 4.422213 seconds\n", sigs());
  ASSERT_TRUE(log.printed.weights_gib);
  EXPECT_DOUBLE_EQ(log.printed.weights_gib->value, 14.2488);
  EXPECT_EQ(log.printed.weights_gib->line, 2);
}

// Issue 19 item 4: `logs FIFO` is refused at once (exit 2, the file named), never read.
TEST(LogsCli, Issue19_FifoLogExitTwo) {
  const std::string dir = pftest::scratch_dir("logs-issue19-fifo");
  const std::string fifo = dir + "/engine.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const char* command : {"logs", "explain"}) {
    const auto r = pftest::run_cli(std::string(command) + " " + fifo, {"timeout 10"});
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(fifo + ": expected a regular file, found a FIFO"), std::string::npos) << r.out;
  }
}

// Issue 19 item 12: escape sequences in a log (window title, screen clear, cursor moves, a terminal
// reset, BEL, C1 controls) never reach the terminal: lines are cleaned where the log is captured.
TEST(EngineLog, Issue19_EscapeSequencesStripped) {
  const std::string log =
      "INFO 08-01 10:00:02 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B\x1b]0;owned\x07', 'max_model_len': 32768}\n"
      "(EngineCore_DP0 pid=812) ERROR 08-01 10:01:00 [core.py:700] \x1b[2J\x1b[HRuntimeError: NPU out of memory.\x1b""c Tried to allocate "
      "172.00 MiB\x07 (NPU 0; 29.49 GiB total capacity; 28.79 GiB already allocated)\xc2\x9b""31m\x1bP1$r\x1b\\\n"
      "\x1b[31mERROR\x1b[0m 08-01 10:01:01 [core.py:701] Engine core initialization failed. \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\n";
  const auto parsed = lg::parse_engine_log(log, sigs());
  auto clean = [](const std::string& s) {
    for (unsigned char c : s) {
      if (c == 0x1b || c == 0x07 || c == 0x9b) return false;
    }
    return true;
  };
  ASSERT_TRUE(parsed.args.model);
  EXPECT_EQ(parsed.args.model->value, "Qwen/Qwen3-8B");
  ASSERT_FALSE(parsed.diagnosis.evidence.empty());
  for (const auto& e : parsed.diagnosis.evidence) EXPECT_TRUE(clean(e.text)) << e.text;
  for (const auto& e : parsed.diagnosis.symptoms) EXPECT_TRUE(clean(e.text)) << e.text;
  EXPECT_NE(parsed.diagnosis.evidence.front().text.find("RuntimeError: NPU out of memory. Tried to allocate 172.00 MiB (NPU 0;"), std::string::npos)
      << parsed.diagnosis.evidence.front().text;
  // The real binary, text and JSON: no escape byte, BEL or C1 CSI in what it prints.
  const std::string dir = pftest::scratch_dir("logs-issue19-escapes");
  {
    std::ofstream(dir + "/engine.log", std::ios::binary) << log;
  }
  for (const std::string& flags : {"", " --json"}) {
    const auto r = run("logs " + dir + "/engine.log" + flags);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("NPU out of memory"), std::string::npos) << r.out;
    EXPECT_TRUE(clean(r.out)) << r.out;
    EXPECT_EQ(r.out.find("\\u001b"), std::string::npos) << r.out;  // nor escaped into the JSON
  }
}

// Issue 15: a log's own DP / EP / speculative arguments are read back, from the command line (vllm-ascend #5993)
// and from the non-default args dict and the config dump (the club-3090 and 2x3090 runs).
TEST(EngineLog, Issue15_DataParallelExpertParallelAndSpeculativeArgs) {
  const std::string cmd =
      "vllm serve DeepSeek-V3.1-w8a8-mtp-QuaRot --data-parallel-size 4 --data-parallel-size-local 2 --tensor-parallel-size 4 --quantization ascend "
      "--enable-expert-parallel --max-num-seqs 16 --speculative-config '{\"num_speculative_tokens\": 3, \"method\": \"mtp\"}' --gpu-memory-utilization 0.92\n";
  const auto a = lg::parse_engine_log(cmd, sigs()).args;
  ASSERT_TRUE(a.data_parallel_size && a.data_parallel_size_local && a.enable_expert_parallel && a.speculative_config && a.gpu_memory_utilization);
  EXPECT_EQ(a.data_parallel_size->value, 4);
  EXPECT_EQ(a.data_parallel_size_local->value, 2);
  EXPECT_TRUE(a.enable_expert_parallel->value);
  EXPECT_EQ(nlohmann::json::parse(a.speculative_config->value), nlohmann::json::parse(R"({"num_speculative_tokens": 3, "method": "mtp"})"));
  EXPECT_DOUBLE_EQ(a.gpu_memory_utilization->value, 0.92);  // the flag after the JSON is still read

  const std::string dict =
      "(APIServer pid=1) INFO [utils.py:253] non-default args: {'model': 'qwen3.6-27b', 'tensor_parallel_size': 2, 'data_parallel_size': 2, "
      "'enable_expert_parallel': True, 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}}\n";
  const auto b = lg::parse_engine_log(dict, sigs()).args;
  ASSERT_TRUE(b.data_parallel_size && b.enable_expert_parallel && b.speculative_config);
  EXPECT_EQ(b.data_parallel_size->value, 2);
  EXPECT_EQ(nlohmann::json::parse(b.speculative_config->value)["num_speculative_tokens"], 3);

  const std::string dump = "INFO Initializing a V1 LLM engine with config: model='x', speculative_config=SpeculativeConfig(method='mtp', "
                           "model='/workspace/models/QuantTrio/Qwen3.6-27B-AWQ', num_spec_tokens=1), tensor_parallel_size=2\n";
  const auto c = lg::parse_engine_log(dump, sigs()).args;
  ASSERT_TRUE(c.speculative_config);
  EXPECT_EQ(nlohmann::json::parse(c.speculative_config->value), nlohmann::json::parse(R"({"method": "mtp", "num_speculative_tokens": 1})"));
  const auto none = lg::parse_engine_log("vllm serve m --no-enable-expert-parallel -tp 2\n", sigs()).args;
  ASSERT_TRUE(none.enable_expert_parallel);
  EXPECT_FALSE(none.enable_expert_parallel->value);
}

// Issue 15: the engine's environment as a launch log shows it (vllm-ascend #5993 exports HCCL_BUFFSIZE=200 before
// `vllm serve`; the nightly CI prints HCCL_BUFFSIZE: 1024 in its YAML, not an assignment, so nothing is read from
// that form). First assignment wins; a longer name that ends in the same letters is not the variable.
TEST(EngineLog, Issue15_EnvironmentAssignmentsAreRead) {
  const std::string text =
      "export MY_HCCL_BUFFSIZE=7\n"
      "export HCCL_BUFFSIZE=200\n"
      "VLLM_ASCEND_ENABLE_FLASHCOMM1=1 HCCL_BUFFSIZE=\"1024\" vllm serve /models/DeepSeek-V3.1 --enable-expert-parallel\n"
      "  HCCL_BUFFSIZE: 512\n"
      "export VLLM_ASCEND_ENABLE_MLAPO=1\n";
  const auto log = lg::parse_engine_log(text, sigs());
  ASSERT_TRUE(log.args.hccl_buffsize.has_value());
  EXPECT_DOUBLE_EQ(log.args.hccl_buffsize->value, 200.0);
  EXPECT_EQ(log.args.hccl_buffsize->line, 2);
  ASSERT_TRUE(log.args.flashcomm1.has_value());
  EXPECT_TRUE(log.args.flashcomm1->value);
  EXPECT_EQ(log.args.flashcomm1->line, 3);
  // Issue 15 (dsv32): the MLAPO switch of the SFA / MLA layers.
  ASSERT_TRUE(log.args.mlapo.has_value());
  EXPECT_TRUE(log.args.mlapo->value);
  EXPECT_EQ(log.args.mlapo->line, 5);
  const auto none = lg::parse_engine_log("HCCL_BUFFSIZE: 512\nexport HCCL_BUFFSIZE=99999999999\n", sigs());
  EXPECT_FALSE(none.args.hccl_buffsize.has_value());
  // Issue 15 (ev): the environment as vllm-ascend's nightly multi-node runner prints it, a Python dict (gDS job log
  // 2026-03-04, "[INFO] Node 0 envs: {...}"); a longer key ending in the same letters and a non-numeric value are not read.
  const auto dict = lg::parse_engine_log(
      "[2026-03-04 18:34:46] [INFO] Node 0 envs: {'MY_HCCL_BUFFSIZE': '7', 'VLLM_ASCEND_ENABLE_MLAPO': 'on', 'HCCL_BUFFSIZE': '1024', "
      "'VLLM_ASCEND_ENABLE_FLASHCOMM1': '1'}\n",
      sigs());
  ASSERT_TRUE(dict.args.hccl_buffsize.has_value());
  EXPECT_DOUBLE_EQ(dict.args.hccl_buffsize->value, 1024.0);
  ASSERT_TRUE(dict.args.flashcomm1.has_value());
  EXPECT_TRUE(dict.args.flashcomm1->value);
  EXPECT_FALSE(dict.args.mlapo.has_value());
  const auto json_form = lg::parse_engine_log("env: {\"HCCL_BUFFSIZE\": 200}\n", sigs());
  ASSERT_TRUE(json_form.args.hccl_buffsize.has_value());
  EXPECT_DOUBLE_EQ(json_form.args.hccl_buffsize->value, 200.0);
}

// Issue 15: the sampling path vLLM's TopKTopPSampler printed (dennislee22/vLLM-benchmarking logs, vLLM 0.10.1.1: the
// same version printed either line, as flashinfer-python is an optional extra there), read back as "sampler"; the
// printed line wins over the environment.
TEST(EngineLog, Issue15_SamplerPathIsRead) {
  const auto fi = lg::parse_engine_log(
      "(EngineCore_0 pid=1812) INFO 09-04 01:02:57 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n", sigs());
  ASSERT_TRUE(fi.args.flashinfer_sampler.has_value());
  EXPECT_TRUE(fi.args.flashinfer_sampler->value);
  EXPECT_EQ(fi.args.flashinfer_sampler->line, 1);
  const auto native = lg::parse_engine_log(
      "export VLLM_USE_FLASHINFER_SAMPLER=1\n"
      "(RayWorkerWrapper pid=1384) WARNING 09-03 04:38:28 [topk_topp_sampler.py:61] FlashInfer is not available. Falling back to the "
      "PyTorch-native implementation of top-p & top-k sampling. For the best performance, please install FlashInfer.\n",
      sigs());
  ASSERT_TRUE(native.args.flashinfer_sampler.has_value());
  EXPECT_FALSE(native.args.flashinfer_sampler->value);
  EXPECT_EQ(native.args.flashinfer_sampler->line, 2);
  const auto env = lg::parse_engine_log("VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve m\n", sigs());
  ASSERT_TRUE(env.args.flashinfer_sampler.has_value());
  EXPECT_FALSE(env.args.flashinfer_sampler->value);
  EXPECT_FALSE(lg::parse_engine_log("vllm serve m\n", sigs()).args.flashinfer_sampler.has_value());
}

// Issue 15: --emit-case writes the path as the case field validate reads ("sampler").
TEST(LogsCli, Issue15_EmitCaseWritesTheSampler) {
  const std::string log = ::testing::TempDir() + "/sampler.log";
  std::ofstream(log) << "INFO 09-04 01:02:21 [api_server.py:1805] vLLM API server version 0.10.1.1\n"
                     << "vllm serve Qwen/Qwen2.5-7B --max-model-len 16384 --gpu-memory-utilization 0.25\n"
                     << "(EngineCore_0 pid=1812) INFO 09-04 01:02:57 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n"
                     << "(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [gpu_worker.py:276] Available KV cache memory: 5.01 GiB\n";
  const auto r = run("logs " + log + " --device A100-80G-SXM --models " + pftest::shared_path("models") + " --emit-case");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["sampler"], "flashinfer");
}

// Issue 15: the capture settings a log states. vLLM 0.23's non-default args print the whole CompilationConfig as a
// Python dict (the p2p-bench 4 x 5060 Ti line, shortened: unset fields None, the mode an enum repr); only the set
// capture key is kept. The attention backend is the one the platform printed it selected (not the ViT's).
TEST(EngineLog, Issue15_ReadsCompilationConfigAndAttentionBackend) {
  const std::string text =
      "(APIServer pid=1) INFO 06-23 23:02:36 [api_utils.py:273] non-default args: {'model': '/data/models/Qwen/Qwen3.6-27B-FP8', 'max_num_seqs': 4, "
      "'speculative_config': {'method': 'qwen3_next_mtp', 'num_speculative_tokens': 3}, 'compilation_config': {'mode': <CompilationMode.VLLM_COMPILE: 3>, "
      "'debug_dump_path': None, 'cudagraph_mode': None, 'cudagraph_num_of_warmups': 0, 'cudagraph_capture_sizes': None, 'pass_config': {}, "
      "'max_cudagraph_capture_size': 16, 'local_cache_dir': None}, 'attention_backend': 'flashinfer'}\n"
      "(Worker_TP0 pid=2) INFO 06-23 23:03:08 [cuda.py:433] Using backend AttentionBackendEnum.FLASH_ATTN for vit attention\n"
      "(Worker_TP0 pid=2) INFO 06-23 23:03:08 [cuda.py:318] Using AttentionBackendEnum.FLASHINFER backend.\n";
  const auto log = lg::parse_engine_log(text, sigs());
  ASSERT_TRUE(log.args.compilation_config.has_value());
  EXPECT_EQ(log.args.compilation_config->value, R"({"max_cudagraph_capture_size": 16})");
  EXPECT_EQ(log.args.compilation_config->line, 1);
  ASSERT_TRUE(log.args.attention_backend.has_value());
  EXPECT_EQ(log.args.attention_backend->value, "FLASHINFER");
  EXPECT_EQ(log.args.attention_backend->line, 3);  // the printed selection

  // A command line: -O3, the dotted forms merged, --attention-backend; an explicit list and mode.
  const std::string cmd =
      "$ vllm serve Qwen/Qwen3-8B -O3 -cc.cudagraph_mode=FULL_DECODE_ONLY --compilation-config.cudagraph_capture_sizes [1,2,4,8] "
      "--attention-backend flash_attn\n";
  const auto c = lg::parse_engine_log(cmd, sigs());
  ASSERT_TRUE(c.args.optimization_level.has_value());
  EXPECT_EQ(c.args.optimization_level->value, 3);
  ASSERT_TRUE(c.args.compilation_config.has_value());
  EXPECT_EQ(c.args.compilation_config->value, R"({"cudagraph_capture_sizes": [1, 2, 4, 8], "cudagraph_mode": "FULL_DECODE_ONLY"})");
  ASSERT_TRUE(c.args.attention_backend.has_value());
  EXPECT_EQ(c.args.attention_backend->value, "FLASH_ATTN");
  // The flag's JSON with an enum repr, as the engine config dump writes a set mode.
  const auto e = lg::parse_engine_log("non-default args: {'compilation_config': {'cudagraph_mode': <CUDAGraphMode.PIECEWISE: 1>}}\n", sigs());
  ASSERT_TRUE(e.args.compilation_config.has_value());
  EXPECT_EQ(e.args.compilation_config->value, R"({"cudagraph_mode": "PIECEWISE"})");
}

// The backend an environment variable names: VLLM_ATTENTION_BACKEND=NAME where the variable's name starts a word (an
// export, an env prefix of the command), the value quoted or not; a longer variable ending in the same name is not it.
TEST(EngineLog, Issue15_AttentionBackendFromTheEnvironment) {
  auto backend = [](const std::string& text) {
    const auto log = lg::parse_engine_log(text, sigs());
    return log.args.attention_backend ? log.args.attention_backend->value : std::string("-");
  };
  EXPECT_EQ(backend("export VLLM_ATTENTION_BACKEND=TRITON_ATTN\n"), "TRITON_ATTN");
  EXPECT_EQ(backend("VLLM_ATTENTION_BACKEND='flashinfer' vllm serve Qwen/Qwen3-8B\n"), "FLASHINFER");
  EXPECT_EQ(backend("export MY_VLLM_ATTENTION_BACKEND=TRITON_ATTN\n"), "-");
  EXPECT_EQ(backend("export VLLM_ATTENTION_BACKEND=\n"), "-");
  EXPECT_EQ(backend("MY_VLLM_ATTENTION_BACKEND=X VLLM_ATTENTION_BACKEND=FLASH_ATTN vllm serve m\n"), "FLASH_ATTN");
}

// Issue 15 (evid24): --moe-backend as a command line gives it (vLLM #49476's flags, '=' form, any case) and as the
// non-default args print it, normalized as vLLM's KernelConfig does (lower case, '-' read as '_').
TEST(EngineLog, Issue15_Evid24_ReadsMoeBackend) {
  const auto c = lg::parse_engine_log(
      "$ vllm serve nvidia/Qwen3.6-35B-A3B-NVFP4 --trust-remote-code --moe-backend=FlashInfer-B12X --kv-cache-dtype=fp8 --max-model-len=180224\n", sigs());
  ASSERT_TRUE(c.args.moe_backend.has_value());
  EXPECT_EQ(c.args.moe_backend->value, "flashinfer_b12x");
  const auto a = lg::parse_engine_log("(APIServer pid=1) INFO 08-26 10:00:00 [api_utils.py:273] non-default args: {'model': 'nvidia/Qwen3.6-35B-A3B-NVFP4', "
                                      "'moe_backend': 'marlin', 'max_num_seqs': 8}\n",
                                      sigs());
  ASSERT_TRUE(a.args.moe_backend.has_value());
  EXPECT_EQ(a.args.moe_backend->value, "marlin");
  EXPECT_EQ(a.args.moe_backend->line, 1);
  EXPECT_FALSE(lg::parse_engine_log("$ vllm serve Qwen/Qwen3-8B --max-model-len 4096\n", sigs()).args.moe_backend.has_value());
}

// Issue 15: the engine's own per-term memory lines, read from real printed lines kept under tests/logs/excerpts (each
// file names its source URL on its first lines). Every expected figure is read by hand off the excerpt's text; -1
// marks a term the excerpt does not print. The line numbers count the two or three "# source" lines at the top.
TEST(EngineLog, Issue15_PerTermMemoryLinesFromRealExcerpts) {
  const std::string dir = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/excerpts/";
  const struct {
    const char* file;
    double weights, activation, non_torch, graph, kv_reserve, requested;
    int64_t summary_line, requested_line, graph_line;
  } cases[] = {
      // vLLM-Ascend (PR #8289's own test): "Desired ... (0.9, 55.14 GiB). Actual usage: 1.14 GiB for weights, 0.22 GiB for
      // peak activation, 0.13 GiB for non-torch memory, 0.04 GiB for NPU graph memory." (the quote ends before the KV figure)
      {"vllm_ascend_pr8289.log", 1.14, 0.22, 0.13, 0.04, -1, 55.14, 3, 3, 3},
      // vLLM-Ascend 310P (issue #10122): "(0.8, 34.59 GiB). Actual usage: 18.8 ..., 1.71 ..., 1.05 ..., 0.0 GiB for NPU graph
      // memory. ... Current KV cache memory: 5.77 GiB."
      {"vllm_ascend_issue10122.log", 18.8, 1.71, 1.05, 0.0, 5.77, 34.59, 3, 3, 3},
      // vLLM V0: "= 63.35GiB" (line 3), "model weights take 1.12GiB; non_torch_memory takes 0.16GiB; PyTorch activation peak
      // memory takes 0.23GiB; the rest of the memory reserved for KV Cache is 61.84GiB." (line 4), graph 0.13 GiB (line 7)
      {"vllm_v0_mellea_pr416.log", 1.12, 0.23, 0.16, 0.13, 61.84, 63.35, 4, 3, 7},
      {"vllm_v0_pr14447.log", 21.21, 0.37, 0.20, -1, 1.57, 23.35, 4, 3, 0},
      {"vllm_v0_pr12126.log", 19.86, 36.63, 0.16, -1, 14.65, 71.29, 4, 3, 0},
  };
  auto expect = [](const char* file, const char* what, const std::optional<lg::Logged<double>>& got, double value, int64_t line) {
    if (value < 0) {
      EXPECT_FALSE(got) << file << ": " << what;
      return;
    }
    ASSERT_TRUE(got) << file << ": " << what;
    EXPECT_DOUBLE_EQ(got->value, value) << file << ": " << what;
    EXPECT_EQ(got->line, line) << file << ": " << what;
  };
  for (const auto& c : cases) {
    const auto text = read(dir + c.file);
    ASSERT_FALSE(text.empty()) << c.file;
    const auto parsed = lg::parse_engine_log(text, sigs());
    // A healthy start: the "Free memory on device (...) on startup. Desired ..." that opens the Ascend line is not the
    // free < requested error ("... on startup is less than desired GPU memory utilization ...").
    EXPECT_EQ(parsed.diagnosis.class_id, "") << c.file;
    const auto& p = parsed.printed;
    expect(c.file, "weights", p.weights_gib, c.weights, c.summary_line);
    expect(c.file, "peak activation", p.activation_peak_gib, c.activation, c.summary_line);
    expect(c.file, "non-torch", p.non_torch_gib, c.non_torch, c.summary_line);
    expect(c.file, "graph", p.graph_gib, c.graph, c.graph_line);
    expect(c.file, "KV reserve", p.kv_reserve_gib, c.kv_reserve, c.summary_line);
    expect(c.file, "requested", p.requested_gib, c.requested, c.requested_line);
  }
  // The V0 summary is one identity (vllm/worker/worker.py: available = total x util - weights - non-torch - torch peak),
  // so the four terms read back must close on the requested figure within the four 0.005 GiB roundings of %.2f.
  for (const char* file : {"vllm_v0_mellea_pr416.log", "vllm_v0_pr14447.log", "vllm_v0_pr12126.log"}) {
    const auto p = lg::parse_engine_log(read(dir + file), sigs()).printed;
    ASSERT_TRUE(p.requested_gib && p.weights_gib && p.non_torch_gib && p.activation_peak_gib && p.kv_reserve_gib) << file;
    EXPECT_NEAR(p.requested_gib->value - p.weights_gib->value - p.non_torch_gib->value - p.activation_peak_gib->value, p.kv_reserve_gib->value, 0.02) << file;
  }
  // An earlier "Model loading took" line keeps the weights figure (set once, the first printed wins).
  const auto both = lg::parse_engine_log("INFO [model_runner.py:1115] Model loading took 0.5151 GiB and 3.479114 seconds\n" + read(dir + "vllm_v0_pr14447.log"), sigs());
  ASSERT_TRUE(both.printed.weights_gib);
  EXPECT_DOUBLE_EQ(both.printed.weights_gib->value, 0.5151);
  EXPECT_EQ(both.printed.weights_gib->line, 1);
}

// Malformed figures in the summary lines (no digits, two points, an exponent, a digit run past a double) are skipped,
// never half read; the same text is in the engine-log fuzz corpus.
TEST(EngineLog, Issue15_MalformedMemorySummaryFiguresAreSkipped) {
  const auto text = read(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fuzz/corpus/engine_log/memory_summary_malformed.log");
  ASSERT_FALSE(text.empty());
  const auto p = lg::parse_engine_log(text, sigs()).printed;
  EXPECT_FALSE(p.weights_gib);
  EXPECT_FALSE(p.activation_peak_gib);
  EXPECT_FALSE(p.non_torch_gib);
  EXPECT_FALSE(p.graph_gib);  // "1e999 GiB": not the 999 after the 'e'
  EXPECT_FALSE(p.kv_reserve_gib);
  EXPECT_FALSE(p.requested_gib);
}

// End to end: PR #8289's "Actual usage" line under a deployment header this test writes (the PR does not name its model;
// Qwen3-0.6B on a 910B3 at util 0.9 is this test's choice), through `logs --json`. Printed figures are the line's; the
// predicted ones are checked by the relation the fit must hold on vLLM-Ascend 0.23: the KV budget is requested - weights
// - peak activation - non-torch, the NPU graph captured after KV sizing and not subtracted (docs/logs.md; vllm_ascend/
// worker/worker.py at v0.23.0: available_kv_cache_memory_bytes = requested_memory - non_kv_cache_memory, with
// non_kv_cache_memory = non_torch_increase + torch_peak_increase + weights_memory).
TEST(LogsCli, Issue15_PerTermRowsPrintedVersusPredicted) {
  const std::string log = (std::filesystem::temp_directory_path() / "preflight_issue15_actual_usage.log").string();
  {
    std::ofstream out(log);
    out << "INFO 04-15 06:29:00 [__init__.py:39] Platform plugin ascend is activated\n"
           "INFO 04-15 06:29:01 [api_server.py:1805] vLLM API server version 0.23.0\n"
           "INFO 04-15 06:29:01 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-0.6B', 'gpu_memory_utilization': 0.9}\n"
        << read(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/excerpts/vllm_ascend_pr8289.log");
  }
  const auto r = run("logs " + log + " --device 910B3 --models " + pftest::shared_path("models") + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("fit")) << r.out;
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : j["printed_vs_predicted"]) rows[row["what"].get<std::string>()] = row;
  // The excerpt's two "# source" lines follow the three header lines: the usage line is line 6.
  const struct {
    const char* what;
    double printed;
  } printed[] = {{"weights per device (GiB)", 1.14}, {"requested memory (GiB)", 55.14}, {"peak activation (GiB)", 0.22},
                 {"non-torch memory (GiB)", 0.13}, {"graph memory (GiB)", 0.04}};
  for (const auto& p : printed) {
    ASSERT_TRUE(rows.count(p.what)) << p.what << "\n" << r.out;
    EXPECT_DOUBLE_EQ(rows[p.what]["printed"].get<double>(), p.printed) << p.what;
    EXPECT_EQ(rows[p.what]["line"].get<int64_t>(), 6) << p.what;
    ASSERT_TRUE(rows[p.what]["predicted"].is_number()) << p.what;
    EXPECT_TRUE(rows[p.what]["note"].is_null()) << p.what;  // a dense model on one card: no term is summed
  }
  auto predicted = [&](const char* what) { return rows[what]["predicted"].get<double>(); };
  ASSERT_TRUE(rows.count("available KV cache (GiB)"));
  const double budget = predicted("requested memory (GiB)") - predicted("weights per device (GiB)") - predicted("peak activation (GiB)") -
                        predicted("non-torch memory (GiB)");
  EXPECT_NEAR(predicted("available KV cache (GiB)"), budget, 2e-9);  // the fit floors to whole bytes
  EXPECT_GT(predicted("graph memory (GiB)"), 0.0);                    // graph mode: a graph is captured, outside the budget
  EXPECT_GT(predicted("peak activation (GiB)"), 0.0);
  EXPECT_GT(predicted("non-torch memory (GiB)"), 0.0);
  const auto text = run("logs " + log + " --device 910B3 --models " + pftest::shared_path("models"));
  EXPECT_NE(text.out.find("peak activation (GiB)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("non-torch memory (GiB)"), std::string::npos) << text.out;
  std::filesystem::remove(log);
}

// Issue 15 (misc21): `logs` resolves the engine as `validate` resolves the case `logs --emit-case` writes (one step,
// deploy::recorded_engine_input): for every log fixture that gets a prediction, the same profile. Before, logs took the
// printed version alone while validate also dated an undated case by its notes and source: the version lines of
// synthetic/none.1.log removed and the file named qwen3-vllm-v0.9.1-run.log, logs assumed the newest vLLM profile
// (vllm@0.28-0.30) and validate of its case took vllm@0.8-0.9.1, dated by the case notes (the file name they carry).
TEST(LogsCli, Misc21_LogsAndValidateOfItsCaseSelectOneProfile) {
  const std::string dir = pftest::scratch_dir("misc21-logs");
  auto profiles = [&](const std::string& log, const std::string& device) {
    const std::string models = " --models " + pftest::shared_path("models");
    const auto j = nlohmann::json::parse(pftest::run_cli("logs " + log + " --device " + device + models + " --json", {.with_stderr = false}).out,
                                         nullptr, false);
    const std::string cases = dir + "/case.jsonl";
    std::ofstream(cases) << pftest::run_cli("logs " + log + " --device " + device + models + " --emit-case", {.with_stderr = false}).out;
    const auto v = nlohmann::json::parse(run("validate " + cases + models + " --json").out, nullptr, false);
    const std::string logs_profile = j.contains("engine_resolution") ? j["engine_resolution"]["profile"].get<std::string>() : "";
    const std::string case_profile = v.contains("rows") && !v["rows"].empty() ? v["rows"][0]["engine"].get<std::string>() : "";
    return std::pair{logs_profile, case_profile};
  };
  int compared = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs")) {
    if (entry.path().extension() != ".log") continue;
    const std::string text = pftest::read_all(entry.path().string());
    const std::string device = text.find("ascend") != std::string::npos || text.find("Ascend") != std::string::npos ? "910B3" : "H100";
    const auto [logs_profile, case_profile] = profiles(entry.path().string(), device);
    if (logs_profile.empty()) continue;  // no prediction for this log (no model or no memory line)
    EXPECT_EQ(logs_profile, case_profile) << entry.path();
    ++compared;
  }
  EXPECT_GE(compared, 5);
  // A log that prints no version, in a file whose name states one.
  std::string undated;
  std::istringstream lines(pftest::read_all(k_synthetic + "/none.1.log"));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("API server version") != std::string::npos) continue;
    if (const auto at = line.find("(v0.10.1.1) "); at != std::string::npos) line.erase(at, 12);
    undated += line + "\n";
  }
  ASSERT_EQ(undated.find("0.10.1"), std::string::npos);
  const std::string named = dir + "/qwen3-vllm-v0.9.1-run.log";
  std::ofstream(named) << undated;
  const auto [logs_profile, case_profile] = profiles(named, "H100");
  EXPECT_EQ(logs_profile, "vllm@0.8-0.9.1");
  EXPECT_EQ(case_profile, "vllm@0.8-0.9.1");
}

// Issue 15 (ux28): a log excerpt without its engine-args line (vllm-ascend #10122's quoted worker line) gives a case
// whose model is null. --emit-case said nothing about it, and validate skipped the case as "model not resolvable
// (tried )". The note goes to stderr (stdout stays one JSON line) and validate's skip says what is missing.
TEST(LogsCli, Issue15_EmitCaseWithoutAModelSaysSoAndValidateNamesWhy) {
  const std::string log = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/excerpts/vllm_ascend_issue10122.log";
  const auto out = pftest::run_cli("logs " + log + " --emit-case", {.with_stderr = false});
  ASSERT_EQ(out.code, 0) << out.out;
  const auto j = nlohmann::json::parse(out.out);
  EXPECT_TRUE(j["model"].is_null());
  EXPECT_EQ(j["available_kv_gib"], 5.77);  // the line's own "Current KV cache memory: 5.77 GiB"
  const auto both = run("logs " + log + " --emit-case");
  EXPECT_NE(both.out.find("names no model (no engine-args or config line): the case's \"model\" is null"), std::string::npos) << both.out;

  const std::string file = ::testing::TempDir() + "/ux28_no_model.jsonl";
  std::ofstream(file) << out.out;
  const auto v = pftest::run_cli("validate " + file + " --json", {.with_stderr = false});
  ASSERT_EQ(v.code, 0) << v.out;
  const auto report = nlohmann::json::parse(v.out);
  EXPECT_NE(report.dump().find("no model named: the case's model and config_hint are null or empty"), std::string::npos) << report.dump().substr(0, 1500);
  EXPECT_EQ(report.dump().find("(tried )"), std::string::npos);
}

// Issue 16 (ux28): the fixes `logs` prints are pasted as they are. missing_fused_op told the user to disable the
// qkv_rmsnorm_rope fusion with --additional-config '{"ascend_fusion_config": {"fuse_qknorm_rope": false}}', the seed's
// spelling, which vllm-ascend 0.23-0.25 ignores (AscendFusionConfig takes unknown keys into **kwargs; the pass manager
// reads additional_config['ascend_compilation_config']['fuse_qknorm_rope'], data/engines/launch.json qknorm-rope-fusion-a2,
// which plan's start commands already used). graph_stream_exhaustion named "cudagraph_capture_sizes" and
// "FULL_DECODE_ONLY" without the flag that sets them. Every JSON argument of a fix must parse, and the graph keys must be
// vLLM CompilationConfig's own (cudagraph_capture_sizes, cudagraph_mode).
TEST(LogsCli, Issue16_FixesCarryFlagsInTheSpellingTheEngineReads) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/data/doctor/error_signatures.json");
  const auto catalog = nlohmann::json::parse(in);
  int json_args = 0;
  for (const auto& c : catalog["classes"]) {
    const std::string fix = c.value("fix", "");
    for (const std::string flag : {"--additional-config '", "--compilation-config '"}) {
      for (size_t at = fix.find(flag); at != std::string::npos; at = fix.find(flag, at + 1)) {
        const size_t open = at + flag.size(), close = fix.find('\'', open);
        ASSERT_NE(close, std::string::npos) << c["id"];
        const auto arg = nlohmann::json::parse(fix.substr(open, close - open), nullptr, false);
        ASSERT_FALSE(arg.is_discarded()) << c["id"] << ": " << fix.substr(open, close - open);
        ++json_args;
        if (flag == "--additional-config '") EXPECT_FALSE(arg.contains("ascend_fusion_config") && arg["ascend_fusion_config"].contains("fuse_qknorm_rope")) << c["id"];
        if (flag == "--compilation-config '")
          for (const auto& [key, value] : arg.items()) EXPECT_TRUE(key == "cudagraph_capture_sizes" || key == "cudagraph_mode") << c["id"] << ": " << key;
      }
    }
  }
  EXPECT_GE(json_args, 4);
  const auto fused = run("logs " + k_synthetic + "/missing_fused_op.1.log");
  EXPECT_NE(fused.out.find(R"(--additional-config '{"ascend_compilation_config": {"fuse_qknorm_rope": false}}')"), std::string::npos) << fused.out;
  const auto streams = run("logs " + k_synthetic + "/graph_stream_exhaustion.1.log");
  EXPECT_NE(streams.out.find(R"(--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}')"), std::string::npos) << streams.out;
}

// Issue 16 (ux28): `logs --help` said "exit: 0 started or classified, 1 failed with a known cause", but a classified
// failure exits 1 and a failure no signature matches ("unknown") exits 1 too. The help now says what the codes are,
// and the codes are checked against it: a log that started 0, a known and an unknown failure 1.
TEST(LogsCli, Issue16_ExitCodesAreWhatHelpSays) {
  const auto help = run("logs --help");
  EXPECT_NE(help.out.find("exit: 0 no failure in the log"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("1 the log shows a failure (its root cause\n      named, or \"unknown\" when no signature matches)"), std::string::npos) << help.out;
  EXPECT_EQ(run("logs " + k_synthetic + "/none.1.log").code, 0);
  EXPECT_EQ(run("logs " + k_synthetic + "/graph_stream_exhaustion.1.log").code, 1);
  const auto unknown = run("logs " + k_synthetic + "/unknown.1.log");
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.out.find("(unknown)"), std::string::npos) << unknown.out;
}

// fuzz_engine_log (session 28): a count past what an int64 holds ("Maximum concurrency for" a 26-digit length, a 30-digit KV
// size) was cast to int64_t out of range (UBSan float-cast-overflow); a fractional or negative count was truncated. Such
// a count is not read; the well-formed lines beside it are.
TEST(EngineLog, Issue19_CountsOutOfRangeAreNotRead) {
  const std::string text =
      "INFO [kv_cache_utils.py:1087] GPU KV cache size: 123456789012345678901234567890 tokens\n"
      "INFO [kv_cache_utils.py:1091] Maximum concurrency for 99999999999999999999999999 tokens per request: 3.00x\n"
      "INFO [gpu_model_runner.py:2904] Encoder cache will be initialized with a budget of -16384 tokens, and profiled with 1.5 image items of the maximum feature size.\n"
      "INFO [gpu_worker.py:298] Available KV cache memory: 12.50 GiB\n";
  const auto log = lg::parse_engine_log(text, sigs());
  EXPECT_FALSE(log.printed.kv_cache_tokens.has_value());
  EXPECT_FALSE(log.printed.concurrency_len.has_value());
  EXPECT_FALSE(log.printed.max_concurrency.has_value());
  EXPECT_FALSE(log.printed.encoder_budget_tokens.has_value());
  EXPECT_FALSE(log.printed.encoder_items.has_value());
  ASSERT_TRUE(log.printed.available_kv_gib.has_value());
  EXPECT_DOUBLE_EQ(log.printed.available_kv_gib->value, 12.5);
  const auto ok = lg::parse_engine_log("INFO GPU KV cache size: 1,234,567 tokens\nINFO Maximum concurrency for 32,768 tokens per request: 37.68x\n", sigs());
  ASSERT_TRUE(ok.printed.kv_cache_tokens && ok.printed.concurrency_len && ok.printed.max_concurrency);
  EXPECT_EQ(ok.printed.kv_cache_tokens->value, 1234567);
  EXPECT_EQ(ok.printed.concurrency_len->value, 32768);
  EXPECT_DOUBLE_EQ(ok.printed.max_concurrency->value, 37.68);
}

// Issue 15 (evid29): an error the log shows only after "Application startup complete" is a runtime failure, not a
// start-up one; the case --emit-case writes for it started (fits true, no failure), while `logs` still reports the error.
// The lines are github.com/NnamdiOdozi/mlops-assignment logs/vllm.log (commit 0d2e919, lines 9-115 and 7178-7276):
// vLLM 0.22.1 came up on an H100 and, about an hour later, refused a request longer than max_model_len.
TEST(LogsCli, Issue15_EmitCaseFailureAfterStartUpIsNotAStartUpFailure) {
  const std::string dir = ::testing::TempDir();
  const std::string started = "(APIServer pid=1) INFO:     Application startup complete.\n";
  const std::string head =
      "(APIServer pid=1) INFO 06-18 09:16:00 [utils.py:278] non-default args: {'model_tag': 'Qwen/Qwen3-30B-A3B-Instruct-2507', 'host': "
      "'0.0.0.0', 'model': 'Qwen/Qwen3-30B-A3B-Instruct-2507', 'dtype': 'bfloat16', 'max_model_len': 8192, 'quantization': 'fp8', "
      "'served_model_name': ['Qwen/Qwen3-30B-A3B-Instruct-2507'], 'enable_prefix_caching': True, 'max_num_batched_tokens': 8192, 'max_num_seqs': 64}\n"
      "(EngineCore pid=203) INFO 06-18 09:26:25 [gpu_model_runner.py:5132] Model loading took 29.08 GiB memory and 596.567233 seconds\n"
      "(EngineCore pid=203) INFO 06-18 09:27:30 [gpu_worker.py:466] Available KV cache memory: 42.54 GiB\n"
      "(EngineCore pid=203) INFO 06-18 09:27:30 [kv_cache_utils.py:1733] GPU KV cache size: 464,656 tokens\n"
      "(EngineCore pid=203) INFO 06-18 09:27:30 [kv_cache_utils.py:1734] Maximum concurrency for 8,192 tokens per request: 56.72x\n";
  const std::string request_error =
      "(APIServer pid=1) ERROR:    Exception in ASGI application\n"
      "(APIServer pid=1) Traceback (most recent call last):\n"
      "(APIServer pid=1)   File \"/usr/local/lib/python3.12/dist-packages/vllm/renderers/params.py\", line 428, in _token_len_check\n"
      "(APIServer pid=1)     raise VLLMValidationError(\n"
      "(APIServer pid=1) vllm.exceptions.VLLMValidationError: This model's maximum context length is 8192 tokens. However, you requested "
      "512 output tokens and your prompt contains at least 7681 input tokens, for a total of at least 8193 tokens. Please reduce the "
      "length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=7681)\n";
  const std::string after = dir + "/error_after_start.log";
  std::ofstream(after) << head << started << request_error;
  const auto r = run("logs " + after + " --emit-case");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fits"], true) << r.out;
  EXPECT_TRUE(j["failure"].is_null()) << r.out;
  EXPECT_EQ(j["available_kv_gib"], 42.54);
  EXPECT_NE(j["notes"].get<std::string>().find("started (line 6); a later failure (line 10)"), std::string::npos) << j["notes"];
  // (line 10: the first line of the traceback the classifier reads as the exception, "raise VLLMValidationError(".)
  // `logs` itself still names the error (exit 1): only the emitted case's start-up verdict changes.
  EXPECT_EQ(run("logs " + after).code, 1);
  // The same error with no start-up line before it is the start-up failure it was.
  const std::string before = dir + "/error_without_start.log";
  std::ofstream(before) << head << request_error;
  const auto b = nlohmann::json::parse(run("logs " + before + " --emit-case").out);
  EXPECT_EQ(b["fits"], false);
  EXPECT_EQ(b["failure"], "unknown");
}

// Issue 15 (evid29): a vLLM 0.10.0 start at TP 8 printed each worker's own "Available KV cache memory" and the engine
// core one "GPU KV cache size" / "Maximum concurrency" pair per worker KV config (github.com/DaisukeTakai/eval_dataset
// vllm_judge.log, commit 0577085: 35.74 / 35.65 / 36.12 GiB; 1,594,928 / 1,590,736 / 1,611,664 tokens; 48.67x / 48.55x /
// 49.18x); the engine sizes its pool by the smallest worker (unify_kv_cache_configs), so the smallest of each is the
// start's figure, where logs kept the first printed. A later start in the same file (another "Initializing a V1 LLM
// engine" line) never replaces the first start's figures, even with smaller ones.
TEST(EngineLog, Issue15_WorkersPrintedFiguresKeepTheSmallestOfOneStart) {
  const std::string start =
      "INFO 08-16 10:00:00 [core.py:74] Initializing a V1 LLM engine (v0.10.0) with config: model='Qwen3-235B-A22B-FP8'\n";
  const std::string workers =
      "(VllmWorker rank=0 pid=11) INFO 08-16 10:05:01 [gpu_worker.py:276] Available KV cache memory: 35.74 GiB\n"
      "(VllmWorker rank=3 pid=14) INFO 08-16 10:05:01 [gpu_worker.py:276] Available KV cache memory: 35.65 GiB\n"
      "(VllmWorker rank=5 pid=16) INFO 08-16 10:05:01 [gpu_worker.py:276] Available KV cache memory: 36.12 GiB\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:833] GPU KV cache size: 1,594,928 tokens\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:837] Maximum concurrency for 32,768 tokens per request: 48.67x\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:833] GPU KV cache size: 1,590,736 tokens\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:837] Maximum concurrency for 32,768 tokens per request: 48.55x\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:833] GPU KV cache size: 1,611,664 tokens\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:837] Maximum concurrency for 32,768 tokens per request: 49.18x\n";
  const auto log = lg::parse_engine_log(start + workers, sigs());
  ASSERT_TRUE(log.printed.available_kv_gib && log.printed.kv_cache_tokens && log.printed.max_concurrency);
  EXPECT_DOUBLE_EQ(log.printed.available_kv_gib->value, 35.65);
  EXPECT_EQ(log.printed.available_kv_gib->line, 3);
  EXPECT_EQ(log.printed.kv_cache_tokens->value, 1590736);
  EXPECT_EQ(log.printed.kv_cache_tokens->line, 7);
  EXPECT_DOUBLE_EQ(log.printed.max_concurrency->value, 48.55);
  // A second start (say at a lower utilization) with smaller figures: the first start's stand.
  const std::string again = start + "(VllmWorker rank=0 pid=21) INFO 08-16 11:00:00 [gpu_worker.py:276] Available KV cache memory: 20.00 GiB\n"
                                    "INFO 08-16 11:00:01 [kv_cache_utils.py:833] GPU KV cache size: 900,000 tokens\n";
  const auto twice = lg::parse_engine_log(start + workers + again, sigs());
  ASSERT_TRUE(twice.printed.available_kv_gib && twice.printed.kv_cache_tokens);
  EXPECT_DOUBLE_EQ(twice.printed.available_kv_gib->value, 35.65);
  EXPECT_EQ(twice.printed.kv_cache_tokens->value, 1590736);
}
