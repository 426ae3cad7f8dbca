#include "cli/plan_speculative.hpp"
#include <fmt/format.h>
#include <algorithm>
#include "base/json_util.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "engine/flag_versions.hpp"
#include "engine/speculative_methods.hpp"
#include "plan/speculative.hpp"

namespace preflight::cli {

// quant34 (issue 16): why the engine plan runs on `dev` cannot start plan's --speculative-config for `m`, or "": before vLLM
// 0.8.2 a method V0's flags do not serve (eagle3; MTP before 0.7.3 or of a model other than DeepSeek-V3's), as
// engine::speculative_serve_args reads data/engines/flag_versions.json. Rows' commands take the same form (plan/launch).
std::string speculative_form_refusal(const plan::PlanInputs& in, const model::ModelSpec& m, const device::DeviceSpec& dev) {
  if (in.speculative_config.empty()) return "";
  const auto& flags = engine::shipped_flag_versions();
  const auto eng = plan::plan_engine(in, dev);
  if (!flags || !eng) return "";
  const auto args = engine::speculative_serve_args(*flags, eng->engine, eng->rule_version(), in.speculative_config, m.model_type);
  if (!args) return args.error().message;
  // spec35: the method as the version takes it (plan/launch writes it so), then what the version still refuses.
  const auto& methods = engine::shipped_speculative_methods();
  if (!methods) return methods.error().message;
  const std::string written = engine::speculative_config_for_version(*methods, eng->engine, eng->rule_version(), in.speculative_config, m.model_type);
  if (std::string why = engine::speculative_method_refusal(*methods, eng->engine, eng->rule_version(), written, m.model_type); !why.empty()) return why;
  // Issue 19 (attack37's finding): the config's own values, in the order fit checks them (deploy::check_speculative_method):
  // plan sized and started an n-gram window or a num_speculative_tokens the version refuses. A draft_tensor_parallel_size
  // is checked against itself here (each row's TP is the plan's to choose).
  const Json config = Json::parse(written, nullptr, false);
  const auto draft_tp = config.is_object() ? config.find("draft_tensor_parallel_size") : config.end();
  const int64_t tp = config.is_object() && draft_tp != config.end() && draft_tp->is_number_integer() ? draft_tp->get<int64_t>() : 1;
  if (std::string why = engine::speculative_value_refusal(*methods, eng->engine, eng->rule_version(), written, {}, engine::SpeculativeValueStage::config, tp); !why.empty())
    return why;
  return engine::speculative_ngram_window_refusal(*methods, eng->engine, eng->rule_version(), written);
}

// quant34: a speculative config the engine version cannot start (no V0 form before vLLM 0.8.2) is refused in the MODEL
// form as speculative_rejection is (exit 2), on the first card whose engine refuses it.
Status check_speculative_form(const plan::PlanInputs& in, const model::ModelSpec& m, const std::vector<device::DeviceSpec>& list) {
  for (const auto& d : list)
    if (const std::string why = speculative_form_refusal(in, m, d); !why.empty()) return make_error(ErrorKind::invalid_argument, "--speculative-config: " + why);
  return Ok{};
}

// Issue 15, the `plan --device D` form: a drafter checkpoint ("model") belongs to one target, so it needs --model to
// select exactly one catalogue model; the models vLLM refuses the config for (mtp on a model without MTP layers) are
// not planned and become rejected rows with vLLM's message.
Expected<std::vector<plan::Candidate>> refuse_speculative(std::vector<model::ModelSpec>& models, const device::DeviceSpec& dev, const plan::PlanInputs& in,
                                                          const plan::PlanTargets& t) {
  std::vector<plan::Candidate> refused;
  const auto& spec = t.speculative;
  if (spec.method.empty()) return refused;
  if (!spec.model.empty() && spec.separate_checkpoint() && models.size() != 1)
    return make_error(ErrorKind::invalid_argument,
                      fmt::format("--speculative-config: the drafter '{}' ({}) belongs to one target model, and plan --device sizes {} catalogue models: "
                                  "name the target (plan MODEL --device {}) or select one with --model GLOB",
                                  one_line(spec.model, 200), spec.method, models.size(), dev.id));
  std::erase_if(models, [&](const model::ModelSpec& m) {
    std::string why = plan::speculative_rejection(m, spec);
    if (why.empty()) why = speculative_form_refusal(in, m, dev);  // quant34
    if (why.empty()) return false;
    plan::Candidate c;
    c.model_id = m.id;
    c.device_id = dev.id;
    c.variant = plan::published_label(m);
    c.reason = "engine rejects it: " + why;
    refused.push_back(std::move(c));
    return true;
  });
  return refused;
}

// Issue 15: what the plan counted for the drafter, in its assumptions, and on every JSON row ("speculative").
void note_speculative(plan::PlanResult& result, const plan::PlanTargets& t, const std::string& text) {
  if (t.speculative.method.empty()) return;
  result.assumptions.push_back(fmt::format("--speculative-config '{}': every row sized with the drafter ({}), started with it in the form each row's engine "
                                           "version parses (V0's --speculative-model / --num-speculative-tokens before vLLM 0.8.2)",
                                           one_line(text, 200), plan::drafter_counted(t.speculative, {})));
}
void add_speculative_json(report::PlanJsonExtras& extras, const plan::PlanResult& result, const plan::PlanTargets& t, const std::string& text) {
  if (t.speculative.method.empty()) return;
  for (const auto& c : result.recommended) extras.speculative_recommended.push_back(plan::speculative_row_json(c, t.speculative, text));
  for (const auto& c : result.rejected) extras.speculative_rejected.push_back(plan::speculative_row_json(c, t.speculative, text));
}

}  // namespace preflight::cli
