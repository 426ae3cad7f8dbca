#include "estimate/llama_cpp.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include "base/checked.hpp"
#include "base/safe_regex.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "model/model_spec.hpp"

namespace preflight::estimate {

namespace {

constexpr uint64_t k_mib = 1024ull * 1024ull;
constexpr int64_t k_ctx_pad = 256;      // llama-context.cpp: n_ctx = GGML_PAD(n_ctx, 256)
constexpr uint64_t k_cpu_align = 32;    // ggml-cpu TENSOR_ALIGNMENT
constexpr uint64_t k_gpu_align = 128;   // ggml-cuda buffer alignment
constexpr size_t k_max_shown_pattern_bytes = 64;  // of a user's --override-tensor pattern in a message
constexpr uint32_t k_ggml_f16 = 1;
constexpr uint32_t k_ggml_q8_0 = 8;

// ggml-cpu decode (one token, matmul-vector) streams each weight type at a multiple of `preflight bw`'s
// read kernel on the same thread count, both timed by CPU time (docs/bw.md). Fitted on the 2-core Xeon VM
// (AMX) of tests/llama_cpp with node-llama-cpp 3.21.1, 1 thread, the speed models of gguf_writer.mjs
// (139 MB F16, 120 MB Q8_0 per token), `fit` measuring right after each llama.cpp round (2026-12-03,
// tests/llama_cpp/speed_pairs.mjs, 50 pairs per type at a load average of 4-8; in-sample for
// LlamaCppReal.Issue17_DecodeSpeedMatchesRealLlamaCpp). Implied factors, medians: F16 0.95 over all pairs
// (0.89-1.07), 0.97 over the 4 in which llama.cpp held its core at least half the wall time (the F16 -> F32
// conversion costs more per byte than the loads); Q8_0 1.32 over all (1.23-1.68), 1.54 over the 14 with
// its core at least half the time, 1.23-1.33 in the 14 with a quarter or less (its AVX-512 kernel keeps
// more loads in flight than the scalar read kernel, and loses CPU time to preemption). Each factor is the
// geometric mean of the two medians, so that the prediction sits within ~10 % of llama.cpp on an idle host
// and on a busy one. The previous 0.9 / 1.35 were fitted on 9 wall-clock pairs.
struct StreamFactor {
  const char* type;
  double factor;
};
constexpr StreamFactor k_cpu_stream_factors[] = {{"F16", 0.96}, {"Q8_0", 1.43}, {"F32", 1.0}};

// llama.cpp's sliding-window layer pattern per GGUF architecture when the file has no
// {arch}.attention.sliding_window_pattern (llama-model.cpp load_hparams, hparams.set_swa_pattern):
// gemma2 every 2nd layer global, gemma3 every 6th, cohere2 every 4th. 0: none known.
int64_t llama_swa_pattern(const std::string& arch) {
  static const std::pair<const char*, int64_t> k_patterns[] = {{"gemma2", 2}, {"gemma3", 6}, {"cohere2", 4}};
  for (const auto& [name, pattern] : k_patterns)
    if (arch == name) return pattern;
  return 0;
}

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string mib(uint64_t bytes) { return format("%.2f MiB", static_cast<double>(bytes) / static_cast<double>(k_mib)); }

// Buffers of one kind: the CPU's first, then each GPU's that holds bytes, in device order.
void push_per_device(LlamaCppEstimate& e, LlamaBufferKind kind, uint64_t cpu, const std::vector<uint64_t>& per_gpu, const std::vector<std::string>& names) {
  if (cpu) e.buffers.push_back({"CPU", kind, cpu});
  for (size_t i = 0; i < per_gpu.size(); ++i)
    if (per_gpu[i]) e.buffers.push_back({names[i], kind, per_gpu[i]});
}

// Which layer a tensor belongs to: "blk.N." -> N; token_embd and friends -> input (-1); output* -> output (-2).
int64_t tensor_layer(const std::string& name) {
  if (name.rfind("blk.", 0) == 0) {
    const auto dot = name.find('.', 4);
    try {
      return std::stoll(name.substr(4, dot - 4));
    } catch (...) {
      return -1;
    }
  }
  if (name.rfind("output", 0) == 0) return -2;
  return -1;
}

// A 2-D weight used by GGML_OP_MUL_MAT (not token_embd, read with get_rows; not norms or biases).
bool is_matmul_weight(const model::GgufTensor& t) {
  if (t.shape.size() != 2 || t.name == "token_embd.weight") return false;
  const auto& n = t.name;
  return n.size() > 7 && n.compare(n.size() - 7, 7, ".weight") == 0 && n.find("norm") == std::string::npos;
}

// ggml-cpu/amx: ggml_backend_amx_device_supports_op takes MUL_MAT weights of F16 or a type with AMX
// kernels whose output rows are a multiple of 2 x TILE_N (32). Packed sizes: F16 keeps its bytes; Q8_0
// gains 4 bytes per 34-byte block (measured with node-llama-cpp 3.21.1: 61.08 MiB for 54.65 MiB of Q8_0).
std::optional<uint64_t> amx_bytes(const model::GgufTensor& t) {
  if (!is_matmul_weight(t) || t.shape[1] % 32 != 0) return std::nullopt;
  if (t.ggml_type == k_ggml_f16) return t.bytes;
  if (t.ggml_type == k_ggml_q8_0) return t.bytes / 34 * 38;
  return std::nullopt;
}

// The geometry of the KV cache: layers, K and V values per cell, and the sliding window when there is one.
struct KvShape {
  int64_t n_layer = 0, kv_k = 0, kv_v = 0;
  int64_t n_swa = 0, swa_pattern = 0;  // window and layer pattern; pattern <= 1: no sliding layers
};

// KV buffer (llama-kv-cache.cpp): per layer K [n_embd_head_k x n_head_kv, cells] and V likewise. With
// sliding-window layers (llama-kv-cache-iswa.cpp) those layers get their own cache of
// GGML_PAD(min(n_ctx, n_swa + n_ubatch), 256) cells (one sequence stream; --swa-full not modelled).
template <typename DeviceOf>
void add_kv_buffers(LlamaCppEstimate& e, const KvShape& k, const model::GgmlTypeSize& type_k, const model::GgmlTypeSize& type_v, const LlamaCppOptions& o,
                    DeviceOf device_of, const std::vector<std::string>& gpus) {
  auto row_bytes = [](int64_t n, const model::GgmlTypeSize& t) { return static_cast<uint64_t>(n) / t.block_elements * t.block_bytes; };
  const uint64_t cell_k = row_bytes(k.kv_k, type_k), cell_v = row_bytes(k.kv_v, type_v);
  const uint64_t cell_bytes = cell_k + cell_v;
  const int64_t swa_cells = k.swa_pattern > 1 ? (std::min(e.n_ctx, k.n_swa + e.n_ubatch) + k_ctx_pad - 1) / k_ctx_pad * k_ctx_pad : e.n_ctx;
  uint64_t kv_cpu = 0;
  std::vector<uint64_t> kv_gpu(gpus.size(), 0);
  int64_t swa_layers = 0;
  for (int64_t il = 0; il < k.n_layer; ++il) {
    const bool swa = k.swa_pattern > 1 && il % k.swa_pattern < k.swa_pattern - 1;  // llama_hparams::is_swa: the last layer of each pattern is global
    swa_layers += swa ? 1 : 0;
    const int dev = device_of(il);  // the KV of a layer lives on its layer's device (llama-kv-cache.cpp: model.dev_layer)
    const uint64_t cells = static_cast<uint64_t>(swa ? swa_cells : e.n_ctx);
    (dev < 0 ? kv_cpu : kv_gpu[static_cast<size_t>(dev)]) += cell_bytes * cells;
    e.kv_k_bytes += cell_k * cells;
    e.kv_v_bytes += cell_v * cells;
  }
  push_per_device(e, LlamaBufferKind::kv, kv_cpu, kv_gpu, gpus);
  uint64_t kv_total = kv_cpu;
  for (auto b : kv_gpu) kv_total += b;
  e.formulas.push_back(format("KV: n_ctx %lld x %lld layers%s x (K %lld x %s + V %lld x %s) = %s", static_cast<long long>(e.n_ctx), static_cast<long long>(k.n_layer - swa_layers),
                              swa_layers ? format(" + %lld cells x %lld sliding-window layers", static_cast<long long>(swa_cells), static_cast<long long>(swa_layers)).c_str() : "",
                              static_cast<long long>(k.kv_k), o.cache_type_k.c_str(), static_cast<long long>(k.kv_v), o.cache_type_v.c_str(), mib(kv_total).c_str()));
}

// Which device holds each layer (llama-model.cpp load_tensors, get_layer_buft_list): layers below
// i_gpu_start and the input layer on the CPU; offloaded layer il (il == n_layer: the output layer) on GPU
// upper_bound(splits, float(il - i_gpu_start) / act), splits being the cumulative proportions over their
// sum, in float as llama.cpp computes them.
struct Placement {
  std::vector<std::string> gpus;
  std::vector<float> splits;
  int64_t n_layer = 0, i_gpu_start = 0, act = 0;
  int device_of(int64_t il) const {  // -1: CPU
    if (il < 0 || il < i_gpu_start || il - i_gpu_start >= act) return -1;
    const float x = static_cast<float>(il - i_gpu_start) / static_cast<float>(act);
    const auto at = std::upper_bound(splits.begin(), splits.end(), x) - splits.begin();
    return static_cast<int>(std::min<int64_t>(at, static_cast<int64_t>(splits.size()) - 1));
  }
};

Expected<Placement> place_layers(const LlamaCppOptions& o, int64_t n_layer) {
  Placement p;
  p.n_layer = n_layer;
  std::vector<float> split = o.tensor_split.empty() ? std::vector<float>{1.0f} : o.tensor_split;
  if (split.size() > k_llama_max_devices)
    return make_error(ErrorKind::invalid_argument, format("--tensor-split: %zu entries, llama.cpp takes at most %zu devices", split.size(), k_llama_max_devices));
  float sum = 0.0f;
  for (float v : split) {
    if (!(v >= 0.0f)) return make_error(ErrorKind::invalid_argument, format("--tensor-split: proportions must be >= 0, got %g", static_cast<double>(v)));
    sum += v;
    p.splits.push_back(sum);
  }
  if (sum <= 0.0f) return make_error(ErrorKind::invalid_argument, "--tensor-split: all proportions are 0 (expected at least one positive, e.g. 3,1)");
  for (auto& v : p.splits) v /= sum;
  // Device names: the offload device's prefix ("CUDA" of "CUDA0") with the index.
  std::string prefix = o.gpu_name;
  while (!prefix.empty() && std::isdigit(static_cast<unsigned char>(prefix.back()))) prefix.pop_back();
  for (size_t i = 0; i < split.size(); ++i) p.gpus.push_back(split.size() == 1 ? o.gpu_name : prefix + std::to_string(i));
  const int64_t ngl = std::max<int64_t>(0, o.n_gpu_layers);
  p.i_gpu_start = std::max<int64_t>(n_layer - ngl, 0);
  p.act = std::min<int64_t>(ngl, n_layer + 1);
  return p;
}

// The tensor patterns of --override-tensor and --cpu-moe, and --n-cpu-moe's one expert pattern, compiled for
// base/safe_regex (linear time: issue 19).
struct CpuPatterns {
  std::vector<SafeRegex> any_layer;
  std::optional<SafeRegex> experts;  // set with o.cpu_moe_first_layers > 0
  int64_t experts_first_layers = 0;
};

Expected<CpuPatterns> compile_cpu_patterns(const LlamaCppOptions& o) {
  CpuPatterns out;
  for (const auto& pattern : o.cpu_tensor_patterns) {
    auto re = SafeRegex::compile(pattern);
    if (!re) {
      // Issue 19: cut by clip_text (a hand-cut at byte 40 split a UTF-8 character and named no length).
      return make_error(ErrorKind::invalid_argument,
                        format("--override-tensor: regular expression '%s': %s", one_line(pattern, k_max_shown_pattern_bytes).c_str(), re.error().message.c_str()));
    }
    out.any_layer.push_back(std::move(*re));
  }
  if (o.cpu_moe_first_layers > 0) {
    PF_TRY(re, SafeRegex::compile(llama_cpu_moe_pattern()));
    out.experts.emplace(std::move(re));
    out.experts_first_layers = o.cpu_moe_first_layers;
  }
  return out;
}

// Model buffers (llama-model.cpp load_tensors). A mapped CPU buffer is the file range from its first
// tensor to the end of its last one; a copied buffer is the sum of tensors padded to the alignment. A
// tensor an override keeps on the CPU (buffer type "CPU", not AMX) joins the CPU buffer whatever its layer.
void add_model_buffers(LlamaCppEstimate& e, const model::GgufFile& file, const LlamaCppOptions& o, const Placement& place, const CpuPatterns& cpu_patterns) {
  bool has_output = false;
  for (const auto& t : file.tensors) has_output = has_output || t.name == "output.weight";
  uint64_t map_begin = UINT64_MAX, map_end = 0, cpu_copy = 0, amx = 0, overridden = 0;
  std::vector<uint64_t> gpu(place.gpus.size(), 0);
  for (const auto& t : file.tensors) {
    const int64_t layer = tensor_layer(t.name);
    const int home = place.device_of(layer == -2 ? place.n_layer : layer);  // where its layer is placed (output: after the last)
    const bool forced_cpu =
        std::any_of(cpu_patterns.any_layer.begin(), cpu_patterns.any_layer.end(), [&](const SafeRegex& r) { return r.search(t.name); }) ||
        (cpu_patterns.experts && layer >= 0 && layer < cpu_patterns.experts_first_layers && cpu_patterns.experts->search(t.name));
    const int dev = forced_cpu ? -1 : home;
    if (dev >= 0) {
      gpu[static_cast<size_t>(dev)] += round_up(t.bytes, k_gpu_align);
      continue;
    }
    overridden += forced_cpu && home >= 0 ? t.bytes : 0;
    const auto packed = o.cpu_extra_buffer == LlamaCpuExtraBuffer::amx && !forced_cpu ? amx_bytes(t) : std::nullopt;
    if (packed) {
      amx += *packed;
      if (o.mmap == LlamaMmap::on) continue;
    }
    if (o.mmap == LlamaMmap::on) {
      map_begin = std::min(map_begin, t.offset);
      map_end = std::max(map_end, t.offset + t.bytes);
    } else if (!packed) {
      cpu_copy += round_up(t.bytes, k_cpu_align);
    }
  }
  // Tied embeddings: output reuses token_embd, duplicated when the output layer's buffer type differs.
  if (!has_output) {
    for (const auto& t : file.tensors) {
      if (t.name != "token_embd.weight") continue;
      if (const int dev = place.device_of(place.n_layer); dev >= 0) gpu[static_cast<size_t>(dev)] += round_up(t.bytes, k_gpu_align);
      else if (auto p = o.cpu_extra_buffer == LlamaCpuExtraBuffer::amx ? amx_bytes(model::GgufTensor{"output.weight", t.shape, t.ggml_type, 0, t.bytes, t.elements}) : std::nullopt) amx += *p;
    }
  }
  const uint64_t cpu_model = o.mmap == LlamaMmap::on ? (map_end > map_begin ? map_end - map_begin : 0) : cpu_copy;
  const std::string cpu_model_name = o.mmap == LlamaMmap::on ? "CPU_Mapped" : "CPU";
  if (amx) e.buffers.push_back({"AMX", LlamaBufferKind::model, amx});
  e.buffers.push_back({cpu_model_name, LlamaBufferKind::model, cpu_model});
  std::string gpu_text;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (place.act > 0 && (gpu[i] || gpu.size() == 1)) e.buffers.push_back({place.gpus[i], LlamaBufferKind::model, gpu[i]});
    if (place.act > 0) gpu_text += format(" + %lld layers on %s %s", static_cast<long long>(e.gpu_layers[i].second), place.gpus[i].c_str(), mib(gpu[i]).c_str());
  }
  e.formulas.push_back(format("model: %s file range of the CPU tensors %s%s%s%s", cpu_model_name.c_str(), mib(cpu_model).c_str(),
                              overridden ? (" (with " + mib(overridden) + " of offloaded layers' tensors kept on the CPU by override)").c_str() : "",
                              amx ? (" + AMX-packed matmul weights " + mib(amx)).c_str() : "", gpu_text.c_str()));
}

// Recurrent state (llama-memory-recurrent.cpp), f32, one cell per sequence (max(1, n_seq_max)): per layer
// the conv state (d_conv - 1) x (d_inner + 2 x n_group x d_state) (n_group 0 for Mamba 1) and the ssm
// state d_state x d_inner (llama_hparams::n_embd_r / n_embd_s). The real llama.cpp printed "CPU RS
// buffer size = 0.30 MiB" for 4 layers, d_conv 4, d_inner 1024, d_state 16: 4 x (3 + 16) x 1024 x 4 B.
template <typename Number, typename DeviceOf>
void add_rs_buffers(LlamaCppEstimate& e, Number number, int64_t n_layer, const LlamaCppOptions& o, DeviceOf device_of, const std::vector<std::string>& gpus) {
  const int64_t d_conv = number("ssm.conv_kernel").value_or(0), d_inner = number("ssm.inner_size").value_or(0);
  const int64_t d_state = number("ssm.state_size").value_or(0), n_group = number("ssm.group_count").value_or(0);
  const uint64_t per_layer = static_cast<uint64_t>(std::max<int64_t>(0, d_conv - 1) * (d_inner + 2 * n_group * d_state) + d_state * d_inner) * 4u *
                             static_cast<uint64_t>(std::max<int64_t>(1, o.parallel));
  uint64_t cpu = 0;
  std::vector<uint64_t> gpu(gpus.size(), 0);
  for (int64_t il = 0; il < n_layer; ++il) {
    const int dev = device_of(il);
    (dev < 0 ? cpu : gpu[static_cast<size_t>(dev)]) += per_layer;
  }
  push_per_device(e, LlamaBufferKind::rs, cpu, gpu, gpus);
  e.formulas.push_back(format("RS: %lld layers x ((d_conv %lld - 1) x (d_inner %lld + 2 x %lld groups x d_state %lld) + d_state x d_inner) x 4 B x %lld sequences = %s",
                              static_cast<long long>(n_layer), static_cast<long long>(d_conv), static_cast<long long>(d_inner), static_cast<long long>(n_group),
                              static_cast<long long>(d_state), static_cast<long long>(std::max<int64_t>(1, o.parallel)), mib(static_cast<uint64_t>(per_layer * static_cast<uint64_t>(n_layer))).c_str()));
}

// --ctx-size, --ubatch-size, --parallel and the cache types, checked; the cache types' sizes.
struct CacheTypes {
  model::GgmlTypeSize k, v;
};
Expected<CacheTypes> checked_options(const LlamaCppOptions& o) {
  if (o.ctx_size <= 0) return make_error(ErrorKind::invalid_argument, format("--ctx-size must be positive, got %lld", static_cast<long long>(o.ctx_size)));
  if (o.ubatch_size <= 0) return make_error(ErrorKind::invalid_argument, format("--ubatch-size must be positive, got %lld", static_cast<long long>(o.ubatch_size)));
  if (o.parallel <= 0) return make_error(ErrorKind::invalid_argument, format("--parallel must be positive, got %lld", static_cast<long long>(o.parallel)));
  const auto type_k = model::ggml_type_size_by_name(o.cache_type_k);
  const auto type_v = model::ggml_type_size_by_name(o.cache_type_v);
  if (!type_k) return make_error(ErrorKind::invalid_argument, "--cache-type-k: unknown ggml type '" + o.cache_type_k + "' (expected f16, bf16, f32, q8_0, q4_0, ...)");
  if (!type_v) return make_error(ErrorKind::invalid_argument, "--cache-type-v: unknown ggml type '" + o.cache_type_v + "' (expected f16, bf16, f32, q8_0, q4_0, ...)");
  return CacheTypes{*type_k, *type_v};
}

// n_ctx, n_ubatch, flash attention and the layers' placement for a model of `n_layer` layers.
Expected<Placement> start_context(LlamaCppEstimate& e, const LlamaCppOptions& o, int64_t n_layer) {
  e.n_ctx = (o.ctx_size + k_ctx_pad - 1) / k_ctx_pad * k_ctx_pad;
  e.n_ubatch = std::min(o.ubatch_size, e.n_ctx);
  e.flash_attn = o.flash_attn != LlamaFlashAttn::off;
  e.layers_on_gpu = std::clamp<int64_t>(o.n_gpu_layers, 0, n_layer);
  PF_TRY(place, place_layers(o, n_layer));
  for (size_t i = 0; i < place.gpus.size(); ++i) {
    int64_t layers = 0;
    for (int64_t il = 0; il <= n_layer; ++il) layers += place.device_of(il) == static_cast<int>(i) ? 1 : 0;
    e.gpu_layers.emplace_back(place.gpus[i], layers);
  }
  return place;
}

// What the compute and output buffers read of the model.
struct GraphShape {
  int64_t n_embd = 0, n_head = 0, head_k = 0, kv_k = 0, n_ff = 0, n_vocab = 0;
};

// Compute buffer (llama-context.cpp graph_reserve: n_ubatch tokens, every token an output). ggml-alloc
// reuses freed tensors and runs soft_max in place, so the peak is the larger of the last layer's
// attention (KQ scores [n_kv, T, n_head] f32 without flash attention, plus the mask and the
// activations around it) and the output head (logits [n_vocab, T] f32 plus the hidden states).
// Then the output buffer (llama-context.cpp output_reserve): logits for n_seq_max rows, f32.
void add_compute_and_output(LlamaCppEstimate& e, const GraphShape& s, const LlamaCppOptions& o, const Placement& place) {
  const bool any_gpu = place.act > 0;
  const uint64_t T = static_cast<uint64_t>(e.n_ubatch), n_kv = static_cast<uint64_t>(e.n_ctx) / static_cast<uint64_t>(o.parallel);
  const uint64_t E = static_cast<uint64_t>(s.n_embd), q_dim = static_cast<uint64_t>(s.head_k * s.n_head);
  const uint64_t logits = static_cast<uint64_t>(s.n_vocab) * T * 4;
  // Issue 16 (llamacpp32): with the output layer on a GPU the input embeddings [n_embd, T] f32 (the get_rows of
  // token_embd, a graph input) are in the CPU's compute buffer (cpu_compute below), not beside the output head, so the
  // GPU's output-head peak holds one [n_embd, T] tensor fewer than a CPU-only graph's. Public CUDA logs with flash
  // attention: A100 b7342, Qwen3-30B-A3B, 'CUDA0 compute buffer size = 300.75 MiB' = 296.75 (logits 151936 x 512 x 4 B)
  // + 4.00 (2048 x 512 x 4 B); GB10, Qwen3.6-27B, 495.00 = 485.00 (248320 x 512 x 4 B) + 10.00 (5120 x 512 x 4 B).
  const bool head_on_gpu = any_gpu && place.device_of(place.n_layer) >= 0;
  const uint64_t out_peak = logits + ((e.flash_attn ? 2 : 3) - (head_on_gpu ? 1 : 0)) * E * T * 4;
  const uint64_t layer_peak = e.flash_attn ? n_kv * T * 2 + T * 4 * (2 * E + 3 * static_cast<uint64_t>(s.n_ff))
                                           : n_kv * T * static_cast<uint64_t>(s.n_head) * 4 + n_kv * T * 4 + T * 4 * (2 * E + 3 * q_dim + 2 * static_cast<uint64_t>(s.kv_k));
  const uint64_t compute = std::max(out_peak, layer_peak);
  // With layers offloaded the graph runs there; the CPU keeps the embedding lookup and the graph's inputs: the scheduler
  // puts every input tensor on its last backend, the CPU (ggml-backend.cpp ggml_backend_sched_backend_id_from_cur,
  // "graph input"), the KQ mask [n_kv, T] among them, f16 with flash attention and f32 without (llama-graph.cpp
  // build_attn_inp_kq_mask; llama.cpp 80fb11a, node-llama-cpp 3.21.1). Issue 16 (quant31): the mask was missing; public
  // CUDA logs of older builds (f32 mask) print "CUDA_Host compute buffer size" 12.01 MiB at n_ctx 2048 and 72.01 at
  // 32768 for a 4096-wide model (fedora-copr/logdetective#106): 8 MiB of embeddings + 4 or 64 MiB of mask.
  const uint64_t mask = n_kv * T * (e.flash_attn ? 2 : 4);
  const uint64_t cpu_compute = any_gpu ? E * T * 4 + T * 8 + mask : compute;
  e.buffers.push_back({"CPU", LlamaBufferKind::compute, cpu_compute});
  // With a split the graph's output head runs on the output layer's GPU (the last one holding layers).
  const std::string compute_gpu = any_gpu ? place.gpus[static_cast<size_t>(std::max(0, place.device_of(place.i_gpu_start + place.act - 1)))] : "";
  if (any_gpu) e.buffers.push_back({compute_gpu, LlamaBufferKind::compute, compute});
  if (place.gpus.size() > 1) e.assumptions.push_back("--tensor-split: the whole compute buffer counted on " + compute_gpu + ", the GPU of the last offloaded layer; llama.cpp's other GPUs also reserve one for their layers");
  if (any_gpu) e.assumptions.push_back("CPU compute buffer with offloaded layers taken as the graph's inputs: the input embeddings of one ubatch and the KQ mask");
  e.formulas.push_back(format("compute: max(output head %s, attention %s) at T = %lld tokens, n_kv %lld, flash attention %s", mib(out_peak).c_str(),
                              mib(layer_peak).c_str(), static_cast<long long>(T), static_cast<long long>(n_kv), e.flash_attn ? "on" : "off"));
  const uint64_t output = static_cast<uint64_t>(s.n_vocab) * static_cast<uint64_t>(o.parallel) * 4;
  e.buffers.push_back({"CPU", LlamaBufferKind::output, output});
  e.formulas.push_back(format("output: n_vocab %lld x %lld sequences x 4 B = %s", static_cast<long long>(s.n_vocab), static_cast<long long>(o.parallel), mib(output).c_str()));
}

// The totals per kind over every device's buffers.
void sum_buffers(LlamaCppEstimate& e) {
  for (const auto& b : e.buffers) {
    switch (b.kind) {
      case LlamaBufferKind::model: e.model_buffer_bytes += b.bytes; break;
      case LlamaBufferKind::kv: e.kv_buffer_bytes += b.bytes; break;
      case LlamaBufferKind::compute: e.compute_buffer_bytes += b.bytes; break;
      case LlamaBufferKind::output: e.output_buffer_bytes += b.bytes; break;
      case LlamaBufferKind::rs: e.rs_buffer_bytes += b.bytes; break;
    }
  }
}

// The K and V widths per cell of an MLA layer under `cache` (one layer; per_head: every head's).
KvShape mla_kv_shape(LlamaMlaCache cache, const LlamaMlaGeometry& g, int64_t n_layer) {
  KvShape k{.n_layer = n_layer};
  if (cache == LlamaMlaCache::per_head) {
    k.kv_k = g.n_head * g.head_k;
    k.kv_v = g.n_head * g.head_v;
  } else {
    k.kv_k = g.kv_lora_rank + g.rope_dim;
    k.kv_v = cache == LlamaMlaCache::latent_k_and_v ? g.kv_lora_rank : 0;
  }
  return k;
}

// An MLA model's KV buffers under the layout its source and build give; where the build leaves two layouts possible, the
// other one's total in kv_other_build_bytes and an assumption that names both (the band).
template <typename DeviceOf>
void add_mla_kv_buffers(LlamaCppEstimate& e, LlamaMlaSource source, const LlamaMlaGeometry& g, int64_t n_layer, const CacheTypes& types, const LlamaCppOptions& o,
                        DeviceOf device_of, const std::vector<std::string>& gpus) {
  const LlamaMlaChoice choice = llama_mla_cache(source, o.build);
  add_kv_buffers(e, mla_kv_shape(choice.cache, g, n_layer), types.k, types.v, o, device_of, gpus);
  std::string text = format("MLA cache %s: %s", llama_mla_cache_name(choice.cache), choice.why.c_str());
  if (choice.other) {
    LlamaCppEstimate alt;
    alt.n_ctx = e.n_ctx;
    alt.n_ubatch = e.n_ubatch;
    add_kv_buffers(alt, mla_kv_shape(*choice.other, g, n_layer), types.k, types.v, o, device_of, gpus);
    e.kv_other_build_bytes = alt.kv_k_bytes + alt.kv_v_bytes;
    text += format("; with the %s layout the KV buffer is %s (K %s + V %s) instead of %s", llama_mla_cache_name(*choice.other), mib(e.kv_other_build_bytes).c_str(),
                   mib(alt.kv_k_bytes).c_str(), mib(alt.kv_v_bytes).c_str(), mib(e.kv_k_bytes + e.kv_v_bytes).c_str());
  }
  e.assumptions.push_back(std::move(text));
}

}  // namespace

