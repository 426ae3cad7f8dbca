// Issue 19: estimate::FitCoreMemo keeps the terms a fit computes before its KV budget (weights, profile run, NCCL
// buffers, non-torch, graph, ...) per fit class of card, so that a plan computes them once per class instead of once
// per card. Every fit taken through the memo is compared here with the same fit computed without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_memo.hpp"
#include "model/model_catalog.hpp"
#include "model/model_source.hpp"
#include "model/quant_variant.hpp"

using namespace preflight;

namespace {

// Every number, verdict and text of a fit without its explanation (explain false): equal to the last bit.
void expect_same_fit(const estimate::FitEstimate& a, const estimate::FitEstimate& b, const std::string& at) {
  EXPECT_EQ(a.device_id, b.device_id) << at;
  EXPECT_EQ(a.engine_id, b.engine_id) << at;
  EXPECT_EQ(a.fits, b.fits) << at;
  EXPECT_EQ(a.failure, b.failure) << at;
  EXPECT_EQ(a.failure_message, b.failure_message) << at;
  EXPECT_EQ(a.verdict_depends_on, b.verdict_depends_on) << at;
  EXPECT_EQ(a.quantization, b.quantization) << at;
  EXPECT_EQ(a.weight_scheme, b.weight_scheme) << at;
  EXPECT_EQ(a.kv_cache_dtype, b.kv_cache_dtype) << at;
  EXPECT_EQ(a.max_num_seqs, b.max_num_seqs) << at;
  EXPECT_EQ(a.max_num_batched_tokens, b.max_num_batched_tokens) << at;
  EXPECT_EQ(a.max_model_len, b.max_model_len) << at;
  EXPECT_EQ(a.total_bytes, b.total_bytes) << at;
  EXPECT_EQ(a.requested_bytes, b.requested_bytes) << at;
  EXPECT_EQ(a.gpu_memory_utilization, b.gpu_memory_utilization) << at;
  EXPECT_EQ(a.kv_budget_divisor, b.kv_budget_divisor) << at;
  EXPECT_EQ(a.weights_bytes, b.weights_bytes) << at;
  EXPECT_EQ(a.activation_bytes, b.activation_bytes) << at;
  EXPECT_EQ(a.activation_sampler_bytes, b.activation_sampler_bytes) << at;
  EXPECT_EQ(a.activation_vision_bytes, b.activation_vision_bytes) << at;
  EXPECT_EQ(a.non_torch_bytes, b.non_torch_bytes) << at;
  EXPECT_EQ(a.graph_bytes, b.graph_bytes) << at;
  EXPECT_EQ(a.nccl_buffer_bytes, b.nccl_buffer_bytes) << at;
  EXPECT_EQ(a.allreduce_workspace_bytes, b.allreduce_workspace_bytes) << at;
  EXPECT_EQ(a.ep_communicator_bytes, b.ep_communicator_bytes) << at;
  EXPECT_EQ(a.moe_allgather_bytes, b.moe_allgather_bytes) << at;
  EXPECT_EQ(a.available_kv_bytes, b.available_kv_bytes) << at;
  EXPECT_EQ(a.available_kv_band_bytes, b.available_kv_band_bytes) << at;
  EXPECT_EQ(a.available_kv_band_high_bytes, b.available_kv_band_high_bytes) << at;
  EXPECT_EQ(a.after_kv_needed_low_bytes, b.after_kv_needed_low_bytes) << at;
  EXPECT_EQ(a.after_kv_needed_high_bytes, b.after_kv_needed_high_bytes) << at;
  EXPECT_EQ(a.after_kv_headroom_bytes, b.after_kv_headroom_bytes) << at;
  EXPECT_EQ(a.block_size, b.block_size) << at;
  EXPECT_EQ(a.page_bytes, b.page_bytes) << at;
  EXPECT_EQ(a.num_blocks, b.num_blocks) << at;
  EXPECT_EQ(a.kv_tokens, b.kv_tokens) << at;
  EXPECT_EQ(a.kv_tokens_low, b.kv_tokens_low) << at;
  EXPECT_EQ(a.kv_tokens_high, b.kv_tokens_high) << at;
  EXPECT_EQ(a.max_concurrency, b.max_concurrency) << at;
  EXPECT_EQ(a.kv_bytes_per_token_rank, b.kv_bytes_per_token_rank) << at;
  EXPECT_EQ(a.encoder_profiles_video, b.encoder_profiles_video) << at;
  EXPECT_EQ(a.groups.size(), b.groups.size()) << at;
  EXPECT_EQ(a.assumptions, b.assumptions) << at;
  ASSERT_EQ(a.stages.size(), b.stages.size()) << at;
  for (size_t i = 0; i < a.stages.size(); ++i) {
    EXPECT_EQ(a.stages[i].device_id, b.stages[i].device_id) << at;
    EXPECT_EQ(a.stages[i].total_bytes, b.stages[i].total_bytes) << at;
    EXPECT_EQ(a.stages[i].weights_bytes, b.stages[i].weights_bytes) << at;
    EXPECT_EQ(a.stages[i].available_kv_bytes, b.stages[i].available_kv_bytes) << at;
    EXPECT_EQ(a.stages[i].num_blocks, b.stages[i].num_blocks) << at;
  }
}

// A plan's deployment of a candidate (plan::candidate_deployment): layout, context, the variant's flag and scheme,
// no text, no rank tree, no itemized terms.
estimate::Deployment plan_deployment(int64_t tp, int64_t pp, const model::QuantVariant* v) {
  estimate::Deployment d;
  d.tensor_parallel_size = tp;
  d.pipeline_parallel_size = pp;
  d.max_model_len = 8192;
  if (v) {
    d.quantization = v->engine_quantization;
    d.quant_scheme = v->scheme;
  }
  d.explain = false;
  d.rank_tree = false;
  d.memory_terms = false;
  return d;
}

std::string fit_text(const Expected<estimate::FitEstimate>& f) { return f ? "" : f.error().message; }

}  // namespace

