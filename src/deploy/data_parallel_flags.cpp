// deploy/data_parallel_flags: vLLM's multi-node data-parallel flags (issue 15, multinode32) checked as the engine's
// version checks them, and the node a start describes. Sources: vllm/engine/arg_utils.py create_engine_config and
// vllm/entrypoints/cli/serve.py (ServeSubcommand.cmd, run_headless) in the vLLM history, commits named below; the first
// release of each flag is data (data/engines/flag_versions.json).
#include <algorithm>
#include <cstdint>
#include <optional>

#include "base/quote.hpp"
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

// Issue 19 (hard34): the DP rank vLLM infers from --node-rank, node_rank x local world size // (TP x PP), as Python
// computes it: exact (128 bits; node rank -2^63 times a local world of 2 wrapped to 0 in 64, and fit said "fits") and
// floored (-1 x 2 // 1 is -2; C++ division truncates toward zero).
__int128 inferred_rank_of(int64_t node_rank, int64_t local_world, int64_t within) {
  const __int128 product = static_cast<__int128>(node_rank) * local_world;
  __int128 q = product / within;
  if (product % within != 0 && product < 0) --q;
  return q;
}

std::string int128_text(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  for (; u > 0; u /= 10) digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
  return negative ? "-" + digits : digits;
}

int64_t clamped(__int128 v) { return v < INT64_MIN ? INT64_MIN : v > INT64_MAX ? INT64_MAX : static_cast<int64_t>(v); }

}  // namespace

DataParallelNode data_parallel_node(const Flags& f, int64_t tp, int64_t pp, int64_t dp) {
  DataParallelNode n;
  const int64_t within = std::max<int64_t>(1, tp * pp);
  // arg_utils.py create_engine_config (PR #23691, 0.11.1): --nnodes N > 1 splits the world (DP x TP x PP) evenly over the
  // N nodes; the node's DP rank is inferred as node_rank x (world / N) // (TP x PP) and, without a local size, it runs
  // max((world / N) // (TP x PP), 1) ranks: one replica's share of a node where a replica spans nodes.
  int64_t inferred_rank = 0, local_world = 0;
  if (f.nnodes && f.nnodes->value > 1) {
    n.nnodes = f.nnodes->value;
    n.node_rank = f.node_rank ? f.node_rank->value : 0;
    local_world = dp * within / n.nnodes;
    inferred_rank = clamped(inferred_rank_of(n.node_rank, local_world, within));  // out of range: refused by parallel_config_refusal
    n.replica_spans_nodes = within > local_world;
  }
  // An external-LB start (--data-parallel-rank, or --data-parallel-external-lb) runs one rank: --data-parallel-rank's,
  // or with --nnodes and DP > 1 the inferred one; else --data-parallel-size-local (inferred with --nnodes), else the DP
  // size, from --data-parallel-start-rank or the inferred rank ("self.data_parallel_start_rank or inferred_data_parallel_rank").
  if (f.data_parallel_rank || on(f.data_parallel_external_lb)) {
    n.local_ranks = 1;
    n.start_rank = n.nnodes > 1 && dp > 1 && on(f.data_parallel_external_lb) ? inferred_rank : f.data_parallel_rank ? f.data_parallel_rank->value : 0;
  } else {
    if (f.data_parallel_size_local) n.local_ranks = f.data_parallel_size_local->value;
    else n.local_ranks = n.nnodes > 1 ? std::max<int64_t>(1, local_world / within) : dp;
    n.start_rank = f.data_parallel_start_rank && f.data_parallel_start_rank->value != 0 ? f.data_parallel_start_rank->value : inferred_rank;
  }
  n.api_server = !runs_headless(f);
  n.devices = n.replica_spans_nodes ? local_world : std::max<int64_t>(0, n.local_ranks) * within;
  return n;
}

