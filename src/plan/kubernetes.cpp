#include "plan/kubernetes.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::plan {

namespace {

// The device plugins' extended resource names.
// NVIDIA: https://github.com/NVIDIA/k8s-device-plugin (README, "nvidia.com/gpu").
// Ascend: MindCluster Ascend Device Plugin, https://www.hiascend.com/document/detail/en/mindcluster/730/clustersched/schedulingug/mxdlug_005.html
// (whole 910 NPUs are requested as huawei.com/Ascend910).
const char* device_resource(const std::string& platform) { return platform == "npu" ? "huawei.com/Ascend910" : "nvidia.com/gpu"; }

// Images: vLLM's docs (https://docs.vllm.ai/en/latest/deployment/docker.html, vllm/vllm-openai) and
// vLLM-Ascend's (https://docs.vllm.ai/projects/ascend/en/latest/installation.html, quay.io/ascend/vllm-ascend).
std::string default_image(const Candidate& c, const std::string& platform) {
  if (c.engine_id.rfind("llama.cpp", 0) == 0) return "ghcr.io/ggml-org/llama.cpp:server";
  return platform == "npu" ? "quay.io/ascend/vllm-ascend:latest" : "vllm/vllm-openai:latest";
}

// The driver files an Ascend container reads from the host, as vLLM-Ascend's installation page mounts
// them (https://docs.vllm.ai/projects/ascend/en/v0.13.0/installation.html, docker run -v ...).
const char* const k_ascend_host_paths[] = {"/usr/local/dcmi", "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/lib64", "/usr/local/Ascend/driver/version.info",
                                           "/etc/ascend_install.info"};

std::string served_name(const std::string& id) {
  const auto slash = id.find_last_of('/');
  return to_lower(slash == std::string::npos ? id : id.substr(slash + 1));
}

// The server's command line with the address and port the Service targets. llama-server and
// vllm serve both take --host and --port.
std::string serve_line(const Launch& l, int64_t port) {
  std::string s = l.serve;
  for (const char* flag : {" --host 0.0.0.0", " --port 8000"}) {
    const auto at = s.find(flag);
    if (at != std::string::npos) s.erase(at, std::string(flag).size());
  }
  return s + " --host 0.0.0.0 --port " + std::to_string(port);
}

Json http_probe(int64_t port, int64_t period_s, int64_t failures) {
  return {{"httpGet", {{"path", "/health"}, {"port", port}}}, {"periodSeconds", period_s}, {"failureThreshold", failures}};
}

struct PodParts {
  std::string name, role, script;
  int64_t devices = 1;
  bool serves = true;     // runs the HTTP server (ports and probes)
  std::string model_dir;  // a local checkpoint's folder, mounted from the host; empty for a hub id
};

// The host folder that holds a local (converted) checkpoint: "/models/X-W8A8" -> "/models".
std::string model_dir(const Launch& l) {
  if (l.checkpoint.empty() || l.checkpoint.front() != '/') return "";
  const auto slash = l.checkpoint.find_last_of('/');
  return slash == 0 ? l.checkpoint : l.checkpoint.substr(0, slash);
}

// One container and its volumes: the script in bash, the devices, /dev/shm, the host driver files
// on NPU, and (for the server) the port with /health probes: startup allows 30 minutes of loading.
Json pod_spec(const PodParts& p, const KubernetesOptions& o) {
  Json container = {{"name", p.role},
                    {"image", o.image},
                    {"command", Json::array({"/bin/bash", "-c", p.script})},
                    {"resources", {{"limits", {{device_resource(o.platform), std::to_string(p.devices)}}}}},
                    {"volumeMounts", Json::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}}})}};
  Json volumes = Json::array({{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", o.shm_size}}}}});
  if (o.platform == "npu") {
    int i = 0;
    for (const char* path : k_ascend_host_paths) {
      const std::string v = "ascend-" + std::to_string(i++);
      container["volumeMounts"].push_back({{"name", v}, {"mountPath", path}, {"readOnly", true}});
      volumes.push_back({{"name", v}, {"hostPath", {{"path", path}}}});
    }
  }
  if (!p.model_dir.empty()) {
    container["volumeMounts"].push_back({{"name", "models"}, {"mountPath", p.model_dir}});
    volumes.push_back({{"name", "models"}, {"hostPath", {{"path", p.model_dir}}}});
  }
  if (p.serves) {
    container["ports"] = Json::array({{{"name", "http"}, {"containerPort", o.port}}});
    container["startupProbe"] = http_probe(o.port, 10, 180);
    container["readinessProbe"] = http_probe(o.port, 10, 3);
    container["livenessProbe"] = http_probe(o.port, 30, 5);
  }
  return {{"containers", Json::array({container})}, {"volumes", volumes}};
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

Json service(const std::string& name, const Json& selector, int64_t port) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", name}}},
          {"spec", {{"type", "ClusterIP"}, {"selector", selector}, {"ports", Json::array({{{"name", "http"}, {"port", port}, {"targetPort", port}, {"protocol", "TCP"}}})}}}};
}

KubernetesManifests single_node(const Candidate& c, const KubernetesOptions& o) {
  const Launch& l = *c.launch;
  std::vector<std::string> lines = l.shell;
  for (const auto& e : l.env) lines.push_back("export " + e);
  lines.push_back("exec " + serve_line(l, o.port));
  const Json labels = {{"app.kubernetes.io/name", o.name}};
  const PodParts pod{o.name, "server", join_lines(lines), std::min(c.num_devices * std::max<int64_t>(1, o.data_parallel_size), o.devices_per_node), true,
                     model_dir(l)};
  const Json template_ = {{"metadata", {{"labels", labels}}}, {"spec", pod_spec(pod, o)}};
  const Json spec = {{"replicas", 1}, {"selector", {{"matchLabels", labels}}}, {"template", template_}};
  const Json deployment = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"metadata", {{"name", o.name}, {"labels", labels}}}, {"spec", spec}};
  KubernetesManifests m;
  m.objects = {deployment, service(o.name, labels, o.port)};
  return m;
}