const char* llama_mla_cache_name(LlamaMlaCache cache) {
  switch (cache) {
    case LlamaMlaCache::per_head: return "K and V per head";
    case LlamaMlaCache::latent_k_and_v: return "latent K + V";
    case LlamaMlaCache::latent_k: return "latent K only";
  }
  return "?";
}

LlamaMlaChoice llama_mla_cache(LlamaMlaSource source, std::optional<int64_t> build) {
  LlamaMlaChoice c;
  const std::string pr12801 = "llama.cpp PR #12801 (2025-04-15; between b" + std::to_string(k_llama_build_before_mla) + " and b" + std::to_string(k_llama_build_with_mla) + ")";
  const std::string pr19067 = "PR #19067 (merged 2026-01-25 as d9c6ce46; between b" + std::to_string(k_llama_build_before_vless) + " and b" + std::to_string(k_llama_build_with_vless) + ")";
  if (source == LlamaMlaSource::gguf_per_head) {
    c.cache = LlamaMlaCache::per_head;
    c.why = "the GGUF has no attention.key_length_mla: converted before " + pr12801 + ", it is cached per head at any build";
    return c;
  }
  const std::string b = build ? "b" + std::to_string(*build) : std::string("the build (not stated)");
  if (source == LlamaMlaSource::checkpoint && build && *build <= k_llama_build_before_mla) {
    c.cache = LlamaMlaCache::per_head;
    c.why = b + " predates " + pr12801 + ": its converter writes K and V per head";
  } else if (source == LlamaMlaSource::checkpoint && build && *build < k_llama_build_with_mla) {
    c.cache = LlamaMlaCache::latent_k_and_v;
    c.other = LlamaMlaCache::per_head;
    c.why = b + " is inside the bracket of " + pr12801 + ": latent K + V from it, K and V per head before it";
  } else if (build && *build <= k_llama_build_before_vless) {
    c.cache = LlamaMlaCache::latent_k_and_v;
    c.why = b + " has " + pr12801 + " and predates " + pr19067 + ": the latent is stored as K (kv_lora_rank + qk_rope) and again as V (kv_lora_rank)";
  } else if (build && *build >= k_llama_build_with_vless) {
    c.cache = LlamaMlaCache::latent_k;
    c.why = b + " has " + pr19067 + ": a V-less cache, K (kv_lora_rank + qk_rope) only";
  } else {
    c.cache = LlamaMlaCache::latent_k;
    c.other = LlamaMlaCache::latent_k_and_v;
    c.why = b + (build ? " is inside the bracket of " : " is taken as the newest, from ") + pr19067 + ": a V-less cache, K only; a build before it also stores V";
  }
  return c;
}

