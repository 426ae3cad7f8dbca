// Issue 19, session 37's hostile pass: GGUF tensor names and data offsets llama.cpp refuses, --speculative-config's n-gram
// window as each vLLM version checks it, --compilation-config read as deep as vLLM reads it and pass_config's field types.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "base/json_util.hpp"
#include "model/gguf_reader.hpp"

namespace {

pftest::CliRun run_bounded37(const std::string& args) { return pftest::run_cli(args, {.env = "timeout 60"}); }

// GGUF v3 bytes written field by field: u32 metadata, F32 2-D tensors at the offsets given (by default one after another,
// 32-byte aligned, as llama.cpp writes them), and a data section as long as the furthest tensor's end.
struct GgufBytes37 {
  std::string kv, infos;
  uint64_t kv_count = 0, tensor_count = 0, next_offset = 0, data_end = 0;
  template <typename T>
  static void put(std::string& b, T v) { b.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  static void put_text(std::string& b, const std::string& s) { put(b, static_cast<uint64_t>(s.size())); b += s; }
  void number(const std::string& key, uint32_t value) { put_text(kv, key); put(kv, 4u); put(kv, value); ++kv_count; }
  void text(const std::string& key, const std::string& value) { put_text(kv, key); put(kv, 8u); put_text(kv, value); ++kv_count; }
  void tensor(const std::string& name, uint64_t rows, uint64_t cols, std::optional<uint64_t> at = std::nullopt) {
    const uint64_t offset = at.value_or(next_offset);
    put_text(infos, name);
    put(infos, 2u);
    put(infos, rows);
    put(infos, cols);
    put(infos, 0u);  // F32
    put(infos, offset);
    data_end = std::max(data_end, offset + rows * cols * 4);
    next_offset = (offset + rows * cols * 4 + 31) / 32 * 32;
    ++tensor_count;
  }
  std::string bytes() const {
    std::string b;
    put(b, 0x46554747u);
    put(b, 3u);
    put(b, tensor_count);
    put(b, kv_count);
    b += kv + infos;
    b.resize((b.size() + 31) / 32 * 32 + data_end, '\0');
    return b;
  }
};

// A llama GGUF's metadata: 2 layers, hidden 64, 4 heads, 1,000 tokens.
GgufBytes37 llama37() {
  GgufBytes37 g;
  g.text("general.architecture", "llama");
  g.number("llama.block_count", 2);
  g.number("llama.embedding_length", 64);
  g.number("llama.attention.head_count", 4);
  g.number("llama.context_length", 4096);
  g.number("llama.vocab_size", 1000);
  return g;
}

preflight::Expected<preflight::model::GgufFile> parse37(const GgufBytes37& g) {
  const std::string b = g.bytes();
  return preflight::model::parse_gguf(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "t.gguf");
}

}  // namespace

// Issue 19 (attack37): ggml holds a tensor's name in char[GGML_MAX_NAME] (64, ggml.h), and llama.cpp's
// gguf_init_from_file_impl (ggml/src/gguf.cpp) refuses a name of 64 bytes or more ("tensor name %lld is too long: %zu >=
// %d"); preflight read such a file. 63 bytes are read; 64 are refused naming the tensor's index and length, exit 2.
TEST(InputBounds37, Issue19_GgufTensorNameOfGgmlMaxNameIsRefused) {
  GgufBytes37 fits = llama37();
  fits.tensor("token_embd.weight", 64, 1000);
  fits.tensor(std::string(63, 'n'), 64, 1);
  ASSERT_TRUE(parse37(fits)) << parse37(fits).error().message;

  GgufBytes37 long_name = llama37();
  long_name.tensor("token_embd.weight", 64, 1000);
  long_name.tensor(std::string(64, 'n'), 64, 1);
  const auto r = parse37(long_name);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "t.gguf: tensor 1's name '" + std::string(64, 'n') +
                                   "' is 64 bytes, more than the 63 a ggml tensor holds (GGML_MAX_NAME 64 with its NUL): llama.cpp refuses the file "
                                   "(gguf_init_from_file: tensor name 1 is too long: 64 >= 64)");

