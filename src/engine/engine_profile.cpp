// EngineProfile's queries (the rule covering its version, the overheads of a platform, accepted quantization, graph
// ceilings) and the version types' parsing and ordering. Split out of engine_catalog.cpp, which loads the catalogue.
#include <algorithm>
#include <array>

#include "base/case_fold.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/engine_profile.hpp"
#include "engine/version_lists.hpp"

namespace preflight::engine {

bool Version::operator<(const Version& o) const {
  if (major != o.major) return major < o.major;
  if (minor != o.minor) return minor < o.minor;
  return patch < o.patch;
}

std::string Version::text() const { return format("%d.%d.%d", major, minor, patch); }

Expected<NpuDriverVersion> parse_npu_driver_version(const std::string& text, const std::string& what) {
  NpuDriverVersion v;
  v.text = text;
  auto bad = [&]() -> Expected<NpuDriverVersion> {
    return make_error(ErrorKind::invalid_argument,
                      format("%s: NPU driver version '%s': expected dot-separated numbers or rcN parts, as npu-smi prints it (23.0.7, 24.1.rc3.7, 25.5.0)",
                             what.c_str(), text.c_str()), what);
  };
  if (text.empty() || text.size() > 64) return bad();
  for (const auto& part : split(text, '.')) {
    const std::string p = to_lower(part);
    const bool rc = p.size() > 2 && p.compare(0, 2, "rc") == 0;
    const std::string digits = rc ? p.substr(2) : p;
    if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) return bad();
    v.parts.push_back({rc ? 0 : 1, std::stoll(digits)});
  }
  return v;
}

int compare_npu_driver_versions(const NpuDriverVersion& a, const NpuDriverVersion& b) {
  const size_t n = std::max(a.parts.size(), b.parts.size());
  for (size_t i = 0; i < n; ++i) {
    const std::pair<int, int64_t> zero{1, 0};
    const auto& x = i < a.parts.size() ? a.parts[i] : zero;
    const auto& y = i < b.parts.size() ? b.parts[i] : zero;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::optional<Version> parse_version(const std::string& raw, const std::string& engine) {
  std::string text = to_lower(raw);
  if (!engine.empty()) {
    const auto pos = text.find(to_lower(engine));
    if (pos != std::string::npos) text = text.substr(pos + engine.size());
  }
  // Issue 16 (llamacpp32): llama.cpp names its builds bNNNN, one release tag per merged commit on master (b5622, b7342,
  // b10453: github.com/ggml-org/llama.cpp/releases; the build line prints 'build: 7342 (2fbe3b7bb)'), so the number alone
  // orders them. A text that is one such name ("b7342", "@b7342") reads as version N.0.0, which the llama.cpp profiles'
  // ranges (data/engines/engines.json) and the rules keyed by a build compare.
  if (engine.empty() || to_lower(engine) == "llama.cpp") {
    const size_t start = text.find_first_not_of(" @=-:");
    const std::string t = start == std::string::npos ? std::string() : trim(text.substr(start));
    if (t.size() >= 2 && t.size() <= 7 && t[0] == 'b' && std::all_of(t.begin() + 1, t.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      return Version{std::stoi(t.substr(1)), 0, 0};
  }
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) && text[i - 1] != 'v')) continue;
    Version v;
    int parts[3] = {0, 0, 0};
    int n = 0;
    size_t j = i;
    while (n < 3 && j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      long value = 0;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && value < 100000) value = value * 10 + (text[j++] - '0');
      parts[n++] = static_cast<int>(value);
      if (j < text.size() && text[j] == '.' && j + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[j + 1]))) ++j;
      else break;
    }
    if (n >= 2) {
      v.major = parts[0];
      v.minor = parts[1];
      v.patch = parts[2];
      return v;
    }
    i = j;
  }
  return std::nullopt;
}

bool EngineProfile::runs_on(const std::string& device_platform) const {
  return platform == "any" || platform == device_platform || (platform == "cuda" && device_platform == "rocm");
}

std::string default_engine_for(const std::string& device_platform) { return device_platform == "npu" ? "vllm-ascend" : "vllm"; }

namespace {
// The first of `rules` (each with a VersionRule `rule`) that covers `v`, or nullptr.
template <class Rule>
const Rule* covering(const std::vector<Rule>& rules, const Version& v) {
  for (const auto& r : rules)
    if (r.rule.covers(v)) return &r;
  return nullptr;
}
}  // namespace

const EngineProfile::HybridKvCopyRule* EngineProfile::hybrid_kv_copy_rule() const { return covering(hybrid_kv_tensor_copies, rule_version()); }

const EngineProfile::MlapoCopyRule* EngineProfile::sfa_mlapo_rule() const { return covering(sfa_mlapo_copies, rule_version()); }

const EngineProfile::MtpDrafterProfileRule* EngineProfile::mtp_drafter_profile_rule() const { return covering(mtp_drafter_profile_tensors, rule_version()); }

const Overheads* EngineCatalog::overheads_for(const EngineProfile& engine, const std::string& device_platform) const {
  return overheads_for(device_platform == "rocm" ? "rocm" : engine.platform == "any" ? device_platform : engine.platform);
}

const Mxfp4Layout* EngineProfile::mxfp4_layout_for(const std::string& device_id, const std::string& family) const {
  for (const auto& l : mxfp4_layouts)
    if (std::find(l.devices.begin(), l.devices.end(), device_id) != l.devices.end()) return &l;
  for (const auto& l : mxfp4_layouts)
    if (std::find(l.families.begin(), l.families.end(), family) != l.families.end()) return &l;
  return nullptr;
}

bool EngineProfile::accepts_quantization(const std::string& method) const {
  if (method.empty()) return true;
  for (const auto& q : supported_quantization) {
    if (q == "*" || equal_lowered(q, method)) return true;
  }
  return false;
}

const QuantizationAutoDetect* EngineProfile::auto_detect(const std::string& trigger) const {
  const Version v = rule_version();
  for (const auto& r : quantization_auto_detects)
    if (r.trigger == trigger && covers_version(r, v)) return &r;
  return nullptr;
}

// vLLM _set_cudagraph_sizes (vllm/config/vllm.py): the default capture ceiling is 512 tokens, or the platform's where a
// ceiling record lists the device (PR #49390: 1024 on data center Blackwell).
int64_t EngineProfile::cudagraph_default_ceiling(const std::string& device_id) const {
  const Version v = rule_version();
  for (const auto& c : cudagraph_capture_ceilings)
    if (c.rule.covers(v) && std::find(c.devices.begin(), c.devices.end(), device_id) != c.devices.end()) return c.tokens;
  return 512;
}

const Overheads* EngineCatalog::overheads_for(const std::string& platform) const {
  for (const auto& o : overheads) if (o.platform == platform) return &o;
  for (const auto& o : overheads) if (o.platform == "cuda") return &o;
  return nullptr;
}

std::vector<std::string> EngineCatalog::engines() const {
  std::vector<std::string> out;
  for (const auto& p : profiles) if (std::find(out.begin(), out.end(), p.engine) == out.end()) out.push_back(p.engine);
  return out;
}

}  // namespace preflight::engine
