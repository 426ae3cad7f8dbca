#include "plan/mindie_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace preflight::plan {

namespace {

int64_t catalog_int(const estimate::MindieCatalog& c, const char* key, int64_t fallback) {
  auto it = c.defaults.find(key);
  return it == c.defaults.end() ? fallback : static_cast<int64_t>(it->second);
}

// ModelConfig.modelName: letters, digits, '-', '.', '_' (doc), not starting or ending with a separator.
std::string model_name_of(const std::string& id) {
  std::string base = id.substr(id.find_last_of('/') == std::string::npos ? 0 : id.find_last_of('/') + 1);
  std::string out;
  for (char ch : base) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' || ch == '_') ? ch : '_';
  while (!out.empty() && (out.front() == '-' || out.front() == '.' || out.front() == '_')) out.erase(out.begin());
  while (!out.empty() && (out.back() == '-' || out.back() == '.' || out.back() == '_')) out.pop_back();
  return out.empty() ? std::string("model") : out;
}

// The config.json values of one layout at context L: maxSeqLen L; input up to L - maxIterTimes (the
// documented request limit for /generate_stream is maxSeqLen - maxIterTimes); maxPrefillTokens at least that.
estimate::MindieOptions layout_options(const estimate::MindieOptions& base, int64_t context, int64_t world) {
  estimate::MindieOptions o = base;
  o.world_size = world;
  o.max_seq_len = context;
  o.max_iter_times = std::min(base.max_iter_times, std::max<int64_t>(1, context / 2));
  o.max_input_token_len = context - o.max_iter_times;
  o.max_prefill_tokens = std::max(base.max_prefill_tokens, o.max_input_token_len);
  return o;
}

std::vector<std::string> source_lines(const estimate::MindieOptions& o, int64_t nodes) {
  std::vector<std::string> lines{
      "# The MindIE image's environment (CANN, ATB with its cxx_abi, ATB Models, MindIE): the paths of MindIE LLM quick_start.md",
      "for f in /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh /usr/local/Ascend/nnal/atb/set_env.sh \\",
      "         /usr/local/Ascend/atb-models/set_env.sh /usr/local/Ascend/mindie/set_env.sh; do",
      "  [ -f \"$f\" ] && source \"$f\"",
      "done",
      "export MINDIE_LOG_TO_STDOUT=1",
      "chmod 640 \"$(dirname \"$0\")/config.json\"   # MindIE refuses a config.json with wider permissions",
      "export MIES_CONFIG_JSON_PATH=\"$(cd \"$(dirname \"$0\")\" && pwd)/config.json\""};
  if (o.npu_memory_fraction != 0.8) lines.push_back(fmt::format("export NPU_MEMORY_FRACTION={}", o.npu_memory_fraction));
  if (nodes > 1) {
    lines.push_back(fmt::format("# {} nodes: run this script on every node with the same config.json and ranktable (rank_id 0 is the master that takes requests)", nodes));
    lines.push_back("export RANKTABLEFILE=${RANKTABLEFILE:?set RANKTABLEFILE to the ranktable json (server_count, server_list[].device[].device_ip / rank_id; hccn_tool -i N -ip -g)}");
    lines.push_back("export MIES_CONTAINER_IP=${MIES_CONTAINER_IP:?set MIES_CONTAINER_IP to this node's (container's) IP}");
    lines.push_back("chmod 640 \"$RANKTABLEFILE\"");
  } else {
    lines.push_back("unset RANKTABLEFILE   # single node: a stale ranktable breaks model initialisation");
  }
  return lines;
}

std::string start_script(const estimate::MindieOptions& o, const std::string& model_id, const std::string& device_id, int64_t nodes) {
  std::string s = "#!/bin/bash\n";
  // Issue 19 (hard30): the model id is a local folder's name when one was given; a newline in it ended this comment and
  // began a command of the script.
  std::string shown = model_id;
  std::replace_if(shown.begin(), shown.end(), [](char ch) { return ch == '\n' || ch == '\r'; }, ' ');
  s += fmt::format("# preflight plan --engine mindie: {} on {} x {} (worldSize {}{})\n", shown, o.world_size, device_id, o.world_size,
                   nodes > 1 ? fmt::format(", {} nodes", nodes) : "");
  s += "set -e\n";
  for (const auto& l : source_lines(o, nodes)) s += l + "\n";
  s += "# MindIE 2.2+: mindie_llm_server; earlier releases: mindieservice_daemon from the mindie-service directory (not from bin/)\n";
  s += "if command -v mindie_llm_server >/dev/null 2>&1; then exec mindie_llm_server; fi\n";
  s += "cd /usr/local/Ascend/mindie/latest/mindie-service && exec ./bin/mindieservice_daemon\n";
  s += "# ready when it prints: Daemon start success!\n";
  return s;
}

}  // namespace

