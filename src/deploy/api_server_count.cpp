// deploy/api_server_count: see api_server_count.hpp. Source: vllm/entrypoints/cli/serve.py run_multi_api_server at the
// release tags v0.9.1 - v0.11.0 (github.com/efschu/vllm): "if num_api_servers > 1: if not envs.VLLM_USE_V1: raise
// ValueError("api_server_count > 1 is only supported for V1")", after engine_args.create_engine_config, which sets
// VLLM_USE_V1 from the V1 oracle (vllm/engine/arg_utils.py envs.set_vllm_use_v1); gone at v0.11.1 with the V0 engine.
#include "deploy/api_server_count.hpp"

#include "base/units.hpp"

namespace preflight::deploy {

Status check_api_server_count(const Flags& f, const engine::EngineProfile& profile) {
  if (!f.api_server_count || f.api_server_count->value <= 1 || (f.headless && f.headless->value)) return Ok{};
  if (profile.engine != "vllm" && profile.engine != "vllm-ascend") return Ok{};  // vLLM-Ascend X.Y runs vLLM X.Y's serve.py
  if (!profile.v0_lines) return Ok{};
  const engine::Version at = profile.rule_version();
  if (at < *engine::parse_version("0.9.1") || !(at < *engine::parse_version("0.11.1"))) return Ok{};
  return make_error(ErrorKind::invalid_argument,
                    format("%s: ValueError: api_server_count > 1 is only supported for V1 (%s %s runs the V0 engine here; vllm/entrypoints/cli/serve.py "
                           "run_multi_api_server, vLLM 0.9.1 - 0.11.0)",
                           f.api_server_count->origin.c_str(), profile.engine.c_str(), at.text().c_str()));
}

}  // namespace preflight::deploy