// Every catalogue model, as published and in one quantized variant, at TP 1, TP 8 and TP 8 x PP 2, on every catalogue
// card of the engine's platform in catalogue order through one memo per (model, variant, layout), as a plan takes them:
// each fit equals the fit computed without the memo, and the memo computed fewer cores than it gave fits.
TEST(FitMemo, Issue19_EveryCardThroughTheMemoFitsAsAlone) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  const auto& variants = model::load_variant_catalog();
  ASSERT_TRUE(devices && engines && variants);
  std::vector<model::ModelSpec> models;
  for (const auto& e : model::builtin_model_catalog().models)
    if (auto s = model::model_spec_from_catalog(e)) models.push_back(std::move(*s));
  ASSERT_GT(models.size(), 50u);
  size_t fits = 0, computed = 0, reused = 0;
  for (const auto& [engine_name, platform, variant_id] : {std::tuple<const char*, const char*, const char*>{"vllm", "cuda", "fp8_tensor"}, {"vllm-ascend", "npu", "w8a8"}}) {
    auto eng = engine::select_engine(*engines, engine_name, "");
    ASSERT_TRUE(eng.has_value()) << engine_name;
    const engine::Overheads* oh = engines->overheads_for(*eng, platform);
    ASSERT_NE(oh, nullptr) << engine_name;
    auto variant = model::find_variant(*variants, variant_id);
    ASSERT_TRUE(variant.has_value()) << variant_id;
    std::vector<const device::DeviceSpec*> cards;
    for (const auto& d : devices->devices)
      if (d.platform == platform) cards.push_back(&d);
    ASSERT_GT(cards.size(), 5u) << platform;
    for (size_t i = 0; i < models.size(); ++i) {
      const auto& m = models[i];
      for (const model::QuantVariant* v : {static_cast<const model::QuantVariant*>(nullptr), *variant}) {
        if (v && (m.quant.quantized() || i % 4 != 0)) continue;  // the quantized variant on every fourth unquantized model
        for (const auto& [tp, pp] : {std::pair<int64_t, int64_t>{1, 1}, {8, 1}, {8, 2}}) {
          const estimate::Deployment d = plan_deployment(tp, pp, v);
          estimate::FitCoreMemo memo;
          for (const device::DeviceSpec* card : cards) {
            const std::string at = m.id + (v ? " " + v->id : "") + " TP" + std::to_string(tp) + " PP" + std::to_string(pp) + " on " + card->id;
            const auto alone = estimate::try_estimate_fit(m, *card, *eng, *oh, d);
            const auto memoized = estimate::try_estimate_fit(memo, m, *card, *eng, *oh, d);
            ASSERT_EQ(alone.has_value(), memoized.has_value()) << at;
            if (!alone) {
              EXPECT_EQ(fit_text(alone), fit_text(memoized)) << at;
              continue;
            }
            ++fits;
            expect_same_fit(*alone, *memoized, at);
            EXPECT_EQ(memoized->device_id, card->id) << at;
          }
          computed += memo.cores_computed();
          reused += memo.cores_reused();
        }
      }
    }
  }
  EXPECT_GT(fits, 10000u) << fits << " fits";  // 17,550 with the catalogue of 32de68c
  EXPECT_EQ(computed + reused, fits);
  EXPECT_GT(reused, computed);  // most cards of a platform share their class with an earlier one
}

// The fit class separates what the terms before the budget read of a card's memory: vLLM gives a card of 70 GiB or
// more its large-device batch defaults (the H100-SXM: 16,384 batched tokens and 1,024 sequences on 0.11), so a copy of
// the H100-SXM with a 40 GiB runtime total is a class of its own (a second core), whose fit equals the copy's fit alone
// and differs in its batch settings from the H100's. A deployment that explains itself does not use the memo.
TEST(FitMemo, Issue19_TheLargeBatchThresholdIsAClassOfItsOwn) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(devices && engines);
  auto h100 = device::find_device(*devices, "H100-SXM");
  ASSERT_TRUE(h100.has_value());
  device::DeviceSpec small = *h100;
  small.id = "H100-SXM-40";
  small.runtime_total_bytes = 40.0 * 1024 * 1024 * 1024;
  auto eng = engine::select_engine(*engines, "vllm", "0.11.0");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = engines->overheads_for(*eng, "cuda");
  ASSERT_NE(oh, nullptr);
  const model::CatalogModel* entry = model::builtin_model_catalog().find("Qwen/Qwen3-8B");
  ASSERT_NE(entry, nullptr);
  auto m = model::model_spec_from_catalog(*entry);
  ASSERT_TRUE(m.has_value());
  const estimate::Deployment d = plan_deployment(1, 1, nullptr);
  estimate::FitCoreMemo memo;
  const auto big = estimate::try_estimate_fit(memo, *m, *h100, *eng, *oh, d);
  const auto copy = estimate::try_estimate_fit(memo, *m, small, *eng, *oh, d);
  ASSERT_TRUE(big && copy);
  EXPECT_EQ(memo.cores_computed(), 2u);
  EXPECT_EQ(memo.cores_reused(), 0u);
  expect_same_fit(*estimate::try_estimate_fit(*m, small, *eng, *oh, d), *copy, "40 GiB copy");
  EXPECT_NE(big->max_num_batched_tokens, copy->max_num_batched_tokens);
  const auto again = estimate::try_estimate_fit(memo, *m, *h100, *eng, *oh, d);
  EXPECT_EQ(memo.cores_reused(), 1u);
  ASSERT_TRUE(again.has_value());
  expect_same_fit(*big, *again, "H100-SXM again");

  estimate::Deployment explained = d;
  explained.explain = true;
  estimate::FitCoreMemo unused;
  ASSERT_TRUE(estimate::try_estimate_fit(unused, *m, *h100, *eng, *oh, explained).has_value());
  EXPECT_EQ(unused.cores_computed() + unused.cores_reused(), 0u);
}

