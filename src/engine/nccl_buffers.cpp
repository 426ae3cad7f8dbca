// engine/nccl_buffers: reads overheads[cuda].nccl_buffers of engines.json (docs/memory-model.md, "NCCL buffers before
// vLLM PR #25359").
#include "engine/nccl_buffers.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

#include <algorithm>
#include <array>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::engine {

namespace {

constexpr std::array<const char*, k_interconnect_count> k_interconnect_names = {"unknown", "nvswitch", "nvlink-direct", "pcie", "network"};
static_assert(static_cast<int>(Interconnect::network) + 1 == k_interconnect_count, "one name per Interconnect value");

Expected<Interconnect> interconnect_field(const JsonObject& r, const std::string& key, const std::string& origin) {
  PF_TRY(text, r.string(key));
  const auto ic = parse_interconnect(text);
  if (!ic) return make_error(ErrorKind::corrupt, format("%s: %s: expected one of %s, found '%s'", origin.c_str(), r.key_path(key).c_str(), interconnect_choices().c_str(), text.c_str()), origin);
  return *ic;
}

Expected<NcclDomain> parse_domain(const Json& item, const std::string& origin) {
  JsonObject d(item, origin, "overheads[].nccl_buffers.domains[]");
  PF_TRY(keys, d.only_keys({"interconnect", "families", "channels", "p2p_channels", "p2p_chunk_bytes", "nvls_bytes", "nvls_min_ranks", "source"}));
  (void)keys;
  NcclDomain out;
  PF_TRY(ic, interconnect_field(d, "interconnect", origin));
  out.interconnect = ic;
  PF_TRY(families, string_list(d.find("families"), d.key_path("families"), origin));
  out.families = families;
  PF_TRY(channels, d.int_("channels"));
  if (channels < 1 || channels > 64) return make_error(ErrorKind::corrupt, format("%s: %s: expected 1-64 (NCCL's MAXCHANNELS)", origin.c_str(), d.key_path("channels").c_str()), origin);
  out.channels = channels;
  // NCCL makes the point-to-point channel count a power of two (graph/paths.cc ncclTopoComputeP2pChannels).
  PF_TRY(p2p, d.opt_int("p2p_channels"));
  PF_TRY(chunk, d.opt_number("p2p_chunk_bytes"));
  const int64_t p2p_channels = p2p.value_or(0);
  if (p2p.has_value() != chunk.has_value() || p2p_channels < 0 || p2p_channels > 64 || (p2p_channels & (p2p_channels - 1)) != 0 ||
      chunk.value_or(0) < 0 || chunk.value_or(0) > 64.0 * 1024 * 1024)
    return make_error(ErrorKind::corrupt,
                      format("%s: %s: expected p2p_channels (a power of two, at most 64) and p2p_chunk_bytes (at most 64 MiB) together",
                             origin.c_str(), d.key_path("p2p_channels").c_str()),
                      origin);
  out.p2p_channels = p2p_channels;
  out.p2p_chunk_bytes = chunk.value_or(0);
  PF_TRY(nvls, d.opt_number("nvls_bytes"));
  PF_TRY(nvls_ranks, d.opt_int("nvls_min_ranks"));
  if (nvls.value_or(0) < 0 || (nvls.value_or(0) > 0 && nvls_ranks.value_or(0) < 2))
    return make_error(ErrorKind::corrupt, format("%s: %s: expected 0 or more, with nvls_min_ranks of at least 2", origin.c_str(), d.key_path("nvls_bytes").c_str()), origin);
  out.nvls_bytes = nvls.value_or(0);
  out.nvls_min_ranks = nvls_ranks.value_or(0);
  PF_TRY(source, d.string("source"));
  if (trim(source).empty()) return make_error(ErrorKind::corrupt, format("%s: %s is empty", origin.c_str(), d.key_path("source").c_str()), origin);
  out.source = source;
  return out;
}

Expected<InterconnectDefault> parse_default(const Json& item, const std::string& origin) {
  JsonObject d(item, origin, "overheads[].nccl_buffers.defaults[]");
  PF_TRY(keys, d.only_keys({"form_factor", "ranks_min", "ranks_max", "interconnect", "alternatives", "reason", "source"}));
  (void)keys;
  InterconnectDefault out;
  PF_TRY(form, d.string("form_factor"));
  out.form_factor = form;
  PF_TRY(lo, d.int_("ranks_min"));
  PF_TRY(hi, d.int_("ranks_max"));
  if (lo < 2 || hi < lo) return make_error(ErrorKind::corrupt, format("%s: %s: expected 2 <= ranks_min <= ranks_max", origin.c_str(), d.key_path("ranks_min").c_str()), origin);
  out.ranks_min = lo;
  out.ranks_max = hi;
  PF_TRY(ic, interconnect_field(d, "interconnect", origin));
  out.interconnect = ic;
  PF_TRY(alts, string_list(d.find("alternatives"), d.key_path("alternatives"), origin));
  for (const auto& a : alts) {
    const auto alt = parse_interconnect(a);
    if (!alt || *alt == ic)
      return make_error(ErrorKind::corrupt, format("%s: %s: '%s' is not an interconnect other than the default", origin.c_str(), d.key_path("alternatives").c_str(), a.c_str()), origin);
    out.alternatives.push_back(*alt);
  }
  PF_TRY(reason, d.string("reason"));
  PF_TRY(source, d.string("source"));
  if (trim(reason).empty() || trim(source).empty())
    return make_error(ErrorKind::corrupt, format("%s: %s: a default needs its reason and source", origin.c_str(), d.key_path("source").c_str()), origin);
  out.reason = reason;
  out.source = source;
  return out;
}

}  // namespace

