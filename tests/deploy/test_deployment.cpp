#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "estimate/fit_terms.hpp"
#include "model/model_catalog.hpp"
#include "deploy_fixture.hpp"

using namespace preflight;
using deploy::Given;
using namespace pftest::deployfx;


// Good flags -> the deployment the estimate receives, every value as given (or the layout rule).
TEST(Deploy, FlagsBecomeTheDeployment) {
  struct Row {
    const char* what;
    deploy::Flags flags;
    int64_t tp, pp;
  };
  deploy::Flags tp_from_devices;
  tp_from_devices.num_devices = Given<int64_t>{8, "--num-devices"};
  tp_from_devices.pipeline_parallel_size = Given<int64_t>{2, "--pipeline-parallel-size"};
  deploy::Flags explicit_tp;
  explicit_tp.tensor_parallel_size = Given<int64_t>{2, "--tensor-parallel-size"};
  explicit_tp.num_devices = Given<int64_t>{4, "--num-devices"};  // data parallel 2 over TP 2: divisible
  const Row rows[] = {{"defaults", {}, 1, 1}, {"TP = devices / PP", tp_from_devices, 4, 2}, {"TP given", explicit_tp, 2, 1}};
  for (const auto& r : rows) {
    auto d = deploy::deployment_from_flags(r.flags);
    ASSERT_TRUE(d) << r.what << ": " << d.error().describe();
    EXPECT_EQ(d->tensor_parallel_size, r.tp) << r.what;
    EXPECT_EQ(d->pipeline_parallel_size, r.pp) << r.what;
  }
  deploy::Flags all;
  all.gpu_memory_utilization = Given<double>{0.85, "u"};
  all.max_model_len = Given<int64_t>{8192, "l"};
  all.max_num_seqs = Given<int64_t>{64, "s"};
  all.max_num_batched_tokens = Given<int64_t>{4096, "b"};
  all.kv_cache_dtype = Given<std::string>{"FP8_E4M3", "k"};
  all.enforce_eager = Given<bool>{true, "e"};
  all.skip_mm_profiling = Given<bool>{true, "m"};
  all.limit_mm_per_prompt = Given<std::string>{R"({"image": {"count": 0}, "video": 0})", "--limit-mm-per-prompt"};
  auto d = deploy::deployment_from_flags(all);
  ASSERT_TRUE(d) << d.error().describe();
  EXPECT_EQ(*d->gpu_memory_utilization, 0.85);
  EXPECT_EQ(*d->max_model_len, 8192);
  EXPECT_EQ(*d->max_num_seqs, 64);
  EXPECT_EQ(*d->max_num_batched_tokens, 4096);
  EXPECT_EQ(d->kv_cache_dtype, "fp8_e4m3");
  EXPECT_EQ(d->mode, estimate::ExecutionMode::eager);
  EXPECT_TRUE(d->skip_mm_profiling);
  EXPECT_TRUE(d->no_images);
  // Issue 15 (mm): the object form sizes the dummy image; "count" defaults to 999 (vLLM BaseDummyOptions).
  deploy::Flags sized;
  sized.limit_mm_per_prompt = Given<std::string>{R"({"image": {"width": 1024, "height": 768}, "video": 0})", "--limit-mm-per-prompt"};
  auto with_size = deploy::deployment_from_flags(sized);
  ASSERT_TRUE(with_size) << with_size.error().describe();
  EXPECT_FALSE(with_size->no_images);
  EXPECT_TRUE(with_size->no_video);
  EXPECT_EQ(with_size->image_dummy_width, 1024);
  EXPECT_EQ(with_size->image_dummy_height, 768);
  EXPECT_TRUE(d->no_video);
}

