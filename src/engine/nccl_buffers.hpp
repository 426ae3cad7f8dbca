// engine/nccl_buffers: the NCCL communicator buffers a CUDA engine counts inside its KV budget (issue 15/16, nccl),
// read from engines.json overheads[cuda].nccl_buffers. vLLM before PR #25359 takes its init memory snapshot before
// init_worker_distributed_environment, so the ring / tree / NVLS buffers NCCL connects at communicator init are part
// of the non-torch increase the profile subtracts. Their size follows from the interconnect (the NVLink domain), which
// is a deployment input: given (--interconnect, a case's `interconnect`) or defaulted from the card's form factor and the
// TP size by the rules below, each with its reason and source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// The GPUs of one TP group and how NCCL reaches its peers: one NVSwitch domain (HGX 8-GPU boards), NVLink links
// between GPU pairs with no switch (HGX 4-GPU boards, NVLink bridges), PCIe only, or a network between hosts.
enum class Interconnect { unknown, nvswitch, nvlink_direct, pcie, network };
inline constexpr int k_interconnect_count = 5;

// "nvswitch", "nvlink-direct", "pcie", "network" ("unknown" for unknown).
const char* interconnect_name(Interconnect interconnect);
// The names users and cases write (the values above, any case, '_' read as '-'); nullopt for anything else.
std::optional<Interconnect> parse_interconnect(const std::string& text);
// "nvswitch, nvlink-direct, pcie, network": for error messages and --help.
const std::string& interconnect_choices();

// Channels NCCL runs on one interconnect for the GPU families listed (empty: any family), the NVLS buffers of a
// communicator of at least nvls_min_ranks GPUs (0 bytes: none), and the point-to-point channels and chunk that size the
// proxy's shared buffer (NcclBuffers::proxy_shared_steps; 0: not derived, no such buffer).
struct NcclDomain {
  Interconnect interconnect = Interconnect::unknown;
  std::vector<std::string> families;
  int64_t channels = 0;
  int64_t p2p_channels = 0;
  double p2p_chunk_bytes = 0;
  double nvls_bytes = 0;
  int64_t nvls_min_ranks = 0;
  std::string source;
  bool operator==(const NcclDomain&) const = default;
};

// The interconnect assumed when none is given: a card of `form_factor` whose TP group has ranks_min-ranks_max GPUs,
// the domains that are also plausible (the band), and why.
struct InterconnectDefault {
  std::string form_factor;
  int64_t ranks_min = 0, ranks_max = 0;
  Interconnect interconnect = Interconnect::unknown;
  std::vector<Interconnect> alternatives;
  std::string reason;
  std::string source;
  bool operator==(const InterconnectDefault&) const = default;
};

struct NcclBuffers {
  std::string engine;                 // the engine whose versions `counted` bounds ("vllm")
  EngineProfile::VersionRule counted; // the versions that count the buffers inside the budget
  int64_t communicators = 0;          // NCCL communicators over the TP group open by the end of the profile run
  std::string communicators_source;
  double connection_bytes = 0;        // one connected peer and direction pair of one channel: send + receive allocations
  std::string connection_source;
  // Issue 15/16 (tp): the proxy's shared point-to-point buffer NCCL allocates on the device at communicator init when it
  // connects at init (NCCL_CUMEM_ENABLE=0, which vLLM set up to proxy_counted's end): a domain's p2p_channels x
  // proxy_shared_steps x p2p_chunk_bytes per communicator. Unset (0 steps): none.
  int64_t proxy_shared_steps = 0;
  std::optional<EngineProfile::VersionRule> proxy_counted;
  std::string proxy_source;
  std::vector<NcclDomain> domains;
  std::vector<InterconnectDefault> defaults;

  // The domain record for `interconnect` on a card of `family`, or nullptr (not derived: no term).
  const NcclDomain* domain(Interconnect interconnect, const std::string& family) const;
  // The default rule for a card of `form_factor` with `ranks` GPUs in its TP group, or nullptr.
  const InterconnectDefault* default_for(const std::string& form_factor, int64_t ranks) const;
  // Whether `e` counts these buffers inside the KV budget for a TP group of `tensor_parallel_size` ranks: its engine, a
  // version of `counted`, and more than one rank.
  bool counted_by(const EngineProfile& e, int64_t tensor_parallel_size) const {
    return tensor_parallel_size > 1 && e.engine == engine && e.rule_applies(counted);
  }
  bool operator==(const NcclBuffers&) const = default;
};

// overheads[].nccl_buffers; corrupt errors name the file and key.
Expected<NcclBuffers> parse_nccl_buffers(const JsonObject& r, const std::string& origin);

}  // namespace preflight::engine
