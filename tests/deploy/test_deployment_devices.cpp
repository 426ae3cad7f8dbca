// The deployment on device names as people write them (ambiguous names, a log's total, --device-memory), undated
// versions dated or given as a band, DP / stage / compilation-config flags and the HCCL environment (issue 15);
// split out of test_deployment.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "deploy/engine_env.hpp"
#include "estimate/fit_terms.hpp"
#include "model/model_catalog.hpp"
#include "deploy_fixture.hpp"

using namespace preflight;
using deploy::Given;
using namespace pftest::deployfx;

namespace {
bool said(const std::vector<std::string>& assumptions, const std::string& fragment) {
  for (const auto& a : assumptions) if (a.find(fragment) != std::string::npos) return true;
  return false;
}
}  // namespace

// Issue 15: an ambiguous --device resolves to a stated card and the assumptions say which and why.
TEST(Deploy, Issue15_AmbiguousDeviceNameIsAnAssumption) {
  auto a100 = resolve(inputs("A100", ""));
  ASSERT_TRUE(a100) << a100.error().describe();
  EXPECT_EQ(a100->device.id, "A100-80G-SXM");
  EXPECT_TRUE(said(a100->assumptions, "'A100' names 4 cards")) << a100->assumptions.size();
  EXPECT_TRUE(said(a100->assumptions, "assumed A100-80G-SXM"));
  auto b = resolve(inputs("910B", ""));
  ASSERT_TRUE(b) << b.error().describe();
  EXPECT_EQ(b->device.id, "910B2");
  EXPECT_TRUE(said(b->assumptions, "assumed 910B2"));
  auto exact = resolve(inputs("A100-40G-SXM", ""));
  ASSERT_TRUE(exact) << exact.error().describe();
  EXPECT_FALSE(said(exact->assumptions, "names"));
}

// Issue 15: a log's device text that only states the runtime total names the card that reports it.
TEST(Deploy, Issue15_LogTotalIdentifiesTheDevice) {
  deploy::Inputs text = inputs("", "");
  text.device = {"total memory 61.27 GiB", "log line 3: device", deploy::DeviceForm::free_text};
  auto die = resolve(text);
  ASSERT_TRUE(die) << die.error().describe();
  EXPECT_EQ(die->device.id, "910C");
  EXPECT_EQ(die->device.platform, "npu");
  EXPECT_TRUE(said(die->assumptions, "identified by the 61.27 GiB total"));
  ASSERT_TRUE(die->deployment.device_total_bytes);
  EXPECT_DOUBLE_EQ(*die->deployment.device_total_bytes, 61.27 * k_gib);
  // torch.npu.mem_get_info() prints (free, total) in bytes; vLLM-Ascend prints "total memory: <bytes>".
  EXPECT_DOUBLE_EQ(*deploy::stated_total_bytes("torch.npu.mem_get_info() = (63136915456, 65452113920)"), 65452113920.0);
  EXPECT_DOUBLE_EQ(*deploy::stated_total_bytes("Available memory: 58251018240, total memory: 65452113920"), 65452113920.0);
  EXPECT_DOUBLE_EQ(*deploy::stated_total_bytes("total memory 61.27 GiB"), 61.27 * k_gib);
  text.device.text = "Atlas 800I A3";
  auto a3 = resolve(text);
  ASSERT_TRUE(a3) << a3.error().describe();
  EXPECT_EQ(a3->device.id, "910C");
  EXPECT_TRUE(said(a3->assumptions, "assumed 910C"));
}