// Issue 14 / issue 19 item 10: each bad input is an invalid_argument naming its origin, with expected vs found.
TEST(Deploy, Issue19_Item10_BadFlagsNameTheirOrigin) {
  struct Row {
    const char* what;
    deploy::Flags flags;
    const char* fragment;
  };
  std::vector<Row> rows;
  auto util = [](double v, const char* origin) {
    deploy::Flags f;
    f.gpu_memory_utilization = Given<double>{v, origin};
    return f;
  };
  auto count = [](std::optional<Given<int64_t>> deploy::Flags::*member, int64_t v, const char* origin) {
    deploy::Flags f;
    f.*member = Given<int64_t>{v, origin};
    return f;
  };
  rows.push_back({"nan", util(std::nan(""), "--gpu-memory-utilization"), "--gpu-memory-utilization: expected a number in (0, 1], found nan"});
  rows.push_back({"inf", util(std::numeric_limits<double>::infinity(), "--gpu-memory-utilization"), "found inf"});
  rows.push_back({"1.5", util(1.5, "--gpu-memory-utilization"), "--gpu-memory-utilization: expected a number in (0, 1], found 1.5"});
  rows.push_back({"0", util(0, "case x: gpu_memory_utilization"), "case x: gpu_memory_utilization: expected a number in (0, 1], found 0"});
  rows.push_back({"5.0", util(5.0, "case x: gpu_memory_utilization"), "found 5"});
  rows.push_back({"seqs 0", count(&deploy::Flags::max_num_seqs, 0, "--max-num-seqs"), "--max-num-seqs: expected an integer of at least 1, found 0"});
  rows.push_back({"tokens 0", count(&deploy::Flags::max_num_batched_tokens, 0, "--max-num-batched-tokens"), "--max-num-batched-tokens: expected an integer of at least 1"});
  rows.push_back({"len -1", count(&deploy::Flags::max_model_len, -1, "--max-model-len"), "--max-model-len: expected an integer of at least 1, found -1"});
  rows.push_back({"tp -1", count(&deploy::Flags::tensor_parallel_size, -1, "case y: tensor_parallel_size"), "case y: tensor_parallel_size: expected an integer of at least 1, found -1"});
  rows.push_back({"pp 0", count(&deploy::Flags::pipeline_parallel_size, 0, "--pipeline-parallel-size"), "--pipeline-parallel-size: expected an integer of at least 1"});
  rows.push_back({"devices 0", count(&deploy::Flags::num_devices, 0, "--num-devices"), "--num-devices: expected an integer of at least 1"});
  deploy::Flags indivisible;
  indivisible.num_devices = Given<int64_t>{6, "--num-devices"};
  indivisible.tensor_parallel_size = Given<int64_t>{4, "--tensor-parallel-size"};
  rows.push_back({"6 over TP 4", indivisible, "--num-devices: 6 devices do not divide into tensor x pipeline parallel ranks 4"});
  deploy::Flags indivisible_pp;
  indivisible_pp.num_devices = Given<int64_t>{3, "--num-devices"};
  indivisible_pp.pipeline_parallel_size = Given<int64_t>{2, "--pipeline-parallel-size"};
  rows.push_back({"3 over PP 2", indivisible_pp, "--num-devices: 3 devices do not divide into pipeline stages 2"});
  deploy::Flags fp4;
  fp4.kv_cache_dtype = Given<std::string>{"fp4", "--kv-cache-dtype"};
  rows.push_back({"fp4", fp4, "--kv-cache-dtype: expected one of auto|fp8|fp8_e4m3|fp8_e5m2|int8|fp16|bf16|float16|bfloat16, found 'fp4'"});
  deploy::Flags mm;
  mm.limit_mm_per_prompt = Given<std::string>{"{image: 1}", "--limit-mm-per-prompt"};
  rows.push_back({"mm json", mm, "--limit-mm-per-prompt: expected a JSON object"});
  deploy::Flags mm_negative;
  mm_negative.limit_mm_per_prompt = Given<std::string>{R"({"video": -1})", "--limit-mm-per-prompt"};
  rows.push_back({"mm count", mm_negative, "--limit-mm-per-prompt: the count for 'video' must be a non-negative integer"});
  deploy::Flags mm_width;  // issue 15 (mm): vLLM's ImageDummyOptions width/height are positive integers
  mm_width.limit_mm_per_prompt = Given<std::string>{R"({"image": {"count": 1, "width": 0}})", "--limit-mm-per-prompt"};
  rows.push_back({"mm width", mm_width, "--limit-mm-per-prompt: the image width must be an integer from 1 to 1048576 pixels"});
  deploy::Flags mm_height;
  mm_height.limit_mm_per_prompt = Given<std::string>{R"({"image": {"height": "512"}})", "--limit-mm-per-prompt"};
  rows.push_back({"mm height", mm_height, "--limit-mm-per-prompt: the image height must be an integer from 1 to 1048576 pixels"});
  for (const auto& r : rows) {
    const auto checked = deploy::check_flags(r.flags);
    ASSERT_FALSE(checked) << r.what;
    EXPECT_EQ(checked.error().kind, ErrorKind::invalid_argument) << r.what;
    EXPECT_NE(checked.error().message.find(r.fragment), std::string::npos) << r.what << ": " << checked.error().message;
    // The same flags through the whole step give the same error.
    auto resolved = resolve(inputs("910B3", "", r.flags));
    ASSERT_FALSE(resolved) << r.what;
    EXPECT_EQ(resolved.error().message, checked.error().message) << r.what;
  }
  // Several bad inputs: one message each, in one error.
  deploy::Flags two = util(2, "--gpu-memory-utilization");
  two.max_num_seqs = Given<int64_t>{0, "--max-num-seqs"};
  const auto both = deploy::check_flags(two);
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("--gpu-memory-utilization: expected"), std::string::npos);
  EXPECT_NE(both.error().message.find("; --max-num-seqs: expected"), std::string::npos);
}

