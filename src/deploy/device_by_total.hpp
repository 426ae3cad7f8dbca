#pragma once
// The card a total picks among those one device name answers to (issue 15, pp36): people write "H20" for the 96 GB card
// and for the 141 GB refresh, "A100" for four cards; a total printed beside the name (a log's "Free memory on device
// (F/T GiB)", --device-memory) says which. Kept out of deploy/deployment.hpp, which most of the tree includes.

#include <string>

#include "device/device_spec.hpp"

namespace preflight::deploy {

// For a name of devices.json "ambiguous_names" (device::candidate_devices: the assumed card first, then the other
// candidates), the first candidate whose memory total_bytes agrees with, by the rule a size stated in free text follows
// (within 15% of the card's memory: GiB vs GB, runtime vs nominal). nullptr when the name is not ambiguous or none agrees.
const device::DeviceSpec* candidate_by_total(const device::DeviceCatalog& devices, const std::string& text, double total_bytes);

}  // namespace preflight::deploy