// Issue 15: --device-memory alone is a generic card of --platform; with --device it replaces that card's size.
TEST(Deploy, Issue15_DeviceMemory) {
  const double size = 24 * k_gib;
  deploy::Inputs in = inputs("", "");
  in.device.memory_bytes = size;
  auto generic = resolve(in);
  ASSERT_TRUE(generic) << generic.error().describe();
  EXPECT_EQ(generic->device.id, "generic-cuda");
  EXPECT_EQ(generic->device.platform, "cuda");
  EXPECT_DOUBLE_EQ(generic->device.usable_total_bytes(), size);
  EXPECT_EQ(generic->engine.engine, "vllm");
  EXPECT_TRUE(said(generic->assumptions, "a generic cuda device with 24.00 GiB (--device-memory)"));

  in.device.platform = "npu";
  auto npu = resolve(in);
  ASSERT_TRUE(npu) << npu.error().describe();
  EXPECT_EQ(npu->device.platform, "npu");
  EXPECT_EQ(npu->engine.engine, "vllm-ascend");

  deploy::Inputs named = inputs("H100", "");
  named.device.memory_bytes = size;
  auto h100 = resolve(named);
  ASSERT_TRUE(h100) << h100.error().describe();
  EXPECT_EQ(h100->device.id, "H100-SXM");
  EXPECT_DOUBLE_EQ(h100->device.usable_total_bytes(), size);
  EXPECT_TRUE(said(h100->assumptions, "device memory 24.00 GiB from --device-memory replaces H100-SXM's 79.18 GiB"));

  // Issue 15 (pp36): with a name several cards answer to, the total given picks the card it agrees with (within 15% of
  // its memory), as a size stated in a log's device text does: 139.81 GiB (what the 141 GB H20-3e reports, like an
  // H200) is the refresh, not the assumed 96 GB H20; 39.59 GiB (both 40 GB A100s) a 40 GB A100, not the 80 GB SXM4.
  deploy::Inputs h20 = inputs("H20", "");
  h20.device.memory_bytes = 139.81 * k_gib;
  auto refresh = resolve(h20);
  ASSERT_TRUE(refresh) << refresh.error().describe();
  EXPECT_EQ(refresh->device.id, "H20-141G");
  EXPECT_TRUE(said(refresh->assumptions, "'H20' names several cards; the 139.81 GiB of --device-memory picks H20-141G"));
  EXPECT_DOUBLE_EQ(refresh->device.usable_total_bytes(), 139.81 * k_gib);
  h20.device.memory_bytes = 95.33 * k_gib;
  auto original = resolve(h20);
  ASSERT_TRUE(original) << original.error().describe();
  EXPECT_EQ(original->device.id, "H20");
  EXPECT_TRUE(said(original->assumptions, "assumed H20"));
  deploy::Inputs a100 = inputs("A100", "");
  a100.device.memory_bytes = 39.59 * k_gib;
  auto small = resolve(a100);
  ASSERT_TRUE(small) << small.error().describe();
  EXPECT_EQ(small->device.id.rfind("A100-40G", 0), 0u) << small->device.id;

  deploy::Inputs unknown = inputs("My Lab Card", "");
  unknown.device.memory_bytes = size;
  auto lab = resolve(unknown);
  ASSERT_TRUE(lab) << lab.error().describe();
  EXPECT_EQ(lab->device.id, "generic-cuda");
  EXPECT_TRUE(said(lab->assumptions, "'My Lab Card' is not in the catalogue"));

  named.device.platform = "npu";
  auto clash = resolve(named);
  ASSERT_FALSE(clash);
  EXPECT_EQ(clash.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(clash.error().message.find("H100-SXM is a cuda device"), std::string::npos) << clash.error().message;
  deploy::Inputs platform_alone = inputs("H100", "");
  platform_alone.device.platform = "rocm";
  auto alone = resolve(platform_alone);
  ASSERT_FALSE(alone);
  EXPECT_EQ(alone.error().kind, ErrorKind::invalid_argument);
  in.device.platform = "tpu";
  auto tpu = resolve(in);
  ASSERT_FALSE(tpu);
  EXPECT_NE(tpu.error().message.find("expected cuda, npu, rocm or cpu"), std::string::npos);
}

// Issue 15, the version from the evidence: with no version and nothing dating one, the prediction is given over
// every vllm-ascend profile of data/engines/engines.json (six, read from the file by hand: 0.7-0.12 ... 0.23-0.26),
// oldest first; each point equals the fit with that version given explicitly, and the band spans their KV tokens
// (0.21-0.22 subtracts the ACL graph estimate and defaults util 0.92, so the points differ: a band, not a point).
// user36: the fixture's Qwen3ForCausalLM is in vLLM's registry from 0.8.4 (data/engines/model_support.json), so the
// 0.7-0.12 point is that profile from 0.8.4 (vllm-ascend@0.8.4), the first release that can have run it.
TEST(Deploy, Issue15_UndatedVersionGivesABandOverVersions) {
  deploy::Flags f;
  f.max_model_len = Given<int64_t>{32768, "--max-model-len"};
  const deploy::Catalogs cats{&fixture().devices, &fixture().engines};
  const auto band = deploy::across_versions(inputs("910B3", "vllm-ascend", f), cats);
  const std::vector<std::string> ids = {"vllm-ascend@0.7-0.12", "vllm-ascend@0.13-0.14", "vllm-ascend@0.15-0.17",
                                        "vllm-ascend@0.18-0.20", "vllm-ascend@0.21-0.22", "vllm-ascend@0.23-0.26"};
  ASSERT_EQ(band.points.size(), ids.size());
  int64_t lo = INT64_MAX, hi = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(band.points[i].engine_id, i == 0 ? ids[i] + " from 0.8.4" : ids[i]);
    auto r = resolve(inputs("910B3", i == 0 ? std::string("vllm-ascend@0.8.4") : ids[i].substr(0, ids[i].find('-', 12)), f));
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(r->engine.id, ids[i]);
    const auto e = estimate::estimate_fit(r->model, r->device, r->engine, r->overheads, r->deployment);
    EXPECT_EQ(band.points[i].kv_tokens, e.kv_tokens) << ids[i];
    EXPECT_EQ(band.points[i].fits, e.fits) << ids[i];
    lo = std::min(lo, e.kv_tokens);
    hi = std::max(hi, e.kv_tokens);
  }
  EXPECT_EQ(band.kv_tokens_min, lo);
  EXPECT_EQ(band.kv_tokens_max, hi);
  EXPECT_LT(band.kv_tokens_min, band.kv_tokens_max);
  EXPECT_EQ(band.fitting, 6);

  // Stated or dated: no band (the one profile it names).
  EXPECT_TRUE(deploy::across_versions(inputs("910B3", "vllm-ascend@0.18", f), cats).points.empty());
  auto hinted = inputs("910B3", "vllm-ascend", f);
  hinted.engine.version_hint = "image quay.io/ascend/vllm-ascend:v0.13.0rc1";
  EXPECT_TRUE(deploy::across_versions(hinted, cats).points.empty());
  auto by_line = inputs("910B3", "vllm-ascend", f);
  by_line.engine.printed_tokens_are_blocks = true;
  EXPECT_TRUE(deploy::across_versions(by_line, cats).points.empty());
  auto by_date = inputs("910B3", "vllm-ascend", f);
  by_date.engine.evidence_date = "issue of 2026-01-19";
  EXPECT_TRUE(deploy::across_versions(by_date, cats).points.empty());
  // A date before every first release dates nothing: the band again.
  by_date.engine.evidence_date = "2024-01-01";
  EXPECT_EQ(deploy::across_versions(by_date, cats).points.size(), ids.size());
}