// Device, engine and platform: names and free text resolve; the wrong engine for the platform is refused.
TEST(Deploy, DeviceEngineAndPlatform) {
  auto npu = resolve(inputs("910B3", ""));
  ASSERT_TRUE(npu) << npu.error().describe();
  EXPECT_EQ(npu->device.id, "910B3");
  EXPECT_EQ(npu->engine.engine, "vllm-ascend");  // the platform's default engine
  auto pinned = resolve(inputs("910B3", "vllm-ascend@0.23"));
  ASSERT_TRUE(pinned) << pinned.error().describe();
  EXPECT_TRUE(pinned->engine.version_min <= *engine::parse_version("0.23", "vllm-ascend"));
  EXPECT_TRUE(*engine::parse_version("0.23", "vllm-ascend") <= pinned->engine.version_max);

  auto wrong = resolve(inputs("910B3", "vllm"));
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(wrong.error().message.find("runs on cuda devices; 910B3 is a device of platform 'npu'"), std::string::npos) << wrong.error().message;

  auto unknown = resolve(inputs("H1000", ""));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  EXPECT_EQ(unknown.error().message.rfind("--device: ", 0), 0u) << unknown.error().message;

  auto far_version = resolve(inputs("910B3", "vllm-ascend@0.1"));
  ASSERT_FALSE(far_version);
  EXPECT_EQ(far_version.error().kind, ErrorKind::not_found);

  // Free text as a report writes it: the catalogue device, with the stated total replacing the catalogue's.
  deploy::Inputs text = inputs("", "");
  text.device = {"Ascend 910B3 64GB (60.96 GiB total)", "case z: device", deploy::DeviceForm::free_text};
  auto from_text = resolve(text);
  ASSERT_TRUE(from_text) << from_text.error().describe();
  EXPECT_EQ(from_text->device.id, "910B3");
  ASSERT_TRUE(from_text->deployment.device_total_bytes);
  EXPECT_DOUBLE_EQ(*from_text->deployment.device_total_bytes, 60.96 * k_gib);
  // A device outside the catalogue with a stated total: built from it, on the vendor's platform, said so.
  text.device.text = "Some NPU board (32.00 GiB total)";
  auto stated = resolve(text);
  ASSERT_TRUE(stated) << stated.error().describe();
  EXPECT_EQ(stated->device.platform, "npu");
  EXPECT_DOUBLE_EQ(stated->device.memory_bytes, 32.0 * k_gib);
  ASSERT_FALSE(stated->assumptions.empty());
  EXPECT_EQ(stated->assumptions[0], "device from the stated 32.00 GiB total");
  text.device.text = "a mystery card";
  auto mystery = resolve(text);
  ASSERT_FALSE(mystery);
  EXPECT_EQ(mystery.error().kind, ErrorKind::not_found);
}