Json render_mindie_config(const estimate::MindieOptions& o, const std::string& model_name, const std::string& weight_path, int64_t nodes,
                          int64_t cards_per_node, const estimate::MindieCatalog& catalog) {
  const int64_t local = nodes > 1 ? cards_per_node : o.world_size;
  Json ids = Json::array();
  for (int64_t i = 0; i < local; ++i) ids.push_back(i);
  const Json server{{"ipAddress", "127.0.0.1"},
                    {"managementIpAddress", "127.0.0.2"},
                    {"port", catalog_int(catalog, "port", 1025)},
                    {"managementPort", catalog_int(catalog, "managementPort", 1026)},
                    {"metricsPort", catalog_int(catalog, "metricsPort", 1027)},
                    {"allowAllZeroIpListening", false},
                    {"maxLinkNum", catalog_int(catalog, "maxLinkNum", 1000)},
                    {"httpsEnabled", false},
                    {"fullTextEnabled", false},
                    {"tlsCaPath", "security/ca/"},
                    {"tlsCaFile", {"ca.pem"}},
                    {"tlsCert", "security/certs/server.pem"},
                    {"tlsPk", "security/keys/server.key.pem"},
                    {"tlsCrlPath", "security/certs/"},
                    {"tlsCrlFiles", {"server_crl.pem"}},
                    {"inferMode", "standard"},
                    {"interCommTLSEnabled", false},
                    {"interCommPort", 1121},
                    {"openAiSupport", "vllm"},
                    {"tokenTimeout", 600},
                    {"e2eTimeout", 600},
                    {"maxRequestLength", 40},
                    {"distDPServerEnabled", false}};
  Json model_config{{"modelInstanceType", "Standard"},       {"modelName", model_name},
                    {"modelWeightPath", weight_path},        {"worldSize", o.world_size},
                    {"cpuMemSize", catalog_int(catalog, "cpuMemSize", 5)}, {"npuMemSize", o.npu_mem_size},
                    {"backendType", "atb"},                  {"trustRemoteCode", false}};
  // Issue 16 (mindie34): MTP as MindIE's MTP page writes it, a JSON text inside ModelConfig.
  if (o.num_speculative_tokens >= 1)
    model_config["plugin_params"] = fmt::format("{{\"plugin_type\":\"mtp\",\"num_speculative_tokens\":{}}}", o.num_speculative_tokens);
  const Json schedule{{"templateType", "Standard"},
                      {"templateName", "Standard_LLM"},
                      {"cacheBlockSize", o.cache_block_size},
                      {"maxPrefillBatchSize", o.max_prefill_batch_size},
                      {"maxPrefillTokens", o.max_prefill_tokens},
                      {"prefillTimeMsPerReq", 150},
                      {"prefillPolicyType", 0},
                      {"decodeTimeMsPerReq", 50},
                      {"decodePolicyType", 0},
                      {"maxBatchSize", o.max_batch_size},
                      {"maxIterTimes", o.max_iter_times},
                      {"maxPreemptCount", catalog_int(catalog, "maxPreemptCount", 0)},
                      {"supportSelectBatch", false},
                      {"maxQueueDelayMicroseconds", 5000}};
  const Json backend{{"backendName", "mindieservice_llm_engine"},
                     {"modelInstanceNumber", 1},
                     {"npuDeviceIds", Json::array({ids})},
                     {"tokenizerProcessNumber", catalog_int(catalog, "tokenizerProcessNumber", 8)},
                     {"multiNodesInferEnabled", nodes > 1},
                     {"multiNodesInferPort", catalog_int(catalog, "multiNodesInferPort", 1120)},
                     {"interNodeTLSEnabled", false},
                     {"ModelDeployConfig", {{"maxSeqLen", o.max_seq_len}, {"maxInputTokenLen", o.max_input_token_len}, {"truncation", false},
                                            {"ModelConfig", Json::array({model_config})}}},
                     {"ScheduleConfig", schedule}};
  return Json{{"Version", "1.0.0"},
              {"LogConfig", {{"dynamicLogLevel", ""}, {"dynamicLogLevelValidHours", 2}, {"dynamicLogLevelValidTime", ""}}},
              {"ServerConfig", server},
              {"BackendConfig", backend}};
}