// Issue 15: the same for vLLM on a CUDA card: its nine profiles (engines.json, 0.6-0.7 ... 0.28-0.30), oldest first,
// each point the fit with that version given; a version the catalogue does not know (with the newest assumed) gives the
// band too, and a date dates it (no band). user36: Qwen3ForCausalLM is in vLLM's registry from 0.8.4
// (data/engines/model_support.json): 0.6-0.7 cannot have run it and is left out, 0.8-0.9.1 is sized from 0.8.4.
TEST(Deploy, Issue15_UndatedVllmVersionGivesABandOverVersions) {
  deploy::Flags f;
  f.max_model_len = Given<int64_t>{8192, "--max-model-len"};
  const deploy::Catalogs cats{&fixture().devices, &fixture().engines};
  const std::vector<std::string> ids = {"vllm@0.8-0.9.1",  "vllm@0.9.2-0.11.0", "vllm@0.11.1-0.13", "vllm@0.14-0.15",
                                        "vllm@0.16-0.20", "vllm@0.21-0.25",    "vllm@0.26-0.27", "vllm@0.28-0.30"};
  const auto band = deploy::across_versions(inputs("A100-80G-SXM", "vllm", f), cats);
  ASSERT_EQ(band.points.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(band.points[i].engine_id, i == 0 ? ids[i] + " from 0.8.4" : ids[i]);
    auto r = resolve(inputs("A100-80G-SXM", i == 0 ? std::string("vllm@0.8.4") : ids[i].substr(0, ids[i].find('-')), f));
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(r->engine.id, ids[i]);
    EXPECT_EQ(r->engine_version_basis, deploy::VersionBasis::stated);
    const auto e = estimate::estimate_fit(r->model, r->device, r->engine, r->overheads, r->deployment);
    EXPECT_EQ(band.points[i].kv_tokens, e.kv_tokens) << ids[i];
  }
  auto newest = resolve(inputs("A100-80G-SXM", "vllm", f));
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->engine.id, "vllm@0.28-0.30");
  EXPECT_EQ(newest->engine_version_basis, deploy::VersionBasis::newest_assumed);

  auto unknown = inputs("A100-80G-SXM", "vllm", f);
  unknown.engine.version = "vLLM V1 (a recipe; version not in the excerpt)";
  unknown.engine.unknown = deploy::UnknownVersion::newest;
  EXPECT_EQ(deploy::across_versions(unknown, cats).points.size(), ids.size());
  unknown.engine.evidence_date = "boot of 2026-06-01";
  EXPECT_TRUE(deploy::across_versions(unknown, cats).points.empty());
  auto dated = resolve(unknown);
  ASSERT_TRUE(dated);
  EXPECT_EQ(dated->engine.id, "vllm@0.21-0.25");
  EXPECT_EQ(dated->engine_version_basis, deploy::VersionBasis::dated);
}