// Ray: the leader waits until every pod of the group has joined before it starts the server
// (LWS_GROUP_SIZE, set by LWS in every pod), as vLLM's multi-node-serving.sh does
// (https://docs.vllm.ai/en/stable/examples/online_serving/multi-node-serving/).
const char* const k_wait_for_group =
    "until [ \"$(python3 -c 'import ray; ray.init(address=\"auto\", logging_level=\"error\"); print(sum(n[\"Alive\"] for n in ray.nodes()))' 2>/dev/null)\" "
    "= \"$LWS_GROUP_SIZE\" ]; do echo waiting for $LWS_GROUP_SIZE ray nodes; sleep 5; done";

KubernetesManifests multi_node(const Candidate& c, const KubernetesOptions& o) {
  const Launch& l = *c.launch;
  // Ray: the candidate's devices over nodes. Native data parallel: whole replicas per node.
  const int64_t dp = std::max<int64_t>(1, o.data_parallel_size);
  const int64_t local = dp > 1 ? std::max<int64_t>(1, std::min(dp, o.devices_per_node / std::max<int64_t>(1, c.num_devices))) : 1;
  const int64_t per_pod = dp > 1 ? local * c.num_devices : std::min(c.num_devices, o.devices_per_node);
  const int64_t pods = dp > 1 ? (dp + local - 1) / local : (c.num_devices + per_pod - 1) / per_pod;
  // LWS sets LWS_LEADER_ADDRESS and LWS_WORKER_INDEX in every pod of the group
  // (https://github.com/kubernetes-sigs/lws/blob/main/site/content/en/docs/reference/labels-annotations-and-environment-variables.md);
  // the interface is the pod's own.
  const std::vector<std::string> pod_env = {"export NIC=${NIC:-eth0}", "export HEAD_IP=$LWS_LEADER_ADDRESS", "export NODE_RANK=$LWS_WORKER_INDEX"};
  std::vector<std::string> leader = pod_env, worker = pod_env;
  bool ray = false;
  for (const auto& n : l.nodes) {
    std::vector<std::string>& to = n.role == "head" ? leader : worker;
    to.insert(to.end(), n.lines.begin(), n.lines.end());
    ray |= !n.lines.empty() && n.lines.back().rfind("ray start", 0) == 0;
  }
  if (ray) {
    // user37 (issue 15): a worker pod can start before the leader's Ray head listens (LWS creates the workers once the
    // leader pod exists, not once it runs) or before its address resolves; one failed `ray start` then restarts the pod
    // and RecreateGroupOnPodRestart the whole group. vLLM's multi-node-serving.sh, which LWS's vLLM example runs, retries
    // the join every 5 s ("Waiting until the ray worker is active...").
    worker.back() = "until " + worker.back() + " --block; do echo waiting for the ray head at $HEAD_IP:6379; sleep 5; done";
    leader.push_back(k_wait_for_group);
  } else if (worker.back().rfind("vllm serve", 0) == 0) {
    worker.back() = "exec " + worker.back();
  }
  leader.push_back("exec " + serve_line(l, o.port));
  const PodParts leader_pod{o.name, "leader", join_lines(leader), per_pod, true, model_dir(l)};
  const PodParts worker_pod{o.name, "worker", join_lines(worker), per_pod, false, model_dir(l)};
  const Json leader_template = {{"metadata", {{"labels", {{"role", "leader"}}}}}, {"spec", pod_spec(leader_pod, o)}};
  const Json worker_template = {{"metadata", {{"labels", {{"role", "worker"}}}}}, {"spec", pod_spec(worker_pod, o)}};
  const Json group = {{"size", pods}, {"restartPolicy", "RecreateGroupOnPodRestart"}, {"leaderTemplate", leader_template}, {"workerTemplate", worker_template}};
  const Json lws = {{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
                    {"kind", "LeaderWorkerSet"},
                    {"metadata", {{"name", o.name}}},
                    {"spec", {{"replicas", 1}, {"leaderWorkerTemplate", group}}}};
  KubernetesManifests m;
  // The LWS controller labels every pod of the set with leaderworkerset.sigs.k8s.io/name
  // (https://github.com/kubernetes-sigs/lws/blob/main/docs/examples/vllm/GPU/lws.yaml selects the leader so).
  m.objects = {lws, service(o.name, {{"leaderworkerset.sigs.k8s.io/name", o.name}, {"role", "leader"}}, o.port)};
  m.notes.push_back(format("%lld pods of %lld x %s (LeaderWorkerSet size %lld): needs the LWS controller (https://github.com/kubernetes-sigs/lws); "
                           "NIC defaults to the pod's eth0, set NIC in the pod env for a secondary (RDMA) network",
                           static_cast<long long>(pods), static_cast<long long>(per_pod), device_resource(o.platform), static_cast<long long>(pods)));
  return m;
}

}  // namespace