Expected<MindiePlan> plan_mindie(const model::ModelSpec& spec, const device::DeviceSpec& device, const MindiePlanRequest& request,
                                 const estimate::MindieCatalog& catalog) {
  MindiePlan plan;
  plan.device_id = device.id;
  plan.cards_per_node = catalog_int(catalog, "cards_per_node", 8);
  const int64_t max_cards = plan.cards_per_node * catalog_int(catalog, "max_nodes", 4);
  const int64_t model_max = spec.max_position_embeddings > 0 ? spec.max_position_embeddings : 32768;
  const int64_t context = request.context_tokens > 0 ? request.context_tokens : std::min<int64_t>(32768, model_max);
  std::vector<int64_t> sizes;
  if (request.world_size) sizes.push_back(*request.world_size);
  else
    for (int64_t w = 1; w <= max_cards; w *= 2) sizes.push_back(w);
  for (int64_t w : sizes) {
    if (spec.num_key_value_heads >= w && spec.num_key_value_heads % w != 0) {
      plan.rejected.push_back(fmt::format("worldSize {}: num_key_value_heads {} is not a multiple of it", w, spec.num_key_value_heads));
      continue;
    }
    auto o = layout_options(request.base, context, w);
    PF_TRY(e, estimate::estimate_mindie(spec, device, o, catalog));
    if (o.npu_mem_size == -1 && (spec.vision_params > 0 || spec.vision_hidden_size > 0)) {
      // Issue 15 (evid33): MindIE sizes a multimodal model's -1 pool from the config (maxBatchSize, which this plan
      // sets from the pool: circular), so the plan writes npuMemSize itself.
      PF_TRY(gib, estimate::mindie_multimodal_npu_mem_gib(e, o, catalog));
      if (gib < 1) {
        plan.rejected.push_back(fmt::format("worldSize {}: no room for a multimodal KV pool after the weights, the runtime and MindIE's post-warm-up free memory", w));
        continue;
      }
      o.npu_mem_size = gib;
      PF_TRY(fixed, estimate::estimate_mindie(spec, device, o, catalog));
      e = fixed;
    }
    if (e.verdict != estimate::MindieVerdict::fits || e.batch_low < request.concurrency) {
      plan.rejected.push_back(e.verdict == estimate::MindieVerdict::fits
                                  ? fmt::format("worldSize {}: the KV pool holds {} to {} requests of {} tokens, fewer than {}", w, e.batch_low, e.batch_high, context,
                                                request.concurrency)
                                  : fmt::format("worldSize {}: {}", w, e.reason));
      continue;
    }
    // maxBatchSize = Total Block Num / blocks per request (the doc's rule), at the pessimistic end of the band.
    o.max_batch_size = std::clamp<int64_t>(e.batch_low, 1, 5000);
    o.max_prefill_batch_size = std::min(o.max_prefill_batch_size, o.max_batch_size);
    PF_TRY(final_estimate, estimate::estimate_mindie(spec, device, o, catalog));
    plan.options = o;
    plan.estimate = final_estimate;
    plan.nodes = (w + plan.cards_per_node - 1) / plan.cards_per_node;
    const std::string name = request.model_name.empty() ? model_name_of(spec.id) : request.model_name;
    const std::string path = request.weight_path.empty() ? "/home/weight/" + name : request.weight_path;
    plan.config = render_mindie_config(o, name, path, plan.nodes, plan.cards_per_node, catalog);
    plan.start_script = start_script(o, spec.id, device.id, plan.nodes);
    return plan;
  }
  return make_error(ErrorKind::not_found, fmt::format("{}: no worldSize up to {} x {} holds {} request(s) of {} tokens under MindIE ({})", spec.id, max_cards, device.id,
                                                      request.concurrency, context, plan.rejected.empty() ? "" : plan.rejected.back()));
}

}  // namespace preflight::plan
