// cli/quant_descriptor_refusal: fit's refusal of a --quantization whose config file the checkpoint lacks (issue 16,
// user37). `vllm serve Qwen/Qwen3-32B --quantization ascend` on vLLM-Ascend stops before loading a weight: the BF16
// repository has no quant_model_description.json and its config.json no quantization_config
// (data/engines/quant_descriptor_checks.json has the engine's words per version). fit used to size it as a converted
// W8A8 checkpoint and say so in an assumption; now the verdict is the engine's refusal, exit 1, with the ways to the
// format: --variant (the conversion, sized), a published checkpoint of it, or the weights as published.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "deploy/deployment.hpp"
#include "estimate/fit.hpp"

namespace preflight::cli {

struct DescriptorRefusal {
  std::string message;             // the engine's words for this version
  std::vector<std::string> fixes;  // what starts instead, most faithful to the flag first
};

// The refusal of fit's start, or nullopt. Only where the flag is the command line's own (no --variant, no published
// checkpoint named as MODEL: both set `variant_given`), the engine and version have a record of the method, and the
// model preflight read states no quantization at all (neither the method's file nor a config.json quantization_config:
// a catalogue id is the repository it vendors; a folder or a hub copy without the file). A config.json named by its
// path is left alone: the folder the engine is given may hold the file. `start`'s model_arg and device_arg are MODEL
// and --device as given, for the engine's message and the fixes' commands.
struct DescriptorStart {
  bool variant_given = false;  // --variant, or a published checkpoint named as MODEL
  std::string model_arg, device_arg;
};
std::optional<DescriptorRefusal> missing_descriptor_refusal(const deploy::Resolved& resolved, const deploy::Flags& flags, const DescriptorStart& start);

// fit's use of it: the refusal becomes `est`'s verdict (unsupported_quantization, the engine's message, no printed lines:
// the engine stops before loading; the sizes stay) and `fixes` its fixes, and the assumption that a converted checkpoint
// was sized goes. True when refused.
bool refuse_missing_descriptor(const deploy::Resolved& resolved, const deploy::Flags& flags, const DescriptorStart& start, estimate::FitEstimate& est,
                               std::vector<std::string>& fixes);

}  // namespace preflight::cli
