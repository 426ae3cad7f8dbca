// KV-cache geometry of vLLM V1 and vllm-ascend, per shared/reference/engine-memory-accounting.md:
// per-layer pages (sec 3; H_kv = max(1, kv_heads // tp), MLA not split), hybrid block sizes (4.3),
// groups (2.1), num_blocks (2.2), printed tokens (2.3) and concurrency (2.4). Integer products of
// model values are checked: a config with a huge kv_lora_rank or ssm_state_size is an error, not a
// small page that "fits".
#include <algorithm>
#include <array>
#include <climits>
#include <span>
#include <string_view>

#include "base/checked.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "estimate/fit_terms.hpp"

namespace preflight::estimate::terms {

using model::LayerKind;
using model::ModelSpec;

std::string AtLayer::str() const { return format("layer %zu: %s", layer, field); }

int mamba_ssm_cache_bits(const std::string& dtype) {
  if (dtype.empty() || dtype == "auto") return 0;
  if (dtype == "float32") return 32;
  if (dtype == "float16" || dtype == "bfloat16") return 16;
  return -1;
}

namespace {

using LayerCache = KvScan;

AtLayer at_layer(const char* field, size_t i) { return {field, i}; }

// spec_tokens: vLLM lengthens each Mamba / GDN conv state by num_speculative_tokens (MambaSpec).
// ssm_bits: --mamba-ssm-cache-dtype (0: each layer's own ssm_dtype).
Expected<LayerCache> scan_layers(const ModelSpec& m, int64_t tp, int64_t cb, int64_t spec_tokens, const std::string& indexer_cache, int ssm_bits) {
  LayerCache c;
  const int64_t b = model::dtype_bits(m.dtype) / 8;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const auto& l = m.layers[i];
    if (l.kv_shared) continue;
    switch (l.kind) {
      case LayerKind::full_attention:
      case LayerKind::sliding_attention: {
        const int64_t h = std::max<int64_t>(1, l.num_key_value_heads / tp);
        PF_TRY(dims, checked_sum(l.head_dim_k, l.head_dim_v, at_layer("head_dim (K + V)", i)));
        PF_TRY(heads_dims, checked_product(h, dims, at_layer("num_key_value_heads x head_dim", i)));
        PF_TRY(attn, checked_product(heads_dims, cb, at_layer("num_key_value_heads x head_dim x cache dtype bytes", i)));
        PF_TRY(k_heads, checked_product(h, l.head_dim_k, at_layer("num_key_value_heads x head_dim", i)));
        PF_TRY(k, checked_product(k_heads, cb, at_layer("num_key_value_heads x head_dim x cache dtype bytes", i)));
        c.attn_1tok = attn;
        c.k_1tok = k;
        if (l.kind == LayerKind::sliding_attention) { ++c.sliding_layers; c.sliding_window = l.sliding_window; }
        else ++c.attn_layers;
        break;
      }
      case LayerKind::mla_attention: {
        PF_TRY(latent, checked_product(l.mla_cache_dim, cb, at_layer("kv_lora_rank + qk_rope_head_dim (mla_cache_dim) x cache dtype bytes", i)));
        // The sparse-attention indexer's keys, as the engine version lays them out (engines.json sparse_indexer_cache).
        int64_t indexer = 0;
        if (l.indexer_head_dim > 0 && indexer_cache == "mla_page") {
          indexer = latent;
        } else if (l.indexer_head_dim > 0 && indexer_cache == "bf16") {
          PF_TRY(ix, checked_product(l.indexer_head_dim, 2, at_layer("index_head_dim x 2 B", i)));
          indexer = ix;
        } else if (l.indexer_head_dim > 0) {
          PF_TRY(ix, checked_sum(l.indexer_head_dim, l.indexer_head_dim / 128 * 4, at_layer("index_head_dim", i)));
          indexer = ix;
        }
        PF_TRY(attn, checked_sum(latent, indexer, at_layer("mla_cache_dim + index_head_dim", i)));
        c.attn_1tok = attn;
        c.k_1tok = latent;
        ++c.attn_layers;
        break;
      }
      case LayerKind::linear_attention:
      case LayerKind::mamba: {
        PF_TRY(conv_len, checked_sum(l.conv_len, spec_tokens, at_layer("conv kernel - 1 + num_speculative_tokens", i)));
        PF_TRY(conv_elems, checked_product(l.conv_channels / tp, conv_len, at_layer("conv channels x conv kernel", i)));
        PF_TRY(conv, checked_product(conv_elems, b, at_layer("conv channels x conv kernel x dtype bytes", i)));
        PF_TRY(hd, checked_product(l.ssm_heads / tp, l.ssm_head_dim, at_layer("ssm heads x ssm head_dim", i)));
        PF_TRY(hds, checked_product(hd, l.ssm_state_dim, at_layer("ssm heads x ssm head_dim x ssm_state_size", i)));
        PF_TRY(ssm, checked_product(hds, (ssm_bits > 0 ? ssm_bits : model::dtype_bits(l.ssm_dtype)) / 8, at_layer("ssm state x dtype bytes", i)));
        PF_TRY(state, checked_sum(conv, ssm, at_layer("conv state + ssm state", i)));
        c.conv_bytes = conv;
        c.ssm_bytes = ssm;
        c.state_bytes = state;
        ++c.state_layers;
        break;
      }
      default: break;
    }
  }
  return c;
}

struct BlockLayout {
  int64_t block_size = 0;
  int64_t page_bytes = 0;  // common page bytes per layer per block
};

// Block size and page: uniform attention pages, a state page, or a hybrid page where the attention
// block grows until its page holds the recurrent state (CUDA: padded to it; NPU: 128-aligned, or from
// vllm-ascend 0.16 the contiguous K + conv layout).
Expected<BlockLayout> block_layout(const engine::EngineProfile& engine, const LayerCache& c, std::vector<std::string>* provenance) {
  BlockLayout out;
  int64_t bs = engine.block_size;
  const bool hybrid = c.state_layers > 0 && (c.attn_layers + c.sliding_layers) > 0;
  if (hybrid && engine.hybrid_block_rule == engine::HybridBlockRule::npu_contiguous) {
    const int64_t ssm = std::max(c.conv_bytes, c.ssm_bytes), conv = std::min(c.conv_bytes, c.ssm_bytes);
    PF_TRY(per_block, checked_product(128, c.k_1tok, "K bytes per token x 128"));
    PF_TRY(attn_bs, checked_product(128, static_cast<int64_t>(ceil_div(static_cast<uint64_t>(ssm), static_cast<uint64_t>(per_block))), "hybrid block size"));
    bs = std::max(bs, attn_bs);
    PF_TRY(attn_page, checked_product(bs, c.attn_1tok, "hybrid block size x KV bytes per token"));
    PF_TRY(page, checked_sum(attn_page, conv, "hybrid page + conv state"));
    out.page_bytes = page;
    if (provenance) provenance->push_back(format("hybrid block size %lld = 128 x ceil(ssm %lld / (128 x K %lld)); page = block x %lld + conv %lld (vllm-ascend patch_mamba_config >= 0.16)",
                                static_cast<long long>(bs), static_cast<long long>(ssm), static_cast<long long>(c.k_1tok), static_cast<long long>(c.attn_1tok),
                                static_cast<long long>(conv)));
  } else if (hybrid) {
    const int64_t align = engine.hybrid_block_rule == engine::HybridBlockRule::npu_align128 ? 128 : std::max<int64_t>(16, engine.block_size);
    PF_TRY(per_block, checked_product(align, c.attn_1tok, "KV bytes per token x block alignment"));
    PF_TRY(attn_bs, checked_product(align, static_cast<int64_t>(ceil_div(static_cast<uint64_t>(c.state_bytes), static_cast<uint64_t>(per_block))), "hybrid block size"));
    bs = std::max(bs, attn_bs);
    PF_TRY(page, checked_product(bs, c.attn_1tok, "hybrid block size x KV bytes per token"));
    out.page_bytes = page;
    if (provenance) provenance->push_back(format("hybrid block size %lld = %lld x ceil(state %lld / (%lld x %lld)); state page padded to %lld", static_cast<long long>(bs),
                                static_cast<long long>(align), static_cast<long long>(c.state_bytes), static_cast<long long>(align),
                                static_cast<long long>(c.attn_1tok), static_cast<long long>(page)));
  } else if (c.state_layers > 0) {
    out.page_bytes = c.state_bytes;
  } else {
    PF_TRY(page, checked_product(bs, c.attn_1tok, "block size x KV bytes per token"));
    out.page_bytes = page;
  }
  out.block_size = bs;
  return out;
}

// vLLM _get_kv_cache_groups_uniform_page_size: group_size = the fewest layers of a kind, or the most when
// most < ratio x fewest (padding layers added); the ratio is the engine version's (engines.json).
// One cached layer kind of a stage: its name (KvGroup::kind), its layers on the stage and in the whole model (issue 15's
// whole-model PP check). A stage has at most three (full or MLA attention, sliding window, state): kept in place, not
// in vectors (round 14: a fit's kinds were three allocations).
struct KindLayers {
  const char* kind = "";
  int64_t layers = 0, whole_layers = 0;
};

int64_t group_size_for(std::span<const KindLayers> kinds, double ratio) {
  if (kinds.size() == 1) return kinds[0].layers;
  int64_t lo = INT64_MAX, hi = 0;
  for (const auto& k : kinds) { lo = std::min(lo, k.layers); hi = std::max(hi, k.layers); }
  return static_cast<double>(hi) < ratio * static_cast<double>(lo) ? hi : lo;
}

// vLLM's Mamba cache mode, which sets the state blocks one request holds (MambaSpec.max_memory_usage_bytes:
// none 1, align 2, plus one per speculative token): --no-enable-prefix-caching gives none, --enable-prefix-caching
// the version's prefix-caching mode (align since vLLM PR #30877 and vllm-ascend 0.16), unset the version's default.
std::string mamba_cache_mode(const engine::EngineProfile& engine, const KvInputs& in) {
  if (!in.enable_prefix_caching) return engine.hybrid_mamba_mode;
  if (!*in.enable_prefix_caching) return "none";
  return engine.hybrid_prefix_caching_mode.empty() ? engine.hybrid_mamba_mode : engine.hybrid_prefix_caching_mode;
}

// Groups per layer kind with the blocks one request at max_model_len needs in each.
Expected<KvGeometry> kv_groups(const ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& lay, const LayerCache& c, const BlockLayout& bl,
                               const KvInputs& in) {
  KvGeometry g;
  g.block_size = bl.block_size;
  g.page_bytes = bl.page_bytes;
  PF_TRY(per_token, checked_product(c.attn_1tok, c.attn_layers + c.sliding_layers, "KV bytes per token x attention layers"));
  PF_TRY(per_seq, checked_product(c.state_bytes, c.state_layers, "state bytes x recurrent layers"));
  g.kv_bytes_per_token = per_token;
  g.state_bytes_per_sequence = per_seq;
  // Pipeline parallelism: each stage caches only its own layers; the fullest stage sets num_blocks.
  // Counts are the first stage's (num_blocks is sized in first-stage layer units): ceil(n / pp) under vLLM's
  // default split of two stages, else in proportion to the first stage's share of the layers (issue 15).
  const bool even_first = lay.first_layers == static_cast<int64_t>(ceil_div(static_cast<uint64_t>(lay.n_layers), static_cast<uint64_t>(lay.pp)));
  auto stage = [&](int64_t n) {
    if (lay.pp <= 1) return n;
    if (even_first) return static_cast<int64_t>(ceil_div(static_cast<uint64_t>(n), static_cast<uint64_t>(lay.pp)));
    return static_cast<int64_t>(ceil_div(static_cast<uint64_t>(n) * static_cast<uint64_t>(lay.first_layers), static_cast<uint64_t>(lay.n_layers)));
  };
  std::array<KindLayers, 3> stage_kinds;
  size_t n_kinds = 0;
  if (stage(c.attn_layers) > 0)
    stage_kinds[n_kinds++] = {m.layers.empty() || m.layers[0].kind != LayerKind::mla_attention ? "full_attention" : "mla_attention", stage(c.attn_layers), c.attn_layers};
  if (stage(c.sliding_layers) > 0) stage_kinds[n_kinds++] = {"sliding_attention", stage(c.sliding_layers), c.sliding_layers};
  if (stage(c.state_layers) > 0) stage_kinds[n_kinds++] = {"state", stage(c.state_layers), c.state_layers};
  const std::span<const KindLayers> kinds(stage_kinds.data(), n_kinds);
  g.group_padding_ratio = engine.hybrid_group_padding_ratio;
  g.group_size = std::max<int64_t>(1, group_size_for(kinds, engine.hybrid_group_padding_ratio));
  g.groups.reserve(n_kinds);
  // One state block per request (two in "align" mode), plus one per speculative token (MambaSpec num_speculative_blocks).
  const int64_t state_blocks = (mamba_cache_mode(engine, in) == "align" ? 2 : 1) + in.num_speculative_tokens;
  const int64_t bs = bl.block_size, L = in.max_model_len;
  g.token_block_size = bs;
  for (const KindLayers& k : kinds) {
    const std::string_view kind = k.kind;
    const int64_t count = k.layers;
    KvGroup kg;
    kg.kind = kind;
    kg.layers = count;
    kg.whole_layers = k.whole_layers;
    kg.page_bytes = bl.page_bytes;
    if (kind == "state") {
      kg.blocks_per_request = state_blocks;
      // mamba_block_size: max_model_len in mode none, the attention block in align (hybrids only; L >= 1).
      if (kinds.size() > 1 && mamba_cache_mode(engine, in) != "align" && L > 0) g.token_block_size = std::min(g.token_block_size, L);
    } else if (kind == "sliding_attention") {
      PF_TRY(span, checked_sum(c.sliding_window - 1, in.max_num_batched_tokens, "sliding_window + max_num_batched_tokens"));
      kg.blocks_per_request = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(std::min(span, L)), static_cast<uint64_t>(bs))) + 1;
    } else {
      // Decode context parallel (vllm/v1/kv_cache_interface.py FullAttentionSpec.max_memory_usage_bytes, 45f526d65 = vLLM
      // 0.18.0): "each dcp rank only need save (max_model_len//dcp_world_size) tokens locally": cdiv(L, pcp x dcp).
      const int64_t local_len = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(L), static_cast<uint64_t>(std::max<int64_t>(1, in.decode_context_parallel_size))));
      kg.blocks_per_request = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(local_len), static_cast<uint64_t>(bs)));
    }
    const int64_t n = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(count), static_cast<uint64_t>(g.group_size)));
    g.num_groups += n;
    PF_TRY(blocks, checked_product(n, kg.blocks_per_request, "blocks per request"));
    PF_TRY(demand, checked_sum(g.demand_blocks, blocks, "blocks per request"));
    g.demand_blocks = demand;
    g.groups.push_back(std::move(kg));
  }
  return g;
}