// Issue 15 (tpws) x issue 19: vLLM 0.19's FlashInfer all-reduce workspace reads the card's id (its per-card max-input
// table), so on an NVSwitch at TP > 1 the cards the table lists (the Hoppers, B200) are classes of their own: every
// CUDA card through one memo fits as alone, and some fit carries the workspace (else this would test nothing).
TEST(FitMemo, Issue15_AllreduceWorkspaceCardsAreClassesOfTheirOwn) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(devices && engines);
  auto eng = engine::select_engine(*engines, "vllm", "0.19.0");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = engines->overheads_for(*eng, "cuda");
  ASSERT_NE(oh, nullptr);
  std::vector<model::ModelSpec> models;
  for (const char* id : {"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-32B"}) {
    auto entry = model::find_builtin_model(id);
    ASSERT_TRUE(entry.has_value() && entry->has_value()) << id;
    auto spec = model::model_spec_from_catalog(**entry);
    ASSERT_TRUE(spec.has_value()) << id;
    models.push_back(std::move(*spec));
  }
  size_t with_workspace = 0, fits = 0;
  for (const auto& m : models) {
    for (const int64_t tp : {2, 4, 8}) {
      estimate::Deployment d = plan_deployment(tp, 1, nullptr);
      d.interconnect = engine::Interconnect::nvswitch;
      estimate::FitCoreMemo memo;
      for (const auto& card : devices->devices) {
        if (card.platform != "cuda") continue;
        const std::string at = m.id + " TP" + std::to_string(tp) + " on " + card.id;
        const auto alone = estimate::try_estimate_fit(m, card, *eng, *oh, d);
        const auto memoized = estimate::try_estimate_fit(memo, m, card, *eng, *oh, d);
        ASSERT_EQ(alone.has_value(), memoized.has_value()) << at;
        if (!alone) continue;
        ++fits;
        expect_same_fit(*alone, *memoized, at);
        if (alone->allreduce_workspace_bytes > 0) ++with_workspace;
      }
    }
  }
  EXPECT_GT(fits, 50u);
  EXPECT_GT(with_workspace, 0u);
  EXPECT_LT(with_workspace, fits);  // cards outside the table (Ampere, Ada) have none
}

// Issue 19 (planfast10): a plan makes each card's fit class once per TP size (estimate::fit_class) and hands it to every
// fit of the card. Every CUDA card at TP 1, 2, 4 and 8 (vLLM 0.19 on NVSwitch: the all-reduce workspace cards are classes
// of their own) through one memo per TP with its own class fits as alone, and the memo computes and reuses the cores it
// does without classes. A class made for another card is not used: the H100-SXM's handed to a 40 GiB copy of it (whose
// large-device batch defaults differ) after the H100-SXM's own fit gives the copy's fit alone, not the H100-SXM's core.
TEST(FitMemo, Issue19_AFitClassMadeOnceServesItsCardAndNoOther) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(devices && engines);
  auto eng = engine::select_engine(*engines, "vllm", "0.19.0");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = engines->overheads_for(*eng, "cuda");
  ASSERT_NE(oh, nullptr);
  auto entry = model::find_builtin_model("Qwen/Qwen3-32B");
  ASSERT_TRUE(entry.has_value() && entry->has_value());
  auto m = model::model_spec_from_catalog(**entry);
  ASSERT_TRUE(m.has_value());
  size_t fits = 0;
  for (const int64_t tp : {1, 2, 4, 8}) {
    estimate::Deployment d = plan_deployment(tp, 1, nullptr);
    d.interconnect = engine::Interconnect::nvswitch;
    estimate::FitCoreMemo with_classes, without;
    for (const auto& card : devices->devices) {
      if (card.platform != "cuda") continue;
      const std::string at = "TP" + std::to_string(tp) + " on " + card.id;
      const estimate::FitClass cls = estimate::fit_class(card, *eng, *oh, tp);
      estimate::FitEstimate classed, plain;
      const auto alone = estimate::try_estimate_fit(*m, card, *eng, *oh, d);
      ASSERT_TRUE(alone.has_value()) << at;
      ASSERT_TRUE(estimate::try_estimate_fit_into(classed, with_classes, *m, card, *eng, *oh, d, &cls)) << at;
      ASSERT_TRUE(estimate::try_estimate_fit_into(plain, without, *m, card, *eng, *oh, d)) << at;
      expect_same_fit(*alone, classed, at);
      ++fits;
    }
    EXPECT_EQ(with_classes.cores_computed(), without.cores_computed()) << tp;
    EXPECT_EQ(with_classes.cores_reused(), without.cores_reused()) << tp;
    EXPECT_GT(with_classes.cores_reused(), 0u) << tp;
  }
  EXPECT_GT(fits, 100u);

  auto h100 = device::find_device(*devices, "H100-SXM");
  ASSERT_TRUE(h100.has_value());
  device::DeviceSpec small = *h100;
  small.id = "H100-SXM-40";
  small.runtime_total_bytes = 40.0 * 1024 * 1024 * 1024;
  const estimate::FitClass h100_tp1 = estimate::fit_class(*h100, *eng, *oh, 1);
  const estimate::Deployment d1 = plan_deployment(1, 1, nullptr);
  estimate::FitCoreMemo memo;
  estimate::FitEstimate big, copy;
  ASSERT_TRUE(estimate::try_estimate_fit_into(big, memo, *m, *h100, *eng, *oh, d1, &h100_tp1));  // the memo holds the H100-SXM's core
  ASSERT_TRUE(estimate::try_estimate_fit_into(copy, memo, *m, small, *eng, *oh, d1, &h100_tp1));
  const auto small_alone = estimate::try_estimate_fit(*m, small, *eng, *oh, d1);
  ASSERT_TRUE(small_alone.has_value());
  expect_same_fit(*small_alone, copy, "40 GiB copy given the H100-SXM's class");
  EXPECT_NE(big.max_num_batched_tokens, copy.max_num_batched_tokens);  // the class would have given the H100-SXM's core
  EXPECT_EQ(memo.cores_computed(), 2u);
}