// Issue 15: HCCL_BUFFSIZE as the engine's environment gives it. CANN: "an integer greater than or equal to 1" (MB);
// 1024 MB is 1024 x 1024 x 1024 B in the deployment (HCCL's MB are MiB); 0 and 2.5 are refused naming the origin.
TEST(Deploy, Issue15_HcclBuffsizeFromTheEnvironment) {
  deploy::Flags f;
  f.hccl_buffsize_mb = Given<double>{1024, "case.jsonl:3: env.HCCL_BUFFSIZE"};
  auto d = deploy::deployment_from_flags(f);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  ASSERT_TRUE(d->hccl_buffsize_bytes.has_value());
  EXPECT_DOUBLE_EQ(*d->hccl_buffsize_bytes, 1073741824.0);
  for (double bad : {0.0, 2.5}) {
    f.hccl_buffsize_mb = Given<double>{bad, "case.jsonl:3: env.HCCL_BUFFSIZE"};
    const auto checked = deploy::check_flags(f);
    ASSERT_FALSE(checked.has_value()) << bad;
    EXPECT_EQ(checked.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(checked.error().message.find("case.jsonl:3: env.HCCL_BUFFSIZE: HCCL_BUFFSIZE must be an integer greater than or equal to 1"), std::string::npos)
        << checked.error().message;
  }
  EXPECT_FALSE(deploy::deployment_from_flags(deploy::Flags{})->hccl_buffsize_bytes.has_value());
}

// Issue 15: ranks that do not fit the devices quote vLLM's own failure after ours. DP 4 x TP 2 on 6 devices: DP rank
// 6 // 2 = 3 asks for devices [6, 8) of "0,...,5" (vllm/v1/engine/utils.py); TP 8 alone on 6 devices trips the
// multiproc executor's assertion local_world_size (8) <= 6. DP 2 x TP 2 on 6 only leaves 2 idle: ours alone.
TEST(Deploy, Issue15_DevicesNotDividedQuoteVllm) {
  const std::vector<std::tuple<int64_t, int64_t, int64_t, std::string>> rows = {
      {6, 2, 4, "--num-devices: 6 devices do not divide into data x tensor x pipeline parallel ranks 8; vLLM: Exception: Error setting CUDA_VISIBLE_DEVICES: "
                "local range: [6, 8) base value: \"0,1,2,3,4,5\""},
      {6, 8, 1, "--num-devices: 6 devices do not divide into tensor x pipeline parallel ranks 8; vLLM: AssertionError: local_world_size (8) must be less than "
                "or equal to the number of visible devices (6)."},
      {6, 2, 2, "--num-devices: 6 devices do not divide into data x tensor x pipeline parallel ranks 4"},
  };
  for (const auto& [devices, tp, dp, message] : rows) {
    deploy::Flags f;
    f.num_devices = Given<int64_t>{devices, "--num-devices"};
    f.tensor_parallel_size = Given<int64_t>{tp, "--tensor-parallel-size"};
    f.data_parallel_size = Given<int64_t>{dp, "--data-parallel-size"};
    const auto s = deploy::check_flags(f);
    ASSERT_FALSE(s.has_value()) << message;
    EXPECT_EQ(s.error().kind, ErrorKind::invalid_argument);
    EXPECT_EQ(s.error().message, message);
  }
}

// Issue 15 round 2: vLLM's DP failure names the platform's device-control variable (Platform.device_control_env_var):
// ASCEND_RT_VISIBLE_DEVICES on NPU (vllm-ascend vllm_ascend/platform.py), CUDA_VISIBLE_DEVICES on CUDA and ROCm
// (vllm/platforms/cuda.py, rocm.py). DP 4 x TP 2 on 6 devices: DP rank 3 asks for [6, 8) of "0,...,5".
TEST(Deploy, Issue15_DpDeviceMessageNamesThePlatformVariable) {
  deploy::Flags f;
  f.num_devices = Given<int64_t>{6, "--num-devices"};
  f.tensor_parallel_size = Given<int64_t>{2, "--tensor-parallel-size"};
  f.data_parallel_size = Given<int64_t>{4, "--data-parallel-size"};
  const std::string head = "--num-devices: 6 devices do not divide into data x tensor x pipeline parallel ranks 8; vLLM: Exception: Error setting ";
  const std::string tail = ": local range: [6, 8) base value: \"0,1,2,3,4,5\"";
  for (const auto& [platform, variable] : std::vector<std::pair<std::string, std::string>>{
           {"npu", "ASCEND_RT_VISIBLE_DEVICES"}, {"cuda", "CUDA_VISIBLE_DEVICES"}, {"rocm", "CUDA_VISIBLE_DEVICES"}, {"", "CUDA_VISIBLE_DEVICES"}}) {
    const auto s = deploy::check_flags(f, platform);
    ASSERT_FALSE(s.has_value()) << platform;
    EXPECT_EQ(s.error().message, head + variable + tail) << platform;
  }
  // The platform a --device text names before resolution: --platform, the catalogue card's, a platform word.
  EXPECT_EQ(deploy::device_text_platform("910B3", ""), "npu");
  EXPECT_EQ(deploy::device_text_platform("H100-SXM", ""), "cuda");
  EXPECT_EQ(deploy::device_text_platform("910B3,910B3", ""), "npu");
  EXPECT_EQ(deploy::device_text_platform("some Ascend card 64GB", ""), "npu");
  EXPECT_EQ(deploy::device_text_platform("", "NPU"), "npu");
  EXPECT_EQ(deploy::device_text_platform("mystery card", ""), "");
}

// Issue 15, heterogeneous PP: "A100-80G,L40S" puts stage 1 on an L40S with its own total; the count must be the PP
// size, the cards one platform; VLLM_PP_LAYER_PARTITION is parsed and checked with vLLM's messages.
TEST(Deploy, Issue15_StageDevicesAndLayerPartition) {
  deploy::Inputs in;
  in.model.num_hidden_layers = 36;
  in.device = {"A100-80G,L40S", "--device", deploy::DeviceForm::name};
  in.flags.pipeline_parallel_size = Given<int64_t>{2, "--pipeline-parallel-size"};
  in.flags.pp_layer_partition = Given<std::string>{"12, 24", "--pp-layer-partition"};
  auto r = resolve(in);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->device.id, "A100-80G-SXM");
  ASSERT_EQ(r->deployment.stage_devices.size(), 2u);
  EXPECT_EQ(r->deployment.stage_devices[1].device_id, "L40S");
  EXPECT_EQ(r->deployment.pp_layer_partition, (std::vector<int64_t>{12, 24}));
  struct Bad {
    std::function<void(deploy::Inputs&)> change;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {[](deploy::Inputs& i) { i.device.text = "A100-80G,L40S,L40S"; },
       "--device: 3 devices named for pipeline parallel size 2: expected one per stage, in rank order ('A100-80G,L40S,L40S')"},
      {[](deploy::Inputs& i) { i.device.text = "A100-80G,910B3"; }, "--device: stage 1 is a npu device (910B3), stage 0 a cuda device (A100-80G-SXM): one engine runs every stage"},
      {[](deploy::Inputs& i) { i.flags.pp_layer_partition->value = "12,20"; },
       "--pp-layer-partition: ValueError: sum(partitions)=32 does not match num_hidden_layers=36."},
      {[](deploy::Inputs& i) { i.flags.pp_layer_partition->value = "36"; }, "--pp-layer-partition: ValueError: len(partitions)=1 does not match pp_size=2."},
      {[](deploy::Inputs& i) { i.flags.pp_layer_partition->value = "12,x"; }, "--pp-layer-partition: ValueError: Invalid partition string: 12,x"},
  };
  for (const auto& b : bad) {
    deploy::Inputs i = in;
    b.change(i);
    auto e = resolve(i);
    ASSERT_FALSE(e.has_value()) << b.message;
    EXPECT_EQ(e.error().kind, ErrorKind::invalid_argument);
    EXPECT_EQ(e.error().message, b.message);
  }
}

