// Issue 18: vLLM's native multi-node data parallel in plan's per-node commands
// (https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html): replicas of a one-node
// layout, the API server on the head, the other nodes --headless from their start rank, every node
// setting up its environment before vllm starts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/launch.hpp"

using namespace preflight;

namespace {

const std::string k_serve = "vllm serve Qwen/Qwen3-30B-A3B --tensor-parallel-size 1";

plan::Candidate one_device() {
  plan::Candidate c;
  c.model_id = "Qwen/Qwen3-30B-A3B";
  c.num_devices = 1;
  plan::Launch l;
  l.shell = {"set +u", "source /usr/local/Ascend/ascend-toolkit/set_env.sh"};
  l.env = {"VLLM_USE_MODELSCOPE=true"};
  l.serve = k_serve;
  c.launch = l;
  return c;
}

}  // namespace

TEST(DataParallel, Issue18_AcrossNodesHeadServesWorkersHeadless) {
  auto c = one_device();
  c.num_devices = 2;  // TP 2: 4 replicas per node of 8
  plan::Launch l2 = *c.launch;
  l2.serve = "vllm serve M --tensor-parallel-size 2";
  c.launch = l2;
  auto l = plan::with_data_parallel(c, 8, {.size = 8, .expert_parallel = true});
  ASSERT_TRUE(l) << l.error().describe();
  const std::string address = " --data-parallel-address ${HEAD_IP:?set HEAD_IP to the head node address} --data-parallel-rpc-port 13345";
  EXPECT_EQ(l->serve, "vllm serve M --tensor-parallel-size 2 --data-parallel-size 8 --data-parallel-size-local 4" + address + " --enable-expert-parallel");
  ASSERT_EQ(l->nodes.size(), 2u);
  const auto& head = l->nodes[0].lines;
  const auto& worker = l->nodes[1].lines;
  // Both nodes: the set-up, then the exports; the head's serve line follows its block.
  const std::vector<std::string> env = {"set +u", "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "export VLLM_USE_MODELSCOPE=true"};
  EXPECT_EQ(head, env);
  ASSERT_EQ(worker.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(worker.begin(), worker.begin() + 3), env);
  // Node k runs ranks k x 4 .. k x 4 + 3 without an API server.
  EXPECT_EQ(worker[3], "vllm serve M --tensor-parallel-size 2 --headless --data-parallel-size 8 --data-parallel-size-local 4 "
                       "--data-parallel-start-rank $((${NODE_RANK:?set NODE_RANK to this node index, 1..1} * 4))" + address + " --enable-expert-parallel");
  // The printed blocks carry no ray start.
  for (const auto& line : l->multi_node) EXPECT_EQ(line.find("ray start"), std::string::npos) << line;
}

TEST(DataParallel, Issue18_OneNodeIsTheSizeFlagAlone) {
  auto l = plan::with_data_parallel(one_device(), 8, {.size = 4});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->serve, k_serve + " --data-parallel-size 4");
  EXPECT_TRUE(l->nodes.empty());
  EXPECT_TRUE(l->multi_node.empty());
}

TEST(DataParallel, Issue18_LayoutsItCannotStart) {
  auto across = one_device();
  across.num_devices = 16;  // TP 8 x PP 2 over two nodes: Ray's layout
  auto llama = one_device();
  plan::Launch server = *llama.launch;
  server.serve = "llama-server -m MODEL.gguf";
  llama.launch = server;
  const std::vector<std::tuple<plan::Candidate, int64_t, std::string>> cases = {
      {across, 2, "native data parallel needs a replica inside one node of 8"},
      {llama, 2, "this start is not vllm serve"},
      {one_device(), 12, "12 replicas of 1 device(s) fill 8 per node; expected a multiple of 8"},
      {one_device(), 0, "expected at least 1 replica"},
  };
  for (const auto& [c, size, message] : cases) {
    auto l = plan::with_data_parallel(c, 8, {.size = size});
    ASSERT_FALSE(l) << message;
    EXPECT_EQ(l.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(l.error().message.find(message), std::string::npos) << l.error().message;
  }
}