// Versions as logs and cases write them: dated by a "vX.Y" inside the text, then by the hint; a version that
// selects nothing is an error for fit and the newest profile (said so) for logs and validate.
TEST(Deploy, EngineVersionsAsWritten) {
  const auto& engines = fixture().engines;
  struct Row {
    deploy::EngineInput input;
    const char* assumption;  // "" = none
    bool ok;
  };
  const Row rows[] = {
      {{"vllm", "0.1.dev7548+gbaba038 (main, ~v0.9.2)", "engine_version", "", "", deploy::UnknownVersion::error}, "engine version 0.9.2, dated by the engine_version", true},
      {{"vllm", "", "engine_version", "V0 engine (~v0.6.4, 2024)", "case notes", deploy::UnknownVersion::error}, "engine version 0.6.4, dated by the case notes", true},
      {{"vllm", "9.9.9", "engine_version", "", "", deploy::UnknownVersion::newest}, "engine version '9.9.9' not recognised; newest profile used", true},
      {{"vllm", "9.9.9", "--engine", "", "", deploy::UnknownVersion::error}, "", false},
      // Issue 15 (rocm): older than every vllm profile (the oldest, vllm@0.6-0.7, starts at 0.6.0): the oldest, not the newest.
      {{"vllm", "0.4.1", "engine_version", "", "", deploy::UnknownVersion::newest}, "engine version 0.4.1 predates every vllm profile: the oldest, vllm@0.6-0.7, used", true},
      {{"vllm", "0.4.1", "--engine", "", "", deploy::UnknownVersion::error}, "", false},
      {{"vllm", "0.1.dev1+g4d2a68d64", "engine_version", "", "", deploy::UnknownVersion::newest}, "engine version '0.1.dev1+g4d2a68d64' not recognised; newest profile used", true},
      {{"vllm@0.10", "", "--engine", "on v0.6.4 earlier", "case notes", deploy::UnknownVersion::error}, "", true},  // an explicit version wins
      {{"nonsense", "", "--engine", "", "", deploy::UnknownVersion::newest}, "", false},
  };
  for (const auto& r : rows) {
    std::vector<std::string> assumptions;
    auto p = deploy::resolve_engine(r.input, engines, "cuda", assumptions);
    EXPECT_EQ(p.has_value(), r.ok) << r.input.engine << " " << r.input.version;
    if (std::string(r.assumption).empty()) {
      EXPECT_TRUE(assumptions.empty()) << r.input.engine << " " << r.input.version << ": " << (assumptions.empty() ? "" : assumptions[0]);
    } else {
      // Issue 15 (v0eng30): a version resolved to vllm@0.6-0.7, V0's default range, also says it runs V0 (a second note).
      const size_t v0_notes = p && p->v0_lines ? 1u : 0u;
      ASSERT_EQ(assumptions.size(), 1u + v0_notes) << r.input.version;
      EXPECT_EQ(assumptions[0], r.assumption);
      if (v0_notes) EXPECT_EQ(assumptions[1].rfind("V0 engine, the default of vllm", 0), 0u) << assumptions[1];
    }
  }
  std::vector<std::string> none;
  auto pinned = deploy::resolve_engine({"vllm@0.10", "", "--engine", "on v0.6.4 earlier", "case notes", deploy::UnknownVersion::error}, engines, "cuda", none);
  ASSERT_TRUE(pinned);
  EXPECT_TRUE(pinned->version_min <= *engine::parse_version("0.10", "vllm") && *engine::parse_version("0.10", "vllm") <= pinned->version_max);
}