// Issue 15: --compilation-config as vLLM reads it. The capture keys become the deployment's; other keys are vLLM's own
// and are left alone. Bad input is refused with vLLM's own wording where it has one, naming the flag.
TEST(Deploy, Issue15_CompilationConfigParsesAndRefuses) {
  auto good = deploy::parse_compilation_config(
      Given<std::string>{R"({"cudagraph_capture_sizes": [1, 2, 4, 8], "max_cudagraph_capture_size": 8, "cudagraph_mode": "piecewise", "mode": 3})", "--compilation-config"});
  ASSERT_TRUE(good.has_value()) << good.error().describe();
  EXPECT_EQ(good->capture_sizes, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(good->max_capture_size, 8);
  EXPECT_EQ(good->mode, estimate::CudagraphMode::piecewise);
  const struct {
    const char* json;
    const char* fragment;
  } bad[] = {
      {R"({"cudagraph_capture_sizes": [1, 2)", "--compilation-config: expected a JSON object"},
      {R"({"cudagraph_capture_sizes": [0, 8]})", "--compilation-config: cudagraph_capture_sizes: 0 is not a positive token count"},
      {R"({"cudagraph_capture_sizes": [-4]})", "cudagraph_capture_sizes: -4 is not a positive token count"},
      {R"({"cudagraph_capture_sizes": []})", "AssertionError: cudagraph_capture_sizes should contain at least one element when using cuda graph."},
      {R"({"cudagraph_capture_sizes": "8"})", "cudagraph_capture_sizes: Input should be a valid list"},
      {R"({"max_cudagraph_capture_size": 0})", "AssertionError: Maximum cudagraph size should be greater than or equal to 1 when using cuda graph."},
      {R"({"cudagraph_mode": "FULLL"})", "cudagraph_mode: KeyError: 'FULLL'"},
      {R"({"cudagraph_mode": "full_and_piecewis"})", "KeyError: 'FULL_AND_PIECEWIS'"},
      {R"({"cudagraph_capture_sizes": [1, 2, 4], "max_cudagraph_capture_size": 8})",
       "ValueError: customized max_cudagraph_capture_size(=8) should be consistent with the max value of cudagraph_capture_sizes(=4)"},
  };
  for (const auto& b : bad) {
    auto r = deploy::parse_compilation_config(Given<std::string>{b.json, "--compilation-config"});
    ASSERT_FALSE(r.has_value()) << b.json;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(r.error().describe().find(b.fragment), std::string::npos) << r.error().describe();
  }
  // check_flags applies the same checks, and the optimization level's range.
  deploy::Flags f;
  f.compilation_config = Given<std::string>{R"({"cudagraph_mode": "SOMETIMES"})", "--compilation-config"};
  f.optimization_level = Given<int64_t>{4, "-O"};
  auto checked = deploy::check_flags(f);
  ASSERT_FALSE(checked.has_value());
  EXPECT_NE(checked.error().message.find("--compilation-config: cudagraph_mode: KeyError: 'SOMETIMES'"), std::string::npos) << checked.error().message;
  EXPECT_NE(checked.error().message.find("-O: expected an optimization level 0, 1, 2 or 3 (vLLM OptimizationLevel), found 4"), std::string::npos);
}

// Review of issue 15: the flag and the estimate apply one validator (estimate::terms::check_capture_size_values,
// check_max_capture_size): the flag's message is "--compilation-config: " + the estimate's, word for word, for a
// non-positive size, a maximum below 1 and a maximum that is not the largest size ([1, 2, 4] with 8: 4 is the largest).
TEST(Deploy, Review15_CaptureFlagsCheckedByTheEstimatesValidator) {
  const struct {
    const char* json;
    estimate::terms::CaptureInputs inputs;
  } cases[] = {
      {R"({"cudagraph_capture_sizes": [0, 8]})", {.max_num_seqs = 4, .max_num_batched_tokens = 8192, .capture_sizes = {0, 8}}},
      {R"({"max_cudagraph_capture_size": 0})", {.max_num_seqs = 4, .max_num_batched_tokens = 8192, .max_capture_size = 0}},
      {R"({"cudagraph_capture_sizes": [1, 2, 4], "max_cudagraph_capture_size": 8})",
       {.max_num_seqs = 4, .max_num_batched_tokens = 8192, .capture_sizes = {1, 2, 4}, .max_capture_size = 8}},
  };
  for (const auto& c : cases) {
    auto flag = deploy::parse_compilation_config(Given<std::string>{c.json, "--compilation-config"});
    auto estimate = estimate::terms::cudagraph_capture_sizes(c.inputs);
    ASSERT_FALSE(flag.has_value()) << c.json;
    ASSERT_FALSE(estimate.has_value()) << c.json;
    EXPECT_EQ(flag.error().kind, ErrorKind::invalid_argument);
    EXPECT_EQ(estimate.error().kind, ErrorKind::invalid_argument);
    EXPECT_EQ(flag.error().message, "--compilation-config: " + estimate.error().message) << c.json;
  }
}

// Issue 15: the dotted forms vLLM's FlexibleArgumentParser merges into the flag's JSON: a number stays a number, a
// name a string, a nested key a nested object; the deployment takes the result; cudagraph_mode NONE is eager.
TEST(Deploy, Issue15_DottedCompilationConfigAndDeployment) {
  std::optional<Given<std::string>> cc;
  ASSERT_TRUE(deploy::merge_dotted_json(cc, "max_cudagraph_capture_size", "16", "-cc").has_value());
  ASSERT_TRUE(deploy::merge_dotted_json(cc, "cudagraph_mode", "PIECEWISE", "-cc").has_value());
  ASSERT_TRUE(deploy::merge_dotted_json(cc, "pass_config.fuse_norm_quant", "false", "-cc").has_value());
  ASSERT_TRUE(cc.has_value());
  EXPECT_EQ(cc->value, R"({"cudagraph_mode":"PIECEWISE","max_cudagraph_capture_size":16,"pass_config":{"fuse_norm_quant":false}})");
  EXPECT_EQ(cc->origin, "-cc");
  deploy::Flags f;
  f.compilation_config = cc;
  f.optimization_level = Given<int64_t>{1, "-O"};
  f.attention_backend = Given<std::string>{"flashinfer", "--attention-backend"};
  auto d = deploy::deployment_from_flags(f);
  ASSERT_TRUE(d.has_value()) << d.error().describe();
  EXPECT_EQ(d->graph_capture.max_capture_size, 16);
  EXPECT_EQ(d->graph_capture.mode, estimate::CudagraphMode::piecewise);
  EXPECT_EQ(d->graph_capture.optimization_level, 1);
  EXPECT_EQ(d->graph_capture.attention_backend, "FLASHINFER");
  EXPECT_EQ(d->mode, estimate::ExecutionMode::graph);
  deploy::Flags none;
  none.compilation_config = Given<std::string>{R"({"cudagraph_mode": "NONE"})", "x"};
  auto e = deploy::deployment_from_flags(none);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->mode, estimate::ExecutionMode::eager);
}

