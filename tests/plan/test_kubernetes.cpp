// Issue 18: `plan --kubernetes` writes manifests for an existing orchestrator: a Deployment and a
// Service for one node, a LeaderWorkerSet and a Service across nodes. The records are checked here
// field by field; the written YAML is checked against the Kubernetes schemas by tests/kubernetes
// (kubernetes-models for Deployment/Service, the LWS CRD's openAPIV3Schema with ajv for
// LeaderWorkerSet), and read back to the same records.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json_util.hpp"
#include "plan/kubernetes.hpp"
#include "report/yaml.hpp"
#include "../bench/service.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

const std::vector<std::string> k_env_lines = {"set +u", "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
                                              "source /usr/local/Ascend/nnal/atb/set_env.sh --cxx_abi=1"};

plan::Candidate single_gpu() {
  plan::Candidate c;
  c.model_id = "Qwen/Qwen3-8B";
  c.device_id = "H100-SXM";
  c.engine_id = "vllm@0.30";
  c.num_devices = 2;
  plan::Launch l;
  l.shell = {"echo set-up"};
  l.env = {"VLLM_USE_MODELSCOPE=true"};
  l.serve = "vllm serve Qwen/Qwen3-8B --served-model-name qwen3-8b --tensor-parallel-size 2";
  c.launch = l;
  return c;
}

// 16 NPUs, TP 8 x PP 2 on Ray: the head and worker blocks plan/launch writes.
plan::Candidate two_npu_nodes() {
  plan::Candidate c;
  c.model_id = "Qwen/Qwen3-235B-A22B";
  c.device_id = "910B4";
  c.engine_id = "vllm-ascend@0.23";
  c.num_devices = 16;
  c.tensor_parallel_size = 8;
  c.pipeline_parallel_size = 2;
  plan::Launch l;
  l.checkpoint = "/models/Qwen3-235B-A22B-W8A8";
  l.serve = "vllm serve /models/Qwen3-235B-A22B-W8A8 --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray";
  std::vector<std::string> head = k_env_lines, worker = k_env_lines;
  head.push_back("ray start --head --port=6379");
  worker.push_back("ray start --address=${HEAD_IP:?set HEAD_IP}:6379");
  l.nodes = {{"head", head}, {"worker", worker}};
  c.launch = l;
  return c;
}

std::vector<std::string> script_lines(const Json& container) {
  std::vector<std::string> lines;
  std::stringstream ss(container["command"][2].get<std::string>());
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

size_t index_of(const std::vector<std::string>& lines, const std::string& prefix) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind(prefix, 0) == 0) return i;
  return lines.size();
}

// A command line's exit code and stdout.
pftest::CliRun run_shell(const std::string& cmd) {
  pftest::CliRun r;
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) r.out += buf;
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