namespace {

// Issue 15 (graph34): vLLM PR #40839 (commit 577b9623e, 2026-05-04; in the v0.21.0rc1 - v0.23.1rc0 tags' arg_utils.py,
// not in v0.20.2's): "data_parallel_external_lb = self.data_parallel_external_lb or self.data_parallel_rank is not None",
// then, after the --nnodes asserts and before the rank and local-size asserts, a ValueError where DP > 1 and not
// model_config.is_moe (get_num_experts() > 0). Hybrid LB's switch to external at one local rank comes after it, so a
// hybrid start is not refused. "" when it does not apply.
std::string non_moe_external_refusal(const Flags& f, const engine::Version& at, int64_t dp, int64_t num_experts) {
  const bool external = f.data_parallel_rank || on(f.data_parallel_external_lb);
  if (!external || dp <= 1 || num_experts > 0 || at < version("0.21.0")) return "";
  const auto& origin = f.data_parallel_rank ? f.data_parallel_rank->origin : f.data_parallel_external_lb->origin;
  return origin + ": ValueError: Non-MoE models do not support external data parallel mode. For external load balancing, launch independent vLLM "
                  "instances without --data-parallel-* arguments.";
}

// Issue 15 (dpep33): vLLM's refusals of --data-parallel-rank, --nnodes and --node-rank (arg_utils.py create_engine_config
// at v0.9.2 - v0.23.0 (the efschu/vllm release tags) and PR #49124 (commit 453f01783, merged 2026-07-24, taken as 0.27.0
// as the hybrid-LB message above), which turned the asserts into ValueErrors with new words; ParallelConfig.__post_init__
// for the rank's range). "" when the start passes them.
std::string external_rank_refusal(const Flags& f, const engine::Version& at, int64_t tp, int64_t pp, int64_t dp, int64_t num_experts) {
  const bool new_words = !(at < version("0.27.0"));
  const auto ll = [](int64_t v) { return static_cast<long long>(v); };
  if (on(f.data_parallel_hybrid_lb) && on(f.data_parallel_external_lb))
    return f.data_parallel_external_lb->origin + ": " +
           (new_words ? "ValueError: Invalid data-parallel launch options: `--data-parallel-hybrid-lb` and `--data-parallel-external-lb` cannot be enabled "
                        "together. Enable only one load-balancing mode."
                      : "AssertionError: data_parallel_hybrid_lb and data_parallel_external_lb cannot both be True.");
  const int64_t nnodes = f.nnodes ? f.nnodes->value : 1;
  const bool backend_ray = f.data_parallel_backend && f.data_parallel_backend->value == "ray";
  if (nnodes > 1 && backend_ray)
    return f.nnodes->origin + ": " +
           (new_words ? format("ValueError: Invalid data-parallel launch options: `--nnodes %lld` requires `--data-parallel-backend mp`; got "
                               "`--data-parallel-backend ray`. Use the MP backend or set `--nnodes 1`.", ll(nnodes))
                      : std::string("AssertionError: nnodes > 1 is only supported with data_parallel_backend=mp"));
  const int64_t node_rank = f.node_rank ? f.node_rank->value : 0;
  if (nnodes > 1) {
    const int64_t world = dp * tp * pp;
    if (world % nnodes != 0)
      return f.nnodes->origin + ": " +
             (new_words ? format("ValueError: Invalid data-parallel launch options: `--nnodes %lld` must evenly divide the total world size (%lld). Adjust "
                                 "`--nnodes`, `--data-parallel-size`, `--pipeline-parallel-size`, or `--tensor-parallel-size`.", ll(nnodes), ll(world))
                        : format("AssertionError: world_size=%lld must be divisible by nnodes=%lld.", ll(world), ll(nnodes)));
    if (node_rank >= nnodes || (new_words && node_rank < 0))
      return (f.node_rank ? f.node_rank->origin : f.nnodes->origin) + ": " +
             (new_words ? format("ValueError: Invalid data-parallel launch options: `--node-rank` must be between 0 and %lld; got `--node-rank %lld`. Set it "
                                 "to this node's zero-based index.", ll(nnodes - 1), ll(node_rank))
                        : format("AssertionError: node_rank=%lld must be less than nnodes=%lld.", ll(node_rank), ll(nnodes)));
  }
  const bool external = f.data_parallel_rank || on(f.data_parallel_external_lb);
  if (!external) return "";
  if (const std::string why = non_moe_external_refusal(f, at, dp, num_experts); !why.empty()) return why;
  const bool rank_known = f.data_parallel_rank || (nnodes > 1 && dp > 1);
  if (!rank_known)
    return f.data_parallel_external_lb->origin + ": " +
           (new_words ? "ValueError: Invalid data-parallel launch options: `--data-parallel-external-lb` requires a data-parallel rank. Set "
                        "`--data-parallel-rank`, or set `--data-parallel-size` greater than 1 and use `--nnodes` with `--node-rank` so the rank can be inferred."
                      // 0.11.1 and 0.11.2 print the message with its typo (PR #23691); 0.12.0 has "specified".
                      : format("AssertionError: data_parallel_rank or node_rank must be %s if data_parallel_external_lb is enable.",
                               at < version("0.12.0") ? "spefified" : "specified"));
  if (const auto& local = f.data_parallel_size_local; local && local->value != 1) {
    const std::string message = new_words ? format("ValueError: Invalid data-parallel launch options: an external data-parallel rank requires "
                                                   "`--data-parallel-size-local 1`; got %lld. Set it to 1 or omit it.", ll(local->value))
                                : at < version("0.11.1") ? "AssertionError: data_parallel_size_local must be 1 when data_parallel_rank is set"
                                                         : "AssertionError: data_parallel_size_local must be 1 or None when data_parallel_rank is set";
    return local->origin + ": " + message;
  }
  return "";
}

// Issue 19 (hard34): the checks ParallelConfig makes of the rank create_engine_config hands it (an explicit
// --data-parallel-rank, or with --nnodes > 1 the rank inferred from --node-rank, "self.data_parallel_rank or 0"), where
// an inferred one was not checked (--node-rank -1 of 2 nodes at DP 4: vLLM 0.19 stops with "data_parallel_rank (-2) must
// be in the range [0, 4)", fit said "fits"): from 0.23.0 (PR #44057, commit 99ef65290, merged 2026-06-04) pydantic's
// field bounds first (data_parallel_rank >= 0, node_rank >= 0, nnodes >= 1; every failing field listed, in the class's
// order), then ParallelConfig.__post_init__ (0.9.2 on, where DP is set: DP > 1) the rank's range. "" when they pass.
std::string parallel_config_refusal(const Flags& f, const engine::Version& at, int64_t tp, int64_t pp, int64_t dp) {
  const int64_t nnodes = f.nnodes ? f.nnodes->value : 1, node_rank = f.node_rank ? f.node_rank->value : 0;
  std::optional<__int128> rank;
  std::string rank_origin;
  if (f.data_parallel_rank) {
    rank = f.data_parallel_rank->value;
    rank_origin = f.data_parallel_rank->origin;
  } else if (nnodes > 1 && ((on(f.data_parallel_external_lb) && dp > 1) || !(f.data_parallel_start_rank && f.data_parallel_start_rank->value != 0))) {
    const int64_t within = std::max<int64_t>(1, tp * pp);
    rank = inferred_rank_of(node_rank, dp * within / nnodes, within);
    rank_origin = f.node_rank ? f.node_rank->origin : f.nnodes->origin;
  }
  if (!(at < version("0.23.0"))) {
    std::vector<std::string> fields;
    std::string first_origin;
    const auto below = [&](const char* field, __int128 value, int least, const std::string& origin) {
      if (value >= least) return;
      fields.push_back(format("%s\n  Input should be greater than or equal to %d [type=greater_than_equal, input_value=%s, input_type=int]", field, least,
                              int128_text(value).c_str()));
      if (first_origin.empty()) first_origin = origin;
    };
    if (rank) below("data_parallel_rank", *rank, 0, rank_origin);
    if (f.node_rank) below("node_rank", node_rank, 0, f.node_rank->origin);
    if (f.nnodes) below("nnodes", nnodes, 1, f.nnodes->origin);
    if (!fields.empty()) {
      std::string message = format("%s: pydantic_core._pydantic_core.ValidationError: %zu validation error%s for ParallelConfig", first_origin.c_str(), fields.size(),
                                   fields.size() == 1 ? "" : "s");
      for (const auto& field : fields) message += "\n" + field;
      return message;
    }
  }
  if (rank && dp > 1 && (*rank < 0 || *rank >= dp))
    return rank_origin + ": " + format("ValueError: data_parallel_rank (%s) must be in the range [0, %lld)", int128_text(*rank).c_str(), static_cast<long long>(dp));
  return "";
}

}  // namespace