// common/common.h LLM_FFN_EXPS_REGEX and llm_ffn_exps_block_regex (github.com/ggml-org/llama.cpp).
std::string llama_cpu_moe_pattern() { return "\\.ffn_(up|down|gate|gate_up)_(ch|)exps"; }

const char* llama_buffer_kind_name(LlamaBufferKind kind) {
  switch (kind) {
    case LlamaBufferKind::model: return "model";
    case LlamaBufferKind::kv: return "KV";
    case LlamaBufferKind::compute: return "compute";
    case LlamaBufferKind::output: return "output";
    case LlamaBufferKind::rs: return "RS";
  }
  return "?";
}

Expected<LlamaCppEstimate> estimate_llama_cpp(const model::GgufFile& file, const LlamaCppOptions& o) {
  const std::string origin = "llama.cpp estimate";
  PF_TRY(types, checked_options(o));

  auto arch_it = file.strings.find("general.architecture");
  if (arch_it == file.strings.end()) return make_error(ErrorKind::corrupt, "gguf: missing general.architecture", origin);
  const std::string arch = arch_it->second;
  // Every key read below is a layer count or a dimension. One outside its range was read as absent (a default
  // instead) or, up to 9e15, as it was: block_count 4e9 looped for good (issue 19). It is refused, as the model
  // reader refuses it, naming the key.
  for (const char* key : {"block_count", "embedding_length", "attention.head_count", "attention.head_count_kv", "attention.key_length",
                          "attention.value_length", "attention.key_length_mla", "attention.value_length_mla", "attention.kv_lora_rank",
                          "rope.dimension_count", "feed_forward_length", "vocab_size", "attention.sliding_window",
                          "attention.sliding_window_pattern", "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.group_count"}) {
    const auto it = file.numbers.find(arch + "." + key);
    if (it == file.numbers.end()) continue;
    const double highest = static_cast<double>(std::string_view(key) == "block_count" ? model::k_max_layers : model::k_max_dim);
    if (!(it->second >= 0 && it->second <= highest) || it->second != std::floor(it->second))
      return make_error(ErrorKind::corrupt, format("gguf: %s.%s is %.17g, expected an integer from 0 to %.0f", arch.c_str(), key, it->second, highest), origin);
  }
  auto number = [&](const std::string& key) -> std::optional<int64_t> {
    auto it = file.numbers.find(arch + "." + key);
    if (it == file.numbers.end() || it->second < 0 || it->second > 9e15) return std::nullopt;
    return static_cast<int64_t>(it->second);
  };
  const auto n_layer = number("block_count");
  const auto n_embd = number("embedding_length");
  const auto n_head = number("attention.head_count");
  // A pure recurrent model (Mamba) has no attention heads: head_count 0 beside its ssm.* keys.
  const bool recurrent = number("ssm.state_size").value_or(0) > 0 && n_head == 0;
  if (!n_layer || !n_embd || !n_head || *n_layer <= 0 || *n_embd <= 0 || (*n_head <= 0 && !recurrent))
    return make_error(ErrorKind::corrupt, format("gguf: missing or invalid %s.block_count / embedding_length / attention.head_count", arch.c_str()), origin);
  const int64_t n_head_kv = recurrent ? 0 : number("attention.head_count_kv").value_or(*n_head);
  // Issue 19 (attack37): head_count_kv 0 on a model with no recurrent state gave every attention layer a K and V of no
  // bytes ("KV 0.00 MiB", fits, exit 0). llama.cpp sizes attn_k / attn_v as n_embd_head x head_count_kv columns and stops
  // at load on the file's real ones (llama_model_loader check_tensor_dims: "has wrong shape"); the model reader refuses
  // the same key for vLLM.
  if (!recurrent && n_head_kv == 0 && !number("ssm.state_size"))
    return make_error(ErrorKind::corrupt,
                      format("gguf: %s.attention.head_count_kv is 0 on a model with attention layers and no recurrent state: llama.cpp expects attn_k / attn_v "
                             "of 0 columns and refuses the file at load (check_tensor_dims: wrong shape); expected 1 to %s.attention.head_count (%lld)",
                             arch.c_str(), arch.c_str(), static_cast<long long>(*n_head)),
                      origin);
  const int64_t head_k = recurrent ? 0 : number("attention.key_length").value_or(*n_embd / *n_head);
  const int64_t head_v = recurrent ? 0 : number("attention.value_length").value_or(*n_embd / *n_head);
  const int64_t n_ff = number("feed_forward_length").value_or(0);
  int64_t n_vocab = number("vocab_size").value_or(0);
  if (auto v = file.array_lengths.find("tokenizer.ggml.tokens"); v != file.array_lengths.end()) n_vocab = static_cast<int64_t>(v->second);
  if (n_vocab <= 0) return make_error(ErrorKind::corrupt, "gguf: no vocabulary size (tokenizer.ggml.tokens or " + arch + ".vocab_size)", origin);

  LlamaCppEstimate e;
  PF_TRY(place, start_context(e, o, *n_layer));
  auto device_of = [&](int64_t il) { return place.device_of(il); };
  const int64_t n_swa = number("attention.sliding_window").value_or(0);
  const int64_t swa_pattern = n_swa > 0 ? number("attention.sliding_window_pattern").value_or(llama_swa_pattern(arch)) : 0;
  if (n_swa > 0 && swa_pattern <= 1)
    e.assumptions.push_back(format("sliding window %lld on architecture '%s' without a known layer pattern: every layer's KV holds n_ctx cells", static_cast<long long>(n_swa), arch.c_str()));
  if (number("ssm.state_size") && !recurrent) e.assumptions.push_back("hybrid attention + recurrent layers: the recurrent (ssm) state is not modelled");

  PF_TRY(overrides, compile_cpu_patterns(o));
  add_model_buffers(e, file, o, place, overrides);

  const int64_t kv_k = head_k * n_head_kv, kv_v = head_v * n_head_kv;
  // Issue 16 (llamacpp33): an MLA GGUF (attention.kv_lora_rank; key_length_mla from PR #12801's converter on) is cached as
  // its layout and the build give (llama_mla_cache). An MLA GGUF states the latent as one KV head (key_length = kv_lora_rank
  // + rope, value_length = kv_lora_rank); an older one every head's decompressed K and V (key_length, value_length).
  const int64_t kv_lora_rank = recurrent ? 0 : number("attention.kv_lora_rank").value_or(0);
  if (recurrent) {
    add_rs_buffers(e, number, *n_layer, o, device_of, place.gpus);
  } else if (kv_lora_rank > 0) {
    const bool mla_file = number("attention.key_length_mla").has_value();
    const LlamaMlaGeometry g{.n_head = n_head_kv, .head_k = head_k, .head_v = head_v, .kv_lora_rank = kv_lora_rank,
                             .rope_dim = mla_file ? head_k - kv_lora_rank : number("rope.dimension_count").value_or(0)};
    add_mla_kv_buffers(e, mla_file ? LlamaMlaSource::gguf_mla : LlamaMlaSource::gguf_per_head, g, *n_layer, types, o, device_of, place.gpus);
  } else {
    add_kv_buffers(e, {.n_layer = *n_layer, .kv_k = kv_k, .kv_v = kv_v, .n_swa = n_swa, .swa_pattern = swa_pattern}, types.k, types.v, o, device_of, place.gpus);
  }
  add_compute_and_output(e, {.n_embd = *n_embd, .n_head = *n_head, .head_k = head_k, .kv_k = kv_k, .n_ff = n_ff, .n_vocab = n_vocab}, o, place);
  sum_buffers(e);
  return e;
}

