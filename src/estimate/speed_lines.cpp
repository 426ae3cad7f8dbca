// The provenance lines of a speed estimate that differ on nearly every deployment (estimate/speed_lines.hpp,
// estimate/speed_explain.hpp): the decode step at batch 1 and the prefill, written as printf writes them. Split out of
// speed.cpp (perfest37).
#include "estimate/speed_lines.hpp"
#include "estimate/speed_explain.hpp"
#include "estimate/text_memo.hpp"

#include <algorithm>
#include <tuple>

#include "base/fixed_text.hpp"

namespace preflight::estimate {

namespace {

// The decode step's provenance line: "decode step at batch 1: weights %.2f GB + KV %.3f GB + state %.3f GB per rank at
// context %lld -> memory %.2f ms; %s overhead %.2f ms; MoE routing %.2f ms (%lld layers); communication %.2f ms (%lld all-reduces)".
// Written through FixedText (printf's text; round 18: its literals and numbers in place, as round 17's own buffer for
// these two lines wrote them).
std::string decode_line(const StepTerms& one, int64_t context_tokens, bool eager, int64_t moe_layers, int64_t allreduces) {
  FixedText line;
  line << "decode step at batch 1: weights ";
  line.fixed(one.weight_bytes / 1e9, 2) << " GB + KV ";
  line.fixed(one.kv_bytes / 1e9, 3) << " GB + state ";
  line.fixed(one.state_bytes / 1e9, 3) << " GB per rank at context ";
  line.integer(context_tokens) << " -> memory ";
  line.fixed(one.memory_s * 1e3, 2) << " ms; ";
  if (eager) line << "eager dispatch";
  else line << "graph step";
  line << " overhead ";
  line.fixed(one.overhead_s * 1e3, 2) << " ms; MoE routing ";
  line.fixed(one.moe_s * 1e3, 2) << " ms (";
  line.integer(moe_layers) << " layers); communication ";
  line.fixed(one.communication_s * 1e3, 2) << " ms (";
  line.integer(allreduces) << " all-reduces)";
  return line.take();
}

// The prefill's provenance line: "prefill %lld tokens: %.2f TFLOP at %.0f%% of %.0f TFLOPS = %.1f ms, %lld chunk(s) of
// %lld; communication %.1f ms".
std::string prefill_line(int64_t input_tokens, double flops, double efficiency, double peak, double compute_s, int64_t chunks, int64_t chunk,
                         double comm_s) {
  FixedText line;
  line << "prefill ";
  line.integer(input_tokens) << " tokens: ";
  line.fixed(flops / 1e12, 2) << " TFLOP at ";
  line.fixed(efficiency * 100, 0) << "% of ";
  line.fixed(peak / 1e12, 0) << " TFLOPS = ";
  line.fixed(compute_s * 1e3, 1) << " ms, ";
  line.integer(chunks) << " chunk(s) of ";
  line.integer(chunk) << "; communication ";
  line.fixed(comm_s * 1e3, 1) << " ms";
  return line.take();
}

// Round 16: the two lines above, kept per thread and key (TextMemo, keyed by every number the line prints): the cards of
// one bandwidth and profile repeat a (model, variant, count)'s lines.
SharedText decode_text(const StepTerms& one, int64_t context_tokens, bool eager, int64_t moe_layers, int64_t allreduces) {
  thread_local TextMemo<8192> memo;
  memo.add(one.weight_bytes).add(one.kv_bytes).add(one.state_bytes).add(context_tokens).add(one.memory_s).add(static_cast<int64_t>(eager));
  memo.add(one.overhead_s).add(one.moe_s).add(moe_layers).add(one.communication_s).add(allreduces);
  return memo.texts([&](std::vector<SharedText>& out) { out.push_back(decode_line(one, context_tokens, eager, moe_layers, allreduces)); })[0];
}
SharedText prefill_text(int64_t input_tokens, double flops, double efficiency, double peak, double compute_s, int64_t chunks, int64_t chunk, double comm_s) {
  thread_local TextMemo<8192> memo;
  memo.add(input_tokens).add(flops).add(efficiency).add(peak).add(compute_s).add(chunks).add(chunk).add(comm_s);
  return memo.texts([&](std::vector<SharedText>& out) { out.push_back(prefill_line(input_tokens, flops, efficiency, peak, compute_s, chunks, chunk, comm_s)); })[0];
}

}  // namespace

// An explained estimate's decode-step line (s.moe_layers and s.allreduces_per_step set): into its provenance, or, with
// `lines` (speed_lines.hpp), its numbers and place into `lines`.
void explain_decode(SpeedEstimate& s, SpeedLines* lines, const StepTerms& one, bool eager) {
  if (!lines) {
    s.provenance.push_back(decode_text(one, s.context_tokens, eager, s.moe_layers, s.allreduces_per_step));
    return;
  }
  lines->decode = true;
  lines->decode_at = static_cast<uint8_t>(s.provenance.size());
  std::tie(lines->weight_bytes, lines->kv_bytes, lines->state_bytes, lines->memory_s, lines->overhead_s, lines->moe_s, lines->communication_s) =
      std::tuple(one.weight_bytes, one.kv_bytes, one.state_bytes, one.memory_s, one.overhead_s, one.moe_s, one.communication_s);
}

// The same for the prefill line of s.input_tokens.
void explain_prefill(SpeedEstimate& s, SpeedLines* lines, double flops, double efficiency, double peak, double compute_s, int64_t chunks, int64_t chunk,
                     double comm_s) {
  if (!lines) {
    s.provenance.push_back(prefill_text(s.input_tokens, flops, efficiency, peak, compute_s, chunks, chunk, comm_s));
    return;
  }
  lines->prefill = true;
  std::tie(lines->flops, lines->efficiency, lines->peak, lines->compute_s, lines->comm_s, lines->chunks, lines->chunk) =
      std::tuple(flops, efficiency, peak, compute_s, comm_s, chunks, chunk);
}

std::string decode_line(const SpeedEstimate& s, const SpeedLines& l) {
  StepTerms one;
  std::tie(one.weight_bytes, one.kv_bytes, one.state_bytes, one.memory_s, one.overhead_s, one.moe_s, one.communication_s) =
      std::tuple(l.weight_bytes, l.kv_bytes, l.state_bytes, l.memory_s, l.overhead_s, l.moe_s, l.communication_s);
  return decode_line(one, s.context_tokens, s.mode == "eager", s.moe_layers, s.allreduces_per_step);
}

// Formatted here, not through the memos estimate_speed uses (decode_text, prefill_text): the writer of one plan writes
// each row's lines once, and within one card's plan they rarely repeat (a memo's key and slot cost more than they save).
std::string prefill_line(const SpeedEstimate& s, const SpeedLines& l) {
  return prefill_line(s.input_tokens, l.flops, l.efficiency, l.peak, l.compute_s, l.chunks, l.chunk, l.comm_s);
}

std::vector<std::string> provenance_with(const SpeedEstimate& s, const SpeedLines& l) {
  std::vector<std::string> out(s.provenance.begin(), s.provenance.end());
  if (l.decode) out.insert(out.begin() + std::min<std::ptrdiff_t>(l.decode_at, static_cast<std::ptrdiff_t>(out.size())), decode_line(s, l));
  if (l.prefill) out.push_back(prefill_line(s, l));
  return out;
}

}  // namespace preflight::estimate