TEST(Kubernetes, Issue18_OneNodeIsDeploymentAndService) {
  const auto m = plan::build_kubernetes(single_gpu(), {});
  ASSERT_EQ(m.objects.size(), 2u);
  const Json& d = m.objects[0];
  EXPECT_EQ(d["kind"], "Deployment");
  EXPECT_EQ(d["apiVersion"], "apps/v1");
  EXPECT_EQ(d["metadata"]["name"], "qwen3-8b");
  const Json& pod = d["spec"]["template"]["spec"];
  const Json& c = pod["containers"][0];
  EXPECT_EQ(c["image"], "vllm/vllm-openai:latest");
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], "2");
  for (const char* probe : {"startupProbe", "readinessProbe", "livenessProbe"}) {
    EXPECT_EQ(c[probe]["httpGet"]["path"], "/health") << probe;
    EXPECT_EQ(c[probe]["httpGet"]["port"], 8000) << probe;
  }
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/dev/shm");
  EXPECT_EQ(pod["volumes"][0]["emptyDir"]["medium"], "Memory");
  // The set-up first, then the exports, then the server on the port the Service targets.
  const auto lines = script_lines(c);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "echo set-up");
  EXPECT_EQ(lines[1], "export VLLM_USE_MODELSCOPE=true");
  EXPECT_EQ(lines[2], "exec vllm serve Qwen/Qwen3-8B --served-model-name qwen3-8b --tensor-parallel-size 2 --host 0.0.0.0 --port 8000");
  const Json& s = m.objects[1];
  EXPECT_EQ(s["kind"], "Service");
  EXPECT_EQ(s["spec"]["selector"], d["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ(s["spec"]["ports"][0]["targetPort"], 8000);
}

TEST(Kubernetes, Issue18_AcrossNodesIsLeaderWorkerSetWithEnvironmentFirst) {
  const auto m = plan::build_kubernetes(two_npu_nodes(), {.platform = "npu"});
  ASSERT_EQ(m.objects.size(), 2u);
  const Json& lws = m.objects[0];
  EXPECT_EQ(lws["apiVersion"], "leaderworkerset.x-k8s.io/v1");
  EXPECT_EQ(lws["kind"], "LeaderWorkerSet");
  const Json& group = lws["spec"]["leaderWorkerTemplate"];
  EXPECT_EQ(group["size"], 2);  // 16 devices / 8 per node
  const Json& leader = group["leaderTemplate"]["spec"]["containers"][0];
  const Json& worker = group["workerTemplate"]["spec"]["containers"][0];
  EXPECT_EQ(leader["image"], "quay.io/ascend/vllm-ascend:latest");
  for (const Json* c : {&leader, &worker}) {
    EXPECT_EQ((*c)["resources"]["limits"]["huawei.com/Ascend910"], "8");
    // The model folder and the driver files come from the host.
    bool models = false, driver = false;
    for (const auto& v : (*c)["volumeMounts"]) {
      models |= v["mountPath"] == "/models";
      driver |= v["mountPath"] == "/usr/local/Ascend/driver/lib64";
    }
    EXPECT_TRUE(models && driver);
  }
  EXPECT_EQ(leader["readinessProbe"]["httpGet"]["path"], "/health");
  EXPECT_FALSE(worker.contains("readinessProbe"));  // workers serve no HTTP
  // Every pod sources the environment before `ray start`; the leader waits for the group, then serves.
  const auto l = script_lines(leader), w = script_lines(worker);
  EXPECT_LT(index_of(l, "source /usr/local/Ascend/nnal/atb/set_env.sh"), index_of(l, "ray start --head"));
  EXPECT_LT(index_of(l, "ray start --head"), index_of(l, "until "));
  EXPECT_LT(index_of(l, "until "), index_of(l, "exec vllm serve"));
  EXPECT_EQ(l.back(), "exec " + two_npu_nodes().launch->serve + " --host 0.0.0.0 --port 8000");
  EXPECT_LT(index_of(w, "source /usr/local/Ascend/ascend-toolkit/set_env.sh"), index_of(w, "until ray start --address"));
  EXPECT_EQ(w.back(), "until ray start --address=${HEAD_IP:?set HEAD_IP}:6379 --block; do echo waiting for the ray head at $HEAD_IP:6379; sleep 5; done");
  EXPECT_EQ(w[1], "export HEAD_IP=$LWS_LEADER_ADDRESS");
  const Json& s = m.objects[1];
  EXPECT_EQ(s["spec"]["selector"]["leaderworkerset.sigs.k8s.io/name"], "qwen3-235b-a22b");
  EXPECT_EQ(s["spec"]["selector"]["role"], "leader");
}

TEST(Kubernetes, Issue18_DnsLabels) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"qwen3.5-397b-a17b", "qwen3-5-397b-a17b"}, {"Qwen3-8B", "qwen3-8b"}, {"--x__y--", "x-y"}, {"", "preflight"}, {std::string(70, 'a'), std::string(63, 'a')}};
  for (const auto& [in, want] : cases) EXPECT_EQ(plan::dns_label(in), want) << in;
}

TEST(Kubernetes, Issue18_YamlRendering) {
  const Json doc = {{"kind", "Service"}, {"n", 3}, {"flag", true}, {"empty", Json::object()}, {"list", Json::array({"a", "/b", "true"})},
                    {"script", "line one\nline two\n"}, {"bare", "a\nb"}, {"two", "a\n\n"}, {"nested", Json::array({{{"x", 1}, {"y", "z"}}})}};
  EXPECT_EQ(report::render_yaml_documents({doc}, {"note"}),
            "# note\n---\nbare: |-\n  a\n  b\nempty: {}\nflag: true\nkind: Service\nlist:\n  - a\n  - \"/b\"\n  - \"true\"\nn: 3\nnested:\n  - x: 1\n    y: z\n"
            "script: |\n  line one\n  line two\ntwo: \"a\\n\\n\"\n");
}

// Issue 19: a note quotes user text (--image, a model path); its newline began a YAML line before the first "---",
// a document of its own. Every line of a note stays a comment.
TEST(Kubernetes, Issue19_NoteLinesStayComments) {
  EXPECT_EQ(report::render_yaml_documents({Json{{"kind", "Service"}}}, {"image x:1\nkind: Secret\r\nstringData: {a: b}", "two"}),
            "# image x:1\n# kind: Secret\n# \n# stringData: {a: b}\n# two\n---\nkind: Service\n");
}