const char* interconnect_name(Interconnect interconnect) { return k_interconnect_names[static_cast<size_t>(interconnect)]; }

std::optional<Interconnect> parse_interconnect(const std::string& text) {
  std::string t = to_lower(trim(text));
  std::replace(t.begin(), t.end(), '_', '-');
  for (int i = 1; i < k_interconnect_count; ++i)
    if (t == k_interconnect_names[static_cast<size_t>(i)]) return static_cast<Interconnect>(i);
  return std::nullopt;
}

const std::string& interconnect_choices() {
  static const std::string choices = [] {
    std::string out;
    for (int i = 1; i < k_interconnect_count; ++i) out += std::string(i > 1 ? ", " : "") + k_interconnect_names[static_cast<size_t>(i)];
    return out;
  }();
  return choices;
}

const NcclDomain* NcclBuffers::domain(Interconnect interconnect, const std::string& family) const {
  for (const auto& d : domains) {
    if (d.interconnect != interconnect) continue;
    if (d.families.empty() || std::find(d.families.begin(), d.families.end(), family) != d.families.end()) return &d;
  }
  return nullptr;
}

const InterconnectDefault* NcclBuffers::default_for(const std::string& form_factor, int64_t ranks) const {
  for (const auto& d : defaults)
    if (d.form_factor == form_factor && ranks >= d.ranks_min && ranks <= d.ranks_max) return &d;
  return nullptr;
}

Expected<NcclBuffers> parse_nccl_buffers(const JsonObject& r, const std::string& origin) {
  PF_TRY(keys, r.only_keys({"engine", "version_min", "version_max", "version_source", "communicators", "communicators_source", "connection_bytes", "connection_source",
                            "proxy_shared_steps", "proxy_version_max", "proxy_source", "domains", "defaults"}));
  (void)keys;
  NcclBuffers n;
  PF_TRY(engine, r.string("engine"));
  n.engine = engine;
  PF_TRY(range, read_record_versions(r, format("%s: %s", origin.c_str(), r.key_path("version_min").c_str()), origin));
  PF_TRY(vsrc, r.string("version_source"));
  n.counted = EngineProfile::VersionRule{range.first, range.second, vsrc};
  PF_TRY(comms, r.int_("communicators"));
  if (comms < 1 || comms > 16) return make_error(ErrorKind::corrupt, format("%s: %s: expected 1-16", origin.c_str(), r.key_path("communicators").c_str()), origin);
  n.communicators = comms;
  PF_TRY(csrc, r.string("communicators_source"));
  n.communicators_source = csrc;
  PF_TRY(conn, r.number("connection_bytes"));
  if (!(conn > 0 && conn <= 1024.0 * 1024 * 1024))
    return make_error(ErrorKind::corrupt, format("%s: %s: expected more than 0 and at most 1 GiB", origin.c_str(), r.key_path("connection_bytes").c_str()), origin);
  n.connection_bytes = conn;
  PF_TRY(connsrc, r.string("connection_source"));
  n.connection_source = connsrc;
  if (trim(vsrc).empty() || trim(csrc).empty() || trim(connsrc).empty())
    return make_error(ErrorKind::corrupt, format("%s: %s: every figure needs its source", origin.c_str(), r.key_path("version_source").c_str()), origin);
  PF_TRY(steps, r.opt_int("proxy_shared_steps"));
  PF_TRY(proxy_max, r.opt_string("proxy_version_max"));
  PF_TRY(proxy_src, r.opt_string("proxy_source"));
  if (steps || proxy_max || proxy_src) {
    const auto pmax_proxy = proxy_max ? parse_version(*proxy_max) : std::nullopt;
    if (!steps || *steps < 1 || *steps > 64 || !pmax_proxy || !covers_version(n.counted, *pmax_proxy) || !proxy_src || trim(*proxy_src).empty())
      return make_error(ErrorKind::corrupt,
                        format("%s: %s: expected proxy_shared_steps (1-64), proxy_version_max inside the version range and proxy_source together",
                               origin.c_str(), r.key_path("proxy_shared_steps").c_str()),
                        origin);
    n.proxy_shared_steps = *steps;
    n.proxy_counted = EngineProfile::VersionRule{range.first, *pmax_proxy, *proxy_src};
    n.proxy_source = *proxy_src;
  }
  PF_TRY(domains, r.array("domains"));
  for (const auto& item : *domains) {
    PF_TRY(d, parse_domain(item, origin));
    n.domains.push_back(std::move(d));
  }
  PF_TRY(defaults, r.array("defaults"));
  for (const auto& item : *defaults) {
    PF_TRY(d, parse_default(item, origin));
    n.defaults.push_back(std::move(d));
  }
  return n;
}

}  // namespace preflight::engine