// Issue 19 (planfast10): the profile run reads no card, only the model, engine, overheads, layout and deployment a memo's
// entries of one deployment share, and the batch settings and MoE routed rows the card's class gives: a core of another
// class with the same three takes the run of one made before. Every CUDA card under vLLM and every NPU under
// vLLM-Ascend, for a dense, a MoE and a vision model at TP 1 and TP 8 (the H100's large-device batch defaults against the
// A100's: two runs where the settings differ), fits as alone, and some cores took a run.
TEST(FitMemo, Issue19_TheProfileRunIsSharedByClassesWithItsInputs) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(devices && engines);
  size_t fits = 0, shared = 0, computed = 0;
  for (const auto& [engine_name, platform] : {std::pair<const char*, const char*>{"vllm", "cuda"}, {"vllm-ascend", "npu"}}) {
    auto eng = engine::select_engine(*engines, engine_name, "");
    ASSERT_TRUE(eng.has_value()) << engine_name;
    const engine::Overheads* oh = engines->overheads_for(*eng, platform);
    ASSERT_NE(oh, nullptr);
    for (const char* id : {"Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-VL-8B-Instruct"}) {
      auto entry = model::find_builtin_model(id);
      ASSERT_TRUE(entry.has_value() && entry->has_value()) << id;
      auto m = model::model_spec_from_catalog(**entry);
      ASSERT_TRUE(m.has_value()) << id;
      for (const int64_t tp : {1, 8}) {
        const estimate::Deployment d = plan_deployment(tp, 1, nullptr);
        estimate::FitCoreMemo memo;
        for (const auto& card : devices->devices) {
          if (card.platform != platform) continue;
          const std::string at = std::string(id) + " TP" + std::to_string(tp) + " on " + card.id;
          const auto alone = estimate::try_estimate_fit(*m, card, *eng, *oh, d);
          const auto memoized = estimate::try_estimate_fit(memo, *m, card, *eng, *oh, d);
          ASSERT_EQ(alone.has_value(), memoized.has_value()) << at;
          if (!alone) continue;
          ++fits;
          expect_same_fit(*alone, *memoized, at);
          EXPECT_EQ(alone->activation_text_bytes, memoized->activation_text_bytes) << at;
          EXPECT_EQ(alone->activation_sampler_unit_bytes, memoized->activation_sampler_unit_bytes) << at;
          EXPECT_EQ(alone->encoder_budget_tokens, memoized->encoder_budget_tokens) << at;
        }
        shared += memo.runs_shared();
        computed += memo.cores_computed();
      }
    }
  }
  EXPECT_GT(fits, 100u);
  EXPECT_GT(shared, 0u);
  EXPECT_LT(shared, computed);  // the first core of each memo, and the classes of other batch settings, make their own
}

