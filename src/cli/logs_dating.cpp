// cli/logs_dating: the version window of a log's printed lines and what it decides (issue 15, date37). See the header.
#include "cli/logs_dating.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/text.hpp"
#include "engine/engine_core.hpp"

namespace preflight::cli {

std::string LineDating::window_text() const {
  if (lo && hi) return *lo == *hi ? lo->text() : lo->text() + " - " + hi->text();
  if (lo) return lo->text() + " or later";
  if (hi) return "up to " + hi->text();
  return "any";
}

bool LineDating::contains(const engine::Version& v) const { return (!lo || *lo <= v) && (!hi || v <= *hi); }

LineDating scan_line_dating(const std::string& log_text, const std::string& engine) {
  LineDating d;
  d.engine = engine;
  const auto& set = logs::shipped_line_formats();
  if (!set) {
    d.decision = set.error().describe();
    return d;
  }
  for (const auto& seen : logs::scan_line_formats(log_text, *set)) {
    const auto& rec = set->records[seen.record];
    if (!rec.for_engine(engine)) continue;
    d.lines.push_back({rec.id, rec.version_min, rec.version_max, seen.line, seen.text});
    // The loader checked every version is X.Y[.Z[.W]]; parse_version keeps X.Y.Z (0.10.1.1 is 0.10.1).
    if (const auto v = rec.version_min.empty() ? std::nullopt : engine::parse_version(rec.version_min); v && (!d.lo || *d.lo < *v)) {
      d.lo = v;
      d.lo_line = seen.line;
    }
    if (const auto v = rec.version_max.empty() ? std::nullopt : engine::parse_version(rec.version_max); v && (!d.hi || *v < *d.hi)) {
      d.hi = v;
      d.hi_line = seen.line;
    }
  }
  d.empty_window = d.lo && d.hi && *d.hi < *d.lo;
  return d;
}

namespace {

// What else the log shows of its version, as a filter on the profiles: the token line's format (vLLM 0.21 printed
// int(concurrency x max_model_len), before num_blocks x block size) and the V0 engine (none after the newest V0 record).
std::function<bool(const engine::EngineProfile&)> dating_keep(const LineDating& d, const deploy::EngineInput& in, bool v0_shown) {
  const std::optional<bool> blocks = in.printed_tokens_are_blocks;
  std::optional<engine::Version> v0_until;
  if (v0_shown)
    if (const auto& cores = engine::shipped_engine_cores(); cores)
      if (const auto* rec = cores->newest_v0_engine(d.engine)) v0_until = rec->version_max;
  const std::optional<engine::Version> lo = d.lo;
  return [blocks, v0_until, lo](const engine::EngineProfile& p) {
    if (blocks && (p.tokens_rule == engine::TokensRule::blocks) != *blocks) return false;
    if (v0_until) {
      const engine::Version from = lo && p.version_min < *lo ? *lo : p.version_min;
      if (*v0_until < from) return false;
    }
    return true;
  };
}

std::string dating_lines_text(const LineDating& d) {
  std::string out;
  if (d.lo) out += fmt::format("line {} from {}", d.lo_line, d.lo->text());
  if (d.hi) out += fmt::format("{}line {} up to {}", out.empty() ? "" : ", ", d.hi_line, d.hi->text());
  return out;
}

}  // namespace

void apply_line_dating(LineDating& d, deploy::EngineInput& in, const deploy::Inputs& inputs, const deploy::Catalogs& catalogs, bool v0_shown) {
  if (d.lines.empty()) return;
  if (!d.lo && !d.hi) return;
  if (d.empty_window) {
    d.decision = fmt::format("the lines' formats contradict one another ({}: no release prints them all): not used to date the version", dating_lines_text(d));
    return;
  }
  std::vector<std::string> ignored;
  auto dev = deploy::resolve_device(inputs.device, *catalogs.devices, ignored);
  if (!dev) return;
  deploy::VersionBasis basis = deploy::VersionBasis::stated;
  auto current = deploy::resolve_engine(in, *catalogs.engines, dev->platform, ignored, basis);
  const auto keep = dating_keep(d, in, v0_shown);
  std::vector<const engine::EngineProfile*> inside;
  for (const auto& p : catalogs.engines->profiles) {
    if (p.engine != d.engine || !p.runs_on(dev->platform)) continue;
    if ((d.lo && p.version_max < *d.lo) || (d.hi && *d.hi < p.version_min) || !keep(p)) continue;
    inside.push_back(&p);
  }
  std::sort(inside.begin(), inside.end(), [](const auto* a, const auto* b) { return a->version_min < b->version_min; });
  for (const auto* p : inside) d.profiles.push_back(p->id);
  // A "vX.Y" the version hint names (the log file's name, which the case notes carry) is a version string: it wins too.
  bool hint_named = false;
  if (basis == deploy::VersionBasis::dated && current && !in.version_hint.empty()) {
    deploy::EngineInput without = in;
    without.version_hint.clear();
    deploy::VersionBasis other = deploy::VersionBasis::stated;
    const auto alone = deploy::resolve_engine(without, *catalogs.engines, dev->platform, ignored, other);
    hint_named = other != deploy::VersionBasis::dated || !alone || alone->id != current->id;
  }
  if (hint_named) {
    const bool overlaps = !(d.lo && current->version_max < *d.lo) && !(d.hi && *d.hi < current->version_min);
    d.decision = fmt::format("the version named in the {} ({}) is used{}", in.version_hint_origin, current->id,
                             overlaps ? "" : fmt::format("; it lies outside the window of the lines' formats ({})", dating_lines_text(d)));
    return;
  }
  if (basis == deploy::VersionBasis::stated) {
    const auto stated = engine::parse_version(deploy::stated_engine_version(in));
    if (stated && !d.contains(*stated))
      d.decision = fmt::format("the stated version {} lies outside the window of the lines' formats ({}): the stated version is used", stated->text(), dating_lines_text(d));
    else
      d.decision = "the stated version is used" + (stated ? fmt::format(" ({} lies inside the window)", stated->text()) : std::string());
    return;
  }
  if (inside.empty()) {
    d.decision = fmt::format("no {} profile on {} lies inside the window ({}): not used to date the version", d.engine, dev->platform, dating_lines_text(d));
    return;
  }
  if (basis == deploy::VersionBasis::dated && current &&
      std::any_of(inside.begin(), inside.end(), [&](const auto* p) { return p->id == current->id; })) {
    d.decision = fmt::format("the version dated otherwise ({}) lies inside the window: kept", current->id);
    return;
  }
  const engine::EngineProfile* newest = inside.back();
  const engine::Version at = d.lo && newest->version_min < *d.lo ? *d.lo : newest->version_min;
  in.version_hint = "v" + at.text();
  in.version_hint_origin = fmt::format("formats of the log's printed lines ({}; data/engines/line_formats.json)", dating_lines_text(d));
  d.applied = true;
  d.version = at.text();
  d.decision = fmt::format("version not stated: dated by the formats of its printed lines to {}; the newest profile inside, {} at {}{}", d.window_text(),
                           newest->id, at.text(), inside.size() > 1 ? fmt::format(", and the band over the {} profiles inside", inside.size()) : std::string());
}

deploy::VersionBand line_dating_band(const LineDating& d, const deploy::Inputs& inputs, const deploy::Catalogs& catalogs, bool v0_shown) {
  if (!d.applied || d.profiles.size() < 2) return {};
  return deploy::across_versions_within(inputs, catalogs, d.engine, {d.lo, d.hi, dating_keep(d, inputs.engine, v0_shown)});
}

}  // namespace preflight::cli