Expected<LlamaCppEstimate> estimate_llama_cpp_model(const LlamaCppModelShape& s, const LlamaCppOptions& o) {
  PF_TRY(types, checked_options(o));
  const std::string what = s.architecture.empty() ? std::string("model") : s.architecture;
  if (s.n_layer <= 0 || s.n_layer > model::k_max_layers || s.n_embd <= 0 || s.n_embd > model::k_max_dim || s.n_head <= 0 || s.n_head > model::k_max_dim ||
      s.n_vocab <= 0 || s.n_vocab > model::k_max_vocab || s.n_head_kv < 0 || s.n_head_kv > model::k_max_dim || s.head_k < 0 || s.head_k > model::k_max_dim ||
      s.head_v < 0 || s.head_v > model::k_max_dim || s.n_ff < 0 || s.n_ff > model::k_max_dim || s.kv_layers < 0 || s.kv_layers > s.n_layer)
    return make_error(ErrorKind::invalid_argument,
                      format("%s: llama.cpp needs layers (%lld), width (%lld), heads (%lld) and a vocabulary (%lld) within range", what.c_str(),
                             static_cast<long long>(s.n_layer), static_cast<long long>(s.n_embd), static_cast<long long>(s.n_head), static_cast<long long>(s.n_vocab)));
  LlamaCppEstimate e;
  PF_TRY(place, start_context(e, o, s.n_layer));
  // Model buffers (llama-model.cpp load_tensors): the input layer stays on the CPU; the repeating layers' bytes, spread
  // evenly over them, go where each layer is placed; the output head with the output layer (a tied head is token_embd,
  // copied to an offloaded output layer).
  const uint64_t head_own = s.tied_output ? 0 : s.output_bytes;
  const uint64_t host_experts = std::min(s.host_expert_bytes, s.weight_bytes > s.token_embd_bytes + head_own ? s.weight_bytes - s.token_embd_bytes - head_own : 0);
  const uint64_t layers_bytes = s.weight_bytes > s.token_embd_bytes + head_own + host_experts ? s.weight_bytes - s.token_embd_bytes - head_own - host_experts : 0;
  const uint64_t per_layer = layers_bytes / static_cast<uint64_t>(s.n_layer);
  uint64_t cpu = s.token_embd_bytes + host_experts;
  std::vector<uint64_t> gpu(place.gpus.size(), 0);
  for (int64_t il = 0; il < s.n_layer; ++il) {
    const uint64_t bytes = per_layer + (il == s.n_layer - 1 ? layers_bytes % static_cast<uint64_t>(s.n_layer) : 0);
    const int dev = place.device_of(il);
    (dev < 0 ? cpu : gpu[static_cast<size_t>(dev)]) += bytes;
  }
  if (const int dev = place.device_of(s.n_layer); dev >= 0) gpu[static_cast<size_t>(dev)] += s.output_bytes;
  else cpu += head_own;
  const std::string cpu_name = o.mmap == LlamaMmap::on ? "CPU_Mapped" : "CPU";
  e.buffers.push_back({cpu_name, LlamaBufferKind::model, cpu});
  std::string gpu_text;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (place.act > 0 && (gpu[i] || gpu.size() == 1)) e.buffers.push_back({place.gpus[i], LlamaBufferKind::model, gpu[i]});
    if (place.act > 0) gpu_text += format(" + %lld layers on %s %s", static_cast<long long>(e.gpu_layers[i].second), place.gpus[i].c_str(), mib(gpu[i]).c_str());
  }
  e.formulas.push_back(format("model: %s %s (token_embd %s%s%s)%s, from the weights %s: %lld layers of %s%s", cpu_name.c_str(), mib(cpu).c_str(),
                              mib(s.token_embd_bytes).c_str(), place.device_of(s.n_layer) < 0 && head_own ? (" + output " + mib(head_own)).c_str() : "",
                              host_experts ? (" + routed experts " + mib(host_experts)).c_str() : "", gpu_text.c_str(),
                              mib(s.weight_bytes).c_str(), static_cast<long long>(s.n_layer), mib(per_layer).c_str(), s.tied_output ? ", output tied to token_embd" : ""));
  e.assumptions.push_back("sized before conversion: the GGUF file holds the checkpoint's text weights in the row's storage; the layers' bytes spread evenly "
                          "over them; no CPU repacking (AMX, CPU_REPACK) of the weights");
  const int64_t kv_layers = s.kv_layers > 0 ? s.kv_layers : 0;
  auto device_of = [&](int64_t il) { return place.device_of(il); };
  if (kv_layers > 0 && s.mla.kv_lora_rank > 0)
    add_mla_kv_buffers(e, LlamaMlaSource::checkpoint, s.mla, kv_layers, types, o, device_of, place.gpus);
  else if (kv_layers > 0)
    add_kv_buffers(e, {.n_layer = kv_layers, .kv_k = s.head_k * s.n_head_kv, .kv_v = s.head_v * s.n_head_kv, .n_swa = s.n_swa, .swa_pattern = s.swa_pattern}, types.k,
                   types.v, o, device_of, place.gpus);
  if (s.recurrent_state_bytes_per_seq > 0) {
    const auto rs = checked_mul(s.recurrent_state_bytes_per_seq, static_cast<uint64_t>(o.parallel));
    if (!rs) return make_error(ErrorKind::invalid_argument, what + ": recurrent state bytes overflow");
    e.buffers.push_back({place.act > 0 ? place.gpus.front() : "CPU", LlamaBufferKind::rs, *rs});
    e.formulas.push_back(format("RS: %s a sequence x %lld sequences = %s", mib(s.recurrent_state_bytes_per_seq).c_str(), static_cast<long long>(o.parallel), mib(*rs).c_str()));
  }
  add_compute_and_output(e, {.n_embd = s.n_embd, .n_head = s.n_head, .head_k = s.head_k, .kv_k = s.head_k * s.n_head_kv, .n_ff = s.n_ff, .n_vocab = s.n_vocab}, o, place);
  sum_buffers(e);
  return e;
}