// Issue 19 (planfast11): the weights read the card only through whether block-FP8 loads through Marlin on it (vLLM on
// Ampere / Turing), whether vLLM-Ascend keeps an NZ copy of the embeddings on its family (310P), its MXFP4 layout and the
// batched tokens its class's settings give; a core of another class equal in those takes the weights of one made before,
// and every card of a class takes the KV cache's shape of its first fit (only the budget differs). Every CUDA card under
// vLLM and every NPU under vLLM-Ascend, for a block-FP8 MoE checkpoint, an MXFP4 one, a deepstack vision model and a dense
// one, at TP 1, 2 and 8 through one memo per layout, fits as alone; some cores took weights, and the block-FP8
// checkpoint's weights on an Ampere card (Marlin's group scales) are not the Hopper card's.
TEST(FitMemo, Issue19_WeightsAndKvShapeAreSharedWhereTheCardReadsTheSame) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(devices && engines);
  size_t fits = 0, shared = 0, computed = 0;
  double fp8_on_ampere = 0, fp8_on_hopper = 0;
  for (const auto& [engine_name, platform] : {std::pair<const char*, const char*>{"vllm", "cuda"}, {"vllm-ascend", "npu"}}) {
    auto eng = engine::select_engine(*engines, engine_name, "");
    ASSERT_TRUE(eng.has_value()) << engine_name;
    const engine::Overheads* oh = engines->overheads_for(*eng, platform);
    ASSERT_NE(oh, nullptr);
    for (const char* id : {"Qwen/Qwen3-30B-A3B-FP8", "openai/gpt-oss-20b", "Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-8B"}) {
      auto entry = model::find_builtin_model(id);
      ASSERT_TRUE(entry.has_value() && entry->has_value()) << id;
      auto m = model::model_spec_from_catalog(**entry);
      ASSERT_TRUE(m.has_value()) << id;
      for (const int64_t tp : {1, 2, 8}) {
        const estimate::Deployment d = plan_deployment(tp, 1, nullptr);
        estimate::FitCoreMemo memo;
        for (const auto& card : devices->devices) {
          if (card.platform != platform) continue;
          const std::string at = std::string(id) + " TP" + std::to_string(tp) + " on " + card.id;
          const auto alone = estimate::try_estimate_fit(*m, card, *eng, *oh, d);
          const estimate::FitClass cls = estimate::fit_class(card, *eng, *oh, tp);
          estimate::FitEstimate memoized;
          const auto done = estimate::try_estimate_fit_into(memoized, memo, *m, card, *eng, *oh, d, &cls);
          ASSERT_EQ(alone.has_value(), done.has_value()) << at;
          if (!alone) continue;
          ++fits;
          expect_same_fit(*alone, memoized, at);
          EXPECT_EQ(alone->groups.size(), memoized.groups.size()) << at;
          for (size_t g = 0; g < std::min(alone->groups.size(), memoized.groups.size()); ++g) {
            EXPECT_EQ(alone->groups[g].kind, memoized.groups[g].kind) << at;
            EXPECT_EQ(alone->groups[g].blocks_per_request, memoized.groups[g].blocks_per_request) << at;
          }
          if (std::string(id) == "Qwen/Qwen3-30B-A3B-FP8" && tp == 1 && card.id == "A100-80G-SXM") fp8_on_ampere = memoized.weights_bytes;
          if (std::string(id) == "Qwen/Qwen3-30B-A3B-FP8" && tp == 1 && card.id == "H100-SXM") fp8_on_hopper = memoized.weights_bytes;
        }
        shared += memo.weights_shared();
        computed += memo.cores_computed();
      }
    }
  }
  EXPECT_GT(fits, 100u);
  EXPECT_GT(shared, 0u);
  EXPECT_LT(shared, computed);  // the first core of each memo makes its own
  ASSERT_GT(fp8_on_ampere, 0.0);
  ASSERT_GT(fp8_on_hopper, 0.0);
  EXPECT_GT(fp8_on_ampere, fp8_on_hopper);  // Marlin's group scales in the model dtype on Ampere
}

// Planfast14: estimate::GroupBytesMemo hands a plan's platform runs the weight-group bytes of a (model, deployed scheme)
// computed once. Each model as published, in FP8 at load and in AWQ, through one memo, with each deployment a fresh
// object (as each platform run's scratch deployment is): every answer equals group_bytes_for of that deployment, names
// the caller's own scheme object (GroupBytes::for_model takes it), and the second pass computes nothing. FP8's bytes
// differ from the published BF16 ones (a memo keyed on the model alone would hand the BF16 bytes to the FP8 fits).
TEST(FitMemo, Issue19_GroupBytesAreSharedPerModelAndDeployedScheme) {
  const auto& variants = model::load_variant_catalog();
  ASSERT_TRUE(variants);
  std::vector<const model::QuantVariant*> tried = {nullptr};
  for (const char* id : {"fp8_tensor", "awq"}) {
    auto v = model::find_variant(*variants, id);
    ASSERT_TRUE(v.has_value()) << id;
    tried.push_back(*v);
  }
  std::vector<model::ModelSpec> models;
  for (const char* id : {"Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B"}) {
    auto entry = model::find_builtin_model(id);
    ASSERT_TRUE(entry.has_value() && entry->has_value()) << id;
    auto m = model::model_spec_from_catalog(**entry);
    ASSERT_TRUE(m.has_value()) << id;
    models.push_back(std::move(*m));
  }
  estimate::GroupBytesMemo memo;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& m : models)
      for (const model::QuantVariant* v : tried) {
        const std::string at = m.id + (v ? " " + v->id : " published") + " pass " + std::to_string(pass);
        const estimate::Deployment d = plan_deployment(1, 1, v);  // a fresh object: its scheme at a new address
        const estimate::GroupBytes alone = estimate::group_bytes_for(m, d);
        estimate::GroupBytes shared;
        memo.get(shared, m, d);
        EXPECT_EQ(shared.bytes, alone.bytes) << at;
        EXPECT_EQ(shared.formats, alone.formats) << at;
        EXPECT_EQ(shared.weight_scheme, alone.weight_scheme) << at;
        EXPECT_EQ(shared.places.size(), alone.places.size()) << at;
        EXPECT_EQ(shared.scheme, alone.scheme) << at;  // the caller's deployed scheme, not the first caller's
        EXPECT_NE(shared.for_model(m, *alone.scheme), nullptr) << at;
      }
  EXPECT_EQ(memo.computed(), models.size() * tried.size());
  EXPECT_EQ(memo.reused(), models.size() * tried.size());
  const estimate::Deployment published = plan_deployment(1, 1, nullptr), fp8 = plan_deployment(1, 1, tried[1]);
  double bf16_bytes = 0, fp8_bytes = 0;
  for (const double b : estimate::group_bytes_for(models[0], published).bytes) bf16_bytes += b;
  for (const double b : estimate::group_bytes_for(models[0], fp8).bytes) fp8_bytes += b;
  EXPECT_LT(fp8_bytes, 0.6 * bf16_bytes);  // 8-bit linear weights against 16-bit
}

