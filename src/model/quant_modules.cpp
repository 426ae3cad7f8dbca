// Which format each module of a quantized checkpoint is stored in: module names as preflight spells them
// (normalize_module), the ignore / exclude patterns of each descriptor (module_ignored) and the per-thread classification
// tables that plan's fits share (SchemeFormats).
#include <memory>
#include <string_view>
#include <unordered_map>

#include "base/safe_regex.hpp"
#include "base/text.hpp"
#include "model/quant_layers.hpp"
#include "model/quant_scheme.hpp"

namespace preflight::model {

std::string normalize_module(const std::string& module) {
  std::string out;
  for (const auto& part : split(module, '.')) {
    if (part == "language_model") continue;
    if (!out.empty()) out += '.';
    const bool numeric = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    out += numeric ? std::string("*") : part;
  }
  return out;
}

namespace {

// Glob match where '*' matches any run of characters (classic two-pointer backtracking).
bool glob_match(const std::string& text, const std::string& glob) {
  size_t t = 0, g = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (g < glob.size() && glob[g] != '*' && glob[g] == text[t]) {
      ++t;
      ++g;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      mark = t;
    } else if (star != std::string::npos) {
      g = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

// Whether normalize_module(s) == s: no "language_model" part and no all-digit part.
bool is_normal(const std::string& s) {
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('.', start);
    if (end == std::string::npos) end = s.size();
    const size_t len = end - start;
    if (len == 14 && s.compare(start, len, "language_model") == 0) return false;
    if (len > 0) {
      bool digits = true;
      for (size_t i = start; i < end && digits; ++i) digits = s[i] >= '0' && s[i] <= '9';
      if (digits) return false;
    }
    if (len == 0 && !(start == 0 && s.empty())) return false;  // empty parts ("a..b", ".a", "a."): normalize_module drops them
    start = end + 1;
  }
  return true;
}

// glob_match(text, "*" + glob + "*") without building that pattern: the same two-pointer walk over a
// virtual pattern whose first and last characters are '*'.
bool glob_within(const std::string& text, const std::string& glob) {
  const size_t n = glob.size() + 2;
  auto at = [&](size_t i) { return i == 0 || i == n - 1 ? '*' : glob[i - 1]; };
  size_t t = 0, g = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (g < n && at(g) != '*' && at(g) == text[t]) {
      ++t;
      ++g;
    } else if (g < n && at(g) == '*') {
      star = g++;
      mark = t;
    } else if (star != std::string::npos) {
      g = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (g < n && at(g) == '*') ++g;
  return g == n;
}

bool pattern_matches(const std::string& raw_pattern, const std::string& module) {
  if (starts_with(raw_pattern, "re:")) {
    // Compiled once per pattern: module_format runs for every weight group of every candidate a plan tries.
    // Issue 19: matched without backtracking (base/safe_regex: std::regex took minutes on "(.*.*)*X"); a pattern outside
    // its subset matches nothing, as one std::regex refused did. Anywhere in the name (re.search): the variant catalogue's
    // keep_high_precision entries ("re:mlp\\.gate$") are written so. vLLM's compressed-tensors ignore lists are matched
    // from the start (`re.match`, quantization/compressed_tensors/utils.py `_is_equal_or_regex_match`); the published
    // ones begin with ".*" ("re:.*mlp.gate$"), where the two agree.
    thread_local std::map<std::string, std::optional<SafeRegex>> compiled;
    auto it = compiled.find(raw_pattern);
    if (it == compiled.end()) {
      std::optional<SafeRegex> re;
      if (auto c = SafeRegex::compile(std::string_view(raw_pattern).substr(3))) re.emplace(std::move(*c));
      it = compiled.emplace(raw_pattern, std::move(re)).first;
    }
    if (!it->second) return false;
    // Our module names use '*' for a layer index; make it look like a number for the regex.
    std::string concrete = module;
    for (auto& c : concrete) if (c == '*') c = '0';
    return it->second->search(concrete);
  }
  // HF modules_to_not_convert semantics: the entry is a substring of the module path; '*' (a layer
  // index after normalization, or a glob) matches any run of characters. This runs for every weight
  // group and pattern of every candidate a plan tries: names already in normal form (the weight groups'
  // modules and most patterns) are matched as they are, the others normalized once per thread.
  if (is_normal(module) && is_normal(raw_pattern)) return glob_within(module, raw_pattern);
  thread_local std::unordered_map<std::string, std::string> modules, globs;
  auto m = modules.find(module);
  if (m == modules.end()) m = modules.emplace(module, normalize_module(module)).first;
  auto g = globs.find(raw_pattern);
  if (g == globs.end()) g = globs.emplace(raw_pattern, "*" + normalize_module(raw_pattern) + "*").first;
  return glob_match(m->second, g->second);
}
}  // namespace

bool mtp_kept_unquantized(const QuantScheme& scheme) {
  for (const auto& pattern : scheme.ignore)
    if (pattern.find("mtp") != std::string::npos) return true;
  return false;
}

bool module_ignored(const QuantScheme& scheme, const std::string& module) {
  for (const auto& pattern : scheme.ignore) {
    if (pattern_matches(pattern, module)) return true;
  }
  return false;
}

namespace {
constexpr int k_ignored = -1, k_no_pattern = -2;

// The classification per (pattern lists, module), kept per thread for the last few pattern lists seen:
// module_format runs for every weight group of every candidate a plan tries, over a handful of schemes
// (a checkpoint's own and the --quantization flags'). An entry is found by comparing the lists
// themselves, so a scheme changed in place never reads another's answers.
}  // namespace

// One pattern as pattern_matches reads it, prepared once per table (issue 19, round 7: a plan process classified
// every module against every pattern afresh, normalizing and checking both names each time): a "re:" pattern keeps
// its text for pattern_matches; any other matches where its normal form (normalize_module) occurs in the module's
// normal form, '*' matching any run (glob_within). That glob begins and ends with '*', so it matches where the pieces
// of the normal form between its '*'s occur in the module's normal form in order, each found leftmost after the last.
struct PreparedPattern {
  bool regex = false;
  std::vector<std::string> pieces;  // the normal form split at '*', empty pieces left out
};

struct SchemeFormats::Table {
  std::vector<std::string> ignore;
  std::vector<std::string> patterns;
  std::vector<PreparedPattern> prepared_ignore, prepared_patterns;
  std::unordered_map<std::string, int> by_module;
};

namespace {
using ClassCache = SchemeFormats::Table;

PreparedPattern prepare_pattern(const std::string& raw) {
  PreparedPattern p;
  p.regex = starts_with(raw, "re:");
  if (p.regex) return p;
  const std::string normal = is_normal(raw) ? raw : normalize_module(raw);
  size_t start = 0;
  while (start <= normal.size()) {
    size_t end = normal.find('*', start);
    if (end == std::string::npos) end = normal.size();
    if (end > start) p.pieces.push_back(normal.substr(start, end - start));
    start = end + 1;
  }
  return p;
}

// pattern_matches(raw, module) for the prepared form of raw; `normal` is normalize_module(module). Both branches of
// pattern_matches come to this: glob_within(module, raw) when both are normal, else glob_match of their normal forms
// with the pattern's wrapped in '*', which is glob_within of the two normal forms.
bool prepared_matches(const PreparedPattern& p, const std::string& raw, const std::string& module, const std::string& normal) {
  if (p.regex) return pattern_matches(raw, module);
  size_t at = 0;
  for (const auto& piece : p.pieces) {
    at = normal.find(piece, at);
    if (at == std::string::npos) return false;
    at += piece.size();
  }
  return true;
}

// Which rule decides `module` under the table's patterns (the scheme's lists): ignored (module_ignored), the index of
// the first matching module_formats pattern, or none.
int classify_prepared(const ClassCache& table, const std::string& module) {
  const std::string normal = is_normal(module) ? module : normalize_module(module);
  for (size_t i = 0; i < table.prepared_ignore.size(); ++i)
    if (prepared_matches(table.prepared_ignore[i], table.ignore[i], module, normal)) return k_ignored;
  for (size_t i = 0; i < table.prepared_patterns.size(); ++i)
    if (prepared_matches(table.prepared_patterns[i], table.patterns[i], module, normal)) return static_cast<int>(i);
  return k_no_pattern;
}

bool same_patterns(const ClassCache& c, const QuantScheme& s) {
  if (c.ignore != s.ignore || c.patterns.size() != s.module_formats.size()) return false;
  for (size_t i = 0; i < c.patterns.size(); ++i)
    if (c.patterns[i] != s.module_formats[i].first) return false;
  return true;
}

// The table for these pattern lists (an entry may be replaced in the cache; a holder keeps its own).
std::shared_ptr<ClassCache> table_for(const QuantScheme& scheme) {
  // Room for every checkpoint scheme of the catalogue beside the --quantization flags' ones: with 8, a plan
  // over the whole catalogue evicted the flags' tables on every device (issue 19).
  constexpr size_t k_entries = 64;
  thread_local std::vector<std::shared_ptr<ClassCache>> cache;
  thread_local size_t next_slot = 0;
  for (const auto& c : cache)
    if (same_patterns(*c, scheme)) return c;
  auto fresh = std::make_shared<ClassCache>();
  fresh->ignore = scheme.ignore;
  for (const auto& p : scheme.module_formats) fresh->patterns.push_back(p.first);
  for (const auto& p : fresh->ignore) fresh->prepared_ignore.push_back(prepare_pattern(p));
  for (const auto& p : fresh->patterns) fresh->prepared_patterns.push_back(prepare_pattern(p));
  if (cache.size() < k_entries) {
    cache.push_back(fresh);
  } else {
    cache[next_slot] = fresh;
    next_slot = (next_slot + 1) % k_entries;
  }
  return fresh;
}

int cached_class(ClassCache& table, const std::string& module) {
  auto it = table.by_module.find(module);
  if (it == table.by_module.end()) it = table.by_module.emplace(module, classify_prepared(table, module)).first;
  return it->second;
}

WeightFormat format_of(const QuantScheme& scheme, int c, bool expert) {
  if (c == k_ignored) return WeightFormat::native;
  if (c >= 0) return scheme.module_formats[static_cast<size_t>(c)].second;
  return expert ? scheme.expert_format : scheme.linear_format;
}
}  // namespace

WeightFormat module_format(const QuantScheme& scheme, const std::string& module, bool expert) {
  if (!scheme.quantized() || (!scheme.lm_head_quantized && module == k_lm_head)) return WeightFormat::native;
  return format_of(scheme, cached_class(*table_for(scheme), module), expert);
}

SchemeFormats::SchemeFormats(const QuantScheme& scheme) : scheme_(&scheme), table_(scheme.quantized() ? table_for(scheme) : nullptr) {}

WeightFormat SchemeFormats::operator()(const std::string& module, bool expert) const {
  if (!table_ || (!scheme_->lm_head_quantized && module == k_lm_head)) return WeightFormat::native;
  return format_of(*scheme_, cached_class(*table_, module), expert);
}

}  // namespace preflight::model