LlamaCppDecode estimate_llama_cpp_decode(const model::GgufFile& file, const LlamaCppEstimate& e, const LlamaCppDecodeHost& host) {
  LlamaCppDecode d;
  bool has_output = false;
  for (const auto& t : file.tensors) has_output = has_output || t.name == "output.weight";
  std::map<std::string, double> by_type;
  for (const auto& t : file.tensors) {
    double bytes = static_cast<double>(t.bytes);
    // token_embd is read with get_rows: one row per token, unless it doubles as the output head.
    if (t.name == "token_embd.weight" && has_output) bytes = t.shape.empty() || t.shape.back() == 0 ? 0.0 : bytes / static_cast<double>(t.shape.back());
    d.weight_bytes_per_token += bytes;
    by_type[model::ggml_type_name(t.ggml_type)] += bytes;
  }
  d.weight_bytes_by_type.assign(by_type.begin(), by_type.end());
  d.kv_bytes_per_token_full = static_cast<double>(e.kv_buffer_bytes);
  d.per_token_overhead_s = host.per_token_overhead_s;
  if (host.bandwidth_bytes_per_s <= 0) return d;
  // Seconds per token for the weights: each type's bytes over its stream rate.
  double weight_s = 0;
  for (const auto& entry : by_type) {
    // Named, not a structured binding: clang before 16 (the fuzz build's compiler) cannot capture one in the lambda.
    const std::string& type = entry.first;
    const double bytes = entry.second;
    double factor = 1.0;
    if (host.backend == LlamaDecodeBackend::measured_cpu_read) {
      const auto* f = std::find_if(std::begin(k_cpu_stream_factors), std::end(k_cpu_stream_factors), [&](const StreamFactor& x) { return type == x.type; });
      if (f != std::end(k_cpu_stream_factors)) d.cpu_stream_factors.emplace_back(type, f->factor);
      else d.unmeasured_types.push_back(type);
      factor = f != std::end(k_cpu_stream_factors) ? f->factor : 1.0;
    }
    weight_s += bytes / (host.bandwidth_bytes_per_s * factor);
  }
  d.seconds_per_token_empty = host.per_token_overhead_s + weight_s;
  d.seconds_per_token_full = d.seconds_per_token_empty + d.kv_bytes_per_token_full / host.bandwidth_bytes_per_s;
  d.tokens_per_s_empty = 1.0 / d.seconds_per_token_empty;
  d.tokens_per_s_full = 1.0 / d.seconds_per_token_full;
  return d;
}