// Issue 19 (fitcopy36): FitCoreMemo::clear() keeps its entries' blocks and makes each afresh for the next deployment,
// and a fit tries the entry the last one took before the others. One memo, as a plan's (model, variant) item uses it over
// its counts: Qwen3-32B (dense, full attention) at TP 1 on every CUDA card, cleared, gpt-oss-20b (MoE, MXFP4, sliding
// window) at TP 2 on them, cleared, Qwen3-32B at TP 8, and without a clear gpt-oss-20b at TP 1 beside it (two keys in one
// memo, the last entry of the other's). Each fit equals the fit alone; an entry kept with its old core would give the
// next model the last one's KV shape (fit_rest takes a core's shape as it is): gpt-oss's sliding-window groups or its
// page size differ from Qwen3-32B's, so its KV tokens would not be its own.
TEST(FitMemo, Issue19_ClearedEntriesAreMadeAfreshAndTheLastIsTriedFirst) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(devices && engines);
  auto eng = engine::select_engine(*engines, "vllm", "");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = engines->overheads_for(*eng, "cuda");
  ASSERT_NE(oh, nullptr);
  std::vector<model::ModelSpec> models;
  for (const char* id : {"Qwen/Qwen3-32B", "openai/gpt-oss-20b"}) {
    auto entry = model::find_builtin_model(id);
    ASSERT_TRUE(entry.has_value() && entry->has_value()) << id;
    auto m = model::model_spec_from_catalog(**entry);
    ASSERT_TRUE(m.has_value()) << id;
    models.push_back(std::move(*m));
  }
  std::vector<const device::DeviceSpec*> cards;
  for (const auto& d : devices->devices)
    if (d.platform == "cuda") cards.push_back(&d);
  ASSERT_GT(cards.size(), 5u);
  estimate::FitCoreMemo memo;
  size_t fits = 0, computed_before = 0;
  const auto sweep = [&](const model::ModelSpec& m, int64_t tp) {
    const estimate::Deployment d = plan_deployment(tp, 1, nullptr);
    for (const device::DeviceSpec* card : cards) {
      const std::string at = m.id + " TP" + std::to_string(tp) + " on " + card->id;
      const auto alone = estimate::try_estimate_fit(m, *card, *eng, *oh, d);
      const auto memoized = estimate::try_estimate_fit(memo, m, *card, *eng, *oh, d);
      ASSERT_EQ(alone.has_value(), memoized.has_value()) << at;
      if (!alone) continue;
      ++fits;
      expect_same_fit(*alone, *memoized, at);
      ASSERT_EQ(alone->groups.size(), memoized->groups.size()) << at;
      for (size_t g = 0; g < alone->groups.size(); ++g) {
        EXPECT_EQ(alone->groups[g].kind, memoized->groups[g].kind) << at;
        EXPECT_EQ(alone->groups[g].page_bytes, memoized->groups[g].page_bytes) << at;
        EXPECT_EQ(alone->groups[g].blocks_per_request, memoized->groups[g].blocks_per_request) << at;
      }
    }
  };
  sweep(models[0], 1);
  const size_t first_cores = memo.cores_computed();
  memo.clear();
  sweep(models[1], 2);
  memo.clear();
  sweep(models[0], 8);
  computed_before = memo.cores_computed();
  sweep(models[1], 1);  // no clear: the entries of Qwen3-32B at TP 8 stay beside these
  EXPECT_GT(fits, 4 * cards.size() / 2);
  EXPECT_GT(first_cores, 1u);                          // more than one class: entries to keep and make afresh
  EXPECT_GT(memo.cores_computed(), computed_before);   // gpt-oss at TP 1 made its own cores, none taken from Qwen3-32B's
  EXPECT_GT(memo.cores_reused(), memo.cores_computed());
}

// Session 36 (planidx36's finding, fixed in estimate::fit_class): the MoE backend workspace of --moe-backend
// flashinfer_b12x (engines.json overheads[cuda].moe_backend_workspaces, vLLM 0.25.x) is allocated in the profile run on
// the cards its record names (RTXPRO6000) only. A copy of that card under an id the record does not name, fitted through
// the same memo right after the named card, must fit as alone: without the workspace. Before, the fit class held no
// trace of the record's card list, so the unnamed card took the named card's core (its workspace included).
TEST(FitMemo, Issue19_MoeBackendWorkspaceCardsAreTheirOwnClass) {
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines);
  auto eng = engine::select_engine(*engines, "vllm", "0.25.0");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = engines->overheads_for(*eng, "cuda");
  ASSERT_NE(oh, nullptr);
  auto devices = device::load_device_catalog();
  ASSERT_TRUE(devices);
  const device::DeviceSpec* named = nullptr;
  for (const auto& d : devices->devices)
    if (d.id == "RTXPRO6000") named = &d;
  ASSERT_NE(named, nullptr);
  device::DeviceSpec unnamed = *named;
  unnamed.id = "RTXPRO6000-unlisted";
  unnamed.aliases.clear();
  const auto m = model::resolve_model("nvidia/Qwen3-30B-A3B-NVFP4");  // NVFP4 experts, the format the backend takes
  ASSERT_TRUE(m.has_value());
  estimate::Deployment d = plan_deployment(1, 1, nullptr);
  d.moe_backend = "flashinfer_b12x";
  const auto named_alone = estimate::try_estimate_fit(*m, *named, *eng, *oh, d);
  const auto unnamed_alone = estimate::try_estimate_fit(*m, unnamed, *eng, *oh, d);
  ASSERT_TRUE(named_alone.has_value() && unnamed_alone.has_value());
  ASSERT_GT(named_alone->moe_backend_workspace_bytes, 0.0);  // the record names RTXPRO6000: the workspace is there
  ASSERT_EQ(unnamed_alone->moe_backend_workspace_bytes, 0.0);
  estimate::FitCoreMemo memo;
  const auto first = estimate::try_estimate_fit(memo, *m, *named, *eng, *oh, d);
  const auto second = estimate::try_estimate_fit(memo, *m, unnamed, *eng, *oh, d);
  ASSERT_TRUE(first.has_value() && second.has_value());
  expect_same_fit(*named_alone, *first, "RTXPRO6000");
  expect_same_fit(*unnamed_alone, *second, "RTXPRO6000-unlisted");
  EXPECT_EQ(second->moe_backend_workspace_bytes, 0.0);
}

