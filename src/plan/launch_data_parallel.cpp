// Native data parallel start commands (vLLM's --data-parallel-size on one node; the head and --headless nodes over
// several), split from launch.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "base/units.hpp"
#include "plan/launch.hpp"

namespace preflight::plan {

Expected<DataParallelLayout> data_parallel_layout(const Candidate& c, int64_t devices_per_node, int64_t size) {
  if (size < 1) return make_error(ErrorKind::invalid_argument, format("--data-parallel: expected at least 1 replica, found %lld", static_cast<long long>(size)));
  if (c.launch->serve.rfind("vllm serve", 0) != 0) return make_error(ErrorKind::invalid_argument, "--data-parallel: native data parallel is vLLM's; this start is not vllm serve");
  if (!c.launch->nodes.empty() || c.num_devices > devices_per_node) {
    return make_error(ErrorKind::invalid_argument, format("--data-parallel: one replica takes %lld devices across nodes (PP over nodes runs on Ray); native data parallel "
                                                          "needs a replica inside one node of %lld", static_cast<long long>(c.num_devices),
                                                          static_cast<long long>(devices_per_node)));
  }
  DataParallelLayout d;
  d.replica_devices = std::max<int64_t>(1, c.num_devices);
  d.local = std::min(size, devices_per_node / d.replica_devices);
  d.nodes = (size + d.local - 1) / d.local;
  if (size % d.local != 0) {
    return make_error(ErrorKind::invalid_argument, format("--data-parallel: %lld replicas of %lld device(s) fill %lld per node; expected a multiple of %lld",
                                                          static_cast<long long>(size), static_cast<long long>(d.replica_devices), static_cast<long long>(d.local),
                                                          static_cast<long long>(d.local)));
  }
  return d;
}

Expected<Launch> with_data_parallel(const Candidate& c, int64_t devices_per_node, const DataParallelOptions& o) {
  PF_TRY(d, data_parallel_layout(c, devices_per_node, o.size));
  Launch l = *c.launch;
  const std::string ep = o.expert_parallel ? " --enable-expert-parallel" : "";
  const std::string source = "vLLM docs, Data Parallel Deployment (https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html)";
  if (d.nodes == 1) {
    l.serve += format(" --data-parallel-size %lld", static_cast<long long>(o.size)) + ep;
    l.notes.push_back(format("--data-parallel-size %lld: %lld replicas of %lld device(s) on one node behind one API server (%s)", static_cast<long long>(o.size),
                             static_cast<long long>(o.size), static_cast<long long>(d.replica_devices), source.c_str()));
    return l;
  }
  const std::string dp = format(" --data-parallel-size %lld --data-parallel-size-local %lld", static_cast<long long>(o.size), static_cast<long long>(d.local));
  const std::string address = format(" --data-parallel-address ${HEAD_IP:?set HEAD_IP to the head node address} --data-parallel-rpc-port %lld",
                                     static_cast<long long>(o.rpc_port));
  std::vector<std::string> common = l.shell;
  for (const auto& env : l.env) common.push_back("export " + env);
  NodeCommands head{"head", common}, worker{"worker", common};
  worker.lines.push_back(l.serve + " --headless" + dp +
                         format(" --data-parallel-start-rank $((${NODE_RANK:?set NODE_RANK to this node index, 1..%lld} * %lld))", static_cast<long long>(d.nodes - 1),
                                static_cast<long long>(d.local)) +
                         address + ep);
  l.serve += dp + address + ep;
  l.nodes = {head, worker};
  l.multi_node = {format("# %lld nodes x %lld replicas of %lld device(s) (native data parallel, no Ray): same versions and the model at the same path on every node",
                         static_cast<long long>(d.nodes), static_cast<long long>(d.local), static_cast<long long>(d.replica_devices)),
                  std::any_of(l.env.begin(), l.env.end(), [](const std::string& env) { return env.find("${NIC:") != std::string::npos; })
                      ? "# on every node first: NIC=<interface that carries the nodes' addresses>; HEAD_IP=<head node address>; on the other nodes NODE_RANK=1, 2, ..."
                      : "# on every node first: HEAD_IP=<head node address>; on the other nodes NODE_RANK=1, 2, ...",
                  "# ---- each of the " + std::to_string(d.nodes - 1) + " other node(s) (headless engines) ----"};
  l.multi_node.insert(l.multi_node.end(), worker.lines.begin(), worker.lines.end());
  l.multi_node.push_back("# ---- the head node (API server and its local ranks) ----");
  l.multi_node.insert(l.multi_node.end(), head.lines.begin(), head.lines.end());
  l.notes.push_back(format("native data parallel: %lld replicas, %lld per node over %lld nodes; the head serves the API and ranks 0..%lld, node k runs ranks from "
                           "k x %lld --headless; each node sets up its environment before vllm starts (%s)",
                           static_cast<long long>(o.size), static_cast<long long>(d.local), static_cast<long long>(d.nodes), static_cast<long long>(d.local - 1),
                           static_cast<long long>(d.local), source.c_str()));
  return l;
}

}  // namespace preflight::plan