// Issue 15 (misc950): the version lines of a vLLM-Ascend log become the version and build a case or fit states. A
// main-branch build (".devN") is named after the last tag on main, so the vLLM line names the profile (0.17.0rc2.dev93
// ran with vLLM 0.18.0 in the 2026-03-23 nightly job); a tagged release names it itself; a build with no vLLM line names
// it by its tag line. The profile each selects, and whether PR #7427's boundary (0.17.0rc2.dev73) holds for its build.
TEST(Deploy, Issue15_PrintedVersionLinesAsACaseStatesThem) {
  const auto& engines = fixture().engines;
  using PV = std::optional<deploy::PrintedVersion>;
  struct Row {
    PV vllm, ascend;
    const char* version;   // the version resolve_engine is given
    const char* build;     // "" = none
    const char* profile;
    bool choice_said;      // version_choice names the line
  };
  const PV v018 = deploy::PrintedVersion{"0.18.0+empty", "log line 8: vllm version"};
  const PV v017 = deploy::PrintedVersion{"0.17.0", "log line 8: vllm version"};
  const Row rows[] = {
      {v018, deploy::PrintedVersion{"0.17.0rc2.dev93+g8e0789bb3", "log line 9: vllm-ascend version"}, "0.18.0+empty", "0.17.0rc2.dev93+g8e0789bb3", "vllm-ascend@0.18-0.20", true},
      {v018, deploy::PrintedVersion{"0.17.0rc2.dev66+g9d0b7c8e9", "log line 9: vllm-ascend version"}, "0.18.0+empty", "0.17.0rc2.dev66+g9d0b7c8e9", "vllm-ascend@0.18-0.20", true},
      // A tagged release decides; the vLLM line naming another release is said and not used.
      {v018, deploy::PrintedVersion{"0.17.0rc1", "log line 9: vllm-ascend version"}, "0.17.0rc1", "0.17.0rc1", "vllm-ascend@0.15-0.17", true},
      {v017, deploy::PrintedVersion{"0.17.0rc1", "log line 9: vllm-ascend version"}, "0.17.0rc1", "0.17.0rc1", "vllm-ascend@0.15-0.17", false},
      {std::nullopt, deploy::PrintedVersion{"0.17.0rc2.dev80+g0123456", "log line 9: vllm-ascend version"}, "0.17.0rc2.dev80+g0123456", "0.17.0rc2.dev80+g0123456", "vllm-ascend@0.15-0.17", false},
      {v018, std::nullopt, "0.18.0+empty", "", "vllm-ascend@0.18-0.20", false},
      {v018, deploy::PrintedVersion{"main", "log line 9: vllm-ascend version"}, "0.18.0+empty", "", "vllm-ascend@0.18-0.20", true},  // names no release
      {std::nullopt, deploy::PrintedVersion{"main", "log line 9: vllm-ascend version"}, "main", "", "", false},  // nothing dates it: an error here
  };
  for (const auto& r : rows) {
    deploy::EngineInput in{"vllm-ascend", "", "", "", "", deploy::UnknownVersion::error};
    deploy::take_printed_versions(in, r.vllm, r.ascend);
    const std::string label = std::string(r.ascend ? r.ascend->text : "-") + " / " + (r.vllm ? r.vllm->text : "-");
    EXPECT_EQ(in.version, r.version) << label;
    EXPECT_EQ(in.build ? in.build->text : "", r.build) << label;
    EXPECT_EQ(!in.version_choice.empty(), r.choice_said) << label << ": " << in.version_choice;
    std::vector<std::string> assumptions;
    auto p = deploy::resolve_engine(in, engines, "npu", assumptions);
    EXPECT_EQ(p ? p->id : "", r.profile) << label;
  }
  // fit --engine vllm-ascend --engine-build B (no version): the build's tag line, said.
  deploy::EngineInput only_build{"vllm-ascend", "", "--engine", "", "", deploy::UnknownVersion::error};
  only_build.build = *engine::parse_engine_build("0.18.0rc1", "--engine-build");
  only_build.build_origin = "--engine-build";
  std::vector<std::string> assumptions;
  auto p = deploy::resolve_engine(only_build, engines, "npu", assumptions);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, "vllm-ascend@0.18-0.20");
  ASSERT_EQ(assumptions.size(), 1u);
  EXPECT_EQ(assumptions[0], "engine version 0.18.0 from the build 0.18.0rc1 (--engine-build)");
}

// Provenance says where each value came from.
TEST(Deploy, ProvenanceNamesTheOrigin) {
  deploy::Flags f;
  f.gpu_memory_utilization = Given<double>{0.8, "seed.jsonl:3 (case a): gpu_memory_utilization"};
  auto r = resolve(inputs("H100", "", f));
  ASSERT_TRUE(r) << r.error().describe();
  ASSERT_EQ(r->provenance.size(), 1u);
  EXPECT_EQ(r->provenance[0], "gpu_memory_utilization 0.8 from seed.jsonl:3 (case a): gpu_memory_utilization");
  EXPECT_EQ(*r->deployment.gpu_memory_utilization, 0.8);
}