TEST(Kubernetes, Issue18_ManifestsPassTheKubernetesSchemas) {
  const std::string dir = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/kubernetes";
  if (!std::filesystem::exists(dir + "/node_modules/kubernetes-models") || std::system("node --version >/dev/null 2>&1") != 0) {
    if (pftest::require_services()) FAIL() << "node or tests/kubernetes/node_modules missing (npm ci in tests/kubernetes)";
    GTEST_SKIP() << "node or tests/kubernetes/node_modules missing (npm ci in tests/kubernetes); skipped";
  }
  const auto scratch = pftest::scratch_dir("kubernetes");
  const std::string one = scratch + "/one.yaml", multi = scratch + "/multi.yaml", read = scratch + "/read.json";
  auto a = pftest::run_cli("plan Qwen/Qwen3-8B --device H100 --kubernetes " + one + " --json", {.with_stderr = false});
  ASSERT_EQ(a.code, 0) << a.out;
  auto b = pftest::run_cli("plan Qwen/Qwen3-235B-A22B --device 910B4 --variant w8a8 --kubernetes " + multi + " --json", {.with_stderr = false});
  ASSERT_EQ(b.code, 0) << b.out;
  const Json ja = Json::parse(a.out), jb = Json::parse(b.out);
  ASSERT_EQ(jb["kubernetes"]["kinds"], "LeaderWorkerSet + Service");
  ASSERT_EQ(ja["kubernetes"]["kinds"], "Deployment + Service");
  auto v = run_shell("node " + dir + "/validate.mjs --json-out " + read + " " + one + " " + multi);
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_EQ(v.out, "ok Deployment qwen3-8b\nok Service qwen3-8b\nok LeaderWorkerSet qwen3-235b-a22b\nok Service qwen3-235b-a22b\n");
  // The YAML reads back as the records --json printed.
  Json expected = ja["kubernetes"]["objects"];
  for (const auto& o : jb["kubernetes"]["objects"]) expected.push_back(o);
  EXPECT_EQ(Json::parse(pftest::read_all(read)), expected);
  // The validator is not vacuous: an unknown field and a wrong value in the LWS, a string port in the Deployment.
  std::string bad = pftest::read_all(multi);
  bad.replace(bad.find("restartPolicy: RecreateGroupOnPodRestart"), 40, "restartPolicy: Sometimes");
  bad.replace(bad.find("  readinessProbe:"), 17, "  readinessProbes:");
  std::ofstream(scratch + "/bad.yaml") << bad;
  auto r = run_shell("node " + dir + "/validate.mjs " + scratch + "/bad.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("must NOT have additional properties (readinessProbes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("restartPolicy must be equal to one of the allowed values"), std::string::npos) << r.out;
  std::string bad_port = pftest::read_all(one);
  bad_port.replace(bad_port.find("containerPort: 8000"), 19, "containerPort: \"x\"");
  std::ofstream(scratch + "/bad-port.yaml") << bad_port;
  r = run_shell("node " + dir + "/validate.mjs " + scratch + "/bad-port.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("containerPort must be integer"), std::string::npos) << r.out;
}

// Every pod's script and every printed per-node block is valid bash (`bash -n`): Ray across nodes and
// native data parallel. An apostrophe inside a ${NIC:?...} message used to open a quote that never
// closed, so the multi-node start stopped at a syntax error before `ray start`.
TEST(Kubernetes, Issue18_PodScriptsAndNodeBlocksAreValidBash) {
  const auto scratch = pftest::scratch_dir("kubernetes-bash");
  const std::vector<std::string> plans = {"plan Qwen/Qwen3-235B-A22B --device 910B4 --variant w8a8", "plan Qwen/Qwen3-30B-A3B --device 910B3 --data-parallel 16 --expert-parallel"};
  int checked = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    const std::string yaml = scratch + "/m" + std::to_string(i) + ".yaml";
    auto r = pftest::run_cli(plans[i] + " --kubernetes " + yaml + " --json", {.with_stderr = false});
    ASSERT_EQ(r.code, 0) << plans[i] << "\n" << r.out;
    const Json j = Json::parse(r.out);
    std::vector<std::string> scripts;
    const Json& lws = j["kubernetes"]["objects"][0];
    ASSERT_EQ(lws["kind"], "LeaderWorkerSet") << plans[i];
    for (const char* t : {"leaderTemplate", "workerTemplate"}) scripts.push_back(lws["spec"]["leaderWorkerTemplate"][t]["spec"]["containers"][0]["command"][2]);
    const Json& launch = j["recommended"][0]["launch"];
    ASSERT_EQ(launch["nodes"].size(), 2u) << plans[i];
    for (const auto& node : launch["nodes"]) {
      std::string block;
      for (const auto& line : node["lines"]) block += line.get<std::string>() + "\n";
      scripts.push_back(block + launch["serve"].get<std::string>() + "\n");
    }
    for (const auto& s : scripts) {
      const std::string file = scratch + "/script" + std::to_string(checked++) + ".sh";
      std::ofstream(file) << s;
      EXPECT_EQ(std::system(("bash -n " + file + " 2>/dev/null").c_str()), 0) << plans[i] << ":\n" << s;
    }
  }
  EXPECT_EQ(checked, 8);
}
