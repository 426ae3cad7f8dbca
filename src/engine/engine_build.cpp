// setuptools-scm version strings (PEP 440 public version, local part after '+'); see engine_profile.hpp EngineBuild.
#include <cctype>
#include <climits>
#include <cstdint>
#include <tuple>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

namespace {
// Reads the decimal digits at `pos` (at most 9) into `out`; false when there are none or too many.
bool read_number(const std::string& s, size_t& pos, int64_t& out) {
  const size_t start = pos;
  out = 0;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])) && pos - start < 9) out = out * 10 + (s[pos++] - '0');
  return pos > start && (pos == s.size() || !std::isdigit(static_cast<unsigned char>(s[pos])));
}
}  // namespace

Expected<EngineBuild> parse_engine_build(const std::string& raw, const std::string& what) {
  const std::string text = trim(raw);
  auto bad = [&]() -> Expected<EngineBuild> {
    return make_error(ErrorKind::invalid_argument,
                      format("%s: engine build '%s': expected X.Y.Z[rcN][.devN][+local] as setuptools-scm names it (0.17.0rc2.dev66+g9d0b7c8e9, 0.18.0rc1)",
                             what.c_str(), raw.c_str()), what);
  };
  if (text.empty() || text.size() > 128) return bad();
  const std::string s = to_lower(text.substr(0, text.find('+')));
  size_t pos = s.size() > 1 && s[0] == 'v' ? 1 : 0;
  int64_t parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (!read_number(s, pos, parts[i]) || parts[i] > 100000) return bad();
    if (i < 2) {
      if (pos >= s.size() || s[pos] != '.') return bad();
      ++pos;
    }
  }
  EngineBuild b;
  b.version = {static_cast<int>(parts[0]), static_cast<int>(parts[1]), static_cast<int>(parts[2])};
  b.text = text;
  if (s.compare(pos, 2, "rc") == 0) {
    pos += 2;
    if (!read_number(s, pos, b.rc)) return bad();
  }
  if (s.compare(pos, 4, ".dev") == 0) {
    pos += 4;
    if (!read_number(s, pos, b.dev)) return bad();
  }
  if (pos != s.size()) return bad();
  const size_t plus = text.find('+');
  if (plus != std::string::npos && plus + 1 == text.size()) return bad();
  return b;
}

int compare_engine_builds(const EngineBuild& a, const EngineBuild& b) {
  if (a.version < b.version) return -1;
  if (b.version < a.version) return 1;
  // PEP 440: X.Y.Z.devN < X.Y.ZrcM.devN < X.Y.ZrcM < X.Y.Z (a final release's dev builds come before its rcs).
  const auto key = [](const EngineBuild& x) {
    const int64_t last = INT64_MAX;
    return std::tuple<int64_t, int64_t>{x.rc >= 0 ? x.rc : x.dev >= 0 ? int64_t{-1} : last, x.dev >= 0 ? x.dev : last};
  };
  const auto ka = key(a), kb = key(b);
  return ka < kb ? -1 : kb < ka ? 1 : 0;
}

}  // namespace preflight::engine

namespace preflight::engine {

bool EngineProfile::rule_applies(const VersionRule& rule) const {
  const Version v = rule_version();
  const bool from = build_named && rule.from_build ? compare_engine_builds(*build_named, *rule.from_build) >= 0 : rule.version_min <= v;
  const bool before = build_named && rule.before_build ? compare_engine_builds(*build_named, *rule.before_build) < 0 : v <= rule.version_max;
  return from && before;
}

const std::string& EngineProfile::indexer_cache_for_build() const {
  if (build_named && sparse_indexer_cache_from_build && compare_engine_builds(*build_named, *sparse_indexer_cache_from_build) < 0)
    return sparse_indexer_cache_before_build;
  return sparse_indexer_cache;
}

std::vector<EngineProfile::BuildRule> EngineProfile::build_rules() const {
  std::vector<BuildRule> out;
  if (sparse_indexer_cache_from_build) {
    const bool holds = !build_named || compare_engine_builds(*build_named, *sparse_indexer_cache_from_build) >= 0;
    out.push_back({"sparse_indexer_cache_from_build", "from " + sparse_indexer_cache_from_build->text, holds,
                   holds ? "sparse-attention indexer cache laid out as " + sparse_indexer_cache
                         : "sparse-attention indexer cache laid out as " + sparse_indexer_cache_before_build + " (the build predates the layout)"});
  }
  // Only a profile that counts the increase carries the boundary (the catalogue loader's check).
  if (non_torch_increase_from_build) {
    const bool holds = !build_named || compare_engine_builds(*build_named, *non_torch_increase_from_build) >= 0;
    out.push_back({"non_torch_increase_from_build", "from " + non_torch_increase_from_build->text, holds,
                   holds ? "non-torch memory counted as the increase since the worker's init snapshot (the runtime context left out)"
                         : "the whole non-torch memory counted (the build predates the increase count)"});
  }
  for (const auto& copy : moe_dynamic_scale_copies) {
    if (!copy.rule.from_build && !copy.rule.before_build) continue;
    std::string boundary;
    if (copy.rule.from_build) boundary = "from " + copy.rule.from_build->text;
    if (copy.rule.before_build) boundary += (boundary.empty() ? "before " : ", before ") + copy.rule.before_build->text;
    const bool holds = rule_applies(copy.rule);
    out.push_back({"moe_dynamic_scale_copies " + copy.tensors, boundary, holds,
                   holds ? "the W8A8_DYNAMIC experts keep the " + copy.tensors + " copies" : "no " + copy.tensors + " copies"});
  }
  return out;
}

}  // namespace preflight::engine