// Issue 15: DP, EP and speculative decoding flags, and the engine's own messages for bad ones.
TEST(Deploy, Issue15_DataParallelAndSpeculativeFlags) {
  deploy::Flags f;
  f.num_devices = Given<int64_t>{16, "--num-devices"};
  f.data_parallel_size = Given<int64_t>{4, "--data-parallel-size"};
  f.data_parallel_size_local = Given<int64_t>{2, "--data-parallel-size-local"};
  f.enable_expert_parallel = Given<bool>{true, "--enable-expert-parallel"};
  f.speculative_config = Given<std::string>{R"({"num_speculative_tokens": 3, "method": "mtp"})", "--speculative-config"};
  auto d = deploy::deployment_from_flags(f);
  ASSERT_TRUE(d.has_value()) << d.error().describe();
  EXPECT_EQ(d->tensor_parallel_size, 4);  // 16 devices / DP 4
  EXPECT_EQ(d->data_parallel_size, 4);
  EXPECT_TRUE(d->enable_expert_parallel);
  EXPECT_EQ(d->speculative.method, "mtp");
  EXPECT_EQ(d->speculative.num_speculative_tokens, 3);
  // vLLM infers the method from the drafter's name.
  auto eagle = deploy::parse_speculative_config(Given<std::string>{R"({"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 2})", "x"});
  ASSERT_TRUE(eagle.has_value());
  EXPECT_EQ(eagle->method, "eagle3");

  struct Bad {
    std::function<void(deploy::Flags&)> change;
    std::string fragment;
  };
  const std::vector<Bad> bad = {
      {[](deploy::Flags& g) { g.num_devices = Given<int64_t>{6, "--num-devices"}; g.tensor_parallel_size = Given<int64_t>{2, "--tensor-parallel-size"}; },
       "--num-devices: 6 devices do not divide into data x tensor x pipeline parallel ranks 8"},
      {[](deploy::Flags& g) { g.data_parallel_size_local = Given<int64_t>{5, "--data-parallel-size-local"}; },
       "--data-parallel-size-local: ValueError: data_parallel_size_local (5) must be <= data_parallel_size (4)"},
      {[](deploy::Flags& g) { g.data_parallel_size = Given<int64_t>{0, "--data-parallel-size"}; }, "--data-parallel-size: expected an integer of at least 1, found 0"},
      {[](deploy::Flags& g) { g.speculative_config = Given<std::string>{R"({"method": "lookahead", "num_speculative_tokens": 2})", "--speculative-config"}; },
       "1 validation error for SpeculativeConfig\nmethod\n  Input should be 'ngram', 'medusa'"},
      {[](deploy::Flags& g) { g.speculative_config = Given<std::string>{R"({"method": "lookahead"})", "--speculative-config"}; },
       "input_value='lookahead', input_type=str]"},
      {[](deploy::Flags& g) { g.speculative_config = Given<std::string>{R"({"method": "mtp", "num_speculative_tokens": 0})", "--speculative-config"}; },
       "num_speculative_tokens: Input should be greater than 0"},
      {[](deploy::Flags& g) { g.speculative_config = Given<std::string>{"mtp", "--speculative-config"}; }, "--speculative-config: expected a JSON object"},
  };
  for (const auto& b : bad) {
    deploy::Flags g = f;
    b.change(g);
    auto r = deploy::deployment_from_flags(g);
    ASSERT_FALSE(r.has_value()) << b.fragment;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(r.error().message.find(b.fragment), std::string::npos) << r.error().message;
  }
}

// Issue 15: expert parallel over more ranks than the model has experts is bad input (exit 2 in every command).
TEST(Deploy, Issue15_ExpertParallelOverMoreRanksThanExperts) {
  deploy::Inputs in;
  in.model.num_experts = 8;
  in.device = {"H100-SXM", "--device", deploy::DeviceForm::name};
  in.flags.tensor_parallel_size = Given<int64_t>{8, "--tensor-parallel-size"};
  in.flags.data_parallel_size = Given<int64_t>{2, "--data-parallel-size"};
  in.flags.enable_expert_parallel = Given<bool>{true, "--enable-expert-parallel"};
  auto r = resolve(in);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(r.error().message.find("--enable-expert-parallel: ValueError: expert parallel size (16 = data_parallel_size 2 x tensor_parallel_size 8) is larger than "
                                   "the number of experts (8)"),
            std::string::npos)
      << r.error().message;
  in.flags.data_parallel_size = Given<int64_t>{1, "--data-parallel-size"};
  EXPECT_TRUE(resolve(in).has_value());
}

