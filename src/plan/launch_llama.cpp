// llama-server's model argument for a plan row (plan/launch_words.hpp): a GGUF named on the hub or on disk, a GGUF
// the catalogue lists as published in the row's variant, or a safetensors checkpoint converted with llama.cpp's
// convert_hf_to_gguf.py (and quantized with llama-quantize for a GGUF preset row). Split from launch.cpp (issue 19, hard35).
#include <algorithm>
#include <regex>
#include <string>

#include "base/text.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/model_spec.hpp"
#include "model/quant_variant.hpp"
#include "plan/launch.hpp"
#include "plan/launch_words.hpp"

namespace preflight::plan::launch_words {

namespace {

// llama-server's model argument for the model as the user gave it (ModelSpec::id): a hub reference
// "hf:org/name/file.gguf@rev" becomes -hf org/name:QUANT (llama.cpp's -hf <user>/<model>[:quant] picks
// the file by its quant tag; common/arg.cpp), or -hf org/name --hf-file FILE when the name has no tag;
// a local GGUF file becomes -m PATH; anything else (a safetensors checkpoint) keeps MODEL.gguf.
std::string llama_model_arg(const model::ModelSpec& m) {
  const std::string& id = m.id;
  if (starts_with(id, "hf:")) {
    std::string ref = id.substr(3);
    if (auto at = ref.rfind('@'); at != std::string::npos) ref.erase(at);
    const auto first = ref.find('/'), second = ref.find('/', first == std::string::npos ? 0 : first + 1);
    if (second == std::string::npos) return "-hf " + ref;
    const std::string repo = ref.substr(0, second), file = ref.substr(second + 1);
    static const std::regex k_quant_tag(R"((?:^|[-_.])((?:I?Q[0-9][A-Z0-9_]*)|BF16|F16|F32)\.gguf$)", std::regex::icase);
    std::smatch tag;
    // A file name is at most 255 bytes; std::regex recurses per character (issue 19), so nothing longer reaches it.
    if (file.size() <= 255 && std::regex_search(file, tag, k_quant_tag)) return "-hf " + repo + ":" + tag[1].str();
    return "-hf " + repo + " --hf-file " + file;
  }
  const bool gguf = std::any_of(m.weights.begin(), m.weights.end(), [](const auto& w) { return !w.stored_format.empty(); }) || ends_with(m.source, ".gguf");
  if (!gguf || id.empty() || starts_with(id, "ms:")) return "-m MODEL.gguf";
  return "-m " + shell_path(id);
}

// The llama-quantize type of a GGUF preset variant ("Q4_K_M" for gguf_q4_k_m), or "" when `variant_id` is none. A
// GGUF variant's name is "GGUF " and llama-quantize's own type name (data/variants/quant_variants.json, whose
// records name tools/quantize/quantize.cpp QUANT_OPTIONS as their source).
std::string gguf_quantize_type(const std::string& variant_id) {
  const auto& variants = model::load_variant_catalog();
  if (variant_id.empty() || !variants) return "";
  const auto found = model::find_variant(*variants, variant_id);
  if (!found || (*found)->engine_quantization != "gguf") return "";
  const std::string& name = (*found)->name;
  const std::string prefix = "GGUF ";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : "";
}

// user37: the llama-server a start that clones llama.cpp builds there (llama_server_and_model).
constexpr const char* k_checkout_server = "llama.cpp/build/bin/llama-server";

}  // namespace

// llama-server (the checkout's where the start builds it) and its model argument for a row: llama_model_arg, except for a published safetensors checkpoint
// (a catalogue or hub repo id, no GGUF file), which llama.cpp cannot load: the prepare step downloads it and
// converts it once with llama.cpp's convert_hf_to_gguf.py in the dtype the row is sized in (issue 16: never a
// MODEL.gguf that no command writes). A row of a GGUF preset (`plan --engine llama.cpp --variant gguf_q4_k_m`) is
// sized in that preset: the converted file is then quantized with llama-quantize and the quantized file served
// (ux28: the row said Q4_K_M and the command served the BF16 file, twice its size).
std::string llama_server_and_model(const model::ModelSpec& m, const Candidate& c, Launch& l, const engine::QuantizedCatalog& published) {
  std::string arg = llama_model_arg(m);
  const std::string repo = hub_repo_id(m.id);
  // Issue 19 (hard31): a model read from a local folder ("dir/name" that exists here) is converted where it lies; its
  // id was taken for a hub repo and the recipe downloaded "hf download dir/name", a repo that is not the folder read.
  const std::string folder = local_folder(m, m.id);
  // Issue 16 (llamacpp31): a GGUF of the model published in the row's variant (ggml-org/gpt-oss-20b-GGUF, MXFP4_MOE) is
  // served as it is, with llama-server's -hf <user>/<model>: no conversion of the safetensors original.
  if (const engine::QuantizedCheckpoint* gguf = c.variant_id.empty() || !folder.empty() ? nullptr : engine::find_quantized_checkpoint(published, repo, c.variant_id);
      gguf && gguf->quantization_flag == "gguf" && arg == "-m MODEL.gguf" && shell_word(gguf->repo) == gguf->repo) {
    l.checkpoint = gguf->repo;
    l.notes.push_back(gguf->repo + ": " + gguf->format + ", published (" + gguf->url + "); llama-server -hf downloads it into its cache");
    return "llama-server -hf " + gguf->repo;
  }
  const bool repo_id = folder.empty() && repo.find('/') != std::string::npos && repo.find('/') == repo.rfind('/') && repo[0] != '/' && repo[0] != '.';
  if (arg != "-m MODEL.gguf" || (!repo_id && folder.empty()) || starts_with(m.id, "ms:") || m.quant.quantized() || (repo_id && shell_word(repo) != repo)) return "llama-server " + arg;
  std::string name = base_name(folder.empty() ? repo : folder);
  if (name.empty() || name == "." || name == "..") name = "model";  // a folder given as "." or "dir/"
  const std::string dir = folder.empty() ? "/models/" + name : folder;
  const std::string outtype = m.dtype == model::Dtype::f16 ? "f16" : m.dtype == model::Dtype::f32 ? "f32" : "bf16";
  const std::string gguf = "/models/" + name + "-" + (outtype == "bf16" ? "BF16" : outtype == "f16" ? "F16" : "F32") + ".gguf";
  const std::string type = gguf_quantize_type(c.variant_id);
  const std::string what = folder.empty() ? repo + " publishes" : "the local folder " + folder + " (read here, not a hub repo) holds";
  l.prepare.push_back("# llama.cpp loads GGUF files only and " + what + " safetensors: convert it once with llama.cpp's convert_hf_to_gguf.py (" +
                      outtype + (type.empty() ? ", as sized), then serve the file" : ", what llama-quantize reads)"));
  l.prepare.push_back("git clone https://github.com/ggml-org/llama.cpp && pip install -r llama.cpp/requirements/requirements-convert_hf_to_gguf.txt");
  if (folder.empty()) l.prepare.push_back("hf download " + repo + " --local-dir " + dir);
  l.prepare.push_back("python3 llama.cpp/convert_hf_to_gguf.py " + shell_path(dir) + " --outtype " + outtype + " --outfile " + shell_word(gguf));
  l.checkpoint = gguf;
  l.notes.push_back("convert_hf_to_gguf: positional model directory, --outfile, --outtype f32|f16|bf16|q8_0|... "
                    "(https://github.com/ggml-org/llama.cpp/blob/master/convert_hf_to_gguf.py; its requirements in "
                    "requirements/requirements-convert_hf_to_gguf.txt)");
  // user37 (issue 16, commands that run as written): the checkout cloned for the conversion also builds the llama-server
  // the row starts (k_checkout_server); before, the serve line called a llama-server from PATH that no line installed.
  if (type.empty()) {
    l.prepare.push_back("# build llama-server from the same checkout, and serve the file with it");
    l.prepare.push_back("cmake -S llama.cpp -B llama.cpp/build && cmake --build llama.cpp/build --target llama-server -j");
    return std::string(k_checkout_server) + " -m " + shell_word(gguf);
  }
  const std::string quantized = "/models/" + name + "-" + type + ".gguf";
  l.prepare.push_back("# then quantize it to " + type + ", the preset the row is sized in, with llama.cpp's llama-quantize (built from the same checkout, with the llama-server that serves that file)");
  l.prepare.push_back("cmake -S llama.cpp -B llama.cpp/build && cmake --build llama.cpp/build --target llama-quantize llama-server -j");
  l.prepare.push_back("llama.cpp/build/bin/llama-quantize " + shell_word(gguf) + " " + shell_word(quantized) + " " + type);
  l.checkpoint = quantized;
  l.notes.push_back("llama-quantize: model-f32.gguf [model-quant.gguf] type [nthreads], the type a QUANT_OPTIONS name such as " + type +
                    " (https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/quantize.cpp usage)");
  return std::string(k_checkout_server) + " -m " + shell_word(quantized);
}


}  // namespace preflight::plan::launch_words
