// deploy/version_band: what the band across engine versions (deploy::across_versions, deployment.hpp) leaves out, in
// words (user36, issue 15). Kept out of deployment.hpp, which most of the tree includes.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "deploy/deployment.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::deploy {

// The profiles of `r`'s engine on its device's platform that across_versions leaves out or cuts because their model
// registry lacks the model's architecture (engine::first_version_with), in words for the band ("" when none): a band
// saying "fits on 9 of 9 versions" for Qwen3 counted vLLM 0.6-0.7, which refuses Qwen3ForCausalLM.
std::string versions_left_out(const engine::EngineCatalog& engines, const Resolved& r);

// Issue 15 (date37): the versions a log's printed lines allow (cli/logs_dating: the formats of its lines, from
// data/engines/line_formats.json): lo and hi inclusive, unset = unbounded; `keep`, when set, drops a profile the other
// evidence rules out (the token line's format, the V0 engine).
struct VersionWindowBounds {
  std::optional<engine::Version> lo, hi;
  std::function<bool(const engine::EngineProfile&)> keep;
};
// The band (as across_versions) over the profiles of `engine_name` on the deployment's platform that `window` keeps,
// each sized at its lowest version inside the window, whatever the inputs state or date; fewer than two: no band.
VersionBand across_versions_within(const Inputs& in, const Catalogs& catalogs, const std::string& engine_name, const VersionWindowBounds& window);

}  // namespace preflight::deploy