std::optional<Error> non_moe_external_data_parallel_refusal(const Flags& f, const engine::EngineProfile& eng, int64_t dp, int64_t num_experts) {
  if (eng.engine != "vllm" && eng.engine != "vllm-ascend") return std::nullopt;
  const std::string why = non_moe_external_refusal(f, eng.rule_version(), dp, num_experts);
  if (why.empty()) return std::nullopt;
  return make_error(ErrorKind::invalid_argument, why);
}

Status check_data_parallel_flags(const Flags& f, const engine::EngineProfile& eng, int64_t tp, int64_t pp, int64_t dp, int64_t num_experts,
                                 const std::string& device_id, std::vector<std::string>& assumptions) {
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
  add("--data-parallel-rank", f.data_parallel_rank, f.data_parallel_rank ? std::to_string(f.data_parallel_rank->value) : "");
  add("--nnodes", f.nnodes, f.nnodes ? std::to_string(f.nnodes->value) : "");
  add("--node-rank", f.node_rank, f.node_rank ? std::to_string(f.node_rank->value) : "");
  add("--master-addr", f.master_addr, f.master_addr ? f.master_addr->value : "");
  add("--master-port", f.master_port, f.master_port ? std::to_string(f.master_port->value) : "");
  if (given.empty()) return Ok{};
  if (const auto& catalog = engine::shipped_flag_versions(); catalog) {
    if (const std::string refusal = engine::unrecognized_flags_refusal(*catalog, eng.engine, at, given); !refusal.empty())
      return make_error(ErrorKind::invalid_argument, format("%s: %s (%s %s: %s)", first_origin.c_str(), refusal.c_str(), eng.engine.c_str(), at.text().c_str(),
                                                            catalog->origin.c_str()));
  }
  // Issue 19 (hard33's leftover): argparse takes any int here; the head node's sockets cannot bind outside 0-65535.
  for (const auto* port : {&f.data_parallel_rpc_port, &f.master_port})
    if (*port && ((*port)->value < 0 || (*port)->value > 65535))
      return make_error(ErrorKind::invalid_argument, format("%s: %lld is not a TCP port (0-65535): the head node's socket cannot bind to it", (*port)->origin.c_str(),
                                                            static_cast<long long>((*port)->value)));
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
    return make_error(ErrorKind::invalid_argument, format("%s: expected mp or ray (vLLM ParallelConfig.data_parallel_backend), found '%s'", b->origin.c_str(), one_line(b->value, 60).c_str()));
  if (const std::string why = external_rank_refusal(f, at, tp, pp, dp, num_experts); !why.empty()) return make_error(ErrorKind::invalid_argument, why);
  if (const std::string why = parallel_config_refusal(f, at, tp, pp, dp); !why.empty()) return make_error(ErrorKind::invalid_argument, why);
  if (const auto& s = f.data_parallel_start_rank; s && (s->value < 0 || s->value >= dp))
    return make_error(ErrorKind::invalid_argument, format("%s: data parallel start rank %lld is outside the %lld ranks of --data-parallel-size (0..%lld)", s->origin.c_str(),
                                                          static_cast<long long>(s->value), static_cast<long long>(dp), static_cast<long long>(dp - 1)));
  const DataParallelNode node = data_parallel_node(f, tp, pp, dp);
  // Issue 19 (hard33): compared without the sum, which overflowed (start rank 2^63 - 2 with 2^63 - 1 local ranks printed
  // "DP ranks 9223372036854775806--4" and passed); the start rank is in 0 .. dp - 1 here.
  if (static_cast<__int128>(node.local_ranks) > static_cast<__int128>(dp) - node.start_rank) {  // hard34: 128 bits, a start below 0 (DP 1) included
    int64_t last = 0;
    const std::string last_text = __builtin_add_overflow(node.start_rank, node.local_ranks - 1, &last)
                                      ? format("%lld + %lld - 1", static_cast<long long>(node.start_rank), static_cast<long long>(node.local_ranks))
                                      : std::to_string(last);
    return make_error(ErrorKind::invalid_argument, format("%s: ranks %lld..%s of this node pass the %lld ranks of --data-parallel-size", first_origin.c_str(),
                                                          static_cast<long long>(node.start_rank), last_text.c_str(), static_cast<long long>(dp)));
  }
  // --data-parallel-size-local 0 on a head: the API server alone, every engine on other nodes (vllm-ascend RFC #649's
  // "only the API server on the first node" start).
  std::string ranks = node.local_ranks == 0 ? std::string("no DP rank") : node.local_ranks == 1 ? format("DP rank %lld", static_cast<long long>(node.start_rank))
                                             : format("DP ranks %lld-%lld", static_cast<long long>(node.start_rank), static_cast<long long>(node.start_rank + node.local_ranks - 1));
  // Issue 15 (dpep33): --nnodes / --node-rank, the node's place in the world vLLM split over the nodes.
  if (node.replica_spans_nodes)
    ranks = format("node rank %lld of %lld nodes, its share of DP rank %lld (one replica's TP x PP ranks span %lld nodes; headless nodes run workers only)",
                   static_cast<long long>(node.node_rank), static_cast<long long>(node.nnodes), static_cast<long long>(node.start_rank),
                   static_cast<long long>(std::max<int64_t>(1, tp * pp / std::max<int64_t>(1, node.devices))));
  else if (node.nnodes > 1)
    ranks = format("node rank %lld of %lld nodes, %s", static_cast<long long>(node.node_rank), static_cast<long long>(node.nnodes), ranks.c_str());
  assumptions.push_back(format("this node: %s of %lld, %lld x %s (TP %lld x PP %lld per rank); %s; every rank sizes its own KV cache and prints its own lines: the "
                               "memory and KV figures are each rank's",
                               ranks.c_str(), static_cast<long long>(dp), static_cast<long long>(node.devices), device_id.c_str(), static_cast<long long>(tp),
                               static_cast<long long>(pp),
                               node.api_server ? "the API server runs here (a frontend process, no device memory on CUDA)"
                                               : "headless: engines only, no API server (serve.py run_headless)"));
  // arg_utils.py: without --data-parallel-address the mp backend takes ParallelConfig.data_parallel_master_ip, 127.0.0.1,
  // which no other node reaches (the ray backend takes the host's IP); vLLM refuses nothing, the ranks wait for a handshake.
  const bool backend_ray = f.data_parallel_backend && f.data_parallel_backend->value == "ray";
  // With --master-addr (0.11.1) the mp backend takes it instead ("self.master_addr or ParallelConfig.data_parallel_master_ip").
  if (node.local_ranks < dp && !f.data_parallel_address && !f.master_addr && !backend_ray)
    assumptions.push_back(format("no --data-parallel-address on a start of %lld of %lld DP ranks: vLLM takes 127.0.0.1 (ParallelConfig.data_parallel_master_ip), "
                                 "which the other nodes cannot reach; give every node the head node's address",
                                 static_cast<long long>(node.local_ranks), static_cast<long long>(dp)));
  return Ok{};
}

}  // namespace preflight::deploy
