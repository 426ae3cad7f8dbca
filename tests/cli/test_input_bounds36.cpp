// Issue 19, session 36's hostile pass over the inputs sessions 33-35 added: ModelSlim descriptions read in linear time,
// engine-log figures no engine prints, GGUF files llama.cpp and gguf-py refuse, control characters in a model's path or
// GGUF architecture, a case's stage_devices, and --compilation-config integers past 2^63 - 1.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "base/json_util.hpp"
#include "model/gguf_reader.hpp"
#include "model/quant_scheme.hpp"

namespace {

using preflight::Json;

pftest::CliRun run_bounded36(const std::string& args) { return pftest::run_cli(args, {.env = "timeout 60"}); }

// GGUF v3 bytes written field by field: metadata (u32 numbers and strings, in the order given, repeats kept) and F32
// tensors laid out one after another, 32-byte aligned, as llama.cpp writes them.
struct GgufBytes36 {
  std::string kv, infos;
  uint64_t kv_count = 0, tensor_count = 0, data_bytes = 0;
  template <typename T>
  static void put(std::string& b, T v) { b.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  static void put_text(std::string& b, const std::string& s) { put(b, static_cast<uint64_t>(s.size())); b += s; }
  void text(const std::string& key, const std::string& value) { put_text(kv, key); put(kv, 8u); put_text(kv, value); ++kv_count; }
  void number(const std::string& key, uint32_t value) { put_text(kv, key); put(kv, 4u); put(kv, value); ++kv_count; }
  void tensor(const std::string& name, uint64_t rows, uint64_t cols) {
    put_text(infos, name);
    put(infos, 2u);
    put(infos, rows);
    put(infos, cols);
    put(infos, 0u);  // F32
    put(infos, data_bytes);
    data_bytes += (rows * cols * 4 + 31) / 32 * 32;
    ++tensor_count;
  }
  std::string bytes() const {
    std::string b;
    put(b, 0x46554747u);
    put(b, 3u);
    put(b, tensor_count);
    put(b, kv_count);
    b += kv + infos;
    b.resize((b.size() + 31) / 32 * 32 + data_bytes, '\0');
    return b;
  }
};

// A llama GGUF of 2 layers, hidden 64, 4 heads, 1,000 tokens, architecture `arch`.
GgufBytes36 small_llama36(const std::string& arch = "llama") {
  GgufBytes36 g;
  g.text("general.architecture", arch);
  g.number(arch + ".block_count", 2);
  g.number(arch + ".embedding_length", 64);
  g.number(arch + ".attention.head_count", 4);
  g.number(arch + ".context_length", 4096);
  g.number(arch + ".vocab_size", 1000);
  return g;
}

preflight::Expected<preflight::model::GgufFile> parse36(const GgufBytes36& g) {
  const std::string b = g.bytes();
  return preflight::model::parse_gguf(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "t.gguf");
}

}  // namespace

// Issue 19 (attack36): parse_modelslim_description kept each module once by scanning the modules kept so far, so a
// quant_model_description.json (a hub repository's, fetched with its config) of N distinct "<module>.weight" entries
// took N^2 / 4 string comparisons: 40,000 took 11 s, 80,000 (3.4 MB) 47 s, before fit sized anything. Each module is
// now kept through a hash set. 60,000 modules, half FLOAT (ignored), half W8A8: before, about 25 s; now well under 3 s
// even on a loaded machine. The result is the same: 30,000 ignored and 30,000 W8A8 modules, in file order.
TEST(InputBounds36, Issue19_ModelSlimDescriptionIsReadInLinearTime) {
  Json root = Json::object();
  root["model_quant_type"] = "W8A8";
  const int n = 60000;
  for (int i = 0; i < n; ++i) root["model.m" + std::to_string(i) + "x.down_proj.weight"] = i % 2 ? "W8A8" : "FLOAT";
  const auto start = std::chrono::steady_clock::now();
  const auto scheme = preflight::model::parse_modelslim_description(root, "quant_model_description.json");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(scheme) << scheme.error().message;
  EXPECT_LT(seconds, 3.0);
  EXPECT_EQ(scheme->ignore.size(), static_cast<size_t>(n / 2));
  EXPECT_EQ(scheme->module_formats.size(), static_cast<size_t>(n / 2));
  // A module listed twice (its .weight under two spellings that normalize alike) is still kept once.
  Json twice = Json::object();
  twice["model.layers.0.mlp.down_proj.weight"] = "W8A8";
  twice["model.layers.1.mlp.down_proj.weight"] = "W8A8";
  const auto once = preflight::model::parse_modelslim_description(twice, "q.json");
  ASSERT_TRUE(once) << once.error().message;
  EXPECT_EQ(once->module_formats.size(), 1u);
}

// Issue 19 (attack36): `logs` read a figure by taking its digits and stopping at the first other character, so
// "Available KV cache memory: 1e400 GiB" was 1.00 GiB, "1.2.3" 1.20, "0x10" 0.00 and 400 nines inf, each compared with
// the prediction and written by --emit-case, exit 0. vLLM prints these with %.2f / %d (gpu_worker.py
// 'Available KV cache memory: %.2f GiB', kv_cache_utils.py 'GPU KV cache size: {:,} tokens'), so such a line holds no
// figure of the engine's and is left out (available_kv_gib null); 30.00 is read as 30, and "56.21x" (the concurrency
// line's own suffix) still reads 56.21.
TEST(InputBounds36, Issue19_LogFiguresNoEnginePrintsAreNotRead) {
  const std::string dir = pftest::scratch_dir("ib36-logs");
  const std::string log = dir + "/v.log";
  const auto emitted = [&](const std::string& line) {
    std::ofstream(log) << "INFO 05-01 10:00:00 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', 'max_model_len': 8192}\n"
                       << "INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.19.0\n"
                       << line << "\n";
    const auto r = pftest::run_cli("logs " + log + " --device H100 --emit-case", {.env = "timeout 60", .with_stderr = false});
    EXPECT_EQ(r.code, 0) << line << "\n" << r.out.substr(0, 600);
    const Json j = Json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_object()) << r.out.substr(0, 600);
    return j.is_object() ? j : Json::object();
  };
  const std::string kv = "INFO 05-01 10:00:05 [gpu_worker.py:436] Available KV cache memory: ";
  for (const std::string& figure : std::vector<std::string>{"1e400", "1.5e3", "1.2.3", "0x10", std::string(400, '9')}) {
    const Json j = emitted(kv + figure + " GiB");
    EXPECT_TRUE(j.contains("available_kv_gib") && j["available_kv_gib"].is_null()) << figure << ": " << j.dump().substr(0, 300);
  }
  const Json plain = emitted(kv + "30.00 GiB");
  ASSERT_TRUE(plain["available_kv_gib"].is_number()) << plain.dump().substr(0, 300);
  EXPECT_DOUBLE_EQ(plain["available_kv_gib"].get<double>(), 30.0);
  const Json tokens = emitted("INFO 05-01 10:00:05 [kv_cache_utils.py:1] GPU KV cache size: 0x100 tokens");
  EXPECT_TRUE(tokens.contains("kv_cache_tokens") && tokens["kv_cache_tokens"].is_null()) << tokens.dump().substr(0, 300);
  const Json conc = emitted("INFO 05-01 10:00:05 [kv_cache_utils.py:1] Maximum concurrency for 8,192 tokens per request: 56.21x");
  ASSERT_TRUE(conc["max_concurrency"].is_number()) << conc.dump().substr(0, 300);
  EXPECT_DOUBLE_EQ(conc["max_concurrency"].get<double>(), 56.21);
  std::filesystem::remove_all(dir);
}