// Issue 15, end to end through resolve and the estimate: Qwen3-8B on one A100 80GB with vLLM 0.23 (256 requests, 2048
// batched tokens by default) and cudagraph_capture_sizes [1, 2, 4, 8]: PIECEWISE 4 and FULL 4 (all within 256
// requests): the catalogue's first capture 99,968,935 B + (3 + 3) x 6,053,189 B = 136,288,069 B. The default capture
// gives 51 + 35 graphs: 99,968,935 + 84 x 6,053,189 = 608,436,811 B. -O0 on 0.23: no graphs, 0 B.
TEST(Deploy, Issue15_CaptureSettingsReachTheGraphTerm) {
  auto graph_bytes = [](const deploy::Flags& f) {
    auto r = resolve(inputs("A100-80G-SXM", "vllm@0.23.0", f));
    EXPECT_TRUE(r.has_value()) << r.error().describe();
    if (!r) return -1.0;
    r->deployment.max_model_len = 8192;
    const auto e = estimate::estimate_fit(r->model, r->device, r->engine, r->overheads, r->deployment);
    return e.graph_bytes;
  };
  EXPECT_DOUBLE_EQ(graph_bytes({}), 608436811.0);
  deploy::Flags listed;
  listed.compilation_config = Given<std::string>{R"({"cudagraph_capture_sizes": [8, 4, 2, 1]})", "--compilation-config"};
  EXPECT_DOUBLE_EQ(graph_bytes(listed), 136288069.0);
  deploy::Flags o0;
  o0.optimization_level = Given<int64_t>{0, "-O"};
  EXPECT_DOUBLE_EQ(graph_bytes(o0), 0.0);
  // -O0 is eager decode too (the speed estimate's graph step), from 0.12; on 0.11 -O0 is the compilation level.
  auto r = resolve(inputs("A100-80G-SXM", "vllm@0.23.0", o0));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->deployment.mode, estimate::ExecutionMode::eager);
  auto old = resolve(inputs("A100-80G-SXM", "vllm@0.11.0", o0));
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->deployment.mode, estimate::ExecutionMode::graph);
}

