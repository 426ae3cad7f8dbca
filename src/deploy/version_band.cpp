// deploy/version_band: the estimate across the engine versions a deployment could be on when nothing states or dates
// one (issue 15, "the version from the evidence"; deploy::across_versions, declared in deployment.hpp). Split out of
// deployment.cpp (user36), which also leaves out the versions whose model registry lacks the model's architecture.
#include <algorithm>

#include "deploy/version_band.hpp"
#include "base/text.hpp"
#include "engine/model_support.hpp"
#include "estimate/fit.hpp"

namespace preflight::deploy {

namespace {

// The band over the profiles of `name` on `dev`'s platform that `window` keeps, each sized at its lowest version inside
// the window (and not before the model's architecture is in the registry).
VersionBand band_over(const Inputs& in, const Catalogs& catalogs, const device::DeviceSpec& dev, const std::string& name, const VersionWindowBounds& window) {
  VersionBand band;
  std::vector<const engine::EngineProfile*> profiles;
  for (const auto& p : catalogs.engines->profiles)
    if (p.engine == name && p.runs_on(dev.platform)) profiles.push_back(&p);
  std::sort(profiles.begin(), profiles.end(), [](const auto* a, const auto* b) { return a->version_min < b->version_min; });
  bool any_kv = false;
  // user36: a version whose model registry lacks the architecture cannot have run it (vLLM's "Model architectures [...] are
  // not supported for now"): a profile wholly before the first such release is not plausible, and one that straddles it
  // is sized from that release on (data/engines/model_support.json); vLLM-Ascend's ❌ spans are left out likewise.
  const auto first = engine::first_version_with(name, in.model.architecture);
  for (const auto* p : profiles) {
    if (first && p->version_max < *first) continue;
    if (window.lo && p->version_max < *window.lo) continue;
    if (window.hi && *window.hi < p->version_min) continue;
    if (window.keep && !window.keep(*p)) continue;
    engine::Version at = p->version_min;
    if (first && at < *first) at = *first;
    if (window.lo && at < *window.lo) at = *window.lo;
    if (window.hi && *window.hi < at) continue;  // the architecture's first release lies past the window
    Inputs point = in;
    point.engine.engine = name + "@" + at.text();
    auto r = resolve_deployment(point, catalogs);
    if (!r) continue;
    if (engine::shipped_architecture_check(r->engine, in.model.architecture).verdict == engine::ArchitectureVerdict::unsupported) continue;
    r->deployment.explain = false;  // numbers and verdicts only
    const auto e = estimate::estimate_fit(r->model, r->device, r->engine, r->overheads, r->deployment);
    if (e.failure == estimate::Failure::invalid_layout || e.failure == estimate::Failure::unsupported_quantization) continue;
    band.points.push_back({at == p->version_min ? r->engine.id : r->engine.id + " from " + at.text(), e.fits, e.failure, e.kv_tokens, e.available_kv_bytes, e.max_concurrency});
    band.max_model_len = e.max_model_len;  // the same on every point: the inputs' --max-model-len, else the model's
    if (e.fits) ++band.fitting;
    if (e.num_blocks > 0) {
      band.kv_tokens_min = any_kv ? std::min(band.kv_tokens_min, e.kv_tokens) : e.kv_tokens;
      band.kv_tokens_max = any_kv ? std::max(band.kv_tokens_max, e.kv_tokens) : e.kv_tokens;
      any_kv = true;
    }
  }
  if (band.points.size() < 2) return VersionBand{};  // one profile covers every version the device runs: nothing is assumed
  return band;
}

}  // namespace

VersionBand across_versions(const Inputs& in, const Catalogs& catalogs) {
  std::vector<std::string> ignored;
  auto dev = resolve_device(in.device, *catalogs.devices, ignored);
  if (!dev) return VersionBand{};
  VersionBasis basis = VersionBasis::stated;
  if (!resolve_engine(in.engine, *catalogs.engines, dev->platform, ignored, basis) || basis != VersionBasis::newest_assumed) return VersionBand{};
  const std::string name = trim(in.engine.engine).empty() ? engine::default_engine_for(dev->platform) : to_lower(trim(in.engine.engine));
  return band_over(in, catalogs, *dev, name, {});
}

VersionBand across_versions_within(const Inputs& in, const Catalogs& catalogs, const std::string& engine_name, const VersionWindowBounds& window) {
  std::vector<std::string> ignored;
  auto dev = resolve_device(in.device, *catalogs.devices, ignored);
  if (!dev) return VersionBand{};
  return band_over(in, catalogs, *dev, engine_name, window);
}

std::string versions_left_out(const engine::EngineCatalog& engines, const Resolved& r) {
  const auto first = engine::first_version_with(r.engine.engine, r.model.architecture);
  if (!first) return "";
  std::string ids;
  for (const auto& p : engines.profiles)
    if (p.engine == r.engine.engine && p.runs_on(r.device.platform) && p.version_min < *first)
      ids += (ids.empty() ? "" : ", ") + p.id + (*first <= p.version_max ? " before " + first->text() : std::string());
  if (ids.empty()) return "";
  return "left out: " + ids + "; their model registry lacks " + r.model.architecture + ", first in " + r.engine.engine + " " + first->text() +
         " (data/engines/model_support.json)";
}

}  // namespace preflight::deploy
