#pragma once
// Which catalogue cards a device text leaves open (issue 15, acc28). match_device takes one card for a name several
// cards answer to ("A100 80GB": the SXM4 and the PCIe card) and says so; a fact that differs between those cards beyond
// the chosen record, such as the form factor that decides the default interconnect, needs the others too.

#include <string>
#include <vector>

#include "device/device_spec.hpp"

namespace preflight::device {

// For a text that match_device resolves through a name of devices.json "ambiguous_names": the card it assumes first,
// then the other candidates a size stated in the text agrees with (catalogue order of the name's candidates). Empty
// when the text names one card, none, or a stated size leaves only one.
std::vector<const DeviceSpec*> candidate_devices(const DeviceCatalog& catalog, const std::string& text);

}  // namespace preflight::device