// Issue 19 (attack36): a GGUF listing a tensor twice had its bytes counted twice (1,000 copies of one 64 x 1,000 F32
// token_embd.weight, every copy within the file: "64,000,000 parameters", exit 0), and a metadata key listed twice kept
// its later value. llama.cpp's gguf_init_from_file_impl (ggml/src/gguf.cpp) refuses both ("duplicate key",
// "duplicate tensor name"), as gguf-py's GGUFReader, vLLM's GGUF reader, refuses the tensor ("Found duplicated tensor
// with name"). Bad input naming the file and the name, exit 2.
TEST(InputBounds36, Issue19_GgufNameListedTwiceIsRefused) {
  GgufBytes36 good = small_llama36();
  good.tensor("token_embd.weight", 64, 1000);
  good.tensor("output.weight", 64, 1000);
  ASSERT_TRUE(parse36(good)) << parse36(good).error().message;

  GgufBytes36 tensor_twice = small_llama36();
  tensor_twice.tensor("token_embd.weight", 64, 1000);
  tensor_twice.tensor("token_embd.weight", 64, 1000);
  const auto t = parse36(tensor_twice);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message,
            "t.gguf: tensor 'token_embd.weight' is listed twice (tensors 0 and 1): llama.cpp refuses the file (gguf_init_from_file: duplicate tensor name; "
            "gguf-py: Found duplicated tensor with name)");

  GgufBytes36 key_twice = small_llama36();
  key_twice.number("llama.block_count", 80);  // the 7th key (index 6); the first block_count is index 1
  key_twice.tensor("token_embd.weight", 64, 1000);
  const auto k = parse36(key_twice);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().message, "t.gguf: metadata key 'llama.block_count' is listed twice (metadata keys 1 and 6): llama.cpp refuses the file "
                               "(gguf_init_from_file: duplicate key)");

  // From the command line: exit 2.
  const std::string dir = pftest::scratch_dir("ib36-gguf");
  std::ofstream(dir + "/twice.gguf", std::ios::binary) << tensor_twice.bytes();
  const auto r = run_bounded36("inspect " + dir + "/twice.gguf");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("tensor 'token_embd.weight' is listed twice"), std::string::npos) << r.out.substr(0, 600);
  std::filesystem::remove_all(dir);
}