// num_blocks = avail // page // group_size (2.2); printed tokens by the version's rule (2.3) and
// concurrency = num_blocks / blocks per request (2.4), at the budget and at both ends of its band.
void blocks_and_tokens(KvGeometry& g, const engine::EngineProfile& engine, const KvInputs& in) {
  if (g.page_bytes > 0 && in.available_blocks_bytes > 0) g.num_blocks = static_cast<int64_t>(in.available_blocks_bytes) / g.page_bytes / g.group_size;
  if (g.num_blocks <= 0 || g.demand_blocks <= 0) return;
  const double L = static_cast<double>(in.max_model_len);
  g.max_concurrency = static_cast<double>(g.num_blocks) / static_cast<double>(g.demand_blocks);
  auto tokens_for = [&](int64_t nb) -> int64_t {
    if (engine.tokens_rule == engine::TokensRule::concurrency_x_len) return static_cast<int64_t>(static_cast<double>(nb) / static_cast<double>(g.demand_blocks) * L);
    // vllm/v1/core/kv_cache_utils.py _report_kv_cache_config (45f526d65 = vLLM 0.18.0, since ac201a0ea #23734): the
    // count is multiplied by pcp x dcp, "Multiplying the GPU KV cache size by the cp_world_size".
    return (g.num_groups > 1 ? nb / g.num_groups : nb) * (g.token_block_size > 0 ? g.token_block_size : g.block_size) *
           std::max<int64_t>(1, in.decode_context_parallel_size);
  };
  g.kv_tokens = engine.tokens_rule == engine::TokensRule::concurrency_x_len ? static_cast<int64_t>(g.max_concurrency * L) : tokens_for(g.num_blocks);
  auto tokens_at = [&](double avail) -> int64_t {
    if (avail <= 0) return 0;
    return tokens_for(static_cast<int64_t>(avail) / g.page_bytes / g.group_size);
  };
  g.kv_tokens_low = tokens_at(in.available_blocks_bytes - in.band_bytes);
  g.kv_tokens_high = tokens_at(in.available_blocks_bytes + in.band_high_bytes);
}

}  // namespace

