// deploy/version_band: what the band across engine versions (deploy::across_versions, deployment.hpp) leaves out, in
// words (user36, issue 15). Kept out of deployment.hpp, which most of the tree includes.
#pragma once

#include <string>

#include "deploy/deployment.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::deploy {

// The profiles of `r`'s engine on its device's platform that across_versions leaves out or cuts because their model
// registry lacks the model's architecture (engine::first_version_with), in words for the band ("" when none): a band
// saying "fits on 9 of 9 versions" for Qwen3 counted vLLM 0.6-0.7, which refuses Qwen3ForCausalLM.
std::string versions_left_out(const engine::EngineCatalog& engines, const Resolved& r);

}  // namespace preflight::deploy
