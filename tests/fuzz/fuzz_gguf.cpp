// libFuzzer target: GGUF header, metadata and tensor infos, then the ModelSpec built from them, and the llama.cpp
// estimate of what parsed (issue 19: a hostile block_count hung estimate_llama_cpp, which the reader alone never ran).
#include "estimate/llama_cpp.hpp"
#include "model/gguf_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = preflight::model::parse_gguf(data, size, "fuzz.gguf");
  if (!file) return 0;
  (void)preflight::model::model_spec_from_gguf(*file, "fuzz.gguf");
  // llama-server's defaults (CPU only), then every layer offloaded with a quantized KV cache, two sequences and
  // the expert tensors kept on the CPU.
  preflight::estimate::LlamaCppOptions cpu;
  (void)preflight::estimate::estimate_llama_cpp(*file, cpu);
  preflight::estimate::LlamaCppOptions gpu;
  gpu.n_gpu_layers = 999;
  gpu.cache_type_k = gpu.cache_type_v = "q8_0";
  gpu.parallel = 2;
  gpu.cpu_moe_first_layers = 4;
  (void)preflight::estimate::estimate_llama_cpp(*file, gpu);
  return 0;
}
