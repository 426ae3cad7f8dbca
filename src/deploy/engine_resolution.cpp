// The engine a deployment runs: versions taken from printed lines and stated text, builds, the recorded engine of a
// case, and the profile resolved from the catalogue (resolve_engine). Split out of deployment.cpp.
#include "deploy/deployment.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/engine_core.hpp"

namespace preflight::deploy {

namespace {

// First "vX.Y[.Z]" in free text ("~v0.9.2/v0.10.0" -> "0.9.2"); empty when none. "V1 engine" has no dot. The pattern
// (?:^|[^A-Za-z0-9])v(\d+\.\d+(?:\.\d+)?) scanned by hand (issue 19: std::regex recursed once per digit and a case's
// notes of "v" and 200,000 digits overflowed the stack).
std::string dated_version(const std::string& text) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  auto digits = [&](size_t i) {
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i;
  };
  for (size_t v = text.find('v'); v != std::string::npos; v = text.find('v', v + 1)) {
    if (v > 0 && alnum(text[v - 1])) continue;
    const size_t major = digits(v + 1);
    if (major == v + 1 || major >= text.size() || text[major] != '.') continue;
    size_t end = digits(major + 1);
    if (end == major + 1) continue;
    if (end < text.size() && text[end] == '.') {
      const size_t patch = digits(end + 1);
      if (patch > end + 1) end = patch;
    }
    return text.substr(v + 1, end - v - 1);
  }
  return {};
}

}  // namespace

std::optional<bool> printed_tokens_are_blocks(double tokens, double concurrency, int64_t len) {
  if (len <= 0) return std::nullopt;
  const double l = static_cast<double>(len);
  if (std::fabs(tokens - concurrency * l) > 0.005 * l + 1.0) return true;
  return std::nullopt;
}

// A source build of a main branch: setuptools-scm's ".dev" version ("0.1.dev1+g4d2a68d64"), whose number names no
// release (issue 15, hyb and rocm).
namespace {
bool source_build_version(const std::string& version) { return version.find(".dev") != std::string::npos; }
}  // namespace

void take_printed_versions(EngineInput& in, const std::optional<PrintedVersion>& vllm, const std::optional<PrintedVersion>& vllm_ascend) {
  std::optional<engine::EngineBuild> build;
  if (vllm_ascend)
    if (auto parsed = engine::parse_engine_build(vllm_ascend->text, vllm_ascend->origin)) build = *parsed;
  if (build) {
    in.build = build;
    in.build_origin = vllm_ascend->origin;
  }
  const bool between_tags = build && build->dev >= 0;
  const bool names_release = vllm_ascend && engine::parse_version(vllm_ascend->text);  // not "main"
  const std::optional<PrintedVersion>& chosen = (between_tags || !names_release) && vllm ? vllm : vllm_ascend ? vllm_ascend : vllm;
  if (!chosen) return;
  in.version = chosen->text;
  in.origin = chosen->origin;
  if (!vllm || !vllm_ascend) return;
  const std::optional<PrintedVersion>& other = &chosen == &vllm ? vllm_ascend : vllm;
  const auto a = engine::parse_version(chosen->text), b = engine::parse_version(other->text);
  const bool differ = a && b && (a->major != b->major || a->minor != b->minor);
  if (!names_release)
    in.version_choice = format("engine version %s from %s: the vllm-ascend line (%s, %s) names no release", chosen->text.c_str(), chosen->origin.c_str(),
                               other->text.c_str(), other->origin.c_str());
  else if (between_tags)
    in.version_choice = format("engine version %s from %s: the vllm-ascend line (%s, %s) is a main-branch build between tags, named after the last tag "
                               "on main, not after the vLLM release it runs with; the build decides the rules with a build boundary",
                               chosen->text.c_str(), chosen->origin.c_str(), other->text.c_str(), other->origin.c_str());
  else if (differ)
    in.version_choice = format("engine version %s from %s (a vllm-ascend release); the vLLM line (%s, %s) names another release and does not select the profile",
                               chosen->text.c_str(), chosen->origin.c_str(), other->text.c_str(), other->origin.c_str());
}