// Issue 15: an undated version with a date in the evidence takes the newest profile whose first release came out by
// then. vLLM-Ascend's release window (docs/source/community/versioning_policy.md): v0.13.0rc1 2025-12-27, v0.15.0rc1
// 2026-02-27, so 2026-01-19 is the 0.13-0.14 profile, 2025-12-26 the one before, and 2026-02-27 itself the 0.15 one.
TEST(Deploy, Issue15_UndatedVersionDatedByTheEvidenceDate) {
  auto pick = [](const std::string& engine, const std::string& date_text, std::vector<std::string>& assumptions) {
    deploy::EngineInput in{engine, "", "engine_version", "no version here", "case notes", deploy::UnknownVersion::newest};
    in.evidence_date = date_text;
    in.evidence_date_origin = "case source";
    return deploy::resolve_engine(in, fixture().engines, engine == "vllm" ? "cuda" : "npu", assumptions);
  };
  std::vector<std::string> a;
  auto p = pick("vllm-ascend", "github.com/vllm-project/vllm-ascend/issues/5993 (2026-01-19)", a);
  ASSERT_TRUE(p.has_value()) << p.error().describe();
  EXPECT_EQ(p->id, "vllm-ascend@0.13-0.14");
  ASSERT_FALSE(a.empty());
  EXPECT_NE(a.back().find("dated by the case source's date 2026-01-19: vllm-ascend@0.13-0.14, the newest profile released by then (0.13.0rc1 on 2025-12-27"),
            std::string::npos)
      << a.back();
  a.clear();
  EXPECT_EQ(pick("vllm-ascend", "(2025-12-26)", a)->id, "vllm-ascend@0.7-0.12");
  EXPECT_EQ(pick("vllm-ascend", "2026-02-27", a)->id, "vllm-ascend@0.15-0.17");
  EXPECT_EQ(pick("vllm-ascend", "2026-08-30", a)->id, "vllm-ascend@0.23-0.26");
  // Before the first release of the oldest profile: nothing dates it, the newest stands (said as before).
  a.clear();
  EXPECT_EQ(pick("vllm-ascend", "2024-01-01", a)->id, "vllm-ascend@0.23-0.26");
  for (const auto& s : a) EXPECT_EQ(s.find("dated by the case source"), std::string::npos) << s;
  // Not a date (day 30 of February, digits run on): undated.
  a.clear();
  EXPECT_EQ(pick("vllm-ascend", "2026-02-30", a)->id, "vllm-ascend@0.23-0.26");
  EXPECT_EQ(pick("vllm-ascend", "issue 12026-01-190", a)->id, "vllm-ascend@0.23-0.26");
  for (const auto& s : a) EXPECT_EQ(s.find("dated by the case source"), std::string::npos) << s;
  // vLLM (engines.json first_release, each the earliest date found that the release was out): v0.6.0 2024-09-05,
  // v0.8.0 2025-03-19, v0.16.0 2026-02-26, v0.21.0 2026-05-15, v0.26.0 2026-07-26, v0.28.0 2026-08-26. vLLM #10517's comment of
  // 2024-12-02 is the V0 profile; the day of a release is its profile; a day before the oldest dates nothing.
  a.clear();
  auto v0 = pick("vllm", "github.com/vllm-project/vllm/issues/10517 (comment of 2024-12-02)", a);
  ASSERT_TRUE(v0.has_value()) << v0.error().describe();
  EXPECT_EQ(v0->id, "vllm@0.6-0.7");
  ASSERT_GE(a.size(), 2u);  // v0eng30: the dating note, then the V0 engine the whole vllm@0.6-0.7 range defaults to
  EXPECT_NE(a[a.size() - 2].find("dated by the case source's date 2024-12-02: vllm@0.6-0.7, the newest profile released by then (0.6.0 on 2024-09-05"),
            std::string::npos)
      << a[a.size() - 2];
  EXPECT_EQ(a.back().rfind("V0 engine, the default of vllm 0.6.0", 0), 0u) << a.back();
  EXPECT_EQ(pick("vllm", "2025-03-19", a)->id, "vllm@0.8-0.9.1");
  EXPECT_EQ(pick("vllm", "2026-05-14", a)->id, "vllm@0.16-0.20");
  EXPECT_EQ(pick("vllm", "2026-05-15", a)->id, "vllm@0.21-0.25");
  EXPECT_EQ(pick("vllm", "boot of 2026-06-01", a)->id, "vllm@0.21-0.25");
  EXPECT_EQ(pick("vllm", "2026-08-21", a)->id, "vllm@0.26-0.27");
  EXPECT_EQ(pick("vllm", "2026-08-26", a)->id, "vllm@0.28-0.30");
  a.clear();
  EXPECT_EQ(pick("vllm", "2024-09-04", a)->id, "vllm@0.28-0.30");
  for (const auto& s : a) EXPECT_EQ(s.find("dated by the case source"), std::string::npos) << s;
  // The date and the printed token line together: on 2026-06-01 a log printing num_blocks x block size cannot be
  // 0.21-0.25 (int(concurrency x max_model_len) from 0.21), so it is the newest released profile printing blocks.
  a.clear();
  deploy::EngineInput blocks{"vllm", "", "engine_version", "", "", deploy::UnknownVersion::newest};
  blocks.evidence_date = "2026-06-01";
  blocks.evidence_date_origin = "case source";
  blocks.printed_tokens_are_blocks = true;
  EXPECT_EQ(deploy::resolve_engine(blocks, fixture().engines, "cuda", a)->id, "vllm@0.16-0.20");
  ASSERT_FALSE(a.empty());
  EXPECT_NE(a.back().find("dated by the case source's date 2026-06-01: vllm@0.16-0.20"), std::string::npos) << a.back();
  // A stated version wins over the date.
  a.clear();
  deploy::EngineInput stated{"vllm-ascend", "0.23.0", "engine_version", "", "", deploy::UnknownVersion::newest};
  stated.evidence_date = "2026-01-19";
  EXPECT_EQ(deploy::resolve_engine(stated, fixture().engines, "npu", a)->id, "vllm-ascend@0.23-0.26");
  // Issue 15 (hyb): a source build of main (setuptools-scm's "0.1.devN") dated 2026-08-16 holds what was merged by then:
  // the release in development, the first profile released after that date (0.28.0 on 2026-08-26), not 0.26-0.27,
  // the newest released. A release dated the same day stays on 0.26-0.27; a build dated after the newest profile's
  // first release takes the newest; one dated 2026-06-01 is 0.26-0.27 (0.21-0.25 was out, 0.26.0 not yet).
  auto dev = [&](const std::string& version, const std::string& date) {
    a.clear();
    deploy::EngineInput in{"vllm", version, "engine_version", "", "", deploy::UnknownVersion::newest};
    in.evidence_date = date;
    in.evidence_date_origin = "case source";
    return deploy::resolve_engine(in, fixture().engines, "cuda", a)->id;
  };
  EXPECT_EQ(dev("0.1.dev1+g4d2a68d64 (main build, 2026-08-16, ROCm)", "validation receipts 2026-08-16T19:00Z"), "vllm@0.28-0.30");
  ASSERT_FALSE(a.empty());
  EXPECT_NE(a.back().find("dated by the case source's date 2026-08-16: a development build (0.1.dev1+g4d2a68d64 (main build, 2026-08-16, ROCm)) after "
                          "vllm@0.26-0.27, the newest profile released by then, so the release in development, vllm@0.28-0.30 (0.28.0 on 2026-08-26"),
            std::string::npos)
      << a.back();
  EXPECT_EQ(dev("vLLM (version not stated)", "2026-08-16"), "vllm@0.26-0.27");
  EXPECT_EQ(dev("0.1.dev3+gabcdef0", "2026-09-20"), "vllm@0.28-0.30");
  EXPECT_EQ(dev("0.1.dev3+gabcdef0", "2026-06-01"), "vllm@0.26-0.27");
}