std::string dns_label(const std::string& text) {
  std::string s;
  for (char ch : to_lower(text)) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (ok) s += ch;
    else if (!s.empty() && s.back() != '-') s += '-';
  }
  if (s.size() > 63) s.resize(63);
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "preflight" : s;
}

KubernetesManifests build_kubernetes(const Candidate& c, const KubernetesOptions& options) {
  KubernetesOptions o = options;
  o.name = dns_label(o.name.empty() ? served_name(c.model_id) : o.name);
  if (o.image.empty()) o.image = default_image(c, o.platform);
  KubernetesManifests m = c.launch->nodes.empty() ? single_node(c, o) : multi_node(c, o);
  m.notes.insert(m.notes.begin(), format("%s: %s on %lld x %s (%s), image %s; pin the image tag to the engine version the plan was sized for (%s)", o.name.c_str(),
                                         c.model_id.c_str(), static_cast<long long>(c.num_devices), c.device_id.c_str(), c.variant.c_str(), o.image.c_str(),
                                         c.engine_id.c_str()));
  if (!c.launch->prepare.empty())
    m.notes.push_back("convert the checkpoint first (plan's prepare lines) into " + c.launch->checkpoint + " on every node: the pods mount " + model_dir(*c.launch) +
                      " from the host");
  if (o.platform == "npu")
    m.notes.push_back("NPUs through the Ascend device plugin (huawei.com/Ascend910); driver files mounted read-only from the host as vLLM-Ascend's docker run does");
  return m;
}

}  // namespace preflight::plan