namespace {
// Two spellings of one version: the same text, or the same X.Y[.Z] numbers with nothing after them ("0.23" and "0.23.0").
bool same_version_text(const std::string& a, const std::string& b) {
  const std::string x = to_lower(trim(a)), y = to_lower(trim(b));
  if (x == y) return true;
  const bool plain = x.find_first_not_of("0123456789.") == std::string::npos && y.find_first_not_of("0123456789.") == std::string::npos;
  const auto va = engine::parse_version(x), vb = engine::parse_version(y);
  return plain && va && vb && !(*va < *vb) && !(*vb < *va);
}
}  // namespace

std::string stated_engine_version(const std::string& engine, const std::string& version) {
  if (const auto at = engine.find('@'); at != std::string::npos) return trim(engine.substr(at + 1));
  return trim(version);
}

std::string stated_engine_version(const EngineInput& in) { return stated_engine_version(in.engine, in.version); }

Status apply_engine_version(EngineInput& in, const std::optional<std::string>& engine_version, const std::string& origin) {
  if (!engine_version) return Ok{};
  const std::string v = trim(*engine_version);
  if (v.empty()) return make_error(ErrorKind::invalid_argument, origin + ": expected a version (0.11.0, 0.9.0rc2), found an empty text", origin);
  if (const auto at = in.engine.find('@'); at != std::string::npos) {
    const std::string named = trim(in.engine.substr(at + 1));
    if (same_version_text(named, v)) return Ok{};
    return make_error(ErrorKind::invalid_argument,
                      format("%s %s and %s %s name different engine versions; give the version once (%s E@V or %s V)", in.origin.c_str(),
                             in.engine.c_str(), origin.c_str(), v.c_str(), in.origin.c_str(), origin.c_str()),
                      origin);
  }
  if (!trim(in.engine).empty()) {
    in.engine = trim(in.engine) + "@" + v;
    return Ok{};
  }
  in.version = v;
  in.origin = origin;
  return Ok{};
}

EngineInput recorded_engine_input(const RecordedEngine& r) {
  // Version: the stated field, else a "vX.Y" dating inside it ("0.1.dev7548+gbaba038 (main, ~v0.9.2)"), else the one
  // the notes give ("V0 engine (~v0.6.4, ...)"): the era decides the profile.
  EngineInput in{r.engine.value_or(""), r.version.value_or(r.detail.value_or("")), "engine_version", r.notes.value_or(""), "case notes", UnknownVersion::newest};
  // An undated vLLM record is dated by its own printed lines' format (vLLM 0.21 made "GPU KV cache size" int(concurrency
  // x max_model_len); before, num_blocks x block size). Concurrency is printed to 0.01, so only a gap beyond that
  // dates it; agreeing lines fit both formats and date nothing.
  if (r.kv_cache_tokens && r.max_concurrency && r.concurrency_len)
    in.printed_tokens_are_blocks = printed_tokens_are_blocks(*r.kv_cache_tokens, *r.max_concurrency, *r.concurrency_len);
  // Issue 15: still undated, the date the source gives ("... issues/5993 (2026-01-19)"), else the engine detail's; (nt018)
  // else the date inside an engine version no profile recognises ("vllm-ascend main (git fb5538625, 2025-11-29)").
  in.evidence_date = r.source.value_or("");
  in.evidence_date_origin = "case source";
  if (!find_iso_date(in.evidence_date)) {
    in.evidence_date = r.detail.value_or("");
    in.evidence_date_origin = "case engine_detail";
  }
  if (!find_iso_date(in.evidence_date)) {
    in.evidence_date = r.version.value_or("");
    in.evidence_date_origin = "case engine_version";
  }
  in.build = r.build;
  in.build_origin = "case engine_build";
  in.engine_core = r.engine_core;
  in.engine_core_origin = "case engine_core";
  return in;
}

Expected<engine::EngineProfile> resolve_engine(const EngineInput& input, const engine::EngineCatalog& engines, const std::string& device_platform,
                                               std::vector<std::string>& assumptions) {
  VersionBasis basis = VersionBasis::stated;
  return resolve_engine(input, engines, device_platform, assumptions, basis);
}