// Issue 19 (perfest37): the KV cache's shape reads of the card only the batched tokens its class's settings give (a
// sliding-window group's blocks per request: ceil((window - 1 + max_num_batched_tokens) / block) + 1); a core of another
// class with the same batched tokens takes the shape a sibling's first fit made (FitCore::shared_shape), one with other
// batched tokens makes its own. gpt-oss-20b (sliding-window layers) and Qwen3-8B on every CUDA card under vLLM at TP 1, 2
// and 8, through one memo per layout, fit as alone, every group equal; some cores took a shape, and the sliding group of
// the H100's large-device batch (8,192 batched tokens) is longer than the A100's (2,048): a rule that shared shapes
// regardless of the batched tokens would hand one of them the other's.
TEST(FitMemo, Issue19_KvShapeIsSharedByClassesWithItsBatchedTokens) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(devices && engines);
  auto eng = engine::select_engine(*engines, "vllm", "");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = engines->overheads_for(*eng, "cuda");
  ASSERT_NE(oh, nullptr);
  size_t fits = 0, shared = 0, computed = 0;
  int64_t sliding_h100 = 0, sliding_a100 = 0;
  for (const char* id : {"openai/gpt-oss-20b", "Qwen/Qwen3-8B"}) {
    auto entry = model::find_builtin_model(id);
    ASSERT_TRUE(entry.has_value() && entry->has_value()) << id;
    auto m = model::model_spec_from_catalog(**entry);
    ASSERT_TRUE(m.has_value()) << id;
    for (const int64_t tp : {1, 2, 8}) {
      const estimate::Deployment d = plan_deployment(tp, 1, nullptr);
      estimate::FitCoreMemo memo;
      for (const auto& card : devices->devices) {
        if (card.platform != "cuda") continue;
        const std::string at = std::string(id) + " TP" + std::to_string(tp) + " on " + card.id;
        const auto alone = estimate::try_estimate_fit(*m, card, *eng, *oh, d);
        const estimate::FitClass cls = estimate::fit_class(card, *eng, *oh, tp);
        estimate::FitEstimate memoized;
        const auto done = estimate::try_estimate_fit_into(memoized, memo, *m, card, *eng, *oh, d, &cls);
        ASSERT_EQ(alone.has_value(), done.has_value()) << at;
        if (!alone) continue;
        ++fits;
        expect_same_fit(*alone, memoized, at);
        ASSERT_EQ(alone->groups.size(), memoized.groups.size()) << at;
        for (size_t g = 0; g < alone->groups.size(); ++g) {
          EXPECT_EQ(alone->groups[g].kind, memoized.groups[g].kind) << at;
          EXPECT_EQ(alone->groups[g].layers, memoized.groups[g].layers) << at;
          EXPECT_EQ(alone->groups[g].page_bytes, memoized.groups[g].page_bytes) << at;
          EXPECT_EQ(alone->groups[g].blocks_per_request, memoized.groups[g].blocks_per_request) << at;
          EXPECT_EQ(alone->groups[g].whole_layers, memoized.groups[g].whole_layers) << at;
          if (std::string(id) == "openai/gpt-oss-20b" && tp == 1 && alone->groups[g].kind == "sliding_attention") {
            if (card.id == "H100-SXM") sliding_h100 = memoized.groups[g].blocks_per_request;
            if (card.id == "A100-80G-SXM") sliding_a100 = memoized.groups[g].blocks_per_request;
          }
        }
      }
      shared += memo.shapes_shared();
      computed += memo.cores_computed();
    }
  }
  EXPECT_GT(fits, 100u);
  EXPECT_GT(shared, 0u);
  EXPECT_LT(shared, computed);
  ASSERT_GT(sliding_a100, 0);
  EXPECT_GT(sliding_h100, sliding_a100);
}