Expected<KvGeometry> estimate_kv_shape(const ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& lay, const KvInputs& in,
                                       std::vector<std::string>& provenance) {
  const int64_t cb = cache_dtype_bytes(in.kv_cache_dtype, m);
  KvScanMemo* memo = in.scans && &in.scans->model() == &m ? in.scans : nullptr;
  const LayerCache* kept = memo ? memo->find(lay.tp, cb, in.num_speculative_tokens, engine.indexer_cache_for_build(), in.ssm_cache_bits) : nullptr;
  LayerCache cache;
  if (kept) {
    cache = *kept;
  } else {
    PF_TRY(scanned, scan_layers(m, lay.tp, cb, in.num_speculative_tokens, engine.indexer_cache_for_build(), in.ssm_cache_bits));
    cache = scanned;
    if (memo) memo->keep(lay.tp, cb, in.num_speculative_tokens, engine.indexer_cache_for_build(), in.ssm_cache_bits, cache);
  }
  if (in.explain && in.ssm_cache_bits > 0 && cache.state_layers > 0)
    provenance.push_back(format("--mamba-ssm-cache-dtype: the SSM state of each of the %lld recurrent layers is %d-bit (vLLM mamba_ssm_cache_dtype)",
                                static_cast<long long>(cache.state_layers), in.ssm_cache_bits));
  // The drafter's attention layers (MTP layers, an EAGLE head) have their own KV specs of the target's
  // attention geometry (reference sec 2: draft/MTP layers are in the page total).
  if (in.drafter_layers > 0 && cache.attn_1tok > 0) {
    // A drafter of another geometry (its own config): vLLM sums each layer's page (UniformTypeKVCacheSpecs) on a
    // target of one attention kind; here that sum is carried as target-shaped layers, rounded up (said so).
    int64_t layers = in.drafter_layers;
    const int64_t drafter_1tok = in.drafter_kv_elements * cache_dtype_bytes(in.kv_cache_dtype, m);
    if (in.drafter_kv_elements > 0 && drafter_1tok != cache.attn_1tok) {
      layers = (in.drafter_layers * drafter_1tok + cache.attn_1tok - 1) / cache.attn_1tok;
      if (in.explain)
        provenance.push_back(format("speculative decoding: %lld drafter layer(s) of %lld B per token counted as %lld layer(s) of the target's %lld B (rounded up)",
                                    static_cast<long long>(in.drafter_layers), static_cast<long long>(drafter_1tok), static_cast<long long>(layers),
                                    static_cast<long long>(cache.attn_1tok)));
    }
    // Sliding-window drafter layers (DFlash2) are a SlidingWindowSpec: their own kind beside the target's, which sets
    // the group size when they are the fewest (5 DFlash2 layers beside Qwen3.5-27B's 16 attention and 48 GDN layers:
    // groups of 5, the target's kinds padded to 20 and 50) and holds ceil(min(window - 1 + max_num_batched_tokens,
    // max_model_len) / block) + 1 blocks a request (kv_cache_interface.py SlidingWindowSpec.max_memory_usage_bytes).
    // They join the target's sliding kind only at the same window (vLLM's type_id carries the window); at another
    // window they stay counted as full attention, said so.
    const int64_t sliding_share = in.drafter_layers > 0 ? (layers * std::min(in.drafter_sliding_layers, in.drafter_layers) + in.drafter_layers - 1) / in.drafter_layers : 0;
    const bool own_sliding = sliding_share > 0 && (cache.sliding_layers == 0 || cache.sliding_window == in.drafter_sliding_window);
    if (own_sliding) {
      cache.sliding_layers += sliding_share;
      cache.sliding_window = in.drafter_sliding_window;
      cache.attn_layers += layers - sliding_share;
      if (in.explain)
        provenance.push_back(format("speculative decoding: %lld drafter sliding-window layer(s) (window %lld) in a KV group of their own (vLLM SlidingWindowSpec)",
                                    static_cast<long long>(sliding_share), static_cast<long long>(in.drafter_sliding_window)));
    } else {
      cache.attn_layers += layers;
      if (sliding_share > 0 && in.explain)
        provenance.push_back(format("speculative decoding: the drafter's window %lld differs from the target's %lld; its sliding layers counted as full attention",
                                    static_cast<long long>(in.drafter_sliding_window), static_cast<long long>(cache.sliding_window)));
    }
    if (in.explain) provenance.push_back(format("speculative decoding: %lld drafter attention layer(s) in the KV cache", static_cast<long long>(in.drafter_layers)));
  }
  PF_TRY(layout, block_layout(engine, cache, in.explain ? &provenance : nullptr));
  PF_TRY(geometry, kv_groups(m, engine, lay, cache, layout, in));
  if (in.explain && cache.state_layers > 0 && in.enable_prefix_caching) {
    const std::string mode = mamba_cache_mode(engine, in);
    provenance.push_back(format("%s: Mamba cache mode '%s', %lld state block(s) per request in each state group",
                                *in.enable_prefix_caching ? "--enable-prefix-caching" : "--no-enable-prefix-caching", mode.c_str(),
                                static_cast<long long>((mode == "align" ? 2 : 1) + in.num_speculative_tokens)));
  }
  return geometry;
}

void kv_blocks_and_tokens(KvGeometry& shape, const engine::EngineProfile& engine, const KvInputs& in) { blocks_and_tokens(shape, engine, in); }

Expected<KvGeometry> estimate_kv_geometry(const ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& lay, const KvInputs& in,
                                          std::vector<std::string>& provenance) {
  PF_TRY(geometry, estimate_kv_shape(m, engine, lay, in, provenance));
  blocks_and_tokens(geometry, engine, in);
  return geometry;
}

}  // namespace preflight::estimate::terms
