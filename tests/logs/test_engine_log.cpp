#include "engine_log_support.hpp"
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
using namespace pftest::enginelog;


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
  EXPECT_EQ(j["num_devices"], 32);  // TP 8 x DP 4, the deployment (issue 15 multinode32: validate refused 16, this node's)
  EXPECT_EQ(j["data_parallel_size_local"], 2);
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
