#include "validate/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include "base/file.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/speed.hpp"
#include "model/model_source.hpp"

namespace preflight::validate {

namespace {

// First "vX.Y[.Z]" in free text ("~v0.9.2/v0.10.0" -> "0.9.2"); empty when none. "V1 engine" has no dot.
std::string version_in_notes(const std::string& notes) {
  static const std::regex k_version(R"((?:^|[^A-Za-z0-9])v(\d+\.\d+(?:\.\d+)?))");
  std::smatch m;
  return std::regex_search(notes, m, k_version) ? m[1].str() : std::string();
}

// Whether free text names a command-line flag as used: the flag itself, not negated ("without",
// "no", "not") within the few words before it.
bool flag_in_notes(const std::string& notes, const std::string& flag) {
  static const std::set<std::string> k_negations = {"no", "not", "without", "never", "didn't", "don't", "unused"};
  for (size_t at = notes.find(flag); at != std::string::npos; at = notes.find(flag, at + flag.size())) {
    const size_t end = at + flag.size();
    if (end < notes.size() && (std::isalnum(static_cast<unsigned char>(notes[end])) || notes[end] == '-' || notes[end] == '_')) continue;
    // A negation counts only in the flag's own clause ("started without --x", "did not need --x"), as a whole
    // word among the three before it: "was not OOM; --x was required" names the flag as used.
    size_t clause = notes.find_last_of(".;:,()\n", at == 0 ? 0 : at - 1);
    clause = (clause == std::string::npos || at == 0) ? 0 : clause + 1;
    std::vector<std::string> words;
    std::string word;
    for (const char ch : to_lower(notes.substr(clause, at - clause)) + " ") {
      if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '\'') word += ch;
      else if (!word.empty()) words.push_back(std::exchange(word, {}));
    }
    bool negated = false;
    for (size_t i = words.size() > 3 ? words.size() - 3 : 0; i < words.size(); ++i) negated = negated || k_negations.count(words[i]) > 0;
    if (negated) continue;
    return true;
  }
  return false;
}

// Total memory stated in a device description: "79.18 GiB total", "total_gpu_memory=23.58GiB",
// "total memory 65452113920 B", "(16376 MiB; 15.99 GiB total)", "80.00 GiB total".
std::optional<double> stated_total_bytes(const std::string& text) {
  std::smatch mm;
  static const std::regex bytes_re(R"((\d{9,})\s*B\b)");
  if (std::regex_search(text, mm, bytes_re)) return std::stod(mm[1]);
  static const std::regex gib_total(R"(([\d.]+)\s*GiB\s*total)");
  if (std::regex_search(text, mm, gib_total)) return std::stod(mm[1]) * k_gib;
  static const std::regex total_eq(R"(total[_a-z]*=\s*([\d.]+)\s*GiB)");
  if (std::regex_search(text, mm, total_eq)) return std::stod(mm[1]) * k_gib;
  static const std::regex usable(R"(([\d.]+)\s*GiB\s*usable)");
  if (std::regex_search(text, mm, usable)) return std::stod(mm[1]) * k_gib;
  return std::nullopt;
}

std::string engine_name(const std::string& e) { return to_lower(trim(e)); }

double pct(double predicted, double observed) {
  if (observed == 0) return predicted == 0 ? 0 : 100;
  return std::fabs(predicted - observed) / std::fabs(observed) * 100.0;
}

std::string first_token(const std::string& text) {
  const auto pos = text.find_first_of(" (");
  return pos == std::string::npos ? text : text.substr(0, pos);
}

}  // namespace