// Issue 19 (perfcls37): the fit class holds the card's family only as the terms read it (estimate::fit_class): the
// family itself where an NPU family list names it, else which of the other rules name it (vLLM's FP8 Marlin fallback on
// Ampere and Turing, each NCCL buffers domain that lists families). Copies of one catalogue card (same id, memory and
// all, so that only the family differs) under each family, fitted in turn through one memo per (model, card, layout):
// every fit equals the copy's fit alone. The families change the fits (checked below: the NCCL domain of "hopper" at
// TP 8 on NVSwitch holds NVLS buffers, 130 MiB a communicator, that of no other family does; block-FP8 weights load
// through Marlin on "turing" and "ampere" only; the A3's MoE all-to-all rows, the 310P's square mask and embedding copy),
// so a class that dropped a rule from its key hands a copy the core of another family with the same key and the fits
// differ. Two families no rule names ("other-x", "other-y") share one core.
TEST(FitMemo, Issue19_TheFamilyKeysTheClassOnlyWhereARuleReadsIt) {
  auto devices = device::load_device_catalog();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(devices && engines);
  struct Case {
    const char* engine;
    const char* version;
    const char* platform;
    const char* card;
    std::vector<const char*> models;
    std::vector<std::string> families;
  };
  const std::vector<Case> cases = {
      {"vllm", "0.10.0", "cuda", "H100-SXM", {"Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B-FP8"}, {"hopper", "other-x", "ampere", "turing", "ada", "other-y", "blackwell"}},
      {"vllm", "0.10.0", "cuda", "A100-80G-SXM", {"Qwen/Qwen3-30B-A3B-FP8"}, {"ampere", "other-x", "hopper", "turing", "other-y"}},
      // Under 70 GiB (no large-device batch whatever the family) "ampere" and "turing" differ only in the NCCL domain.
      {"vllm", "0.10.0", "cuda", "A100-40G-SXM", {"Qwen/Qwen3-8B"}, {"ampere", "turing", "other-x", "other-y"}},
      {"vllm-ascend", "0.12.0", "npu", "910B3", {"Qwen/Qwen3-30B-A3B"}, {"ascend-a2", "other-x", "ascend-a3", "ascend-310p", "ascend-910", "other-y"}},
      {"vllm-ascend", "0.18.0", "npu", "910B3", {"Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B"}, {"ascend-a2", "other-x", "ascend-a3", "ascend-310p", "other-y"}},
  };
  size_t fits = 0, differing = 0, unnamed_shared = 0;
  double nccl_hopper = -1, nccl_other = -1, nccl_ampere = -1, nccl_turing = -1, fp8_turing = -1, fp8_other = -1;
  for (const auto& c : cases) {
    auto eng = engine::select_engine(*engines, c.engine, c.version);
    ASSERT_TRUE(eng.has_value()) << c.engine << " " << c.version;
    const engine::Overheads* oh = engines->overheads_for(*eng, c.platform);
    ASSERT_NE(oh, nullptr);
    const device::DeviceSpec* base = nullptr;
    for (const auto& d : devices->devices)
      if (d.id == c.card) base = &d;
    ASSERT_NE(base, nullptr) << c.card;
    std::vector<device::DeviceSpec> copies;
    for (const auto& f : c.families) {
      copies.push_back(*base);
      copies.back().family = f;
    }
    for (const char* id : c.models) {
      auto entry = model::find_builtin_model(id);
      ASSERT_TRUE(entry.has_value() && entry->has_value()) << id;
      auto m = model::model_spec_from_catalog(**entry);
      ASSERT_TRUE(m.has_value()) << id;
      for (const int64_t tp : {1, 8}) {
        estimate::Deployment d = plan_deployment(tp, 1, nullptr);
        d.interconnect = c.platform == std::string("cuda") && tp > 1 ? engine::Interconnect::nvswitch : engine::Interconnect::unknown;
        d.enable_expert_parallel = c.platform == std::string("npu") && tp > 1;
        estimate::FitCoreMemo memo;
        std::vector<std::optional<estimate::FitEstimate>> alone_fits;
        size_t before_y = 0;
        for (const auto& card : copies) {
          const std::string at = std::string(c.engine) + " " + c.version + " " + id + " TP" + std::to_string(tp) + " on " + c.card + " as " + card.family;
          const auto alone = estimate::try_estimate_fit(*m, card, *eng, *oh, d);
          const estimate::FitClass cls = estimate::fit_class(card, *eng, *oh, tp);
          if (card.family == "other-y") before_y = memo.cores_computed();
          estimate::FitEstimate memoized;
          const auto done = estimate::try_estimate_fit_into(memoized, memo, *m, card, *eng, *oh, d, &cls);
          ASSERT_EQ(alone.has_value(), done.has_value()) << at;
          if (card.family == "other-y" && done) unnamed_shared += memo.cores_computed() == before_y;
          alone_fits.push_back(alone ? std::optional<estimate::FitEstimate>(*alone) : std::nullopt);
          if (!alone) continue;
          ++fits;
          expect_same_fit(*alone, memoized, at);
          if (std::string(c.card) == "H100-SXM" && tp == 8 && std::string(id) == "Qwen/Qwen3-8B") {
            if (card.family == "hopper") nccl_hopper = alone->nccl_buffer_bytes;
            if (card.family == "other-x") nccl_other = alone->nccl_buffer_bytes;
          }
          if (std::string(c.card) == "A100-40G-SXM" && tp == 8) {
            if (card.family == "ampere") nccl_ampere = alone->nccl_buffer_bytes;
            if (card.family == "turing") nccl_turing = alone->nccl_buffer_bytes;
          }
          if (std::string(c.card) == "H100-SXM" && tp == 1 && std::string(id) == "Qwen/Qwen3-30B-A3B-FP8") {
            if (card.family == "turing") fp8_turing = alone->weights_bytes;
            if (card.family == "other-x") fp8_other = alone->weights_bytes;
          }
        }
        for (size_t i = 1; i < alone_fits.size(); ++i)
          if (alone_fits[0] && alone_fits[i] &&
              (alone_fits[0]->available_kv_bytes != alone_fits[i]->available_kv_bytes || alone_fits[0]->assumptions != alone_fits[i]->assumptions))
            ++differing;
      }
    }
  }
  EXPECT_GT(fits, 40u) << fits;
  EXPECT_GT(differing, 5u) << differing;  // the family changes fits: a key without it would fail the comparisons above
  EXPECT_GT(unnamed_shared, 5u) << unnamed_shared;  // "other-y" took the core "other-x" made (the same key)
  EXPECT_GT(nccl_hopper, nccl_other);      // NVLS on the hopper domain
  EXPECT_GT(nccl_ampere, 0.0);             // the ampere domain's 24 channels on NVSwitch
  EXPECT_EQ(nccl_turing, 0.0);             // no domain lists Turing on NVSwitch
  EXPECT_GT(fp8_turing, 0.0);
  EXPECT_NE(fp8_turing, fp8_other);        // Marlin's group scales on Turing
}