  const std::string dir = pftest::scratch_dir("ib37-name");
  std::ofstream(dir + "/long.gguf", std::ios::binary) << long_name.bytes();
  const auto cli = run_bounded37("inspect " + dir + "/long.gguf");
  EXPECT_EQ(cli.code, 2) << cli.out.substr(0, 600);
  EXPECT_NE(cli.out.find("is too long: 64 >= 64"), std::string::npos) << cli.out.substr(0, 600);
  std::filesystem::remove_all(dir);
}

// Issue 19 (attack37): a tensor's data offset was only checked to be aligned and to end inside the file, so tensors
// listed over one block of bytes were each counted: 100 distinct 64 x 1,000 F32 tensors all at offset 0 of a file holding
// one tensor's 256,000 bytes read as 25.6 MB of weights, exit 0. llama.cpp's gguf_init_from_file_impl requires each
// tensor where the one listed before it ends, padded to the alignment ("tensor '%s' has offset %llu, expected %zu"), which
// refuses an overlap, a gap and a misaligned offset alike. Here token_embd.weight is 64 x 1,000 x 4 = 256,000 bytes (a
// multiple of 32), so output.weight must sit at 256,000.
TEST(InputBounds37, Issue19_GgufTensorDataMustBeContiguous) {
  GgufBytes37 good = llama37();
  good.tensor("token_embd.weight", 64, 1000);
  good.tensor("output.weight", 64, 1000);
  ASSERT_TRUE(parse37(good)) << parse37(good).error().message;
  struct Case {
    uint64_t offset;
    const char* what;
  };
  for (const Case c : {Case{0, "overlap"}, Case{256032, "gap"}, Case{256004, "misaligned"}, Case{128000, "inside the first"}}) {
    GgufBytes37 g = llama37();
    g.tensor("token_embd.weight", 64, 1000);
    g.tensor("output.weight", 64, 1000, c.offset);
    const auto r = parse37(g);
    ASSERT_FALSE(r) << c.what;
    const std::string at = std::to_string(c.offset);
    EXPECT_EQ(r.error().message, "t.gguf: tensor 'output.weight' has offset " + at +
                                     ", expected 256000 (where the tensor listed before it ends, padded to the 32-byte alignment): llama.cpp refuses the file "
                                     "(gguf_init_from_file: tensor 'output.weight' has offset " + at + ", expected 256000; failed to read tensor data)")
        << c.what;
  }
  // The first tensor must start the data section.
  GgufBytes37 late = llama37();
  late.tensor("token_embd.weight", 64, 1000, 32);
  ASSERT_FALSE(parse37(late));
  EXPECT_NE(parse37(late).error().message.find("tensor 'token_embd.weight' has offset 32, expected 0"), std::string::npos);

  // From the command line: 100 tensors over one block of bytes, exit 2 where it read 25.6 MB.
  GgufBytes37 stacked = llama37();
  for (int i = 0; i < 100; ++i) stacked.tensor("blk." + std::to_string(i) + ".w", 64, 1000, 0);
  const std::string dir = pftest::scratch_dir("ib37-offsets");
  std::ofstream(dir + "/stacked.gguf", std::ios::binary) << stacked.bytes();
  const auto cli = run_bounded37("inspect " + dir + "/stacked.gguf");
  EXPECT_EQ(cli.code, 2) << cli.out.substr(0, 600);
  EXPECT_NE(cli.out.find("tensor 'blk.1.w' has offset 0, expected 256000"), std::string::npos) << cli.out.substr(0, 600);
  std::filesystem::remove_all(dir);
}

// Issue 19 (attack37): llama.cpp refuses a metadata key of no bytes ("key %lld is empty"); preflight kept it.
TEST(InputBounds37, Issue19_GgufEmptyMetadataKeyIsRefused) {
  GgufBytes37 g = llama37();
  g.number("", 1);  // the 7th key, index 6
  g.tensor("token_embd.weight", 64, 1000);
  const auto r = parse37(g);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "t.gguf: metadata key 6 is empty: llama.cpp refuses the file (gguf_init_from_file: key 6 is empty)");
}

