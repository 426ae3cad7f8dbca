// Reads engines.json's multimodal profile-run rules (issue 15, vlprof35): see engine/mm_profile_rules.hpp.
#include "engine/mm_profile_rules.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/capture_rules.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

namespace {

Expected<const Json*> mm_rule_list(const JsonObject& r, const std::string& origin, const std::string& id, const std::string& key) {
  const Json* list = r.find(key);
  if (!list || list->is_null()) return static_cast<const Json*>(nullptr);
  if (!list->is_array()) return make_error(ErrorKind::corrupt, format("%s: %s: %s must be an array", origin.c_str(), id.c_str(), key.c_str()), origin);
  for (const auto& item : *list)
    if (!item.is_object()) return make_error(ErrorKind::corrupt, format("%s: %s: %s: expected objects", origin.c_str(), id.c_str(), key.c_str()), origin);
  return list;
}

Status parse_video_placeholders(const JsonObject& r, const std::string& origin, const std::string& id, MmProfileRules& out) {
  const std::string key = "mm_video_placeholder_tokens";
  PF_TRY(list, mm_rule_list(r, origin, id, key));
  if (!list) return Ok{};
  for (const auto& item : *list) {
    const JsonObject s(item, origin, "profiles[" + id + "]." + key + "[]");
    PF_TRY(rule, read_rule_range(s, origin, id, key, {"tokens_per_embed", "max_frames_per_video", "video_max_pixels", "video_min_pixels", "architectures"}));
    PF_TRY(per_embed, s.number("tokens_per_embed"));
    PF_TRY(frames, s.int_("max_frames_per_video"));
    PF_TRY(max_px, s.int_("video_max_pixels"));
    PF_TRY(min_px, s.int_("video_min_pixels"));
    MmProfileRules::VideoPlaceholderTokens v{per_embed, frames, max_px, min_px, {}, rule};
    const Json* archs = s.find("architectures");
    if (archs && archs->is_array())
      for (const auto& a : *archs)
        if (a.is_string()) v.architectures.push_back(a.get<std::string>());
    const bool sizes_ok = frames >= 2 && frames <= (1 << 20) && min_px >= 1 && max_px >= min_px && max_px <= (int64_t{1} << 40);
    if (!(per_embed >= 1 && per_embed <= 1000) || !sizes_ok || v.architectures.empty() || archs->size() != v.architectures.size())
      return make_error(ErrorKind::corrupt,
                        format("%s: %s: %s needs tokens_per_embed 1 - 1000, max_frames_per_video >= 2, 1 <= video_min_pixels <= video_max_pixels and architectures "
                               "(a list of names)", origin.c_str(), id.c_str(), key.c_str()),
                        origin);
    out.video_placeholder_tokens.push_back(std::move(v));
  }
  return Ok{};
}

Status parse_output_padding(const JsonObject& r, const std::string& origin, const std::string& id, MmProfileRules& out) {
  const std::string key = "mm_encoder_output_padding";
  PF_TRY(list, mm_rule_list(r, origin, id, key));
  if (!list) return Ok{};
  for (const auto& item : *list) {
    const JsonObject s(item, origin, "profiles[" + id + "]." + key + "[]");
    PF_TRY(rule, read_rule_range(s, origin, id, key, {"pad_to"}));
    PF_TRY(to, s.string("pad_to"));
    if (to != "budget" && to != "item")
      return make_error(ErrorKind::corrupt, format("%s: %s: %s: pad_to must be budget or item, found %s", origin.c_str(), id.c_str(), key.c_str(), to.c_str()), origin);
    out.encoder_output_padding.push_back({to == "budget" ? MmProfileRules::PadTo::budget : MmProfileRules::PadTo::item, rule});
  }
  return Ok{};
}

}  // namespace

const std::vector<std::string>& mm_profile_rule_keys() {
  static const std::vector<std::string> keys = {"mm_video_placeholder_tokens", "mm_encoder_output_padding"};
  return keys;
}

Expected<MmProfileRules> parse_mm_profile_rules(const JsonObject& r, const std::string& origin, const std::string& id) {
  MmProfileRules out;
  PF_TRY(videos, parse_video_placeholders(r, origin, id, out));
  (void)videos;
  PF_TRY(padding, parse_output_padding(r, origin, id, out));
  (void)padding;
  return out;
}

const MmProfileRules& mm_profile_rules(const EngineProfile& profile) { return capture_rules(profile).mm_profile; }

const MmProfileRules::VideoPlaceholderTokens* video_placeholder_tokens(const EngineProfile& profile, const std::string& architecture) {
  const Version v = profile.rule_version();
  for (const auto& r : mm_profile_rules(profile).video_placeholder_tokens)
    if (r.rule.covers(v) && std::find(r.architectures.begin(), r.architectures.end(), architecture) != r.architectures.end()) return &r;
  return nullptr;
}

MmProfileRules::PadTo encoder_output_padding(const EngineProfile& profile, std::string* source) {
  const Version v = profile.rule_version();
  for (const auto& r : mm_profile_rules(profile).encoder_output_padding)
    if (r.rule.covers(v)) {
      if (source) *source = r.rule.source;
      return r.to;
    }
  return MmProfileRules::PadTo::none;
}

}  // namespace preflight::engine
