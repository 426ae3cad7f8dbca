// device/device_platform: a built-in card's platform read from the build-time index of devices.json
// (base/embedded.hpp, the "platform" field the CMakeLists copies), without parsing its record (issue 19).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace preflight::device {

// The longest device name or description resolved (deploy's resolve_device refuses longer, exit 2; the evidence lines'
// longest is 278 bytes). stated_memory_gib's std::regex recurses once per character, so nothing longer may reach it
// (issue 19).
inline constexpr size_t k_max_device_text = 1024;

// The platform ("cuda", "npu", ...) of the card device_text names, where load_device_catalog_for would load that card
// from its record alone (one id or alias, not a list, not a name of ambiguous_names) and no overlay file exists (the
// overlay never changes a platform, but a malformed one is an error the catalogue load reports); nullopt otherwise,
// and when the index lacks the field: then load the catalogue and read DeviceSpec::platform.
std::optional<std::string> indexed_device_platform(const std::string& device_text);

}  // namespace preflight::device