// Issue 19 (attack37): --speculative-config's n-gram window was not checked: prompt_lookup_max 0, or min 5 above max 3,
// gave "fits", exit 0, where every vLLM version stops. Each version's words (data/engines/speculative_methods.json
// ngram_window_checks): 0.8.2 - 0.9.0 a plain ValueError from __post_init__, whose defaults make an absent min the max's
// value (so max 0 alone is reported as min 0); 0.9.1 - 0.11.0 the same inside pydantic's ValidationError; from 0.11.1
// pydantic's Field(ge=1) on both fields for every method (max's error first), then the order check; V0 (0.6.0 - 0.8.1,
// --ngram-prompt-lookup-max/-min) checks max first. A window within the bounds is read as before.
TEST(InputBounds37, Issue19_NgramPromptLookupWindowIsCheckedAsEachVersionChecksIt) {
  const auto fit = [](const std::string& version, const std::string& config) {
    return run_bounded37("fit Qwen/Qwen3-8B --device H100 --engine vllm@" + version + " --speculative-config '" + config + "'");
  };
  struct Case {
    std::string version, window, message;
  };
  const std::string pyd = "pydantic_core._pydantic_core.ValidationError: ";
  const std::vector<Case> cases = {
      {"0.9.0", R"("prompt_lookup_max": 0)", "--speculative-config: ValueError: prompt_lookup_min=0 must be > 0 (vllm 0.9.0;"},
      {"0.9.0", R"("prompt_lookup_min": 5, "prompt_lookup_max": 3)", "--speculative-config: ValueError: prompt_lookup_min=5 must be <= prompt_lookup_max=3 (vllm 0.9.0;"},
      {"0.10.0", R"("prompt_lookup_min": 4, "prompt_lookup_max": -1)",
       "--speculative-config: " + pyd + "1 validation error for SpeculativeConfig\n  Value error, prompt_lookup_max=-1 must be > 0 (vllm 0.10.0;"},
      {"0.20.0", R"("prompt_lookup_min": 0, "prompt_lookup_max": 0)",
       "--speculative-config: " + pyd + "2 validation errors for SpeculativeConfig\nprompt_lookup_max\n  Input should be greater than or equal to 1 "
                                        "[type=greater_than_equal, input_value=0, input_type=int]\nprompt_lookup_min\n  Input should be greater than or equal to 1 "
                                        "[type=greater_than_equal, input_value=0, input_type=int] (vllm 0.20.0;"},
      {"0.20.0", R"("prompt_lookup_min": 5, "prompt_lookup_max": 3)",
       "--speculative-config: " + pyd + "1 validation error for SpeculativeConfig\n  Value error, prompt_lookup_min=5 must be <= prompt_lookup_max=3 (vllm 0.20.0;"},
  };
  for (const auto& c : cases) {
    const auto r = fit(c.version, R"({"method": "ngram", "num_speculative_tokens": 2, )" + c.window + "}");
    EXPECT_EQ(r.code, 2) << c.version << " " << c.window << "\n" << r.out.substr(0, 600);
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.version << " " << c.window << "\n" << r.out.substr(0, 600);
  }
  // From 0.11.1 the field bound holds for a drafter's method too; before it the window is set to 0 there, unchecked.
  const std::string eagle = R"({"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3-Instruct-8B", "num_speculative_tokens": 2, "prompt_lookup_max": 0})";
  EXPECT_EQ(fit("0.20.0", eagle).code, 2);
  EXPECT_EQ(fit("0.10.0", eagle).code, 0);
  // A window within the bounds, and min alone (max takes its value).
  EXPECT_EQ(fit("0.20.0", R"({"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 2, "prompt_lookup_max": 4})").code, 0);
  EXPECT_EQ(fit("0.9.0", R"({"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 3})").code, 0);
  // V0's flags (vLLM 0.7.3 has no Qwen3: a Llama target).
  const std::string v0 = "fit meta-llama/Llama-3.1-8B-Instruct --device H100 --engine vllm@0.7.3 --speculative-model '[ngram]' --num-speculative-tokens 2 ";
  const auto low = run_bounded37(v0 + "--ngram-prompt-lookup-max 0");
  EXPECT_EQ(low.code, 2) << low.out.substr(0, 400);
  EXPECT_NE(low.out.find("ValueError: ngram_prompt_lookup_max=0 must be > 0 (vllm 0.7.3;"), std::string::npos) << low.out.substr(0, 400);
  const auto order = run_bounded37(v0 + "--ngram-prompt-lookup-max 3 --ngram-prompt-lookup-min 4");
  EXPECT_EQ(order.code, 2) << order.out.substr(0, 400);
  EXPECT_NE(order.out.find("ValueError: ngram_prompt_lookup_min=4 cannot be larger than ngram_prompt_lookup_max=3 (vllm 0.7.3;"), std::string::npos)
      << order.out.substr(0, 400);
  EXPECT_EQ(run_bounded37(v0 + "--ngram-prompt-lookup-max 3").code, 0);
}