// Issue 19: std::stod threw on the numbers a device text states (out_of_range on 400 digits, invalid_argument on a
// lone "."), uncaught: `validate` aborted (exit 134) on such a case's device. A number that is not one, or not a
// finite one, states no total; the others read as before.
TEST(Deployment, Issue19_StatedTotalThatIsNoFiniteNumberStatesNothing) {
  const std::string digits(400, '1');
  EXPECT_FALSE(deploy::stated_total_bytes(digits + " B"));
  EXPECT_FALSE(deploy::stated_total_bytes(". GiB total"));
  EXPECT_FALSE(deploy::stated_total_bytes("total memory " + digits + " GiB"));
  EXPECT_DOUBLE_EQ(*deploy::stated_total_bytes("80.5 GiB total"), 80.5 * k_gib);
  EXPECT_DOUBLE_EQ(*deploy::stated_total_bytes("85899345920 B"), 85899345920.0);
  // The device catalogue's size match (stated_memory_gib) read the same 400 digits with std::stod.
  auto devices = device::load_device_catalog();
  ASSERT_TRUE(devices);
  // The size states nothing, so the name decides, as without it.
  EXPECT_EQ(device::match_device(*devices, "NVIDIA A100 " + digits + "GB").device, device::match_device(*devices, "NVIDIA A100").device);
}

// Issue 19 (hard32): HCCL_BUFFSIZE went through strtod, which read "0x10" as 16 MB, "1e3" as 1000, " 64" as 64 and took
// "inf" and "nan" to the range check. CANN reads an integer of MB ("an integer greater than or equal to 1"): decimal
// digits only. Each other form is refused naming the origin and quoting the text (cut to 60 bytes); leading zeros are
// digits; 0 is read and left to check_flags (Issue15_HcclBuffsizeFromTheEnvironment); 2^43 MB and more are refused
// (their bytes reach 2^63).
TEST(Deploy, Issue19_HcclBuffsizeReadAsCannReadsIt) {
  for (const std::string& bad : std::vector<std::string>{"0x10", "1e3", "inf", "nan", " 64", "64 ", "+64", "-1", "64.0", "", "8796093022208", std::string(100000, '9')}) {
    const auto mb = deploy::parse_hccl_buffsize_mb(bad, "--env HCCL_BUFFSIZE");
    ASSERT_FALSE(mb.has_value()) << "[" << bad.substr(0, 20) << "]";
    EXPECT_EQ(mb.error().kind, ErrorKind::invalid_argument);
    EXPECT_EQ(mb.error().message.rfind("--env HCCL_BUFFSIZE: HCCL_BUFFSIZE must be an integer greater than or equal to 1 (MB, in decimal digits", 0), 0u)
        << mb.error().message;
    EXPECT_LT(mb.error().message.size(), 300u) << mb.error().message.substr(0, 300);
  }
  const std::pair<const char*, int64_t> good[] = {{"1024", 1024}, {"0001024", 1024}, {"1", 1}, {"0", 0}, {"8796093022207", 8796093022207}};
  for (const auto& [text, want] : good) {
    const auto mb = deploy::parse_hccl_buffsize_mb(text, "--env HCCL_BUFFSIZE");
    ASSERT_TRUE(mb.has_value()) << text << ": " << mb.error().message;
    EXPECT_EQ(*mb, want) << text;
  }
  deploy::Flags f;
  const auto hex = deploy::apply_engine_env(f, "HCCL_BUFFSIZE", "0x10", "--env HCCL_BUFFSIZE");
  ASSERT_FALSE(hex.has_value());
  EXPECT_NE(hex.error().message.find("found '0x10'"), std::string::npos) << hex.error().message;
  EXPECT_FALSE(f.hccl_buffsize_mb.has_value());
  ASSERT_TRUE(deploy::apply_engine_env(f, "HCCL_BUFFSIZE", "0512", "--env HCCL_BUFFSIZE").has_value());
  ASSERT_TRUE(f.hccl_buffsize_mb.has_value());
  EXPECT_DOUBLE_EQ(f.hccl_buffsize_mb->value, 512.0);
}