LlamaCpuBandwidth llama_cpp_cpu_decode_bandwidth(double socket_peak_bytes_per_s, int threads, double per_thread_bytes_per_s) {
  LlamaCpuBandwidth b;
  const double by_threads = static_cast<double>(std::max(threads, 1)) * per_thread_bytes_per_s;
  const double by_socket = socket_peak_bytes_per_s * k_llama_cpu_socket_fraction;
  b.limit = by_socket > 0 && by_socket < by_threads ? "socket" : "threads";
  b.bytes_per_s = b.limit == "socket" ? by_socket : by_threads;
  if (socket_peak_bytes_per_s <= 0) {
    b.formula = format("%d threads x %.1f GB/s = %.1f GB/s (socket peak unknown: no socket bound)", std::max(threads, 1), per_thread_bytes_per_s / 1e9, by_threads / 1e9);
    return b;
  }
  b.formula = format("min(%d threads x %.1f GB/s = %.1f GB/s, %.2f x socket peak %.1f GB/s = %.1f GB/s)", std::max(threads, 1), per_thread_bytes_per_s / 1e9, by_threads / 1e9,
                     k_llama_cpu_socket_fraction, socket_peak_bytes_per_s / 1e9, by_socket / 1e9);
  return b;
}

Expected<LlamaCpuBandwidth> llama_cpp_cpu_run_bandwidth(const device::CpuCatalog& cpus, const LlamaCpuRun& run) {
  if (run.threads <= 0 || run.threads > 100000)
    return make_error(ErrorKind::invalid_argument, format("threads: expected a positive thread count, found %lld", static_cast<long long>(run.threads)), "threads");
  if (run.memory_peak_bytes_per_s && !(*run.memory_peak_bytes_per_s > 0))
    return make_error(ErrorKind::invalid_argument, format("memory_peak_bytes_per_s: expected a positive bandwidth, found %g", *run.memory_peak_bytes_per_s), "memory_peak_bytes_per_s");
  const device::CpuSpec* cpu = run.cpu.empty() ? nullptr : cpus.find(run.cpu);
  if (!run.cpu.empty() && !cpu) return make_error(ErrorKind::not_found, "cpu: '" + run.cpu + "' is not in data/devices/cpus.json", "cpu");
  const double peak = run.memory_peak_bytes_per_s ? *run.memory_peak_bytes_per_s : cpu ? cpu->peak_bandwidth_bytes_per_s : 0.0;
  LlamaCpuBandwidth b = llama_cpp_cpu_decode_bandwidth(peak, static_cast<int>(run.threads));
  if (run.memory_peak_bytes_per_s) b.formula += "; socket peak: the installed memory the record states";
  else if (cpu) b.formula += "; socket peak: " + cpu->name + " rated " + cpu->memory_type + "-" + std::to_string(cpu->memory_mt_per_s) + " (" + cpu->origin + ")";
  return b;
}

}  // namespace preflight::estimate