// Issue 19 (attack37): the whole --compilation-config is read as deep as vLLM reads it. From 0.9.1 vLLM parses it with
// pydantic's TypeAdapter(CompilationConfig).validate_json, whose JSON parser refuses a list or object nested past 201
// levels ("Invalid JSON: recursion limit exceeded at line L column C", C the byte where level 202 opens; checked with
// pydantic 2.13.4). '{"cudagraph_capture_sizes": ' takes bytes 1-28 (level 1 at byte 1), the list opens level 2 at byte
// 29, so level k opens at byte 27 + k: 202 at 229. 201 levels are read and the value refused by its type, as vLLM does.
TEST(InputBounds37, Issue19_CompilationConfigIsReadAsDeepAsVllmReadsIt) {
  const auto nested = [](int inner) { return "'{\"cudagraph_capture_sizes\": [" + std::string(inner, '[') + std::string(inner, ']') + "]}'"; };
  const std::string fit = "fit Qwen/Qwen3-8B --device H100 --engine vllm@0.20.0 --compilation-config ";
  const auto deep = run_bounded37(fit + nested(200));  // 1 + 1 + 200 = 202 levels
  EXPECT_EQ(deep.code, 2) << deep.out.substr(0, 600);
  EXPECT_NE(deep.out.find("--compilation-config: JSON nested past the 201 levels vLLM reads"), std::string::npos) << deep.out.substr(0, 600);
  EXPECT_NE(deep.out.find("1 validation error for CompilationConfig\n  Invalid JSON: recursion limit exceeded at line 1 column 229 [type=json_invalid, "
                          "input_value='{\"cudagraph_capture_size...]]]]]]]]]]]]]]]]]]]]]]}', input_type=str]"),
            std::string::npos)
      << deep.out.substr(0, 600);
  const auto most = run_bounded37(fit + nested(199));  // 201 levels
  EXPECT_EQ(most.code, 2) << most.out.substr(0, 600);
  EXPECT_NE(most.out.find("cudagraph_capture_sizes: Input should be a valid integer (vLLM CompilationConfig), found an array"), std::string::npos)
      << most.out.substr(0, 600);
  // Lines count from 1 and columns restart after each newline: level 202 opens at byte 2 + 200 of line 3.
  const auto lines = run_bounded37(fit + "'{\n\"cudagraph_capture_sizes\":\n [" + std::string(200, '[') + std::string(200, ']') + "]}'");
  EXPECT_EQ(lines.code, 2) << lines.out.substr(0, 600);
  EXPECT_NE(lines.out.find("recursion limit exceeded at line 3 column 202 [type=json_invalid"), std::string::npos) << lines.out.substr(0, 600);
}

