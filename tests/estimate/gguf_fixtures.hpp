// GGUF fixtures shared by the llama.cpp tests (test_llama_cpp.cpp, test_llama_cpp_cpu.cpp): tensors and llama /
// MoE layouts built in memory, written to disk as GGUF v3, and the bytes of a buffer kind on a device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "estimate/llama_cpp.hpp"
#include "model/model_spec.hpp"

namespace pftest::gguf {

using namespace preflight;
using namespace preflight::estimate;

inline constexpr uint64_t k_mib = 1024ull * 1024ull;

inline model::GgufTensor tensor(const std::string& name, std::vector<uint64_t> shape, uint32_t type, uint64_t offset) {
  uint64_t elements = 1;
  for (auto d : shape) elements *= d;
  const uint64_t bytes = type == 0 ? elements * 4 : type == 1 ? elements * 2 : elements / 32 * 34;
  return {name, shape, type, offset, bytes, elements};
}

// A llama layout (GQA) with F16 matmul weights laid out one after another, 32-byte aligned.
inline model::GgufFile llama_file(int64_t layers, int64_t embd, int64_t heads, int64_t heads_kv, int64_t head_dim, int64_t ff, int64_t vocab, bool tied = false) {
  model::GgufFile f;
  const std::string a = "llama";
  f.strings["general.architecture"] = a;
  f.numbers[a + ".block_count"] = static_cast<double>(layers);
  f.numbers[a + ".embedding_length"] = static_cast<double>(embd);
  f.numbers[a + ".attention.head_count"] = static_cast<double>(heads);
  f.numbers[a + ".attention.head_count_kv"] = static_cast<double>(heads_kv);
  f.numbers[a + ".attention.key_length"] = static_cast<double>(head_dim);
  f.numbers[a + ".attention.value_length"] = static_cast<double>(head_dim);
  f.numbers[a + ".feed_forward_length"] = static_cast<double>(ff);
  f.array_lengths["tokenizer.ggml.tokens"] = static_cast<uint64_t>(vocab);
  uint64_t off = 0;
  auto add = [&](const std::string& n, std::vector<uint64_t> s, uint32_t type) {
    f.tensors.push_back(tensor(n, s, type, off));
    off += (f.tensors.back().bytes + 31) / 32 * 32;
  };
  const uint64_t E = embd, Q = heads * head_dim, KV = heads_kv * head_dim, F = ff, V = vocab;
  add("token_embd.weight", {E, V}, 1);
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    add(p + "attn_norm.weight", {E}, 0);
    add(p + "attn_q.weight", {E, Q}, 1);
    add(p + "attn_k.weight", {E, KV}, 1);
    add(p + "attn_v.weight", {E, KV}, 1);
    add(p + "attn_output.weight", {Q, E}, 1);
    add(p + "ffn_norm.weight", {E}, 0);
    add(p + "ffn_gate.weight", {E, F}, 1);
    add(p + "ffn_up.weight", {E, F}, 1);
    add(p + "ffn_down.weight", {F, E}, 1);
  }
  add("output_norm.weight", {E}, 0);
  if (!tied) add("output.weight", {E, V}, 1);
  return f;
}

inline uint64_t bytes_of(const LlamaCppEstimate& e, const std::string& device, LlamaBufferKind kind) {
  uint64_t total = 0;
  for (const auto& b : e.buffers) if (b.device == device && b.kind == kind) total += b.bytes;
  return total;
}

// Writes a GGUF v3 file for `f` (metadata numbers as u32, strings, the token array length as that many
// one-letter tokens) with zeroed tensor data, so the CLI can read it from disk.
inline void write_gguf(const std::string& path, const model::GgufFile& f) {
  std::string b;
  auto put = [&](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  auto str = [&](const std::string& s) { put(static_cast<uint64_t>(s.size())); b += s; };
  put(0x46554747u);
  put(3u);
  put(static_cast<uint64_t>(f.tensors.size()));
  put(static_cast<uint64_t>(f.strings.size() + f.numbers.size() + f.array_lengths.size()));
  for (const auto& [k, v] : f.strings) { str(k); put(8u); str(v); }
  for (const auto& [k, v] : f.numbers) { str(k); put(4u); put(static_cast<uint32_t>(v)); }
  for (const auto& [k, n] : f.array_lengths) {
    str(k); put(9u); put(8u); put(n);
    for (uint64_t i = 0; i < n; ++i) str("t");
  }
  uint64_t end = 0;
  for (const auto& t : f.tensors) {
    str(t.name);
    put(static_cast<uint32_t>(t.shape.size()));
    for (auto d : t.shape) put(d);
    put(t.ggml_type);
    put(t.offset);
    end = std::max(end, t.offset + t.bytes);
  }
  b.resize((b.size() + 31) / 32 * 32 + end, '\0');
  std::ofstream(path, std::ios::binary) << b;
}

// The same llama layout with Q8_0 matmul weights (34 B per 32 values).
inline model::GgufFile q8_file() {
  auto f = llama_file(2, 256, 4, 4, 64, 512, 1024);
  uint64_t off = 0;
  for (auto& t : f.tensors) {
    if (t.shape.size() == 2) {
      t.ggml_type = 8;
      t.bytes = t.elements / 32 * 34;
    }
    t.offset = off;
    off += (t.bytes + 31) / 32 * 32;
  }
  return f;
}


// The llama layout with MoE expert tensors: blk.N.ffn_{gate,up,down}_exps instead of the dense FFN.
inline model::GgufFile moe_file() {
  auto f = llama_file(4, 256, 4, 4, 64, 512, 1024);
  for (auto& t : f.tensors)
    for (const char* w : {"gate", "up", "down"})
      if (const auto at = t.name.find(std::string(".ffn_") + w + ".weight"); at != std::string::npos) t.name = t.name.substr(0, at) + ".ffn_" + w + "_exps.weight";
  return f;
}

inline const model::GgufTensor& named(const model::GgufFile& f, const std::string& name) {
  return *std::find_if(f.tensors.begin(), f.tensors.end(), [&](const model::GgufTensor& t) { return t.name == name; });
}


}  // namespace pftest::gguf
