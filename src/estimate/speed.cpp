// Speed model. Decode is a sequence of steps; each step moves bytes (weights, KV, state) through
// the memory system and issues operators. The seed's rule (tok/s ~ bandwidth / bytes x 0.65) is the
// memory term alone at batch 1; the other terms explain where it fails: eager dispatch (the 5.7x of
// seeds/001 section 5), MoE routing at small batch, all-reduces under TP, cross-node links.
#include "estimate/speed.hpp"
#include "estimate/speed_explain.hpp"
#include "estimate/speed_lines.hpp"
#include "estimate/gguf_vllm.hpp"
#include "estimate/held_texts.hpp"
#include "estimate/layout_texts.hpp"
#include "estimate/llama_cpp_quant.hpp"
#include "estimate/text_memo.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_map>

#include "base/shared_text_memo.hpp"
#include "base/text.hpp"
#include "base/fixed_text.hpp"
#include "base/units.hpp"
#include "estimate/fit_terms.hpp"

namespace preflight::estimate {

using model::LayerKind;
using model::ModelSpec;

namespace {

// Dense peak for the arithmetic the weight format runs in.
double peak_ops(const device::DeviceSpec& d, const model::QuantScheme& q, model::Dtype dtype) {
  using model::WeightFormat;
  const WeightFormat f = q.linear_format;
  // GGUF matrices are multiplied against int8-quantized activations (llama.cpp MMVQ/MMQ kernels).
  if (f == WeightFormat::packed_bits && d.int8_dense_ops) return *d.int8_dense_ops;
  if ((f == WeightFormat::modelslim_w8a8 || f == WeightFormat::modelslim_w8a8_dynamic || f == WeightFormat::int8_channel) && d.int8_dense_ops) return *d.int8_dense_ops;
  if ((f == WeightFormat::fp8_block || f == WeightFormat::fp8_channel || f == WeightFormat::fp8_tensor || f == WeightFormat::mxfp8) && d.fp8_dense_flops) return *d.fp8_dense_flops;
  if (dtype == model::Dtype::f16 && d.fp16_dense_flops) return *d.fp16_dense_flops;
  if (d.bf16_dense_flops) return *d.bf16_dense_flops;
  if (d.fp16_dense_flops) return *d.fp16_dense_flops;
  return 0;
}

using ModelTraffic = StepTraffic;
using namespace std::string_view_literals;

ModelTraffic traffic(const ModelSpec& m, const model::QuantScheme& scheme, const engine::SpeedProfile& profile, const Deployment& dep) {
  ModelTraffic t;
  const int64_t tp = std::max<int64_t>(1, dep.tensor_parallel_size);
  const model::SchemeFormats formats(scheme);
  const double* pre = dep.group_bytes ? dep.group_bytes->for_model(m, scheme) : nullptr;  // issue 19
  // spec35: a GGUF preset's tensors in the ggml type llama-quantize gives each (estimate/llama_cpp_quant), not the preset's
  // file-average bits on every weight, and a GGUF file's at their stored bytes, not their elements in the model dtype
  // (vLLM's zero padding of merged linears from 0.9.0 is not counted as read).
  const std::optional<GgufPreset> preset = gguf_preset_of_scheme(scheme);
  const std::optional<GgufPresetBytes> preset_bytes = preset ? std::optional<GgufPresetBytes>(gguf_preset_bytes(m, *preset)) : std::nullopt;
  // spec35: a GGUF file names its tensors as llama.cpp does; its token_embd is the head too unless the file has an
  // output.weight (vLLM ties the LM head to the embedding then, as llama.cpp does).
  // Compared as string_views: their lengths first (a fill compares every group's module; perfest37).
  const bool gguf_own_head = std::any_of(m.weights.begin(), m.weights.end(), [](const model::WeightGroup& w) { return w.module == "output.weight"sv; });
  constexpr std::string_view k_embed_tokens = "model.embed_tokens";
  for (size_t i = 0; i < m.weights.size(); ++i) {
    const model::WeightGroup& g = m.weights[i];
    if (g.part != model::Part::text) continue;                       // vision runs at prefill only; MTP not loaded
    if (g.module == k_embed_tokens && !m.tie_word_embeddings) continue;  // a gather of B rows, not a read
    if (g.module == "token_embd.weight"sv && gguf_own_head) continue;     // the same gather (GGUFEmbeddingMethod: the rows a batch picks)
    const double share = weight_rank_share(g, tp);
    // A GGUF file's tensor: its bytes as stored (terms::group_bytes sizes its elements in the model dtype).
    const double stored = g.stored_bytes > 0 ? g.stored_bytes * static_cast<double>(g.count)
                          : preset_bytes && i < preset_bytes->group_bytes.size() ? preset_bytes->group_bytes[i]
                          : pre ? pre[i] : terms::group_bytes(m, scheme, formats, g);
    const double bytes = stored * share;
    if (g.expert) {
      t.expert_weight_bytes += bytes;
      t.active_params += static_cast<double>(g.params()) * share * g.active_fraction;
    } else {
      t.dense_weight_bytes += bytes;
      if (g.module != k_embed_tokens || m.tie_word_embeddings) t.active_params += static_cast<double>(g.params()) * share;
    }
  }
  const int cb = cache_dtype_bytes(dep.kv_cache_dtype, m);
  const double tpd = static_cast<double>(tp);
  // The profile's operators per layer kind, looked up once per kind rather than once per layer (0 when absent).
  const auto ops_of = [&](const char* kind) {
    const auto it = profile.ops_per_layer.find(kind);
    return it != profile.ops_per_layer.end() ? it->second : 0.0;
  };
  double kind_ops[static_cast<size_t>(LayerKind::count_)];
  for (size_t k = 0; k < std::size(kind_ops); ++k) kind_ops[k] = ops_of(model::layer_kind_name(static_cast<LayerKind>(k)));
  const double moe_ops = ops_of("moe");
  t.kv_bytes_per_token_layer.reserve(m.layers.size());
  t.window.reserve(m.layers.size());
  for (const auto& l : m.layers) {
    double per_token = 0;
    const double heads = l.num_key_value_heads > 0 ? std::max(1.0, std::ceil(static_cast<double>(l.num_key_value_heads) / tpd)) : 0;
    switch (l.kind) {
      case LayerKind::full_attention:
      case LayerKind::sliding_attention:
        per_token = heads * static_cast<double>(l.head_dim_k + l.head_dim_v) * cb;
        t.attention_flops_per_context_token += 2.0 * static_cast<double>(m.num_attention_heads) / tpd * static_cast<double>(l.head_dim_k + l.head_dim_v);
        break;
      case LayerKind::mla_attention:
        per_token = static_cast<double>(l.mla_cache_dim + l.indexer_head_dim) * cb;
        t.attention_flops_per_context_token += 2.0 * static_cast<double>(m.num_attention_heads) / tpd * 2.0 * static_cast<double>(l.mla_cache_dim);
        break;
      case LayerKind::linear_attention:
      case LayerKind::mamba: {
        // In double: exact for any real model, and a hostile config (ssm_state_size 2^62) gives a huge state
        // and a speed near zero instead of a wrapped 64-bit product and a plausible speed.
        const double conv = static_cast<double>(l.conv_channels) * static_cast<double>(l.conv_len) * (model::dtype_bits(m.dtype) / 8);
        const double ssm = static_cast<double>(l.ssm_heads) * static_cast<double>(l.ssm_head_dim) * static_cast<double>(l.ssm_state_dim) *
                           (model::dtype_bits(l.ssm_dtype) / 8);
        t.state_bytes_per_sequence += (conv + ssm) / tpd;
        break;
      }
      default: break;
    }
    t.kv_bytes_per_token_layer.push_back(per_token);
    t.window.push_back(l.kind == LayerKind::sliding_attention ? l.sliding_window : 0);
    if (l.moe) ++t.moe_layers;
    t.dispatch_ops += kind_ops[static_cast<size_t>(l.kind)];
    if (l.moe) t.dispatch_ops += moe_ops;
  }
  return t;
}

// Bandwidth basis: a measurement beats the catalogue's measurement beats datasheet x copy fraction beats a
// catalogue prior x copy fraction (data/engines/speed.json bandwidth_priors, for cards with no datasheet
// figure). The last two are priors: the band widens by the copy-fraction spread, a prior's range (possibly
// one-sided) sets the bandwidth range, and the output says a measurement replaces it. False when no
// bandwidth is known at all (the estimate says so and stops).
bool bandwidth_basis(SpeedEstimate& s, double& band, const device::DeviceSpec& device, const engine::SpeedCatalog& catalog, const SpeedWorkload& w,
                     const Deployment& dep, LayoutTexts* kept) {
  // Perfest37: the key's basis as an earlier estimate found it (its texts, where this one explains itself, kept with it).
  if (kept && kept->has_basis_numbers && (!dep.explain || kept->has_basis)) {
    std::tie(s.bandwidth_bytes_per_s, s.bandwidth_low_bytes_per_s, s.bandwidth_high_bytes_per_s, s.bandwidth_is_prior) =
        std::tuple(kept->bandwidth, kept->bandwidth_low, kept->bandwidth_high, kept->bandwidth_is_prior);
    if (dep.explain) {
      s.bandwidth_source = kept->bandwidth_source;
      if (!kept->bandwidth_assumption.empty()) s.assumptions.push_back(kept->bandwidth_assumption);
    }
    if (s.bandwidth_is_prior) band += 0.08;
    return true;
  }
  const double cf = catalog.copy_fraction_of_peak;
  // The texts once per layout key (planfast8): a kept basis is written after the branch, which the key decides.
  const bool explain = dep.explain && !(kept && kept->has_basis);
  const size_t assumptions_before = s.assumptions.size();
  // Text only where the estimate explains itself (plan rows do not).
  const auto until = [&] { return "prior, until `preflight bw --save --device " + device.id + "` measures the card"; };
  if (w.bandwidth_bytes_per_s) {
    s.bandwidth_bytes_per_s = *w.bandwidth_bytes_per_s;
    if (explain) s.bandwidth_source = "measured copy bandwidth given by the user (--bandwidth or preflight bw --save)";
  } else if (device.measured_copy_bandwidth_bytes_per_s) {
    s.bandwidth_bytes_per_s = *device.measured_copy_bandwidth_bytes_per_s;
    if (explain) {  // the same on every row of the device (TextMemo)
      thread_local TextMemo<> memo;
      s.bandwidth_source = memo.add(device.source_bandwidth).texts([&](std::vector<SharedText>& out) {
        out.push_back("measured copy bandwidth in the device catalogue (" + device.source_bandwidth + ")");
      })[0];
    }
  } else if (device.hbm_bandwidth_bytes_per_s) {
    s.bandwidth_bytes_per_s = *device.hbm_bandwidth_bytes_per_s * cf;
    s.bandwidth_is_prior = true;
    if (explain) {
      thread_local TextMemo<> memo;
      const auto& t = memo.add(*device.hbm_bandwidth_bytes_per_s).add(cf).add(catalog.copy_fraction_evidence).add(device.id).add(s.bandwidth_bytes_per_s)
                          .texts([&](std::vector<SharedText>& out) {
                            const std::string prior_until = until();
                            out.push_back(format("datasheet peak %.0f GB/s x copy fraction %.2f (%s); %s", *device.hbm_bandwidth_bytes_per_s / 1e9, cf,
                                                 catalog.copy_fraction_evidence.c_str(), prior_until.c_str()));
                            out.push_back(format("bandwidth %.0f GB/s = datasheet peak x %.2f: %s", s.bandwidth_bytes_per_s / 1e9, cf, prior_until.c_str()));
                          });
      s.bandwidth_source = t[0];
      s.assumptions.push_back(t[1]);
    }
  } else if (const engine::BandwidthPrior* prior = catalog.find_bandwidth_prior(device.id)) {
    s.bandwidth_bytes_per_s = prior->peak_bytes_per_s * cf;
    s.bandwidth_low_bytes_per_s = prior->low_bytes_per_s * cf;
    s.bandwidth_high_bytes_per_s = prior->high_bytes_per_s * cf;
    s.bandwidth_is_prior = true;
    if (explain) {  // the same on every row of the device (TextMemo; round 15: 1.9% of the JSON form's instructions)
      thread_local TextMemo<> memo;
      const auto& t = memo.add(prior->peak_bytes_per_s).add(prior->low_bytes_per_s).add(prior->high_bytes_per_s).add(cf).add(prior->source).add(device.id)
                          .texts([&](std::vector<SharedText>& out) {
                            const std::string prior_until = until();
                            out.push_back(format("catalogue prior: peak %.0f GB/s (public figures allow %.0f - %.0f GB/s) x copy fraction %.2f (%s); %s",
                                                 prior->peak_bytes_per_s / 1e9, prior->low_bytes_per_s / 1e9, prior->high_bytes_per_s / 1e9, cf,
                                                 prior->source.c_str(), prior_until.c_str()));
                            out.push_back(format("no datasheet or measured bandwidth for %s: copy bandwidth %.0f GB/s (band %.0f - %.0f GB/s) from a %s",
                                                 device.id.c_str(), s.bandwidth_bytes_per_s / 1e9, s.bandwidth_low_bytes_per_s / 1e9,
                                                 s.bandwidth_high_bytes_per_s / 1e9, prior_until.c_str()));
                          });
      s.bandwidth_source = t[0];
      s.assumptions.push_back(t[1]);
    }
  } else {
    s.assumptions.push_back("no bandwidth known for " + device.id + " (catalogue has none); speed not estimated");
    return false;
  }
  if (dep.explain && kept) {
    if (kept->has_basis) {
      s.bandwidth_source = kept->bandwidth_source;
      if (!kept->bandwidth_assumption.empty()) s.assumptions.push_back(kept->bandwidth_assumption);
    } else {
      kept->has_basis = true;
      kept->bandwidth_source = s.bandwidth_source;
      kept->bandwidth_assumption = s.assumptions.size() > assumptions_before ? s.assumptions.back() : SharedText();
    }
  }
  if (s.bandwidth_is_prior) band += 0.08;  // spread of copy/peak across devices (0.73-0.90)
  if (s.bandwidth_low_bytes_per_s <= 0) s.bandwidth_low_bytes_per_s = s.bandwidth_bytes_per_s;
  if (s.bandwidth_high_bytes_per_s <= 0) s.bandwidth_high_bytes_per_s = s.bandwidth_bytes_per_s;
  if (kept) {
    kept->has_basis_numbers = true;
    std::tie(kept->bandwidth, kept->bandwidth_low, kept->bandwidth_high, kept->bandwidth_is_prior) =
        std::tuple(s.bandwidth_bytes_per_s, s.bandwidth_low_bytes_per_s, s.bandwidth_high_bytes_per_s, s.bandwidth_is_prior);
  }
  return true;
}

// Eager when the platform has no graphs, the deployment asks for it, or (issue 20) the engine version predates the
// first one that captures graphs by default (vllm-ascend before 0.9.0: no ACL graph on the V0 engine); says why.
bool runs_eager(SpeedEstimate& s, const engine::SpeedProfile& profile, const Deployment& dep, const SpeedWorkload& w) {
  if (profile.always_eager || dep.mode == ExecutionMode::eager) return true;
  if (profile.graph_default_since.empty() || !version_before(w.engine_version, profile.graph_default_since)) return false;
  s.assumptions.push_back(format("%s %s predates graph mode by default (%s and later, %s): decode taken as eager", profile.engine.c_str(), w.engine_version.c_str(),
                                 profile.graph_default_since.c_str(), profile.graph_default_source.c_str()));
  return true;
}

// Issue 20: llama.cpp has no tensor parallelism. Over several GPUs it splits the model by layer
// (--split-mode layer, the default since github.com/ggml-org/llama.cpp/pull/4766; docs/multi-gpu.md of
// /pull/22729: "Pipeline parallelism. Each GPU holds a contiguous slice of layers"): a token runs through
// the GPUs one after another, so each step reads every weight at one GPU's bandwidth, not the sum, and
// pays one activation hand-off per GPU boundary. The whole batch goes through every GPU in one pass. True
// for a llama.cpp layout over several devices: `split` is then that layout as TP 1 x PP devices, and s says so.
// Planfast13: `split` is made here, where it is used (a default Deployment made and destroyed in each of the whole-catalogue
// plan's ~47,000 estimates was 2.3 M instructions of it).
bool llama_layer_split(SpeedEstimate& s, const engine::SpeedProfile& profile, const Deployment& dep, std::optional<Deployment>& split) {
  if (profile.engine != "llama.cpp" || s.tensor_parallel_size * s.pipeline_parallel_size <= 1) return false;
  split.emplace(dep);
  split->tensor_parallel_size = 1;
  split->pipeline_parallel_size = s.tensor_parallel_size * s.pipeline_parallel_size;
  s.tensor_parallel_size = 1;
  s.pipeline_parallel_size = split->pipeline_parallel_size;
  if (dep.explain)
    s.assumptions.push_back(format("llama.cpp over %lld GPUs: --split-mode layer (its default), the layers run one GPU after another: every weight is read at one GPU's bandwidth per "
                                   "token, plus %lld activation hand-offs; --split-mode row is not modelled",
                                   static_cast<long long>(s.pipeline_parallel_size), static_cast<long long>(s.pipeline_parallel_size - 1)));
  return true;
}

struct Links {
  double ar_latency_s = 0, ar_bytes_per_s = 0;    // one all-reduce round, and the bandwidth it moves at
  double p2p_latency_s = 0, p2p_bytes_per_s = 0;  // one pipeline hand-off
};

// The links a layout crosses: TP inside a node unless tp exceeds a node (then every all-reduce crosses the NIC);
// PP stages across nodes when tp x pp does. Sets s.cross_node, the all-reduce counts and s.link, which names the
// link assumed (device catalogue figure, PCIe assumed, or the inter-node NIC).
Links interconnect(SpeedEstimate& s, const ModelSpec& m, const device::DeviceSpec& device, const engine::SpeedProfile& profile, const engine::SpeedCatalog& catalog,
                   const SpeedWorkload& w, bool explain, LayoutTexts* kept) {
  Links l;
  const int64_t tp = s.tensor_parallel_size, pp = s.pipeline_parallel_size;
  // Small all-reduces are latency-bound; one-shot/tree algorithms take log2(tp) rounds.
  const double rounds = tp > 1 ? static_cast<double>(std::bit_width(static_cast<uint64_t>(tp - 1))) : 0;  // ceil(log2(tp))
  s.allreduces_per_step = tp > 1 ? 2 * m.num_hidden_layers : 0;
  s.allreduce_latency_units = static_cast<double>(s.allreduces_per_step) * rounds;
  // Perfest37: the key's links as an earlier estimate found them, with the texts it kept (the link's, where this one
  // explains itself and crosses one); the all-reduce count above is the model's.
  if (kept && kept->has_links && (!explain || (tp == 1 && pp == 1) || kept->has_link)) {
    std::tie(l.ar_latency_s, l.ar_bytes_per_s, l.p2p_latency_s, l.p2p_bytes_per_s, s.allreduce_fixed_latency_s, s.cross_node) =
        std::tuple(kept->ar_latency_s, kept->ar_bytes_per_s, kept->p2p_latency_s, kept->p2p_bytes_per_s, kept->allreduce_fixed_latency_s, kept->cross_node);
    if (kept->no_link) s.assumptions.push_back(kept->no_link_assumption);
    if (kept->tp_cross || s.cross_node) s.assumptions.push_back(kept->cross_node_assumption);
    if ((tp > 1 || pp > 1) && explain) {
      s.link = kept->link;
      s.provenance.push_back(kept->link_line);
    }
    return l;
  }
  s.cross_node = tp * pp > w.devices_per_node;
  const bool tp_cross = tp > w.devices_per_node;
  double link_bw = device.interconnect_bandwidth_bytes_per_s.value_or(0);
  const engine::LinkPrior* family_link = link_bw > 0 ? nullptr : catalog.find_link_prior(device.family);
  if (family_link) {
    link_bw = family_link->bandwidth_bytes_per_s;
  } else if (link_bw <= 0) {
    link_bw = 32e9;
    if (tp > 1 && kept && kept->has_no_link) {
      s.assumptions.push_back(kept->no_link_assumption);
    } else if (tp > 1) {  // the same on every row of the device (TextMemo; round 14: 21% of a whole-catalogue plan's rows)
      thread_local TextMemo<> memo;
      s.assumptions.push_back(memo.add(device.id).texts([&](std::vector<SharedText>& out) {
        out.push_back("no interconnect bandwidth for " + device.id + "; 32 GB/s (PCIe 4 x16) assumed");
      })[0]);
      if (kept) {
        kept->has_no_link = true;
        kept->no_link_assumption = s.assumptions.back();
      }
    }
  }
  // PCIe-only cards (the catalogue's link is "PCIe..." - an optional NVLink bridge pairs two cards only - or no link
  // is known): NCCL's measured small-message round (issue 20), else the profile's fitted one.
  // Its first four characters lowercased are "pcie" (read in place: this runs on every row of a plan).
  const std::string& link = device.interconnect;
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  const bool pcie_link = link.size() >= 4 && std::equal(link.begin(), link.begin() + 4, "pcie", [&](char c, char p) { return lower(c) == p; });
  if (!family_link && (pcie_link || !device.interconnect_bandwidth_bytes_per_s)) s.allreduce_fixed_latency_s = profile.pcie_allreduce_latency_s;
  const double round_s = s.allreduce_fixed_latency_s > 0 ? s.allreduce_fixed_latency_s : profile.allreduce_latency_s;
  l.ar_latency_s = round_s + (tp_cross ? catalog.cross_node_latency_s : 0);
  l.ar_bytes_per_s = tp_cross ? catalog.cross_node_bandwidth_bytes_per_s : link_bw;
  l.p2p_bytes_per_s = s.cross_node ? catalog.cross_node_bandwidth_bytes_per_s : link_bw;
  l.p2p_latency_s = s.cross_node ? catalog.cross_node_latency_s + round_s / 2 : round_s / 2;
  if (kept) {
    kept->has_links = true;
    std::tie(kept->ar_latency_s, kept->ar_bytes_per_s, kept->p2p_latency_s, kept->p2p_bytes_per_s, kept->allreduce_fixed_latency_s, kept->cross_node) =
        std::tuple(l.ar_latency_s, l.ar_bytes_per_s, l.p2p_latency_s, l.p2p_bytes_per_s, s.allreduce_fixed_latency_s, s.cross_node);
    kept->tp_cross = tp_cross;
    kept->no_link = !family_link && device.interconnect_bandwidth_bytes_per_s.value_or(0) <= 0 && tp > 1;
  }
  if ((tp_cross || s.cross_node) && kept && kept->has_cross_node) {
    s.assumptions.push_back(kept->cross_node_assumption);
  } else if (tp_cross || s.cross_node) {  // the same on every row of a layout and device (TextMemo)
    thread_local TextMemo<> memo;
    memo.add(static_cast<int64_t>(tp_cross)).add(tp).add(pp).add(w.devices_per_node).add(catalog.cross_node_bandwidth_bytes_per_s).add(catalog.cross_node_latency_s);
    memo.add(link_bw).add(catalog.cross_node_source);
    s.assumptions.push_back(memo.texts([&](std::vector<SharedText>& out) {
      out.push_back(tp_cross ? format("tensor parallel %lld spans nodes of %lld devices: every all-reduce crosses the %.0f GB/s NIC (+%.0f us), against %.0f GB/s inside a node",
                                      static_cast<long long>(tp), static_cast<long long>(w.devices_per_node), catalog.cross_node_bandwidth_bytes_per_s / 1e9,
                                      catalog.cross_node_latency_s * 1e6, link_bw / 1e9)
                             : format("pipeline stages span nodes: %lld activation hand-offs per token over the %.0f GB/s NIC (%s)", static_cast<long long>(pp - 1),
                                      catalog.cross_node_bandwidth_bytes_per_s / 1e9, catalog.cross_node_source.c_str()));
    })[0]);
    if (kept) {
      kept->has_cross_node = true;
      kept->cross_node_assumption = s.assumptions.back();
    }
  }
  if ((tp > 1 || pp > 1) && explain && kept && kept->has_link) {
    s.link = kept->link;
    s.provenance.push_back(kept->link_line);
  } else if ((tp > 1 || pp > 1) && explain) {  // the link's name is text: built only where the estimate explains itself
    // Each name is built only where the link it names is crossed. Inside a node: the link, and NCCL's PCIe
    // all-reduce round where that is the one taken.
    const auto intra = [&] {
      std::string name =
          device.interconnect_bandwidth_bytes_per_s
              ? format("%s, %.0f GB/s (device catalogue)", device.interconnect.empty() ? "device link" : device.interconnect.c_str(), link_bw / 1e9)
          : family_link ? format("%s, %.0f GB/s (prior for the %s family: %s)", family_link->name.c_str(), link_bw / 1e9, device.family.c_str(), family_link->source.c_str())
                        : format("PCIe 4 x16, 32 GB/s (assumed: no link bandwidth for %s)", device.id.c_str());
      if (s.allreduce_fixed_latency_s > 0)
        name += format("; NCCL all-reduce %.0f us per round over PCIe (%s)", s.allreduce_fixed_latency_s * 1e6, profile.pcie_allreduce_source.c_str());
      return name;
    };
    const auto nic = [&] {
      return format("inter-node NIC, %.0f GB/s + %.0f us (%s)", catalog.cross_node_bandwidth_bytes_per_s / 1e9, catalog.cross_node_latency_s * 1e6,
                    catalog.cross_node_source.c_str());
    };
    // The link's text depends on the device, the profile, the catalogue and which links the layout crosses. The key holds
    // the flags that choose the text's branches first, then only the inputs the chosen branches read (round 17: at most 7
    // source texts compared per row, 3 or 4 on most, instead of 9), so two keys with different flags never read as one.
    thread_local TextMemo<> memo;
    const bool has_link = device.interconnect_bandwidth_bytes_per_s.has_value(), uses_intra = !tp_cross && (!s.cross_node || tp > 1);
    memo.add(static_cast<int64_t>(tp_cross)).add(static_cast<int64_t>(s.cross_node)).add(static_cast<int64_t>(tp > 1)).add(static_cast<int64_t>(has_link));
    memo.add(static_cast<int64_t>(family_link != nullptr)).add(s.allreduce_fixed_latency_s).add(l.ar_latency_s).add(profile.engine).add(profile.platform);
    if (uses_intra) {  // intra()
      memo.add(link_bw);
      if (has_link) memo.add(device.interconnect);
      else if (family_link) memo.add(family_link->name).add(family_link->source).add(device.family);
      else memo.add(device.id);
      if (s.allreduce_fixed_latency_s > 0) memo.add(profile.pcie_allreduce_source);
    }
    if (tp_cross || s.cross_node) memo.add(catalog.cross_node_bandwidth_bytes_per_s).add(catalog.cross_node_latency_s).add(catalog.cross_node_source);  // nic()
    const auto& t = memo.texts([&](std::vector<SharedText>& out) {
      out.push_back(tp_cross     ? "all-reduces over the " + nic()
                    : s.cross_node ? (tp > 1 ? "all-reduces within a node over " + intra() + "; " : std::string()) + "pipeline hand-offs over the " + nic()
                                   : intra());
      out.push_back(format("link: %s; all-reduce latency %.0f us per round (%s %s)", out[0].c_str(), l.ar_latency_s * 1e6, profile.engine.c_str(), profile.platform.c_str()));
    });
    s.link = t[0];
    s.provenance.push_back(t[1]);
    if (kept) {
      kept->has_link = true;
      kept->link = t[0];
      kept->link_line = t[1];
    }
  }
  return l;
}

// The part of a rank's routed-expert bytes (its TP share: all experts / tp) one step reads at `micro` sequences:
// E[distinct experts] / E; under expert parallel over `ep` ranks the busiest rank's whole experts, busiest x ep / E.
double expert_read_fraction(const ModelSpec& m, int64_t ep, int64_t micro) {
  const double n = static_cast<double>(m.num_experts);
  const double distinct = expected_distinct_experts(m.num_experts, m.num_experts_per_tok, micro);
  return ep > 1 ? expected_busiest_rank_experts(m.num_experts, ep, distinct) * static_cast<double>(ep) / n : distinct / n;
}

// The KV bytes a decode step reads per rank at `micro` sequences and `context_tokens` (sliding layers up to their
// window), summed layer by layer. At one sequence each layer's (bytes x context) x 1 is bytes x context, so a sum
// taken once for one sequence is the number every step at one sequence reads.
double step_kv_bytes(const ModelTraffic& t, int64_t context_tokens, int64_t micro) {
  double sum = 0;
  for (size_t i = 0; i < t.kv_bytes_per_token_layer.size(); ++i) {
    const int64_t ctx = t.window[i] > 0 ? std::min(t.window[i], context_tokens) : context_tokens;
    sum += t.kv_bytes_per_token_layer[i] * static_cast<double>(ctx) * static_cast<double>(micro);
  }
  return sum;
}

// Issue 19 (planfast12): what this thread learnt of a StepTraffic that no fill has replaced since. Every fill of any
// StepTrafficMemo (or of an estimate's own) counts in `g_traffic_fills`, and a note holds only while the count it was
// taken at is the current one: a StepTraffic changes only by a fill, so a note on an object is the truth about it
// until the next fill anywhere (a memo destroyed and another made at its address is filled before it is read).
std::atomic<uint64_t> g_traffic_fills{0};

struct TrafficNotes {
  // step_kv_bytes(*traffic, context_tokens, 1): the KV bytes of a step at one sequence, the same on every card of a
  // (model, variant, count) (a whole-catalogue plan summed ~47,000 layer lists for it, 3% of its instructions).
  const StepTraffic* traffic = nullptr;
  uint64_t traffic_fills = 0;
  int64_t context_tokens = 0;
  double kv_one_sequence = 0;
};
thread_local TrafficNotes t_notes;

double kv_bytes_one_sequence(const ModelTraffic& t, int64_t context_tokens) {
  const uint64_t fills = g_traffic_fills.load(std::memory_order_relaxed);
  TrafficNotes& n = t_notes;
  if (n.traffic == &t && n.traffic_fills == fills && n.context_tokens == context_tokens) return n.kv_one_sequence;
  n.traffic = &t;
  n.traffic_fills = fills;
  n.context_tokens = context_tokens;
  n.kv_one_sequence = step_kv_bytes(t, context_tokens, 1);
  return n.kv_one_sequence;
}

// Ranks the routed experts are dealt out over as whole experts: TP with --enable-expert-parallel and one data-parallel
// replica (vLLM then reduces the experts' partial sums with the TP all-reduce, like TP). 1 otherwise; with data
// parallel the experts' all-to-all is not modelled and the experts are taken as a TP share (said so).
int64_t expert_parallel_ranks(SpeedEstimate& s, const ModelSpec& m, const Deployment& dep) {
  if (!dep.enable_expert_parallel || m.num_experts <= 0 || s.tensor_parallel_size * std::max<int64_t>(1, dep.data_parallel_size) <= 1) return 1;
  if (dep.data_parallel_size > 1) {
    if (dep.explain) s.assumptions.push_back("expert parallel across data-parallel replicas: the experts' all-to-all is not modelled; experts read as a tensor-parallel share");
    return 1;
  }
  const int64_t ep = s.tensor_parallel_size;
  if (dep.explain)
    s.assumptions.push_back(format("expert parallel over %lld ranks: each holds whole experts (%lld of %lld, vLLM determine_expert_map) and a step waits for "
                                   "the rank holding the most of the experts it touches (expected %.2f of %lld at one sequence, against %.2f as a TP share)",
                                   static_cast<long long>(ep), static_cast<long long>(m.num_experts / ep), static_cast<long long>(m.num_experts),
                                   expected_busiest_rank_experts(m.num_experts, ep, static_cast<double>(m.num_experts_per_tok)),
                                   static_cast<long long>(m.num_experts_per_tok), static_cast<double>(m.num_experts_per_tok) / static_cast<double>(ep)));
  return ep;
}

}  // namespace

const StepTraffic& StepTrafficMemo::get(const model::QuantScheme& scheme, const engine::SpeedProfile& profile, const Deployment& dep) {
  const int64_t tp = std::max<int64_t>(1, dep.tensor_parallel_size);
  if (m_filled && m_tensor_parallel_size == tp && m_kv_cache_dtype == dep.kv_cache_dtype) {
    if (m_inputs == StepTrafficInputs::held && m_scheme_object == &scheme && m_ops_object == &profile.ops_per_layer) return m_traffic;
    // Held (planfast11): the very scheme object of the last fill or hit holds that scheme; only the profile is compared.
    // Perfest37: held, the objects of the last fill or hit are unchanged, so they are what other objects are compared
    // with (no copy of the scheme and the operator table is made at a fill: 2,352 of each in the whole-catalogue plan).
    const bool held = m_inputs == StepTrafficInputs::held;
    if ((held ? *m_ops_object : m_ops_per_layer) == profile.ops_per_layer && (held ? m_scheme_object == &scheme || *m_scheme_object == scheme : m_scheme == scheme)) {
      m_scheme_object = &scheme;
      m_ops_object = &profile.ops_per_layer;
      return m_traffic;
    }
  }
  g_traffic_fills.fetch_add(1, std::memory_order_relaxed);
  m_traffic = traffic(m_model, scheme, profile, dep);
  m_filled = true;
  if (m_inputs == StepTrafficInputs::compared) {
    m_scheme = scheme;
    m_ops_per_layer = profile.ops_per_layer;
  }
  m_tensor_parallel_size = tp;
  m_kv_cache_dtype = dep.kv_cache_dtype;
  m_scheme_object = &scheme;
  m_ops_object = &profile.ops_per_layer;
  return m_traffic;
}

namespace {
// The efficiency line of an explained estimate (its effective bandwidth set), once per layout key where `kept` is given.
void explain_efficiency(SpeedEstimate& s, const engine::SpeedProfile& profile, LayoutTexts* kept) {
  if (kept && kept->has_efficiency) {
    s.provenance.push_back(kept->efficiency_line);
    return;
  }
  thread_local TextMemo<> memo;
  memo.add(s.effective_bandwidth_bytes_per_s).add(s.bandwidth_bytes_per_s).add(profile.bandwidth_efficiency).add(profile.engine).add(profile.platform);
  memo.add(profile.device).add(profile.origin).add(profile.evidence);
  s.provenance.push_back(memo.texts([&](std::vector<SharedText>& out) {
    out.push_back(format("effective bandwidth %.0f GB/s = %.0f GB/s x decode efficiency %.2f (%s %s%s from %s: %s)", s.effective_bandwidth_bytes_per_s / 1e9,
                         s.bandwidth_bytes_per_s / 1e9, profile.bandwidth_efficiency, profile.engine.c_str(), profile.platform.c_str(),
                         profile.device.empty() ? "" : (" calibrated on " + profile.device).c_str(), profile.origin.c_str(), profile.evidence.c_str()));
  })[0]);
  if (kept) {
    kept->has_efficiency = true;
    kept->efficiency_line = s.provenance.back();
  }
}

// The assumption of a card with no dense compute figure for the scheme, the same on every row of the card (TextMemo;
// round 14: 20% of a whole-catalogue plan's rows), once per layout key where `kept` is given.
void note_no_peak(SpeedEstimate& s, const device::DeviceSpec& device, LayoutTexts* kept) {
  if (kept && kept->has_no_peak) {
    s.assumptions.push_back(kept->no_peak_assumption);
    return;
  }
  thread_local TextMemo<> memo;
  s.assumptions.push_back(memo.add(device.id).texts([&](std::vector<SharedText>& out) {
    out.push_back("no dense compute figure for " + device.id + "; compute roofline ignored");
  })[0]);
  if (kept) {
    kept->has_no_peak = true;
    kept->no_peak_assumption = s.assumptions.back();
  }
}

// The profile's engine and platform texts (planfast14: one block per thread and text), once per layout key where `kept`
// is given (perfest37: not looked up on every row).
void name_profile(SpeedEstimate& s, const engine::SpeedProfile& profile, LayoutTexts* kept) {
  thread_local SharedTextMemo engines, platforms;
  if (kept && !kept->has_profile_texts) {
    kept->has_profile_texts = true;
    kept->engine = engines.of(profile.engine);
    kept->platform = platforms.of(profile.platform);
  }
  s.engine = kept ? kept->engine : engines.of(profile.engine);
  s.platform = kept ? kept->platform : platforms.of(profile.platform);
}

// estimate_speed; with `lines` (explained estimates only), the decode-step and prefill lines are left to it (speed_lines.hpp).
SpeedEstimate speed_of(const ModelSpec& model_in, const device::DeviceSpec& device, const engine::SpeedProfile& profile, const engine::SpeedCatalog& catalog,
                       const Deployment& dep, const SpeedWorkload& w, SpeedLines* lines) {
  SpeedEstimate s;
  const ModelSpec& m = model_in;
  const model::QuantScheme& scheme = terms::deployed_scheme(model_in, dep);  // sized_model(model_in, dep).quant, no copy
  thread_local const SharedText eager_text("eager"), graph_text("graph");
  const bool eager = runs_eager(s, profile, dep, w);
  s.mode = eager ? eager_text : graph_text;
  s.tensor_parallel_size = std::max<int64_t>(1, dep.tensor_parallel_size);
  s.pipeline_parallel_size = std::max<int64_t>(1, dep.pipeline_parallel_size);
  std::optional<Deployment> split_dep;
  const bool layer_split = llama_layer_split(s, profile, dep, split_dep);
  s.context_tokens = w.context_tokens;
  s.input_tokens = w.input_tokens;
  const int64_t tp = s.tensor_parallel_size, pp = s.pipeline_parallel_size;

  // Explained, a row holds up to five provenance lines (bandwidth, link, decode step, eager dispatch, prefill): one
  // block for them (round 15). With `lines` (a plan's row, planfast5) at most three, the first two in place (fitcopy36:
  // reserving three moved every row's lines to the heap).
  if (dep.explain && !lines) s.provenance.reserve(5);
  double band = profile.band_fraction;
  LayoutTexts* kept = layout_texts(device, profile, catalog, tp, pp, w);  // planfast8: under a HeldTexts only
  name_profile(s, profile, kept);
  if (!bandwidth_basis(s, band, device, catalog, w, dep, kept)) return s;
  s.effective_bandwidth_bytes_per_s = s.bandwidth_bytes_per_s * profile.bandwidth_efficiency;
  if (dep.explain) explain_efficiency(s, profile, kept);

  // Issue 19: the caller's memo when it hands one in for this model (shared by its estimates on many devices); planfast13:
  // a memo of its own made only without one (its scheme, operator table and traffic were made and destroyed per estimate:
  // 3.5 M instructions of the whole-catalogue plan).
  std::optional<StepTrafficMemo> own;
  StepTrafficMemo& memo = w.traffic && &w.traffic->model() == &m ? *w.traffic : own.emplace(m);
  const ModelTraffic& t = memo.get(scheme, profile, layer_split ? *split_dep : dep);
  s.moe_layers = t.moe_layers;
  const int64_t ep = expert_parallel_ranks(s, m, dep);
  s.dispatch_ops_per_step = t.dispatch_ops;
  const double peak = peak_ops(device, scheme, m.dtype);
  if (peak <= 0) note_no_peak(s, device, kept);

  const Links links = interconnect(s, m, device, profile, catalog, w, dep.explain, kept);
  const double ar_latency = links.ar_latency_s, ar_bw = links.ar_bytes_per_s, p2p_bw = links.p2p_bytes_per_s, p2p_latency = links.p2p_latency_s;
  const double act_bytes = static_cast<double>(m.hidden_size) * 2.0;  // bf16 activations per token

  // Issue 19 (round 7): a step is evaluated three times per point (its value and the band's two ends); its KV bytes and
  // routed-expert fraction at one sequence are taken once per estimate.
  const double kv_one_sequence = kv_bytes_one_sequence(t, w.context_tokens);
  const bool routed = m.num_experts > 0 && t.expert_weight_bytes > 0;
  const double touched_one_sequence = routed ? expert_read_fraction(m, ep, 1) : 1.0;
  auto decode_step = [&](int64_t batch, double effective_bw) {
    StepTerms st;
    const int64_t micro = layer_split ? batch : (batch + pp - 1) / pp;  // sequences per pipeline micro-batch (llama.cpp: one pass)
    const double touched = !routed ? 1.0 : micro == 1 ? touched_one_sequence : expert_read_fraction(m, ep, micro);
    st.weight_bytes = t.dense_weight_bytes + t.expert_weight_bytes * touched;
    st.kv_bytes = micro == 1 ? kv_one_sequence : step_kv_bytes(t, w.context_tokens, micro);
    st.state_bytes = 2.0 * t.state_bytes_per_sequence * static_cast<double>(micro);
    st.memory_s = (st.weight_bytes + st.kv_bytes + st.state_bytes) / effective_bw;
    if (peak > 0) {
      const double flops = 2.0 * t.active_params * micro + t.attention_flops_per_context_token * static_cast<double>(w.context_tokens) * micro;
      st.compute_s = flops / (peak * profile.prefill_compute_efficiency);
    }
    const double device_s = std::max(st.memory_s, st.compute_s);
    const double dispatch_s = eager ? t.dispatch_ops * profile.eager_op_dispatch_s : 0;
    // Host work per step: a fixed part, and a part per running sequence (sampling, detokenize, streaming).
    st.overhead_s = profile.step_overhead_s + profile.sequence_overhead_s * static_cast<double>(batch) + (eager ? std::max(0.0, dispatch_s - device_s) : 0);
    st.moe_s = eager ? 0 : static_cast<double>(t.moe_layers) * profile.moe_layer_overhead_s;
    const double msg = act_bytes * static_cast<double>(micro);
    if (tp > 1) {
      st.communication_bandwidth_s += static_cast<double>(s.allreduces_per_step) * 2.0 * (tp - 1) / static_cast<double>(tp) * msg / ar_bw;
      st.communication_s += s.allreduce_latency_units * ar_latency;
    }
    if (pp > 1) {
      st.communication_bandwidth_s += static_cast<double>(pp - 1) * msg / p2p_bw;
      st.communication_s += static_cast<double>(pp - 1) * p2p_latency;
    }
    st.communication_s += st.communication_bandwidth_s;
    st.step_s = device_s + st.overhead_s + st.moe_s + st.communication_s;
    return st;
  };
  // What bounds a kept step (round 18: named only for a point's terms, not for the band's two ends, which read step_s).
  auto name_bound = [](StepTerms& st) {
    const double parts[] = {st.memory_s, st.compute_s, st.overhead_s + st.moe_s, st.communication_s};
    const char* names[] = {"memory", "compute", "overhead", "communication"};
    st.bound = names[std::max_element(std::begin(parts), std::end(parts)) - std::begin(parts)];
  };

  // The band: the profile's relative spread on the step time, taken at the low and at the high end of
  // the bandwidth range (the same bandwidth unless the basis is a prior with a range).
  // Planfast12: an end of the range that is the basis itself (every card but a prior's with a range) is the step already
  // taken at the basis (`basis_step_s`, decode_step at the same effective bandwidth: the same number), not taken again
  // (two of the three steps of ~47,000 rows of the whole-catalogue plan).
  const double eff = profile.bandwidth_efficiency;
  auto at = [&](int64_t batch, double basis_step_s, double& low, double& high) {
    const auto step_at = [&](double bandwidth) { return bandwidth == s.bandwidth_bytes_per_s ? basis_step_s : decode_step(batch, bandwidth * eff).step_s; };
    low = 1.0 / (step_at(s.bandwidth_low_bytes_per_s) * (1.0 + band));
    high = 1.0 / (step_at(s.bandwidth_high_bytes_per_s) * std::max(0.05, 1.0 - band));
  };
  const SpeedPoint* at_one = nullptr;  // the point at concurrency 1 when asked for (a plan's): the single-stream figures are its own
  s.points.reserve(w.concurrency.size());
  for (const int64_t c : w.concurrency) {
    SpeedPoint p;
    p.concurrency = std::max<int64_t>(1, c);
    p.terms = decode_step(p.concurrency, s.effective_bandwidth_bytes_per_s);
    if (p.terms.step_s <= 0) continue;
    name_bound(p.terms);
    p.per_stream_tokens_per_s = 1.0 / p.terms.step_s;
    p.aggregate_tokens_per_s = static_cast<double>(p.concurrency) / p.terms.step_s;
    at(p.concurrency, p.terms.step_s, p.per_stream_low, p.per_stream_high);
    s.points.push_back(p);
    if (p.concurrency == 1 && !at_one) at_one = &s.points.back();
  }
  const StepTerms one = at_one ? at_one->terms : decode_step(1, s.effective_bandwidth_bytes_per_s);
  if (one.step_s > 0) {
    s.single_stream_tokens_per_s = 1.0 / one.step_s;
    if (at_one) {
      s.single_stream_low = at_one->per_stream_low;
      s.single_stream_high = at_one->per_stream_high;
    } else {
      at(1, one.step_s, s.single_stream_low, s.single_stream_high);
    }
  }
  if (dep.explain) explain_decode(s, lines, one, eager);
  if (eager)
    if (dep.explain)
      s.provenance.push_back(format("eager: %.0f operators per step x %.0f us dispatch = %.1f ms (ops per layer kind from %s)", t.dispatch_ops,
                                  profile.eager_op_dispatch_s * 1e6, t.dispatch_ops * profile.eager_op_dispatch_s * 1e3, catalog.origin.c_str()));

  // Prefill: compute-bound; chunked by max_num_batched_tokens, each chunk re-reads the weights.
  if (peak > 0 && w.input_tokens > 0) {
    const int64_t chunk = std::max<int64_t>(1, dep.max_num_batched_tokens.value_or(8192));
    const int64_t chunks = (w.input_tokens + chunk - 1) / chunk;
    const double in = static_cast<double>(w.input_tokens);
    const double flops = 2.0 * t.active_params * in + t.attention_flops_per_context_token * in * in / 2.0;
    const double compute_s = flops / (peak * profile.prefill_compute_efficiency);
    const double memory_s = static_cast<double>(chunks) * (t.dense_weight_bytes + t.expert_weight_bytes) / s.effective_bandwidth_bytes_per_s;
    double comm_s = 0;
    if (tp > 1) comm_s = s.allreduce_latency_units * static_cast<double>(chunks) * ar_latency + static_cast<double>(s.allreduces_per_step) * (2.0 * (tp - 1) / static_cast<double>(tp) * act_bytes * in / ar_bw);
    if (pp > 1) comm_s += static_cast<double>(pp - 1) * (p2p_latency + act_bytes * in / p2p_bw);
    const double dispatch_s = eager ? static_cast<double>(chunks) * t.dispatch_ops * profile.eager_op_dispatch_s : 0;
    s.ttft_s = std::max({compute_s, memory_s, dispatch_s}) + comm_s + static_cast<double>(chunks) * profile.step_overhead_s;
    s.prefill_tokens_per_s = in / s.ttft_s;
    s.ttft_low_s = s.ttft_s * std::max(0.05, 1.0 - 2 * band);
    s.ttft_high_s = s.ttft_s * (1.0 + 2 * band);
    if (dep.explain) explain_prefill(s, lines, flops, profile.prefill_compute_efficiency, peak, compute_s, chunks, chunk, comm_s);
  }
  return s;
}
}  // namespace

SpeedEstimate estimate_speed(const ModelSpec& model, const device::DeviceSpec& device, const engine::SpeedProfile& profile, const engine::SpeedCatalog& catalog,
                             const Deployment& dep, const SpeedWorkload& w) {
  return speed_of(model, device, profile, catalog, dep, w, nullptr);
}

SpeedEstimate estimate_speed(const ModelSpec& model, const device::DeviceSpec& device, const engine::SpeedProfile& profile, const engine::SpeedCatalog& catalog,
                             const Deployment& dep, const SpeedWorkload& w, SpeedLines& lines) {
  lines = {};
  return speed_of(model, device, profile, catalog, dep, w, &lines);
}


SpeedEstimate estimate_speed(const ModelSpec& model, const device::DeviceSpec& device, const engine::SpeedProfile& profile,
                             const engine::SpeedCatalog& catalog, const Deployment& dep, const FitEstimate& fit, const SpeedWorkload& w) {
  Deployment resolved = dep;
  resolved.tensor_parallel_size = fit.tensor_parallel_size;
  resolved.pipeline_parallel_size = fit.pipeline_parallel_size;
  if (fit.max_num_batched_tokens > 0) resolved.max_num_batched_tokens = fit.max_num_batched_tokens;
  if (!fit.kv_cache_dtype.empty()) resolved.kv_cache_dtype = fit.kv_cache_dtype;
  return estimate_speed(model, device, profile, catalog, resolved, w);
}

}  // namespace preflight::estimate