// Issue 19 (attack37): pass_config's values were never typed: {"fuse_norm_quant": "x"} gave "fits", exit 0, where vLLM
// 0.13.0 on (a pydantic dataclass, validate_pass_config_before: PassConfig(**value)) stops in argparse with pydantic's
// bool_parsing error located pass_config.fuse_norm_quant. Each field's annotation and whether null passes
// (_skip_none_validation) are data (compilation_config_keys.json nested_records types); the field errors come in the
// class's field order, before unknown keys, in one ValidationError (pydantic 2.13.4 on a dataclass of the same shape).
TEST(InputBounds37, Issue19_PassConfigValuesAreTypedAsPydanticTypesThem) {
  const auto fit = [](const std::string& version, const std::string& pass) {
    return run_bounded37("fit Qwen/Qwen3-8B --device H100 --engine vllm@" + version + " --compilation-config '{\"pass_config\": " + pass + "}'");
  };
  const std::string head = "--compilation-config: vllm serve: error: argument --compilation-config/-cc: ";
  struct Case {
    std::string pass, message;
  };
  const std::vector<Case> cases = {
      {R"({"fuse_norm_quant": "x"})", head + "1 validation error for CompilationConfig\npass_config.fuse_norm_quant\n  Input should be a valid boolean, "
                                             "unable to interpret input [type=bool_parsing, input_value='x', input_type=str] (vllm 0.20.0,"},
      {R"({"bogus": 1, "eliminate_noops": null})",
       head + "2 validation errors for CompilationConfig\npass_config.eliminate_noops\n  Input should be a valid boolean [type=bool_type, input_value=None, "
              "input_type=NoneType]\npass_config.bogus\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=1, input_type=int]"},
      {R"({"rope_kvcache_fusion_max_token_num": 2.5})", "pass_config.rope_kvcache_fusion_max_token_num\n  Input should be a valid integer, got a number "
                                                         "with a fractional part [type=int_from_float, input_value=2.5, input_type=float]"},
      {R"({"fi_allreduce_fusion_max_size_mb": "big"})", "pass_config.fi_allreduce_fusion_max_size_mb\n  Input should be a valid number, unable to parse "
                                                         "string as a number [type=float_parsing, input_value='big', input_type=str]"},
  };
  for (const auto& c : cases) {
    const auto r = fit("0.20.0", c.pass);
    EXPECT_EQ(r.code, 2) << c.pass << "\n" << r.out.substr(0, 600);
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.pass << "\n" << r.out.substr(0, 600);
  }
  // What lax mode takes: "yes" and 1 as booleans, null where _skip_none_validation lets it, " 1_000 " as an integer.
  const auto taken = fit("0.20.0", R"({"fuse_norm_quant": "yes", "enable_sp": 1, "fuse_act_quant": null, "sp_min_token_num": " 1_000 "})");
  EXPECT_EQ(taken.code, 0) << taken.out.substr(0, 600);
  // 0.12.0 has no record (its PassConfig has other fields): nothing said there.
  EXPECT_EQ(fit("0.12.0", R"({"fuse_norm_quant": "x"})").out.find("bool_parsing"), std::string::npos);
}

// Issue 19 (attack37): plan MODEL --devices sized a card as often as it was named: "H100,H100" (or "H100,H100-SXM", the
// card "H100" stands for) printed every row twice, and 10,000 copies of one name took 6 s for 10,000 identical rows, exit
// 0. A card named twice is refused naming both entries; distinct cards are planned as before.
TEST(InputBounds37, Issue19_PlanDevicesNamingOneCardTwiceIsRefused) {
  const auto twice = run_bounded37("plan Qwen/Qwen3-8B --devices H100,L40S,H100-SXM");
  EXPECT_EQ(twice.code, 2) << twice.out.substr(0, 600);
  EXPECT_NE(twice.out.find("--devices: 'H100-SXM' (entry 3) names H100-SXM, as 'H100' (entry 1) does; list each card once"), std::string::npos)
      << twice.out.substr(0, 600);
  std::string many = "H100";
  for (int i = 0; i < 9999; ++i) many += ",H100";
  const auto copies = run_bounded37("plan Qwen/Qwen3-8B --devices " + many);
  EXPECT_EQ(copies.code, 2) << copies.out.substr(0, 600);
  EXPECT_NE(copies.out.find("'H100' (entry 2) names H100-SXM, as 'H100' (entry 1) does"), std::string::npos) << copies.out.substr(0, 600);
  const auto distinct = run_bounded37("plan Qwen/Qwen3-8B --devices H100,L40S");
  EXPECT_EQ(distinct.code, 0) << distinct.out.substr(0, 600);
}