namespace {

Expected<engine::EngineProfile> resolve_profile(const EngineInput& input, const engine::EngineCatalog& engines, const std::string& device_platform,
                                                std::vector<std::string>& assumptions, VersionBasis& basis) {
  const std::string name = trim(input.engine).empty() ? engine::default_engine_for(device_platform) : to_lower(trim(input.engine));
  std::string version = input.version;
  // Issue 15 (misc950): a build with no version stated (fit --engine-build B without @V) dates the profile by its tag
  // line, X.Y.Z of "0.17.0rc2.dev80": for a main-branch build a lower bound, since it is named after the last tag on main.
  if (version.empty() && name.find('@') == std::string::npos && input.build) {
    version = input.build->version.text();
    assumptions.push_back("engine version " + version + " from the build " + input.build->text + " (" + input.build_origin +
                          ")" + (input.build->dev >= 0 ? ": a main-branch build, named after the last tag on main, so possibly an older profile than the vLLM release it ran with" : ""));
  }
  auto profile = engine::select_engine(engines, name, version);
  bool dated = name.find('@') != std::string::npos || (profile && !version.empty());
  basis = dated ? VersionBasis::stated : VersionBasis::newest_assumed;
  // A version that selects no profile, or none stated, is dated by a "vX.Y" inside it, then inside the hint.
  for (const auto& [dating, where] : {std::pair{input.version, input.origin}, std::pair{input.version_hint, input.version_hint_origin}}) {
    if (profile && (!version.empty() || name.find('@') != std::string::npos)) break;
    const std::string v = dated_version(dating);
    if (v.empty()) continue;
    if (auto found = engine::select_engine(engines, name, v)) {
      profile = std::move(found);
      assumptions.push_back("engine version " + v + ", dated by the " + where);
      version = v;
      dated = true;
      basis = VersionBasis::dated;
    }
  }
  // Still undated: a date the evidence states takes the newest profile whose first release came out by then (and
  // prints its token line the way the evidence does, where that is known). A newer profile without a recorded release
  // date leaves the version undated: it cannot be told whether it was out.
  // Issue 15 (hyb): a source build of the main branch (setuptools-scm's ".dev" version, e.g. "0.1.dev1+g4d2a68d64")
  // holds what was merged by its date, which is the release then in development: the first profile released after
  // that date, where one is recorded (vLLM's main of 2026-08-16 has PR #50991, first released in 0.28.0 on 2026-08-26).
  if (!dated) {
    if (const auto day = find_iso_date(input.evidence_date)) {
      const bool source_build = source_build_version(input.version);
      std::vector<const engine::EngineProfile*> mine;
      for (const auto& p : engines.profiles)
        if (p.engine == name) mine.push_back(&p);
      std::sort(mine.begin(), mine.end(), [](const auto* a, const auto* b) { return b->version_min < a->version_min; });
      const engine::EngineProfile* in_development = nullptr;
      for (const auto* p : mine) {
        if (!p->first_release) break;
        if (p->first_release->date > day->date) {
          in_development = p;
          continue;
        }
        if (source_build && in_development &&
            (!input.printed_tokens_are_blocks || (in_development->tokens_rule == engine::TokensRule::blocks) == *input.printed_tokens_are_blocks)) {
          if (auto found = engine::select_engine(engines, name, in_development->version_min.text())) {
            const auto& fr = *in_development->first_release;
            assumptions.push_back(format("engine version dated by the %s's date %s: a development build (%s) after %s, the newest profile released by then, "
                                         "so the release in development, %s (%s on %s, %s)",
                                         input.evidence_date_origin.c_str(), day->text.c_str(), input.version.c_str(), p->id.c_str(), found->id.c_str(),
                                         fr.version.c_str(), fr.date_text.c_str(), fr.source.c_str()));
            basis = VersionBasis::dated;
            return found;
          }
        }
        if (input.printed_tokens_are_blocks && (p->tokens_rule == engine::TokensRule::blocks) != *input.printed_tokens_are_blocks) continue;
        if (auto found = engine::select_engine(engines, name, p->version_min.text())) {
          const auto& fr = *p->first_release;
          assumptions.push_back(format("engine version dated by the %s's date %s: %s, the newest profile released by then (%s on %s, %s)",
                                       input.evidence_date_origin.c_str(), day->text.c_str(), found->id.c_str(), fr.version.c_str(), fr.date_text.c_str(),
                                       fr.source.c_str()));
          basis = VersionBasis::dated;
          return found;
        }
        break;
      }
    }
  }
  // Still undated: the printed token line's format names the newest profile that prints that way.
  if (!dated && input.printed_tokens_are_blocks) {
    const engine::TokensRule rule = *input.printed_tokens_are_blocks ? engine::TokensRule::blocks : engine::TokensRule::concurrency_x_len;
    const engine::EngineProfile* newest = nullptr;
    for (const auto& p : engines.profiles)
      if (p.engine == name && p.tokens_rule == rule && (!newest || newest->version_max < p.version_max)) newest = &p;
    if (newest) {
      if (auto found = engine::select_engine(engines, name, newest->version_max.text()); found && found->tokens_rule == rule) {
        assumptions.push_back("engine version dated by the printed token line (" +
                              std::string(*input.printed_tokens_are_blocks ? "num_blocks x block size, not concurrency x max_model_len" : "concurrency x max_model_len") +
                              "): the newest profile printing that way, " + found->id);
        basis = VersionBasis::dated;
        return found;
      }
    }
  }
  // Issue 15 (v0eng29): still undated, a log that shows the V0 engine runs a version that has one.
  if (!dated) {
    if (auto found = profile_dated_by_v0(input, engines, name, assumptions)) {
      basis = VersionBasis::dated;
      return std::move(*found);
    }
  }
  if (!profile && !version.empty() && input.unknown == UnknownVersion::newest) {
    // Issue 15 (rocm): a version older than every profile of the engine ("0.4.1" against vllm@0.6-0.7 first) is
    // nearest in era to the oldest profile, not to the newest. An untagged source build ("0.1.dev1+g4d2a68d")
    // reports setuptools-scm's 0.1.devN, which names no era: it keeps the newest.
    const engine::EngineProfile* oldest = nullptr;
    for (const auto& p : engines.profiles)
      if (p.engine == name && (!oldest || p.version_min < oldest->version_min)) oldest = &p;
    if (const auto v = engine::parse_version(version); v && oldest && *v < oldest->version_min && !source_build_version(version)) {
      if (auto found = engine::select_engine(engines, name, oldest->version_min.text())) {
        assumptions.push_back("engine version " + v->text() + " predates every " + name + " profile: the oldest, " + found->id + ", used");
        basis = VersionBasis::dated;
        return found;
      }
    }
    auto newest = engine::select_engine(engines, name.substr(0, name.find('@')), "");
    if (newest) {
      assumptions.push_back("engine version '" + version + "' not recognised; newest profile used");
      basis = VersionBasis::newest_assumed;
      return newest;
    }
  }
  // ux31: a version a flag named that no profile covers names the flag as written ("--engine vllm-ascend@0.99"), not
  // the bare version text.
  if (!profile && profile.error().kind == ErrorKind::not_found && input.origin.rfind("--", 0) == 0 && (name.find('@') != std::string::npos || !version.empty())) {
    Error e = profile.error();
    const bool at = name.find('@') != std::string::npos;
    e.context = input.origin + " " + (at ? name : trim(input.engine).empty() ? trim(version) : name + "@" + trim(version));
    return e;
  }
  return profile;  // select_engine's errors name the engine and the version
}

}  // namespace

Expected<engine::EngineProfile> resolve_engine(const EngineInput& input, const engine::EngineCatalog& engines, const std::string& device_platform,
                                               std::vector<std::string>& assumptions, VersionBasis& basis) {
  PF_TRY(profile, resolve_profile(input, engines, device_platform, assumptions, basis));
  apply_engine_core(input, profile, device_platform, basis, assumptions);
  return profile;
}

}  // namespace preflight::deploy
