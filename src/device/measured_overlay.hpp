// device/measured_overlay: writing the user's measured-device file (the overlay that
// load_device_catalog() reads), so that `preflight bw --save` records a measurement which fit and plan
// then use. The file is merged, never rewritten from scratch: other devices and other keys stay.
#pragma once

#include <string>

#include "base/error.hpp"
#include "device/device_spec.hpp"

namespace preflight::device {

// Records `run` as the device-to-device copy bandwidth of `device_name` (a catalogue id or alias) in
// the overlay file at `path`. An existing file is read first and must be a valid overlay (else corrupt,
// and the file is left alone); the entry whose id names the same device is updated (its other keys,
// and every other entry, are kept), or a new entry is appended. The merged document is checked by
// applying it to `catalog` before it replaces the file atomically (write_text_file_atomically).
// The read-merge-write runs under an exclusive flock on "<path>.lock" (created beside the file and
// left there), so concurrent saves for different devices all survive.
// `catalog` is the embedded catalogue without the overlay. Returns the catalogue id saved under;
// not_found with suggestions for an unknown device; io when the file cannot be written.
Expected<std::string> save_measured_copy_bandwidth(const std::string& path, const DeviceCatalog& catalog, const std::string& device_name,
                                                   const BandwidthMeasurement& run);

}  // namespace preflight::device