// Issue 19 (attack37): the llama.cpp estimate took head_count_kv 0 on a plain attention model: "KV: ... (K 0 x f16 + V 0 x
// f16) = 0.00 MiB", fits, exit 0, where llama.cpp sizes attn_k / attn_v with 0 columns and stops at load on the file's
// (check_tensor_dims), and where fit with vLLM already refused the key. Exit 2 naming it; a GGUF without the key (every
// head its own KV head) is read as before.
TEST(InputBounds37, Issue19_LlamaCppHeadCountKvZeroIsRefused) {
  const std::string dir = pftest::scratch_dir("ib37-kv0");
  GgufBytes37 kv0 = llama37();
  kv0.number("llama.attention.head_count_kv", 0);
  kv0.tensor("token_embd.weight", 64, 1000);
  std::ofstream(dir + "/kv0.gguf", std::ios::binary) << kv0.bytes();
  const auto r = run_bounded37("fit " + dir + "/kv0.gguf --device H100 --engine llama.cpp");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("llama.attention.head_count_kv is 0 on a model with attention layers and no recurrent state"), std::string::npos) << r.out.substr(0, 600);
  GgufBytes37 plain = llama37();
  plain.tensor("token_embd.weight", 64, 1000);
  std::ofstream(dir + "/plain.gguf", std::ios::binary) << plain.bytes();
  const auto ok = run_bounded37("fit " + dir + "/plain.gguf --device H100 --engine llama.cpp");
  EXPECT_EQ(ok.code, 0) << ok.out.substr(0, 600);
  std::filesystem::remove_all(dir);
}

// Issue 19 (attack37's leftover, fixed by the lead): plan ran none of the config's value checks that fit runs, so an n-gram
// window vLLM refuses or a disable_by_batch_size of 1 got rows and start commands, exit 0. The messages are fit's (the
// test above): vllm/config/speculative.py's __post_init__ ('prompt_lookup_min=5 must be <= prompt_lookup_max=3') and the
// batch-size threshold's ValueError ("is > 1", vLLM 0.8.2 - 0.16).
TEST(InputBounds37, Issue19_PlanChecksTheSpeculativeConfigsValuesAsFitDoes) {
  const std::string window = R"('{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 5, "prompt_lookup_max": 3}')";
  const auto model_form = run_bounded37("plan Qwen/Qwen3-8B --devices H100 --engine vllm@0.20.0 --speculative-config " + window);
  EXPECT_EQ(model_form.code, 2) << model_form.out.substr(0, 600);
  EXPECT_NE(model_form.out.find("Value error, prompt_lookup_min=5 must be <= prompt_lookup_max=3 (vllm 0.20.0;"), std::string::npos) << model_form.out.substr(0, 600);
  // The --device form: the model becomes a rejected row with the engine's words, and nothing is recommended.
  const auto device_form = run_bounded37("plan --device H100 --model Qwen/Qwen3-8B --engine vllm@0.20.0 --speculative-config " + window + " --json");
  const preflight::Json j = preflight::Json::parse(device_form.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << device_form.out.substr(0, 600);
  EXPECT_TRUE(j["recommended"].empty()) << device_form.out.substr(0, 600);
  ASSERT_EQ(j["rejected"].size(), 1u) << device_form.out.substr(0, 600);
  EXPECT_NE(j["rejected"][0]["reason"].get<std::string>().find("prompt_lookup_min=5 must be <= prompt_lookup_max=3"), std::string::npos);
  const auto batch = run_bounded37("plan Qwen/Qwen3-8B --devices H100 --engine vllm@0.10.0 --speculative-config "
                                   R"('{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 4, "disable_by_batch_size": 1}')");
  EXPECT_EQ(batch.code, 2) << batch.out.substr(0, 600);
  EXPECT_NE(batch.out.find("Expect the batch size threshold of disabling speculative decoding is > 1"), std::string::npos) << batch.out.substr(0, 600);
  // A valid window and a draft TP equal to itself plan as before (rows, exit 0).
  EXPECT_EQ(run_bounded37("plan Qwen/Qwen3-8B --devices H100 --engine vllm@0.20.0 --speculative-config "
                          R"('{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 2, "prompt_lookup_max": 4}')")
                .code,
            0);
}
