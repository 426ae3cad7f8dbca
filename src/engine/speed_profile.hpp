// engine/speed_profile: the calibrated constants of the decode/prefill speed model, per engine and
// platform (data/engines/speed.json): the fraction of copy bandwidth a decode step achieves, the
// fixed cost of a step in graph mode, the per-operator dispatch cost in eager mode with operator
// counts per layer kind, the MoE routing cost per layer, the all-reduce latency of the interconnect,
// and the prefill compute efficiency. Each profile names its evidence and the script that refits it
// (tools/fit_speed.py); a user's measured bandwidth replaces the catalogue's, never these constants.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::engine {

struct SpeedProfile {
  std::string engine;    // vllm | vllm-ascend | llama.cpp
  std::string platform;  // npu | cuda | rocm
  std::string device;    // a device id when the profile is one device's own calibration (user overlay), else empty
  std::string origin;    // file the profile came from
  double bandwidth_efficiency = 0.8;   // of the copy bandwidth, on weight + KV reads of a decode step
  double step_overhead_s = 0;          // per decode step, graph and eager (launch, scheduling, the step's sync)
  double sequence_overhead_s = 0;      // per running sequence per decode step (sampling, detokenize, API streaming)
  double eager_op_dispatch_s = 0;      // eager mode: host cost of issuing one operator
  bool always_eager = false;           // engine issues operators one by one on this platform (no graphs)
  std::string graph_default_since;     // first engine version that captures graphs by default (vllm-ascend: 0.9.0); older runs are eager (issue 20)
  std::string graph_default_source;    // where that version is stated
  std::map<std::string, double> ops_per_layer;  // by layer kind name, plus "moe" for a routed-expert block
  double moe_layer_overhead_s = 0;     // graph mode: routing/sorting kernels per MoE layer per step
  double allreduce_latency_s = 0;      // one small all-reduce inside a node
  // One all-reduce round between PCIe-only devices (no device link in the catalogue), measured rather than fitted
  // (issue 20): vLLM turns its custom all-reduce off on more than two PCIe-only GPUs and NCCL carries every
  // decode all-reduce. 0: such links use allreduce_latency_s like the others.
  double pcie_allreduce_latency_s = 0;
  std::string pcie_allreduce_source;   // the measurement (required with pcie_allreduce_latency_s)
  double prefill_compute_efficiency = 0.5;  // of dense peak FLOPs for the dtype, in prefill
  double band_fraction = 0.15;         // +/- relative uncertainty of a predicted step time
  std::string evidence;
};

struct GgufPreset {
  std::string name;          // llama-quantize type name: Q4_0, Q4_K_M, ...
  double bits_per_weight = 0;  // file average, scales and mixed tensor types included
  std::string source;
};

// A bandwidth prior for a card with no datasheet peak and no measurement (910B4, 910B4-1, 910A,
// Atlas 350, the host CPU): the peak taken, and the range the public figures allow, which may be
// one-sided (910B4: 800 GB/s taken, up to 1,600 GB/s possible). The copy fraction of peak applies on
// top, as for a datasheet figure. A `preflight bw --save` measurement replaces it.
struct BandwidthPrior {
  std::string device;             // device id in data/devices/devices.json
  double peak_bytes_per_s = 0;    // the value used
  double low_bytes_per_s = 0;     // lowest peak the sources allow (<= peak)
  double high_bytes_per_s = 0;    // highest peak the sources allow (>= peak)
  std::string source;
};

// The device-to-device link of a device family whose catalogue records carry no link bandwidth (the A2 boards'
// HCCS): named in the speed provenance instead of the PCIe fallback.
struct LinkPrior {
  std::string family;   // DeviceSpec::family, e.g. "ascend-a2"
  std::string name;     // e.g. "HCCS within an A2 node"
  double bandwidth_bytes_per_s = 0;
  std::string source;
};

struct SpeedCatalog {
  std::vector<SpeedProfile> profiles;
  std::vector<BandwidthPrior> bandwidth_priors;
  std::vector<LinkPrior> link_priors;
  double copy_fraction_of_peak = 0.8;  // copy bandwidth / datasheet peak when no measurement exists
  std::string copy_fraction_evidence;
  double cross_node_bandwidth_bytes_per_s = 0;  // per device, between nodes (RoCE / InfiniBand)
  double cross_node_latency_s = 0;
  std::string cross_node_source;
  std::vector<GgufPreset> gguf_presets;
  std::string origin;

  // Profile for an engine on a platform: the device's own calibration first (when `device` is given),
  // then the platform's; llama.cpp and vllm fall back to their cuda profile.
  const SpeedProfile* find(const std::string& engine, const std::string& platform, const std::string& device = {}) const;
  const GgufPreset* find_preset(const std::string& name) const;  // case-insensitive
  const BandwidthPrior* find_bandwidth_prior(const std::string& device) const;  // by device id, case-insensitive
  const LinkPrior* find_link_prior(const std::string& family) const;            // by device family, case-insensitive
};

Expected<SpeedCatalog> parse_speed_catalog(const Json& root, const std::string& origin);

// The user's own calibration ({"schema_version":1,"profiles":[{"engine":"vllm-ascend","platform":"npu",
// "device":"910B3","bandwidth_efficiency":0.8,"evidence":"preflight calibrate 2026-12-02 ..."}]}):
// each entry starts from the catalogue profile of its engine/platform and replaces the fields it names;
// with "device" it applies to that device only. Unknown keys, missing evidence or a profile the
// catalogue lacks are errors naming the file.
Status apply_speed_overlay(SpeedCatalog& catalog, const Json& root, const std::string& origin);
// $PREFLIGHT_SPEED_OVERRIDES, else $XDG_CONFIG_HOME/preflight/speed.json, else ~/.config/preflight/speed.json.
std::string speed_overlay_path();
// The embedded catalogue plus the user's overlay when present.
Expected<SpeedCatalog> load_speed_catalog();

}  // namespace preflight::engine
