#include "cli/quant_descriptor_refusal.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>

#include "base/text.hpp"
#include "engine/quant_descriptor_checks.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/quant_variant.hpp"

namespace preflight::cli {

namespace {

bool names_regular_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// "Qwen/Qwen3-32B" from a hub reference or a catalogue id as given (hf:org/name@rev -> org/name).
std::string descriptor_repo_of(const std::string& model_arg) {
  std::string id = model_arg;
  if (id.rfind("hf:", 0) == 0 || id.rfind("ms:", 0) == 0) id = id.substr(3);
  if (const auto at = id.find('@'); at != std::string::npos) id = id.substr(0, at);
  return to_lower(id);
}

}  // namespace

std::optional<DescriptorRefusal> missing_descriptor_refusal(const deploy::Resolved& resolved, const deploy::Flags& flags, const DescriptorStart& start) {
  const std::string& model_arg = start.model_arg;
  if (!flags.quantization || start.variant_given || !resolved.model.quant.method.empty() || names_regular_file(model_arg)) return std::nullopt;
  const auto& checks = engine::shipped_quant_descriptor_checks();
  if (!checks) return std::nullopt;  // the catalogue tests report the load error
  const engine::QuantDescriptorCheck* check = checks->record_for(resolved.engine, flags.quantization->value);
  if (!check) return std::nullopt;
  DescriptorRefusal out;
  out.message = fmt::format("{} ({}: `vllm serve {} --quantization {}` reads the method's config from {} or config.json's quantization_config, and "
                            "this checkpoint has neither; {})",
                            engine::quant_descriptor_message(*check, model_arg), resolved.engine.id, model_arg, check->method, check->file, checks->origin);
  const std::string device = start.device_arg.empty() ? std::string("D") : start.device_arg;
  std::vector<std::string> variant_ids;
  if (const auto& variants = model::load_variant_catalog(); variants)
    for (const auto& v : variants->variants)
      if (v.engine_quantization == check->method) variant_ids.push_back(v.id);
  if (!variant_ids.empty()) {
    const std::vector<std::string> others(variant_ids.begin() + 1, variant_ids.end());
    out.fixes.push_back(fmt::format("--variant {} in place of --quantization {}: the conversion of these weights, sized as its checkpoint "
                                    "(`preflight plan {} --devices {} --variant {}` prints the conversion){}",
                                    variant_ids.front(), check->method, model_arg, device, variant_ids.front(),
                                    others.empty() ? std::string() : fmt::format("; the other variants served with --quantization {}: {}", check->method, fmt::join(others, ", "))));
  }
  if (const auto& catalog = engine::shipped_quantized_catalog(); catalog) {
    const auto& variants = model::load_variant_catalog();
    for (const auto& c : catalog->checkpoints) {
      if (to_lower(c.base_model) != descriptor_repo_of(model_arg) || !variants) continue;
      auto v = model::find_variant(*variants, c.variant);
      if (!v || (*v)->engine_quantization != check->method) continue;
      out.fixes.push_back(fmt::format("the published {} checkpoint {} ({}, {}): `preflight fit {} --device {}`", c.format, c.repo, c.hub, c.url, c.repo, device));
    }
  }
  out.fixes.push_back(fmt::format("no --quantization: the weights as published (the engine's own first solution)"));
  return out;
}

bool refuse_missing_descriptor(const deploy::Resolved& resolved, const deploy::Flags& flags, const DescriptorStart& start, estimate::FitEstimate& est,
                               std::vector<std::string>& fixes) {
  auto refused = missing_descriptor_refusal(resolved, flags, start);
  if (!refused) return false;
  std::erase_if(est.assumptions, [](const std::string& a) { return a.find("assumed (no checkpoint descriptor read)") != std::string::npos; });
  est.fits = false;
  est.failure = estimate::Failure::unsupported_quantization;
  est.failure_message = std::move(refused->message);
  est.lines.clear();
  fixes = std::move(refused->fixes);
  return true;
}

}  // namespace preflight::cli
