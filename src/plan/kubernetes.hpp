// plan/kubernetes: Kubernetes manifests for a planned candidate, for a cluster that already runs an
// orchestrator. One node: a Deployment and a Service. A layout that spans nodes: a LeaderWorkerSet
// (kubernetes-sigs/lws, leaderworkerset.x-k8s.io/v1) with the leader and worker pods, and a Service
// on the leader. Every pod runs the candidate's own start lines (plan/launch) in a bash script: the
// environment (toolkit, ATB with the matching cxx_abi, exports) first, then `ray start` or the
// engine, so what a pod runs is what `plan` prints. Devices come from the device plugin's extended
// resource (`nvidia.com/gpu`, `huawei.com/Ascend910`), /dev/shm is a memory-backed emptyDir, and the
// probes ask the server's /health. The manifests are JSON records (report/yaml renders them).
#pragma once

#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

struct KubernetesOptions {
  std::string name;                 // resource name (DNS label); empty = from the served model name
  std::string image;                // empty = the engine's published image for the platform
  std::string platform = "cuda";    // cuda | npu: the device resource and the host mounts
  int64_t devices_per_node = 8;     // the planner's node size (TP inside a node)
  int64_t port = 8000;              // vLLM's default port
  std::string shm_size = "16Gi";    // the /dev/shm emptyDir's sizeLimit
  int64_t data_parallel_size = 1;   // replicas when the launch is native data parallel (plan::with_data_parallel)
};

struct KubernetesManifests {
  std::vector<Json> objects;        // in apply order
  std::vector<std::string> notes;   // what to check before applying, with sources
};

// A DNS-1123 label from any text: lowercase, [a-z0-9-], at most 63 characters, no dash at either end.
std::string dns_label(const std::string& text);

// The manifests for the candidate's launch (c.launch). A candidate for llama.cpp gets a Deployment too.
// Native data parallel across nodes: the leader serves the API, the workers run --headless with
// NODE_RANK = LWS_WORKER_INDEX (set by LWS in every pod).
KubernetesManifests build_kubernetes(const Candidate& candidate, const KubernetesOptions& options);

}  // namespace preflight::plan