Expected<ValidationReport> run_validation(const std::vector<std::string>& files, const ValidateOptions& options) {
  ValidationReport report;
  PF_TRY(devices, device::load_device_catalog());
  PF_TRY(engines, engine::load_engine_catalog());
  PF_TRY(speeds, engine::load_speed_catalog());
  model::ResolveOptions resolve;
  resolve.extra_model_dirs = options.model_dirs;
  for (const auto& file : files) {
    PF_TRY(text, read_text_file(file));
    std::istringstream lines(text);
    std::string line;
    int line_no = 0;
    while (std::getline(lines, line)) {
      ++line_no;
      if (trim(line).empty()) continue;
      ++report.cases;
      CaseResult row;
      row.file = file;
      PF_TRY(json, parse_json(line, format("%s:%d", file.c_str(), line_no)));
      JsonObject c(json, format("%s:%d", file.c_str(), line_no));
      PF_TRY(id, c.opt_string("id"));
      row.id = id.value_or(format("%s:%d", base_name(file).c_str(), line_no));
      PF_TRY(model_name, c.opt_string("model"));
      PF_TRY(hint, c.opt_string("config_hint"));
      PF_TRY(device_text, c.opt_string("device"));
      PF_TRY(engine_text, c.opt_string("engine"));
      PF_TRY(engine_version, c.opt_string("engine_version"));
      PF_TRY(engine_detail, c.opt_string("engine_detail"));
      PF_TRY(notes, c.opt_string("notes"));
      row.model = model_name.value_or("");
      row.device = device_text.value_or("");
      auto skip = [&](const std::string& reason) {
        row.skipped = true;
        row.skip_reason = reason;
        ++report.skipped;
        report.rows.push_back(row);
      };
      // Observed values.
      PF_TRY(o_weights, c.opt_number("weights_gib"));
      PF_TRY(o_kv, c.opt_number("available_kv_gib"));
      PF_TRY(o_tokens, c.opt_number("kv_cache_tokens"));
      PF_TRY(o_conc, c.opt_number("max_concurrency"));
      PF_TRY(o_conc_len, c.opt_int("concurrency_len"));
      PF_TRY(o_fits, c.opt_bool("fits"));
      PF_TRY(o_failure, c.opt_string("failure"));
      PF_TRY(o_speed, c.opt_number("tokens_per_s"));
      if (!o_weights && !o_kv && !o_tokens && !o_conc && !o_fits && !o_speed) {
        skip("no observed memory field, verdict or speed");
        continue;
      }
      // Model: catalogue / --models dir by id, then the config hint.
      Expected<model::ModelSpec> spec = make_error(ErrorKind::not_found, "no model");
      std::vector<std::string> tried;
      for (const auto& candidate : {row.model, first_token(hint.value_or(""))}) {
        if (candidate.empty()) continue;
        spec = model::resolve_model(candidate, resolve);
        tried.push_back(candidate);
        if (spec) {
          if (candidate != row.model) row.assumptions.push_back("architecture from config_hint " + candidate);
          break;
        }
      }
      if (!spec) {
        skip("model not resolvable (tried " + [&] { std::string s; for (auto& t : tried) s += (s.empty() ? "" : ", ") + t; return s; }() + ")");
        continue;
      }
      // Device: catalogue match, else the stated total with the vendor's platform.
      const device::DeviceSpec* matched = device::match_device_text(devices, row.device);
      const auto total = stated_total_bytes(row.device);
      device::DeviceSpec synthetic;
      if (!matched) {
        if (!total) {
          skip("device not in the catalogue and no total memory stated: " + row.device);
          continue;
        }
        synthetic.id = "stated-device";
        synthetic.name = row.device;
        synthetic.memory_bytes = *total;
        synthetic.runtime_total_bytes = *total;
        synthetic.platform = contains_ci(row.device, "ascend") || contains_ci(row.device, "npu") ? "npu" : (contains_ci(row.device, "amd") || contains_ci(row.device, "rocm") ? "rocm" : "cuda");
        matched = &synthetic;
        row.assumptions.push_back(format("device from the stated %.2f GiB total", bytes_to_gib(*total)));
      }
      // Engine profile.
      // Version: the stated field, else a "vX.Y" dating inside it ("0.1.dev7548+gbaba038 (main, ~v0.9.2)"),
      // else the one the case notes give ("V0 engine (~v0.6.4, ...)"): the era decides the profile.
      std::string vtext = engine_version.value_or(engine_detail.value_or(""));
      const std::string ename = engine_name(engine_text.value_or(engine::default_engine_for(matched->platform)));
      auto profile = engine::select_engine(engines, ename, vtext);
      for (const auto& [dating, where] : {std::pair{vtext, "engine_version"}, std::pair{notes.value_or(""), "case notes"}}) {
        if (profile && !vtext.empty()) break;
        const std::string v = version_in_notes(dating);
        if (v.empty()) continue;
        if (auto dated = engine::select_engine(engines, ename, v)) {
          profile = dated;
          row.assumptions.push_back("engine version " + v + ", dated by the " + std::string(where));
          vtext = v;
        }
      }
      if (!profile && !vtext.empty()) {
        row.assumptions.push_back("engine version '" + vtext + "' not recognised; newest profile used");
        profile = engine::select_engine(engines, ename, "");
      }
      if (!profile) {
        skip(profile.error().describe());
        continue;
      }
      row.engine = profile->id;
      const engine::Overheads* oh = engines.overheads_for(*profile, matched->platform);
      if (!oh) {
        skip("no overheads for platform " + matched->platform);
        continue;
      }
      estimate::Deployment d;
      PF_TRY(tp, c.opt_int("tensor_parallel_size"));
      PF_TRY(pp, c.opt_int("pipeline_parallel_size"));
      d.tensor_parallel_size = tp.value_or(1);
      d.pipeline_parallel_size = pp.value_or(1);
      PF_TRY(util, c.opt_number("gpu_memory_utilization"));
      d.gpu_memory_utilization = util;
      PF_TRY(mml, c.opt_int("max_model_len"));
      d.max_model_len = mml ? mml : o_conc_len;
      PF_TRY(mns, c.opt_int("max_num_seqs"));
      d.max_num_seqs = mns;
      PF_TRY(mnbt, c.opt_int("max_num_batched_tokens"));
      d.max_num_batched_tokens = mnbt;
      PF_TRY(kvd, c.opt_string("kv_cache_dtype"));
      d.kv_cache_dtype = kvd.value_or("auto");
      PF_TRY(quant, c.opt_string("quantization"));
      std::string q = to_lower(quant.value_or(""));
      if (q.find("none") != std::string::npos || q.find("bf16") != std::string::npos || q.find("not stated") != std::string::npos) q.clear();
      if (q.rfind("gguf", 0) == 0) {
        // A GGUF preset applied to the config of the same architecture: the preset's average bits.
        const std::string preset_name = trim(q.substr(4));
        if (const engine::GgufPreset* preset = speeds.find_preset(preset_name)) {
          model::QuantScheme g;
          g.method = "gguf";
          g.linear_format = g.expert_format = model::WeightFormat::packed_bits;
          g.bits_per_weight = preset->bits_per_weight;
          g.source = preset->source;
          g.detail = format("GGUF %s: %.3f bits per weight on every matrix (%s)", preset->name.c_str(), preset->bits_per_weight, preset->source.c_str());
          d.quant_scheme = g;
        }
        q = "gguf";
      } else if (!q.empty()) {
        if (q.find("awq") != std::string::npos) q = "awq";
        else if (q.find("compressed-tensors") != std::string::npos) q = "compressed-tensors";
        else if (q.find("fp8") != std::string::npos) q = "fp8";
        else if (q.find("mxfp4") != std::string::npos) q = "mxfp4";
        else if (q.find("gptq") != std::string::npos) q = "gptq";
        else q = first_token(q);
      }
      // The checkpoint's own scheme already describes it: pass the flag only when it differs.
      if (!q.empty() && to_lower(spec->quant.method) != q) d.quantization = q;
      PF_TRY(eager, c.opt_bool("enforce_eager"));
      d.mode = eager.value_or(false) ? estimate::ExecutionMode::eager : estimate::ExecutionMode::graph;
      if (total && matched != &synthetic) d.device_total_bytes = total;
      // A flag the case's own notes say the run used, where the schema has no field for it.
      if (flag_in_notes(notes.value_or(""), "--skip-mm-profiling")) {
        d.skip_mm_profiling = true;
        row.assumptions.push_back("--skip-mm-profiling, named in the case notes");
      }
      auto est = estimate::estimate_fit(*spec, *matched, *profile, *oh, d);
      // A run recorded as started (or with a printed KV size) that the engine would have refused to start only
      // because of the encoder profile (the KV capacity below max_model_len with the pass, enough without)
      // had the pass taken out by a flag the case does not record: the engine cannot have printed its KV size
      // otherwise. Evaluated as --skip-mm-profiling, and said so.
      const bool observed_start = o_fits.value_or(false) || o_tokens || o_kv;
      if (observed_start) {
        if (auto alt = estimate::fit_without_encoder_pass(*spec, *matched, *profile, *oh, d, est)) {
          row.assumptions.push_back(format("--skip-mm-profiling inferred: with the encoder profile the KV cache would hold %lld tokens, under max_model_len %lld, "
                                           "and the engine would not have started; the recorded run started, so its flags left the pass out",
                                           static_cast<long long>(est.kv_tokens), static_cast<long long>(est.max_model_len)));
          d.skip_mm_profiling = true;
          est = std::move(*alt);
        }
      }
      row.assumptions.insert(row.assumptions.end(), est.assumptions.begin(), est.assumptions.end());
      if (o_speed) {
        const std::string& platform = matched->platform;
        const engine::SpeedProfile* sp = speeds.find(profile->engine, platform, matched->id);
        if (!sp) {
          skip("no speed profile for " + profile->engine + " on " + platform);
          continue;
        }
        if (est.failure == estimate::Failure::weights_oom) {
          skip(format("weights (%.1f GiB per device) exceed the device: partial CPU offload is not modelled", bytes_to_gib(est.weights_bytes)));
          continue;
        }
        PF_TRY(conc, c.opt_int("concurrency"));
        estimate::SpeedWorkload work;
        work.concurrency = {conc.value_or(1)};
        work.context_tokens = options.decode_context_tokens;
        const auto speed = estimate::estimate_speed(*spec, *matched, *sp, speeds, d, work);
        if (speed.points.empty()) {
          skip(speed.assumptions.empty() ? std::string("speed not estimable") : speed.assumptions.back());
          continue;
        }
        row.assumptions.insert(row.assumptions.end(), speed.assumptions.begin(), speed.assumptions.end());
        row.assumptions.push_back(format("decode at context %lld (not stated by the case)", static_cast<long long>(work.context_tokens)));
        const auto& pt = speed.points.front();
        row.fields.push_back({"tokens_per_s", *o_speed, pt.per_stream_tokens_per_s, pct(pt.per_stream_tokens_per_s, *o_speed), pt.per_stream_low, pt.per_stream_high});
        row.speed_profile = sp->engine + "/" + sp->platform;
        row.speed_terms = {{"bytes", pt.terms.weight_bytes + pt.terms.kv_bytes + pt.terms.state_bytes},
                           {"copy_bandwidth", speed.bandwidth_bytes_per_s},
                           {"compute_s", pt.terms.compute_s},
                           {"eager", speed.mode == "eager" ? 1.0 : 0.0},
                           {"dispatch_ops", speed.dispatch_ops_per_step},
                           {"moe_layers", static_cast<double>(speed.moe_layers)},
                           {"allreduce_latency_units", speed.allreduce_latency_units},
                           {"communication_bandwidth_s", pt.terms.communication_bandwidth_s},
                           {"predicted_step_s", pt.terms.step_s},
                           {"observed_step_s", 1.0 / *o_speed}};
        if (!o_weights && !o_kv && !o_tokens && !o_conc && !o_fits) {
          ++report.evaluated;
          report.rows.push_back(row);
          continue;
        }
      }
      row.predicted_fits = est.fits;
      row.platform = oh->platform;
      row.memory_terms = {{"requested", est.requested_bytes},
                          {"weights", est.weights_bytes},
                          {"activation", est.activation_bytes},
                          {"non_torch", est.non_torch_bytes},
                          {"graph", est.graph_bytes},
                          {"graph_in_budget", est.graph_in_budget && d.mode == estimate::ExecutionMode::graph ? 1.0 : 0.0},
                          {"multi_rank", est.tensor_parallel_size * est.pipeline_parallel_size > 1 ? 1.0 : 0.0},
                          {"text_activation_unit", est.activation_text_unit_bytes},
                          {"encoder_held", est.activation_encoder_held_bytes},
                          {"sampler_run", est.activation_sampler_bytes},
                          {"vision_unit", est.activation_vision_unit_bytes},
                          {"available", est.available_kv_bytes},
                          {"kv_tokens", static_cast<double>(est.kv_tokens)}};
      row.predicted_failure = failure_name(est.failure);
      row.observed_fits = o_fits;
      row.observed_failure = o_failure.value_or("");
      if (!o_fits && o_kv && *o_kv < 0) row.observed_fits = false;
      if (!o_fits && (o_tokens || o_conc)) row.observed_fits = true;
      auto compare = [&](const std::string& field, std::optional<double> observed, double predicted, std::optional<double> low = std::nullopt,
                         std::optional<double> high = std::nullopt) {
        if (!observed) return;
        row.fields.push_back({field, *observed, predicted, pct(predicted, *observed), low, high});
      };
      if (est.failure != estimate::Failure::invalid_layout && est.failure != estimate::Failure::unsupported_quantization) {
        compare("weights_gib", o_weights, bytes_to_gib(est.weights_bytes));
        compare("available_kv_gib", o_kv, bytes_to_gib(est.available_kv_bytes), bytes_to_gib(est.available_kv_low_bytes()), bytes_to_gib(est.available_kv_high_bytes()));
        if (est.num_blocks > 0) {
          compare("kv_cache_tokens", o_tokens, static_cast<double>(est.kv_tokens), static_cast<double>(est.kv_tokens_low), static_cast<double>(est.kv_tokens_high));
          compare("max_concurrency", o_conc, est.max_concurrency);
        }
      }
      ++report.evaluated;
      report.rows.push_back(row);
    }
  }
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, std::pair<int, int>> coverage;  // banded, inside
  for (const auto& r : report.rows) {
    for (const auto& f : r.fields) {
      errors[f.field].push_back(f.abs_pct);
      if (f.low && f.high) {
        ++coverage[f.field].first;
        if (f.in_band()) ++coverage[f.field].second;
      }
    }
    if (!r.skipped && r.observed_fits && r.predicted_fits) {
      ++report.verdicts_n;
      bool correct = *r.observed_fits == *r.predicted_fits;
      if (correct && !*r.observed_fits && !r.observed_failure.empty() && r.observed_failure != r.predicted_failure) correct = false;
      if (correct) ++report.verdicts_correct;
    }
  }
  for (auto& [field, v] : errors) {
    std::sort(v.begin(), v.end());
    FieldSummary s;
    s.n = static_cast<int>(v.size());
    s.median_abs_pct = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2.0;
    s.p90_abs_pct = v[std::min(v.size() - 1, static_cast<size_t>(std::ceil(0.9 * static_cast<double>(v.size())) - 1))];
    s.max_abs_pct = v.back();
    if (const auto c = coverage.find(field); c != coverage.end()) {
      s.banded = c->second.first;
      s.in_band = c->second.second;
    }
    report.fields[field] = s;
  }
  return report;
}

