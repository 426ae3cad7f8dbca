// deploy/data_parallel_flags: vLLM's multi-node data-parallel flags (issue 15, multinode32) checked as the engine's
// version checks them, and the node a start describes. Sources: vllm/engine/arg_utils.py create_engine_config and
// vllm/entrypoints/cli/serve.py (ServeSubcommand.cmd, run_headless) in the vLLM history, commits named below; the first
// release of each flag is data (data/engines/flag_versions.json).
#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "engine/flag_versions.hpp"

namespace preflight::deploy {

namespace {

engine::Version version(const char* text) { return *engine::parse_version(text); }

bool on(const std::optional<Given<bool>>& g) { return g && g->value; }

// serve.py ServeSubcommand.cmd (PR #17546, 0.9.1 on): "if args.headless or args.api_server_count < 1: run_headless(args)",
// so --api-server-count 0 starts a node as --headless does.
bool runs_headless(const Flags& f) { return on(f.headless) || (f.api_server_count && f.api_server_count->value < 1); }

}  // namespace

DataParallelNode data_parallel_node(const Flags& f, int64_t tp, int64_t pp, int64_t dp) {
  DataParallelNode n;
  // arg_utils.py create_engine_config: an external-LB rank (--data-parallel-external-lb) runs one rank; else
  // --data-parallel-size-local, else the whole DP size.
  if (f.data_parallel_size_local) n.local_ranks = f.data_parallel_size_local->value;
  else n.local_ranks = on(f.data_parallel_external_lb) ? 1 : dp;
  if (f.data_parallel_start_rank) n.start_rank = f.data_parallel_start_rank->value;
  n.api_server = !runs_headless(f);
  n.devices = std::max<int64_t>(0, n.local_ranks) * tp * pp;
  return n;
}

Status check_data_parallel_flags(const Flags& f, const engine::EngineProfile& eng, int64_t tp, int64_t pp, int64_t dp, const std::string& device_id,
                                 std::vector<std::string>& assumptions) {
  if (eng.engine != "vllm" && eng.engine != "vllm-ascend") return Ok{};
  const engine::Version at = eng.rule_version();
  // argparse first: a flag the version's parser lacks stops `vllm serve` before any check below.
  std::vector<engine::GivenFlag> given;
  std::string first_origin;
  const auto add = [&](const char* flag, const auto& g, const std::string& value) {
    if (!g) return;
    given.push_back({flag, value});
    if (first_origin.empty()) first_origin = g->origin;
  };
  add("--data-parallel-size-local", f.data_parallel_size_local, f.data_parallel_size_local ? std::to_string(f.data_parallel_size_local->value) : "");
  add("--data-parallel-address", f.data_parallel_address, f.data_parallel_address ? f.data_parallel_address->value : "");
  add("--data-parallel-rpc-port", f.data_parallel_rpc_port, f.data_parallel_rpc_port ? std::to_string(f.data_parallel_rpc_port->value) : "");
  add("--data-parallel-start-rank", f.data_parallel_start_rank, f.data_parallel_start_rank ? std::to_string(f.data_parallel_start_rank->value) : "");
  add("--data-parallel-backend", f.data_parallel_backend, f.data_parallel_backend ? f.data_parallel_backend->value : "");
  add("--api-server-count", f.api_server_count, f.api_server_count ? std::to_string(f.api_server_count->value) : "");
  if (on(f.headless)) add("--headless", f.headless, "");
  if (on(f.data_parallel_hybrid_lb)) add("--data-parallel-hybrid-lb", f.data_parallel_hybrid_lb, "");
  if (on(f.data_parallel_external_lb)) add("--data-parallel-external-lb", f.data_parallel_external_lb, "");
  if (given.empty()) return Ok{};
  if (const auto& catalog = engine::shipped_flag_versions(); catalog) {
    if (const std::string refusal = engine::unrecognized_flags_refusal(*catalog, eng.engine, at, given); !refusal.empty())
      return make_error(ErrorKind::invalid_argument, format("%s: %s (%s %s: %s)", first_origin.c_str(), refusal.c_str(), eng.engine.c_str(), at.text().c_str(),
                                                            catalog->origin.c_str()));
  }
  const bool headless = runs_headless(f);
  // serve.py run_headless: "if local_engine_count <= 0: raise ..." (PR #15977, 0.9.0 a RuntimeError; PR #17546, 0.9.1 on, a ValueError).
  if (headless && f.data_parallel_size_local && f.data_parallel_size_local->value <= 0)
    return make_error(ErrorKind::invalid_argument, format("%s: %s: data_parallel_size_local must be > 0 in headless mode", f.data_parallel_size_local->origin.c_str(),
                                                          at < version("0.9.1") ? "RuntimeError" : "ValueError"));
  if (on(f.headless) && f.api_server_count) {
    const int64_t n = f.api_server_count->value;
    // serve.py ServeSubcommand.cmd, PR #32525 (commit 803e3f3f6, merged 2026-01-22, after 0.14.0): any count above 0;
    // before it run_headless refused a count above 1 (PR #17546).
    if (!(at < version("0.15.0")) && n > 0)
      return make_error(ErrorKind::invalid_argument, format("%s: ValueError: --api-server-count=%lld cannot be used with --headless (no API servers are started in "
                                                            "headless mode).", f.api_server_count->origin.c_str(), static_cast<long long>(n)));
    if (at < version("0.15.0") && n > 1)
      return make_error(ErrorKind::invalid_argument, format("%s: ValueError: api_server_count can't be set in headless mode", f.api_server_count->origin.c_str()));
  }
  // arg_utils.py create_engine_config (PR #21238, 0.10.0 on): assert not headless or not self.data_parallel_hybrid_lb.
  if (headless && on(f.data_parallel_hybrid_lb))
    return make_error(ErrorKind::invalid_argument, format("%s: AssertionError: data_parallel_hybrid_lb is not applicable in headless mode", f.data_parallel_hybrid_lb->origin.c_str()));
  // arg_utils.py: hybrid LB needs the local size (an assert from PR #21238; PR #49124, merged 2026-07-24 after 0.26.0,
  // a ValueError with its own wording).
  if (on(f.data_parallel_hybrid_lb) && !on(f.data_parallel_external_lb) && !f.data_parallel_size_local) {
    const std::string message = at < version("0.27.0") ? "AssertionError: data_parallel_size_local must be set to use data_parallel_hybrid_lb."
                                                       : "ValueError: Invalid data-parallel launch options: `--data-parallel-hybrid-lb` requires "
                                                         "`--data-parallel-size-local`. Set it to the number of data-parallel ranks on this node.";
    return make_error(ErrorKind::invalid_argument, f.data_parallel_hybrid_lb->origin + ": " + message);
  }
  // serve.py, PR #19790 (commit 657f2f301, merged 2025-07-02; 0.9.2) refused a start rank on a node with an API server;
  // PR #21238 (0.10.0) reads it as hybrid load balancing instead. 0.9.0 and 0.9.1 ignore it there.
  if (!headless && f.data_parallel_start_rank && f.data_parallel_start_rank->value != 0 && version("0.9.2") <= at && at < version("0.10.0"))
    return make_error(ErrorKind::invalid_argument, format("%s: ValueError: data_parallel_start_rank is only applicable in headless mode", f.data_parallel_start_rank->origin.c_str()));
  // ParallelConfig.data_parallel_backend: DataParallelBackend = Literal['ray', 'mp'] (an assert in 0.9.1's arg_utils.py).
  if (const auto& b = f.data_parallel_backend; b && b->value != "mp" && b->value != "ray")
    return make_error(ErrorKind::invalid_argument, format("%s: expected mp or ray (vLLM ParallelConfig.data_parallel_backend), found '%s'", b->origin.c_str(), clip_text(b->value, 60).c_str()));
  if (const auto& s = f.data_parallel_start_rank; s && (s->value < 0 || s->value >= dp))
    return make_error(ErrorKind::invalid_argument, format("%s: data parallel start rank %lld is outside the %lld ranks of --data-parallel-size (0..%lld)", s->origin.c_str(),
                                                          static_cast<long long>(s->value), static_cast<long long>(dp), static_cast<long long>(dp - 1)));
  const DataParallelNode node = data_parallel_node(f, tp, pp, dp);
  // Issue 19 (hard33): compared without the sum, which overflowed (start rank 2^63 - 2 with 2^63 - 1 local ranks printed
  // "DP ranks 9223372036854775806--4" and passed); the start rank is in 0 .. dp - 1 here.
  if (node.local_ranks > dp - node.start_rank) {
    int64_t last = 0;
    const std::string last_text = __builtin_add_overflow(node.start_rank, node.local_ranks - 1, &last)
                                      ? format("%lld + %lld - 1", static_cast<long long>(node.start_rank), static_cast<long long>(node.local_ranks))
                                      : std::to_string(last);
    return make_error(ErrorKind::invalid_argument, format("%s: ranks %lld..%s of this node pass the %lld ranks of --data-parallel-size", first_origin.c_str(),
                                                          static_cast<long long>(node.start_rank), last_text.c_str(), static_cast<long long>(dp)));
  }
  // --data-parallel-size-local 0 on a head: the API server alone, every engine on other nodes (vllm-ascend RFC #649's
  // "only the API server on the first node" start).
  const std::string ranks = node.local_ranks == 0 ? std::string("no DP rank") : node.local_ranks == 1 ? format("DP rank %lld", static_cast<long long>(node.start_rank))
                                                  : format("DP ranks %lld-%lld", static_cast<long long>(node.start_rank), static_cast<long long>(node.start_rank + node.local_ranks - 1));
  assumptions.push_back(format("this node: %s of %lld, %lld x %s (TP %lld x PP %lld per rank); %s; every rank sizes its own KV cache and prints its own lines: the "
                               "memory and KV figures are each rank's",
                               ranks.c_str(), static_cast<long long>(dp), static_cast<long long>(node.devices), device_id.c_str(), static_cast<long long>(tp),
                               static_cast<long long>(pp),
                               node.api_server ? "the API server runs here (a frontend process, no device memory on CUDA)"
                                               : "headless: engines only, no API server (serve.py run_headless)"));
  // arg_utils.py: without --data-parallel-address the mp backend takes ParallelConfig.data_parallel_master_ip, 127.0.0.1,
  // which no other node reaches (the ray backend takes the host's IP); vLLM refuses nothing, the ranks wait for a handshake.
  const bool backend_ray = f.data_parallel_backend && f.data_parallel_backend->value == "ray";
  if (node.local_ranks < dp && !f.data_parallel_address && !backend_ray)
    assumptions.push_back(format("no --data-parallel-address on a start of %lld of %lld DP ranks: vLLM takes 127.0.0.1 (ParallelConfig.data_parallel_master_ip), "
                                 "which the other nodes cannot reach; give every node the head node's address",
                                 static_cast<long long>(node.local_ranks), static_cast<long long>(dp)));
  return Ok{};
}

}  // namespace preflight::deploy