// Issue 15: an undated vLLM log is dated by its own printed lines' format: "GPU KV cache size" as num_blocks x
// block size (not int(concurrency x max_model_len), vLLM 0.21+) takes the newest profile that prints that way.
TEST(Deploy, Issue15_UndatedVersionDatedByThePrintedTokenLine) {
  // 2x RTX 3090 Qwen3.6-27B: 174,048 tokens and 4.08x at 160,000 (int(4.08 x 160000) = 652,800): blocks x block size.
  EXPECT_EQ(deploy::printed_tokens_are_blocks(174048, 4.08, 160000), std::optional<bool>(true));
  // 302,9xx tokens and 2.31x at 131,072 (302,776): within the 0.01 the concurrency is printed to, so it dates nothing.
  EXPECT_EQ(deploy::printed_tokens_are_blocks(302900, 2.31, 131072), std::nullopt);
  EXPECT_EQ(deploy::printed_tokens_are_blocks(1000, 1.0, 0), std::nullopt);
  std::vector<std::string> assumptions;
  deploy::EngineInput in{"vllm", "vLLM (version not stated; 2026-05)", "engine_version", "no version here", "case notes", deploy::UnknownVersion::newest};
  in.printed_tokens_are_blocks = true;
  auto p = deploy::resolve_engine(in, fixture().engines, "cuda", assumptions);
  ASSERT_TRUE(p.has_value()) << p.error().describe();
  EXPECT_EQ(p->tokens_rule, engine::TokensRule::blocks);
  EXPECT_EQ(p->id, "vllm@0.16-0.20");
  ASSERT_FALSE(assumptions.empty());
  EXPECT_NE(assumptions.back().find("dated by the printed token line"), std::string::npos) << assumptions.back();
  // A stated version wins over the format.
  assumptions.clear();
  in.version = "0.23.0";
  auto stated = deploy::resolve_engine(in, fixture().engines, "cuda", assumptions);
  ASSERT_TRUE(stated.has_value());
  EXPECT_EQ(stated->tokens_rule, engine::TokensRule::concurrency_x_len);
  // Without the format the undated version still takes the newest profile.
  assumptions.clear();
  in.version = "vLLM (version not stated)";
  in.printed_tokens_are_blocks.reset();
  auto newest = deploy::resolve_engine(in, fixture().engines, "cuda", assumptions);
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(newest->tokens_rule, engine::TokensRule::concurrency_x_len);
}

// Issue 15 (warmup32): --dtype is applied to the resolved model (vLLM casts every parameter to it): float32 and half
// as vLLM names them, auto keeps the config's; a name vLLM does not take is refused naming the flag, and bfloat16 on a
// CUDA card without it (T4) is vLLM's ValueError.
TEST(Deploy, Issue15_DtypeFlagCastsTheModel) {
  auto with = [](const std::string& card, const std::string& dtype) {
    deploy::Flags f;
    f.dtype = Given<std::string>{dtype, "--dtype"};
    return resolve(inputs(card, "", f));
  };
  auto fp32 = with("H100", "float32");
  ASSERT_TRUE(fp32) << fp32.error().describe();
  EXPECT_EQ(fp32->model.dtype, model::Dtype::f32);
  auto half = with("H100", "half");
  ASSERT_TRUE(half) << half.error().describe();
  EXPECT_EQ(half->model.dtype, model::Dtype::f16);
  auto automatic = with("H100", "auto");
  ASSERT_TRUE(automatic) << automatic.error().describe();
  EXPECT_EQ(automatic->model.dtype, model::Dtype::bf16);  // Qwen3-8B's config: bfloat16
  auto bad = with("H100", "float8");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--dtype: expected one of auto|half|float16|bfloat16|float|float32"), std::string::npos) << bad.error().message;
  auto t4 = with("T4", "bfloat16");
  ASSERT_FALSE(t4);
  EXPECT_EQ(t4.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(t4.error().message.find("--dtype: ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0"), std::string::npos)
      << t4.error().message;
  auto t4_half = with("T4", "float16");
  EXPECT_TRUE(t4_half) << t4_half.error().describe();
}