// Issue 19 (attack36): two printed names came to the terminal as they were: a GGUF's general.architecture
// ("ll\x1b[31mama" printed "(ll<ESC>[31mama, bf16)" in inspect) and a local model folder's own name (fit's and inspect's
// header, plan's rows, the start command and the Kubernetes manifest's comment, where a folder named with an escape
// sequence recoloured and retitled the terminal). No architecture holds a control character, and a start command must
// name the folder as it is, so both are refused (exit 2) with the name shown escaped, and no ESC byte is printed.
TEST(InputBounds36, Issue19_ControlCharactersInAModelsNameAreRefused) {
  const std::string dir = pftest::scratch_dir("ib36-names");
  std::ofstream(dir + "/arch.gguf", std::ios::binary) << [] {
    GgufBytes36 g = small_llama36("ll\x1b[31mama");
    g.tensor("token_embd.weight", 64, 1000);
    return g.bytes();
  }();
  const auto arch = run_bounded36("inspect " + dir + "/arch.gguf");
  EXPECT_EQ(arch.code, 2) << arch.out.substr(0, 600);
  EXPECT_NE(arch.out.find("general.architecture 'll\\x1b[31mama' holds a control character"), std::string::npos) << arch.out.substr(0, 600);
  EXPECT_EQ(arch.out.find('\x1b'), std::string::npos);

  const std::string folder = dir + "/a\x1b]0;title\x07\x1b[31mred";
  std::filesystem::create_directories(folder);
  std::filesystem::copy_file(pftest::shared_path("models/Qwen__Qwen3-0.6B/config.json"), folder + "/config.json");
  const std::string word = "\"$(printf '" + dir + "/a\\033]0;title\\007\\033[31mred')\"";  // the folder's name, built by the shell
  for (const std::string args : {"fit " + word + " --device H100", "inspect " + word, "plan " + word + " --devices H100"}) {
    const auto r = run_bounded36(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out.substr(0, 600);
    EXPECT_NE(r.out.find("a\\x1b]0;title\\x07\\x1b[31mred: a model path holding a terminal control character (shown escaped) is refused"), std::string::npos)
        << args << "\n" << r.out.substr(0, 600);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << args;
  }
  std::filesystem::remove_all(dir);
}

// Issue 19 (attack36): a case's stage_devices that was no array was passed over (the case was evaluated on its "device"
// alone: "H100" as a string gave a PP 2 comparison on two H100s), an entry that was no string was its JSON text ("unknown
// device '5'", a skip), an empty list was "unknown device ''", and a name holding a comma named two stages. Each is the
// case's bad input naming the field, exit 2, as a mistyped available_kv_stage is; a list of names is read as before.
TEST(InputBounds36, Issue19_CaseStageDevicesIsAListOfNames) {
  const std::string dir = pftest::scratch_dir("ib36-stages");
  const std::string head = R"({"id": "s", "engine": "vllm", "engine_version": "0.19.0", "device": "A100-80G", "num_devices": 2, "model": "Qwen/Qwen3-8B", )"
                           R"("tensor_parallel_size": 1, "pipeline_parallel_size": 2, "max_model_len": 8192, "available_kv_gib": 30, "stage_devices": )";
  struct Case {
    std::string value, shown;
  };
  const std::vector<Case> cases = {
      {R"("A100-80G")", "stage_devices: a JSON string, not an array; expected one catalogue device name per pipeline stage"},
      {R"(["A100-80G", 5])", "stage_devices: an entry is a JSON number, not a name"},
      {R"([])", "stage_devices: an empty array"},
      {R"(["A100-80G,L40S", "L40S"])", "stage_devices: 'A100-80G,L40S' is not one device name"},
      {R"(["A100-80G", " "])", "stage_devices: ' ' is not one device name"},
  };
  for (const auto& c : cases) {
    std::ofstream(dir + "/c.jsonl") << head << c.value << "}\n";
    const auto r = run_bounded36("validate " + dir + "/c.jsonl");
    EXPECT_EQ(r.code, 2) << c.value << "\n" << r.out.substr(0, 600);
    EXPECT_NE(r.out.find("c.jsonl:1 (case s): " + c.shown), std::string::npos) << c.value << "\n" << r.out.substr(0, 600);
  }
  std::ofstream(dir + "/c.jsonl") << head << R"(["A100-80G", "L40S"]})" << "\n";
  const auto good = run_bounded36("validate " + dir + "/c.jsonl");
  EXPECT_EQ(good.code, 0) << good.out.substr(0, 600);
  EXPECT_NE(good.out.find("1 evaluated"), std::string::npos) << good.out.substr(0, 600);
  std::filesystem::remove_all(dir);
}

// Issue 19 (attack36): --compilation-config read an integer above 2^63 - 1 (which nlohmann's parser keeps unsigned) with
// get<int64_t>(), so 18446744073709551615 = 2^64 - 1 wrapped to -1 and was refused as "-1 is not a positive token count".
// The value is named as given.
TEST(InputBounds36, Issue19_CompilationConfigIntegerPastInt64IsNamedAsGiven) {
  const std::string fit = "fit Qwen/Qwen3-8B --device H100 --engine vllm@0.19.0 --compilation-config ";
  for (const std::string key : {"cudagraph_capture_sizes", "max_cudagraph_capture_size"}) {
    for (const std::string n : {"18446744073709551615", "9223372036854775808"}) {
      const std::string value = key == "cudagraph_capture_sizes" ? "[1, 2, " + n + "]" : n;
      const auto r = run_bounded36(fit + "'{\"" + key + "\": " + value + "}'");
      EXPECT_EQ(r.code, 2) << key << " " << n << "\n" << r.out.substr(0, 600);
      EXPECT_NE(r.out.find("--compilation-config: " + key + ": " + n + " is above 2^63 - 1"), std::string::npos) << r.out.substr(0, 600);
      EXPECT_EQ(r.out.find("-1 is not"), std::string::npos) << r.out.substr(0, 600);
    }
  }
}

// Issue 19 (attack36): an EAGLE drafter that was found but could not be read (a local folder whose config.json is
// malformed, a FIFO named config.json) was sized as the assumed head of the target's shape, exit 0, and a draft model
// there was said to be "not in the catalogue, a --models directory or the local cache". vLLM stops reading that config,
// so the reader's own error is given (exit 2); a drafter found nowhere here keeps the assumed head, as before.
TEST(InputBounds36, Issue19_DrafterThatCannotBeReadIsNotAssumed) {
  const std::string dir = pftest::scratch_dir("ib36-drafter");
  std::filesystem::create_directories(dir + "/bad");
  std::ofstream(dir + "/bad/config.json") << R"({"architectures": ["LlamaForCausalLMEagle"], "hidden_size": )";
  const std::string fit = "fit Qwen/Qwen3-8B --device H100 --engine vllm@0.11.0 --speculative-config ";
  for (const std::string method : {"eagle", "draft_model"}) {
    const auto r = run_bounded36(fit + "'{\"method\": \"" + method + "\", \"model\": \"" + dir + "/bad\", \"num_speculative_tokens\": 2}'");
    EXPECT_EQ(r.code, 2) << method << "\n" << r.out.substr(0, 600);
    EXPECT_NE(r.out.find("drafter '" + dir + "/bad' (method " + method + ") cannot be read: " + dir + "/bad/config.json: malformed JSON"), std::string::npos)
        << method << "\n" << r.out.substr(0, 600);
  }
  const auto absent = run_bounded36(fit + "'{\"method\": \"eagle\", \"model\": \"yuhuili/EAGLE-LLaMA3-Instruct-8B\", \"num_speculative_tokens\": 2}'");
  EXPECT_EQ(absent.code, 0) << absent.out.substr(0, 600);
  EXPECT_NE(absent.out.find("eagle head assumed to be one decoder layer of the target's shape (its config not read)"), std::string::npos) << absent.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (attack36): --speculative-config was parsed whole at any depth: 60,000 levels of
// nesting under a key no check reads gave "fits", exit 0 (vLLM's json.loads raises RecursionError far sooner). It is
// now read within the bounds its dotted forms and the other JSON flags have (deploy::read_flag_json, hard34): 64
// levels, 131,071 bytes (a longer argument cannot reach argv: Linux MAX_ARG_STRLEN). {"method": "ngram", "x": [64 x '[']}
// is 65 levels deep; with 63 it is 64 and read as before.
TEST(InputBounds36, Issue19_SpeculativeConfigIsReadWithinTheJsonBounds) {
  const auto nested = [](const std::string& head, int lists) { return "'{" + head + ", \"x\": " + std::string(lists, '[') + std::string(lists, ']') + "}'"; };
  struct Case {
    std::string command, flag, head;
  };
  const std::vector<Case> cases = {
      {"fit Qwen/Qwen3-8B --device H100 --engine vllm@0.11.0", "--speculative-config", R"("method": "ngram", "num_speculative_tokens": 2)"},
      {"plan Qwen/Qwen3-8B --devices H100 --engine vllm@0.11.0", "--speculative-config", R"("method": "ngram", "num_speculative_tokens": 2)"},
  };
  for (const auto& c : cases) {
    const auto deep = run_bounded36(c.command + " " + c.flag + " " + nested(c.head, 64));
    EXPECT_EQ(deep.code, 2) << c.command << " " << c.flag << "\n" << deep.out.substr(0, 400);
    EXPECT_NE(deep.out.find(c.flag + ": JSON nested 65 levels deep, more than the 64 read"), std::string::npos) << deep.out.substr(0, 400);
    const auto within = run_bounded36(c.command + " " + c.flag + " " + nested(c.head, 63));
    EXPECT_EQ(within.out.find("levels deep"), std::string::npos) << within.out.substr(0, 400);
  }
}
