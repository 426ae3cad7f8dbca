#include "report/render_plan.hpp"

#include <algorithm>
#include <sstream>

#include "base/json_writer.hpp"
#include "base/units.hpp"

namespace preflight::report {

namespace {

// Issue 19 (round 7): a plan's rows (tens of thousands in a catalogue sweep) are written member by member into the
// object, a sorted map, so the text is the one an initializer list gives, without the two-element array that list
// builds for each member first.
Json::object_t& members(Json& j) { return j.get_ref<Json::object_t&>(); }

// The start commands in the order they run. One node: set-up, conversion, exports, serve. Several
// nodes: each node's block (set-up and exports before `ray start`), then the conversion and serve on
// the head node.
void render_launch(std::ostringstream& o, const plan::Launch& l) {
  if (l.multi_node.empty()) {
    for (const auto& line : l.shell) o << line << "\n";
    for (const auto& line : l.prepare) o << line << "\n";
    for (const auto& e : l.env) o << "export " << e << "\n";
  } else {
    for (const auto& line : l.multi_node) o << line << "\n";
    for (const auto& line : l.prepare) o << line << "\n";
  }
  o << l.serve << "\n";
}

}  // namespace

Json speed_to_json(const estimate::SpeedEstimate& s) {
  Json points = Json::array();
  for (const auto& p : s.points) {
    Json point = Json::object();
    auto& o = members(point);
    o.emplace("concurrency", p.concurrency);
    o.emplace("per_stream_tokens_per_s", p.per_stream_tokens_per_s);
    o.emplace("per_stream_low", p.per_stream_low);
    o.emplace("per_stream_high", p.per_stream_high);
    o.emplace("aggregate_tokens_per_s", p.aggregate_tokens_per_s);
    o.emplace("step_ms", p.terms.step_s * 1e3);
    o.emplace("memory_ms", p.terms.memory_s * 1e3);
    o.emplace("compute_ms", p.terms.compute_s * 1e3);
    o.emplace("overhead_ms", p.terms.overhead_s * 1e3);
    o.emplace("moe_ms", p.terms.moe_s * 1e3);
    o.emplace("communication_ms", p.terms.communication_s * 1e3);
    o.emplace("bound", p.terms.bound);
    points.push_back(std::move(point));
  }
  Json j = Json::object();
  auto& o = members(j);
  o.emplace("engine", s.engine);
  o.emplace("platform", s.platform);
  o.emplace("mode", s.mode);
  o.emplace("bandwidth_gb_s", s.bandwidth_bytes_per_s / 1e9);
  o.emplace("bandwidth_source", s.bandwidth_source);
  o.emplace("effective_bandwidth_gb_s", s.effective_bandwidth_bytes_per_s / 1e9);
  o.emplace("bandwidth_band_gb_s", Json::array({s.bandwidth_low_bytes_per_s / 1e9, s.bandwidth_high_bytes_per_s / 1e9}));
  o.emplace("bandwidth_is_prior", s.bandwidth_is_prior);
  o.emplace("link", s.link);
  o.emplace("cross_node", s.cross_node);
  o.emplace("context_tokens", s.context_tokens);
  o.emplace("single_stream_tokens_per_s", s.single_stream_tokens_per_s);
  o.emplace("single_stream_band", Json::array({s.single_stream_low, s.single_stream_high}));
  o.emplace("input_tokens", s.input_tokens);
  o.emplace("ttft_ms", s.ttft_s * 1e3);
  o.emplace("ttft_band_ms", Json::array({s.ttft_low_s * 1e3, s.ttft_high_s * 1e3}));
  o.emplace("prefill_tokens_per_s", s.prefill_tokens_per_s);
  o.emplace("points", std::move(points));
  o.emplace("provenance", s.provenance);
  o.emplace("assumptions", s.assumptions);
  return j;
}

std::string render_speed(const estimate::SpeedEstimate& s, const Style&) {
  std::ostringstream o;
  if (s.points.empty()) {
    o << "speed: not estimated";
    for (const auto& a : s.assumptions) o << "; " << a;
    o << "\n";
    return o.str();
  }
  o << "speed (" << s.engine << ", " << s.mode << " mode, " << fixed(s.bandwidth_bytes_per_s / 1e9, 0) << " GB/s copy bandwidth):\n";
  o << "  single stream   " << fixed(s.single_stream_tokens_per_s, 1) << " tok/s  (" << fixed(s.single_stream_low, 1) << " - " << fixed(s.single_stream_high, 1)
    << ") at context " << with_thousands(s.context_tokens) << "\n";
  if (s.ttft_s > 0)
    o << "  prefill         " << with_thousands(s.input_tokens) << " tokens: TTFT " << fixed(s.ttft_s * 1e3, 0) << " ms (" << fixed(s.ttft_low_s * 1e3, 0) << " - "
      << fixed(s.ttft_high_s * 1e3, 0) << "), " << fixed(s.prefill_tokens_per_s, 0) << " tok/s\n";
  o << "  concurrency   per-stream tok/s   aggregate tok/s   step ms   bound\n";
  for (const auto& p : s.points)
    o << "  " << format("%11lld   %16.1f   %15.1f   %7.2f   %s", static_cast<long long>(p.concurrency), p.per_stream_tokens_per_s, p.aggregate_tokens_per_s,
                        p.terms.step_s * 1e3, p.terms.bound.c_str())
      << "\n";
  for (const auto& p : s.provenance) o << "  from: " << p << "\n";
  for (const auto& a : s.assumptions) o << "  assumed: " << a << "\n";
  return o.str();
}

namespace {

// Issue 19 (round 11): the rows of render_plan_json, the members of each object in the order dump writes an object's
// members (the byte order of the keys: nlohmann::json objects are std::maps); a speed's members are those of
// speed_to_json above. Round 16: this is plan --json's one writer (plan_to_json, the tree it was checked against, is
// gone); tests/plan/test_render_plan_json checks that its text parses back to a tree that dump(2) writes as the same
// text, with each row's values.
void write_launch(JsonWriter& w, const plan::Launch& l) {
  w.begin_object();
  w.key("checkpoint").string(l.checkpoint);
  w.key("env").strings(l.env);
  w.key("multi_node").strings(l.multi_node);
  w.key("nodes").begin_array();
  for (const auto& n : l.nodes) {
    w.begin_object();
    w.key("lines").strings(n.lines);
    w.key("role").string(n.role);
    w.end_object();
  }
  w.end_array();
  w.key("notes").strings(l.notes);
  w.key("prepare").strings(l.prepare);
  w.key("serve").string(l.serve);
  w.key("shell").strings(l.shell);
  w.end_object();
}

// A row's provenance: its speed's lines, with the decode-step and prefill lines it keeps as numbers (Candidate::speed_lines)
// written in their places (estimate::provenance_with's order), straight into the text.
void write_provenance(JsonWriter& w, const estimate::SpeedEstimate& s, const estimate::SpeedLines& lines) {
  if (!lines.decode && !lines.prefill) {
    w.strings(s.provenance);
    return;
  }
  w.begin_array();
  for (size_t i = 0; i <= s.provenance.size(); ++i) {
    if (lines.decode && i == std::min<size_t>(lines.decode_at, s.provenance.size())) w.string(estimate::decode_line(s, lines));
    if (i < s.provenance.size()) w.string(s.provenance[i].str());
  }
  if (lines.prefill) w.string(estimate::prefill_line(s, lines));
  w.end_array();
}

void write_speed(JsonWriter& w, const estimate::SpeedEstimate& s, const estimate::SpeedLines& lines) {
  w.begin_object();
  w.key("assumptions").strings(s.assumptions);
  w.key("bandwidth_band_gb_s").begin_array().number(s.bandwidth_low_bytes_per_s / 1e9).number(s.bandwidth_high_bytes_per_s / 1e9).end_array();
  w.key("bandwidth_gb_s").number(s.bandwidth_bytes_per_s / 1e9);
  w.key("bandwidth_is_prior").boolean(s.bandwidth_is_prior);
  w.key("bandwidth_source").string(s.bandwidth_source.str());
  w.key("context_tokens").integer(s.context_tokens);
  w.key("cross_node").boolean(s.cross_node);
  w.key("effective_bandwidth_gb_s").number(s.effective_bandwidth_bytes_per_s / 1e9);
  w.key("engine").string(s.engine.str());
  w.key("input_tokens").integer(s.input_tokens);
  w.key("link").string(s.link.str());
  w.key("mode").string(s.mode.str());
  w.key("platform").string(s.platform.str());
  w.key("points").begin_array();
  for (const auto& p : s.points) {
    w.begin_object();
    w.key("aggregate_tokens_per_s").number(p.aggregate_tokens_per_s);
    w.key("bound").string(p.terms.bound);
    w.key("communication_ms").number(p.terms.communication_s * 1e3);
    w.key("compute_ms").number(p.terms.compute_s * 1e3);
    w.key("concurrency").integer(p.concurrency);
    w.key("memory_ms").number(p.terms.memory_s * 1e3);
    w.key("moe_ms").number(p.terms.moe_s * 1e3);
    w.key("overhead_ms").number(p.terms.overhead_s * 1e3);
    w.key("per_stream_high").number(p.per_stream_high);
    w.key("per_stream_low").number(p.per_stream_low);
    w.key("per_stream_tokens_per_s").number(p.per_stream_tokens_per_s);
    w.key("step_ms").number(p.terms.step_s * 1e3);
    w.end_object();
  }
  w.end_array();
  w.key("prefill_tokens_per_s").number(s.prefill_tokens_per_s);
  w.key("provenance");
  write_provenance(w, s, lines);
  w.key("single_stream_band").begin_array().number(s.single_stream_low).number(s.single_stream_high).end_array();
  w.key("single_stream_tokens_per_s").number(s.single_stream_tokens_per_s);
  w.key("ttft_band_ms").begin_array().number(s.ttft_low_s * 1e3).number(s.ttft_high_s * 1e3).end_array();
  w.key("ttft_ms").number(s.ttft_s * 1e3);
  w.end_object();
}

// Issue 15/16 (nccl, misc21): a row's interconnect in the table: the name, the NCCL buffers it sizes, and how it was chosen
// (given, or the assumption the plan's "assumed:" lines state in full).
std::string interconnect_text(const plan::Candidate& c) {
  const bool given = c.interconnect_basis.rfind("--interconnect", 0) == 0;
  return format("%s, NCCL buffers %.2f GiB per device (%s)", c.interconnect.c_str(), bytes_to_gib(c.fit.nccl_buffer_bytes),
                given ? c.interconnect_basis.c_str() : "assumed, see below; give --interconnect");
}

// `speculative`: the row's "speculative" member, or null for none.
void write_candidate(JsonWriter& w, const plan::Candidate& c, const Json* speculative) {
  const bool data_parallel = c.data_parallel_size > 1;
  w.begin_object();
  if (c.meets) w.key("aggregate_tokens_per_s").number(c.aggregate_tokens_per_s);
  if (c.fit.fits) w.key("available_kv_gib").number(bytes_to_gib(c.fit.available_kv_bytes));
  if (data_parallel) w.key("cheaper").string(c.cheaper.str());
  w.key("context_tokens").integer(c.context_tokens);
  if (data_parallel) w.key("data_parallel_size").integer(c.data_parallel_size);
  w.key("device").string(c.device_id.str());
  w.key("engine").string(c.engine_id.str());
  if (data_parallel) w.key("expert_parallel").boolean(c.expert_parallel);
  if (!c.interconnect.empty()) {  // misc21: the interconnect the row's NCCL buffer term was sized for, and how it was chosen
    w.key("interconnect").begin_object();
    w.key("basis").string(c.interconnect_basis.str());
    w.key("name").string(c.interconnect.str());
    w.key("nccl_buffer_gib_per_device").number(bytes_to_gib(c.fit.nccl_buffer_bytes));
    w.end_object();
  }
  if (c.fit.fits) w.key("kv_cache_tokens").integer(c.fit.kv_tokens);
  // Issue 16 (quant26): every row has "launch": the start commands of a row that meets the targets; null on a rejected
  // row (too large, refused by the engine, no command produces its checkpoint), whose "reason" says why it does not run.
  w.key("launch");
  if (c.meets) write_launch(w, *c.launch);
  else w.null();
  if (const plan::LlamaRowBuffers* b = c.fit.llama.get()) {  // issue 16 (llamacpp30): the buffers llama.cpp allocates at start
    w.key("llama_cpp").begin_object();
    w.key("assumptions").strings(b->assumptions);
    w.key("compute_buffer_bytes").number(b->compute_bytes);
    w.key("ctx_size").integer(b->ctx_size);
    w.key("device").string(b->device);
    w.key("device_bytes").number(b->device_bytes);
    w.key("formulas").strings(b->formulas);
    w.key("kv_buffer_bytes").number(b->kv_bytes);
    w.key("model_buffer_bytes").number(b->model_bytes);
    w.key("output_buffer_bytes").number(b->output_bytes);
    w.key("rs_buffer_bytes").number(b->rs_bytes);
    w.key("slots").integer(b->slots);
    w.end_object();
  }
  if (c.fit.fits) w.key("max_concurrency").number(c.fit.max_concurrency);
  w.key("meets").boolean(c.meets);
  w.key("model").string(c.model_id.str());
  w.key("num_devices").integer(c.num_devices);
  w.key("params").number(c.params);
  w.key("pipeline_parallel_size").integer(c.pipeline_parallel_size);
  w.key("quantization").string(c.quantization_flag.str());
  w.key("reason").string(c.reason.str());
  if (speculative) w.key("speculative").json(*speculative);
  if (c.meets) {
    w.key("speed");
    write_speed(w, c.speed, c.speed_lines);
  }
  w.key("tensor_parallel_size").integer(c.tensor_parallel_size);
  if (c.meets) {
    w.key("tokens_per_s");
    c.speed.points.empty() ? w.null() : w.number(c.tokens_per_s);
  }
  w.key("variant").string(c.variant.str());
  w.key("variant_id").string(c.variant_id.str());
  // Issue 15 (mc2): a verdict an unstated input decides (the NPU driver of a multi-node A2 EP row's MC2 transport).
  if (!c.fit.verdict_depends_on.empty()) w.key("verdict_depends_on").string(c.fit.verdict_depends_on.str());
  if (c.fit.fits) w.key("weights_gib_per_device").number(bytes_to_gib(c.fit.weights_bytes));
  w.end_object();
}

void write_rows(JsonWriter& w, const plan::CandidateList& rows, const std::vector<Json>& speculative) {
  w.begin_array();
  for (size_t i = 0; i < rows.size(); ++i) write_candidate(w, rows[i], i < speculative.size() ? &speculative[i] : nullptr);
  w.end_array();
}

}  // namespace

Expected<std::string> render_plan_json(const plan::PlanResult& plan, const std::string& question, const PlanJsonExtras& extras) {
  // The members other than the rows; the rows' two keys hold their places.
  Json head = envelope("plan");
  head["question"] = question;
  head["recommended"] = nullptr;
  head["rejected"] = nullptr;
  head["assumptions"] = plan.assumptions;
  for (const auto& [k, v] : extras.top.items()) head[k] = v;
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  for (const auto& [k, v] : head.items()) {
    w.key(k);
    if (k == "recommended" && v.is_null()) {
      write_rows(w, plan.recommended, extras.speculative_recommended);
    } else if (k == "rejected" && v.is_null()) {
      write_rows(w, plan.rejected, extras.speculative_rejected);
    } else {
      w.json(v);
    }
  }
  w.end_object();
  if (!w.ok()) return make_error(ErrorKind::corrupt, "plan --json: " + w.error());
  return out;
}

std::string render_plan(const plan::PlanResult& plan, const std::string& question, PlanFormat fmt, size_t max_rows, FirstStart first_start) {
  std::ostringstream o;
  const bool md = fmt == PlanFormat::markdown;
  o << (md ? "## " : "") << question << "\n\n";
  if (plan.recommended.empty())
    o << "nothing meets the targets" << (plan.fewest_that_meet.empty() ? "" : " within --max-devices; " + plan.fewest_that_meet + " would") << ".\n";
  if (md && !plan.recommended.empty()) {
    o << "| model | variant | device | layout | context | KV tokens | concurrency | tok/s (1 stream) | why it fits |\n";
    o << "|---|---|---|---|---:|---:|---:|---:|---|\n";
  }
  // Variant names and model ids are shown whole (issue 16): each column is as wide as the longest one shown.
  // ux32: the device column too ("A100-40G-SXM" pushed the layout column out of line).
  int variant_width = 28, model_width = 34, device_width = 10;
  for (size_t i = 0; i < plan.recommended.size() && i < max_rows; ++i) {
    variant_width = std::max(variant_width, static_cast<int>(plan.recommended[i].variant.size()));
    model_width = std::max(model_width, static_cast<int>(plan.recommended[i].model_id.size()));
    device_width = std::max(device_width, static_cast<int>(plan.recommended[i].device_id.size()));
  }
  if (!md && !plan.recommended.empty()) {
    o << format("%-*s %-*s %-*s %-9s %8s %11s %6s %8s\n", model_width, "model", variant_width, "variant", device_width, "device", "layout", "context", "KV tokens", "conc",
                "tok/s");
  }
  size_t shown = 0;
  for (const auto& c : plan.recommended) {
    if (shown++ >= max_rows) break;
    std::string layout = format("%lldx TP%lld%s", static_cast<long long>(c.num_devices), static_cast<long long>(c.tensor_parallel_size),
                                c.pipeline_parallel_size > 1 ? format(" PP%lld", static_cast<long long>(c.pipeline_parallel_size)).c_str() : "");
    if (c.data_parallel_size > 1)  // issue 15: "8x DP4 TP2 EP"
      layout = format("%lldx DP%lld TP%lld%s", static_cast<long long>(c.num_devices), static_cast<long long>(c.data_parallel_size),
                      static_cast<long long>(c.tensor_parallel_size), c.expert_parallel ? " EP" : "");
    if (md)
      o << "| " << c.model_id << " | " << c.variant << " | " << c.device_id << " | " << layout << " | " << with_thousands(c.context_tokens) << " | "
        << with_thousands(c.fit.kv_tokens) << " | " << fixed(c.fit.max_concurrency, 2) << " | " << (c.speed.points.empty() ? "-" : fixed(c.tokens_per_s, 1))
        << " | " << c.reason << " |\n";
    else
      // ux31: thousands separators, as fit prints token counts.
      o << format("%-*s %-*s %-*s %-9s %8s %11s %6.2f %8s\n", model_width, c.model_id.c_str(), variant_width, c.variant.c_str(), device_width, c.device_id.c_str(),
                  layout.c_str(), with_thousands(c.context_tokens).c_str(), with_thousands(c.fit.kv_tokens).c_str(), c.fit.max_concurrency,
                  c.speed.points.empty() ? "-" : fixed(c.tokens_per_s, 1).c_str())
        << (c.reason.empty() ? "" : "    why: " + c.reason.str() + "\n")
        << (c.interconnect.empty() ? "" : "    interconnect: " + interconnect_text(c) + "\n");
  }
  if (plan.recommended.size() > max_rows) o << "(" << plan.recommended.size() - max_rows << " more; --all or --json lists every one)\n";
  if (!plan.recommended.empty()) {
    const auto& top = plan.recommended.front();
    if (first_start == FirstStart::under_table) {
      o << "\n" << (md ? "### " : "") << "start the first one (" << top.model_id << ", " << top.variant << "):\n";
      if (md) o << "```bash\n";
      render_launch(o, *top.launch);
      if (md) o << "```\n";
    } else if (!top.launch->notes.empty()) {
      o << "\n" << (md ? "### " : "") << "notes on the first one's start (" << top.model_id << ", " << top.variant << "; every start below):\n";
    }
    for (const auto& n : top.launch->notes) o << (md ? "- " : "  # ") << n << "\n";
    if (!top.reason.empty()) o << (md ? "\n" : "") << "why it fits: " << top.reason << "\n";
    if (!top.fit.verdict_depends_on.empty()) o << (md ? "\n" : "") << "undecided, depends on " << top.fit.verdict_depends_on << "\n";
  }
  if (!plan.rejected.empty()) {
    o << "\n" << (md ? "### " : "") << "does not meet the targets (" << plan.rejected.size() << "):\n";
    size_t n = 0;
    for (const auto& c : plan.rejected) {
      if (n++ >= max_rows) {
        o << (md ? "- " : "  ") << "... (--json lists every one)\n";
        break;
      }
      o << (md ? "- " : "  ") << c.model_id << " [" << c.variant << "] on " << c.num_devices << "x " << c.device_id << ": " << c.reason
        << (c.interconnect.empty() ? "" : " (interconnect: " + interconnect_text(c) + ")") << "\n";
    }
  }
  for (const auto& a : plan.assumptions) o << (md ? "\n_assumed: " : "assumed: ") << a << (md ? "_\n" : "\n");
  return o.str();
}

std::string render_plan_commands(const plan::PlanResult& plan, PlanFormat fmt, size_t max_rows) {
  std::ostringstream o;
  const bool md = fmt == PlanFormat::markdown;
  for (size_t i = 0; i < plan.recommended.size() && i < max_rows; ++i) {
    const auto& c = plan.recommended[i];
    o << "\n" << (md ? "### " : "") << "start " << c.model_id << " (" << c.variant << ") on " << c.num_devices << "x " << c.device_id << ":\n";
    if (md) o << "```bash\n";
    render_launch(o, *c.launch);
    if (md) o << "```\n";
  }
  return o.str();
}

}  // namespace preflight::report
