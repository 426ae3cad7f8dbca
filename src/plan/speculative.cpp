#include "plan/speculative.hpp"

#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/speculative_method.hpp"

namespace preflight::plan {

std::string speculative_rejection(const model::ModelSpec& m, const estimate::SpeculativeConfig& spec) { return deploy::mtp_without_layers_refusal(m, spec); }

std::string drafter_counted(const estimate::SpeculativeConfig& spec, const RowFit& fit) {
  if (spec.method.empty()) return "";
  if (spec.mtp())
    return (fit.drafter_layers > 0 ? format("the model's own %lld MTP layer(s)", static_cast<long long>(fit.drafter_layers)) : std::string("the model's own MTP layers")) +
           ", embedding and head shared with the target";
  if (spec.drafter && spec.separate_checkpoint()) return format("%s, sized from its config (%s)", spec.model.c_str(), spec.drafter->source.c_str());
  if (spec.method == "eagle" || spec.method == "eagle3")
    return format("an assumed one-layer %s head of the target's shape (%s)", spec.method.c_str(),
                  spec.model.empty() ? "no \"model\" given" : ("the config of '" + spec.model + "' was not read").c_str());
  if (!spec.has_drafter_layers()) return "none: " + spec.method + " drafts from the tokens already seen (no weights, no KV layers)";
  return "not sized: " + spec.method + " drafters are not modelled (no weights or KV layers counted)";
}

Json speculative_row_json(const Candidate& c, const estimate::SpeculativeConfig& spec, const std::string& config_text) {
  Json j = {{"method", spec.method},
            {"num_speculative_tokens", spec.num_speculative_tokens},
            {"model", spec.model.empty() ? Json() : Json(spec.model)},
            {"config", config_text},
            {"drafter", drafter_counted(spec, c.fit)}};
  if (c.fit.total_bytes > 0) {  // the row was sized (a row rejected before its estimate has no figures)
    j["drafter_weights_bytes_per_device"] = c.fit.drafter_weights_bytes;
    j["drafter_kv_layers"] = c.fit.drafter_layers;
  }
  return j;
}

}  // namespace preflight::plan