Json validation_to_json(const ValidationReport& report) {
  Json out;
  out["cases"] = report.cases;
  out["evaluated"] = report.evaluated;
  Json skipped = Json::array();
  for (const auto& r : report.rows) if (r.skipped) skipped.push_back({{"id", r.id}, {"reason", r.skip_reason}});
  out["skipped"] = skipped;
  Json fields = Json::object();
  for (const auto& [name, s] : report.fields) {
    fields[name] = {{"n", s.n}, {"median_abs_pct", s.median_abs_pct}, {"p90_abs_pct", s.p90_abs_pct}, {"max_abs_pct", s.max_abs_pct}};
    if (s.banded > 0) fields[name]["band"] = {{"n", s.banded}, {"observed_inside", s.in_band}};
  }
  out["fields"] = fields;
  out["verdicts"] = {{"n", report.verdicts_n}, {"correct", report.verdicts_correct}};
  Json rows = Json::array();
  for (const auto& r : report.rows) {
    if (r.skipped) continue;
    Json row = {{"id", r.id}, {"file", r.file}, {"engine", r.engine}, {"model", r.model}, {"device", r.device}};
    Json f = Json::object();
    for (const auto& c : r.fields) {
      f[c.field] = {{"observed", c.observed}, {"predicted", c.predicted}, {"abs_pct", c.abs_pct}};
      if (c.low && c.high) f[c.field]["band"] = {*c.low, *c.high};
    }
    row["fields"] = f;
    if (r.observed_fits) row["observed_fits"] = *r.observed_fits;
    if (r.predicted_fits) row["predicted_fits"] = *r.predicted_fits;
    row["observed_failure"] = r.observed_failure;
    row["predicted_failure"] = r.predicted_failure;
    row["assumptions"] = r.assumptions;
    if (!r.memory_terms.empty()) {
      row["platform"] = r.platform;
      row["memory_terms"] = r.memory_terms;
    }
    if (!r.speed_terms.empty()) {
      row["speed_profile"] = r.speed_profile;
      row["speed_terms"] = r.speed_terms;
    }
    rows.push_back(row);
  }
  out["rows"] = rows;
  return out;
}

}  // namespace preflight::validate
