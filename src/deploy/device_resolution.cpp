// The device a deployment names, resolved as logs and people write it: a catalogue name, the torch total a log prints
// ("79.19 GiB total"), a platform named in free text; the synthetic device a stated size makes. Split out of deployment.cpp.
#include "deploy/deployment.hpp"
#include "deploy/device_by_total.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <utility>

#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "device/device_names.hpp"
#include "device/device_platform.hpp"

namespace preflight::deploy {

using device::k_max_device_text;

namespace {
// A size the device text states, in bytes: `scale` times the number matched (digits and dots), or nullopt when it
// is not a number (".") or not a finite one. std::stod threw out_of_range on a case's 400-digit "...B" and
// invalid_argument on ". GiB total" (issue 19: validate aborted, exit 134); strtod saturates and says where it stopped.
std::optional<double> stated_size(const std::string& number, double scale) {
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end) * scale;
  if (end == number.c_str() || !std::isfinite(v)) return std::nullopt;
  return v;
}
}  // namespace

std::optional<double> stated_total_bytes(const std::string& text) {
  // resolve_device refuses longer device texts; the patterns below recurse per character in std::regex (issue 19).
  if (text.size() > k_max_device_text) return std::nullopt;
  std::smatch mm;
  static const std::regex bytes_re(R"((\d{9,})\s*B\b)");
  if (std::regex_search(text, mm, bytes_re)) return stated_size(mm[1], 1);
  static const std::regex gib_total(R"(([\d.]+)\s*GiB\s*total)");
  if (std::regex_search(text, mm, gib_total)) return stated_size(mm[1], k_gib);
  static const std::regex total_eq(R"(total[_a-z]*=\s*([\d.]+)\s*GiB)");
  if (std::regex_search(text, mm, total_eq)) return stated_size(mm[1], k_gib);
  static const std::regex usable(R"(([\d.]+)\s*GiB\s*usable)");
  if (std::regex_search(text, mm, usable)) return stated_size(mm[1], k_gib);
  // Issue 15: "total memory 61.27 GiB" / "total memory: 65452113920" (vLLM-Ascend) and the
  // torch.npu.mem_get_info() tuple "(free, total)" in bytes.
  static const std::regex total_memory(R"(total[ _]memory\s*[:=]?\s*([\d.]+)\s*GiB)", std::regex::icase);
  if (std::regex_search(text, mm, total_memory)) return stated_size(mm[1], k_gib);
  static const std::regex total_memory_bytes(R"(total[ _]memory\s*[:=]?\s*(\d{9,}))", std::regex::icase);
  if (std::regex_search(text, mm, total_memory_bytes)) return stated_size(mm[1], 1);
  static const std::regex free_total(R"(\(\s*\d{6,}\s*,\s*(\d{9,})\s*\))");
  if (std::regex_search(text, mm, free_total)) return stated_size(mm[1], 1);
  return std::nullopt;
}

// Issue 15 (pp36): a name several cards answer to ("H20": the 96 GB card or the 141 GB refresh) given with a total
// (--device-memory, a log's printed total) is the candidate that total agrees with, as a size stated in free text picks
// it (device_catalog.cpp size_agrees); the assumed card is tried first, so it stays where it agrees.
const device::DeviceSpec* candidate_by_total(const device::DeviceCatalog& devices, const std::string& text, double total_bytes) {
  for (const device::DeviceSpec* d : device::candidate_devices(devices, text)) {
    if (d->memory_bytes > 0 && std::abs(total_bytes - d->memory_bytes) <= 0.15 * d->memory_bytes) return d;
  }
  return nullptr;
}

namespace {

// Whether a device text states the card's memory size ("32GB", "64 GB", "48GiB"), not a total the runtime reports.
bool states_card_size(const std::string& text) {
  if (text.size() > k_max_device_text) return false;  // std::regex recurses per character (issue 19)
  static const std::regex size_re(R"((^|[^\d.])\d+\s*Gi?B\b)", std::regex::icase);
  return std::regex_search(text, size_re);
}

// Whether a device text is one of devices.json's ambiguous_names ("MI300"), letters and digits compared case-blind, though
// no card has it as an alias: match_device resolves it to its assumed card and says why.
bool is_ambiguous_name(const device::DeviceCatalog& devices, const std::string& text) {
  const auto key = [](const std::string& t) {
    std::string k;
    for (const unsigned char c : t)
      if (std::isalnum(c)) k += static_cast<char>(std::tolower(c));
    return k;
  };
  const std::string want = key(text);
  return std::any_of(devices.ambiguous_names.begin(), devices.ambiguous_names.end(), [&](const auto& a) { return key(a.name) == want; });
}

// The platform a device text names, or empty when it names none.
std::string platform_named_in(const std::string& text) {
  if (contains_ci(text, "ascend") || contains_ci(text, "npu") || contains_ci(text, "atlas")) return "npu";
  if (contains_ci(text, "amd") || contains_ci(text, "rocm") || contains_ci(text, "instinct") || contains_ci(text, "radeon")) return "rocm";
  if (contains_ci(text, "nvidia") || contains_ci(text, "cuda") || contains_ci(text, "geforce")) return "cuda";
  return "";
}

// --device-memory: the named card with that total, or a generic device of the platform (issue 15).
Expected<device::DeviceSpec> resolve_sized_device(const DeviceInput& input, const device::DeviceCatalog& devices, std::vector<std::string>& assumptions) {
  const double bytes = *input.memory_bytes;
  const std::string platform = input.platform.empty() ? "cuda" : to_lower(input.platform);
  if (platform != "cuda" && platform != "npu" && platform != "rocm" && platform != "cpu") {
    return make_error(ErrorKind::invalid_argument, format("--platform: expected cuda, npu, rocm or cpu, found '%s'", one_line(input.platform, 60).c_str()), "--platform");
  }
  const device::DeviceMatch m = trim(input.text).empty() ? device::DeviceMatch{} : device::match_device(devices, input.text);
  if (m.device) {
    if (!input.platform.empty() && m.device->platform != platform) {
      return make_error(ErrorKind::invalid_argument, format("--platform %s: %s is a %s device", platform.c_str(), m.device->id.c_str(), m.device->platform.c_str()), "--platform");
    }
    const device::DeviceSpec* by_total = candidate_by_total(devices, input.text, bytes);
    if (by_total && by_total != m.device) {
      assumptions.push_back(format("'%s' names several cards; the %.2f GiB of --device-memory picks %s (%s), not the assumed %s",
                                   one_line(trim(input.text), 60).c_str(), bytes_to_gib(bytes), by_total->id.c_str(), by_total->name.c_str(), m.device->id.c_str()));
    } else if (!m.assumption.empty()) {
      assumptions.push_back(m.assumption);
    }
    device::DeviceSpec d = by_total ? *by_total : *m.device;
    assumptions.push_back(format("device memory %.2f GiB from --device-memory replaces %s's %.2f GiB", bytes_to_gib(bytes), d.id.c_str(), bytes_to_gib(d.usable_total_bytes())));
    d.memory_bytes = bytes;
    d.runtime_total_bytes = bytes;
    d.source_memory = d.source_runtime_total = "--device-memory";
    return d;
  }
  device::DeviceSpec d;
  d.id = "generic-" + platform;
  d.name = trim(input.text).empty() ? "generic " + platform + " device" : trim(input.text);
  d.vendor = "unknown";
  d.platform = platform;
  d.memory_bytes = bytes;
  d.runtime_total_bytes = bytes;
  d.dtypes = {"fp32", "bf16", "fp16", "fp8", "int8", "int4"};
  d.source_memory = d.source_runtime_total = "--device-memory";
  d.origin = "--device-memory";
  assumptions.push_back(format("%s is not in the catalogue: a generic %s device with %.2f GiB (--device-memory) as the runtime total, every dtype "
                               "assumed supported, no bandwidth or compute figures",
                               trim(input.text).empty() ? "the device" : ("'" + one_line(trim(input.text), 200) + "'").c_str(), platform.c_str(), bytes_to_gib(bytes)));
  return d;
}

}  // namespace

std::string device_text_platform(const std::string& text, const std::string& platform_flag) {
  if (!platform_flag.empty()) return to_lower(platform_flag);
  const std::vector<std::string> names = split(text, ',');
  const std::string first = trim(names.empty() ? text : names.front());
  if (auto indexed = device::indexed_device_platform(first); indexed && !first.empty()) return *indexed;  // issue 19: no record parsed
  if (auto devices = device::load_device_catalog_for(first); devices && !first.empty()) {
    if (const device::DeviceSpec* d = devices->find(first)) return d->platform;
  }
  return platform_named_in(text);
}

// Issue 19: a device is named or described in a line ("Atlas 800I A3", "NVIDIA A100-SXM4-80GB, 81920 MiB", a torch
// total); a longer text is not a description. It is refused before the name search (edit distances to every catalogue
// name) and the total's patterns, which grow with its length, and it is not echoed whole.
Expected<device::DeviceSpec> resolve_device(const DeviceInput& input, const device::DeviceCatalog& devices, std::vector<std::string>& assumptions) {
  if (input.text.size() > k_max_device_text)
    return make_error(ErrorKind::invalid_argument,
                      format("%sa device text ('%s'): a name or description is at most %zu bytes", input.origin.empty() ? "" : (input.origin + ": ").c_str(),
                             one_line(input.text, 40).c_str(), k_max_device_text),
                      input.origin);
  if (input.memory_bytes) return resolve_sized_device(input, devices, assumptions);
  if (!input.platform.empty()) return make_error(ErrorKind::invalid_argument, "--platform goes with --device-memory (a generic device of that platform)", "--platform");
  if (input.form == DeviceForm::name) {
    auto found = device::find_device(devices, input.text);
    if (!found) {
      // user36: a name no card answers to that states the card's size ("Ascend 910B 32GB", "910B 64GB", "NVIDIA L40S 48GB")
      // is the catalogue name inside it whose memory agrees with the size, said so; one that states the total a log prints
      // ("29.49 GiB total capacity", "NVIDIA GeForce RTX 4090 with 23.64 GiB total") is read as a description below, the
      // card identified by that total. Without either ("RTX 3090 Ti") it stays unknown: a name inside it is not the card.
      if (states_card_size(input.text) || is_ambiguous_name(devices, input.text)) {
        const device::DeviceMatch sized = device::match_device(devices, input.text);
        if (sized.device) {
          assumptions.push_back(!sized.assumption.empty() ? sized.assumption
                                                          : format("'%s' is no catalogue name: read as %s (%s), the name in it whose memory agrees with the size it states",
                                                                   one_line(input.text, 80).c_str(), sized.device->id.c_str(), sized.device->name.c_str()));
          return *sized.device;
        }
      }
      if (!stated_total_bytes(input.text))
        return make_error(found.error().kind, input.origin.empty() ? found.error().message : input.origin + ": " + found.error().message);
    }
  }
  if (input.form == DeviceForm::name && device::find_device(devices, input.text)) {
    auto found = device::find_device(devices, input.text);
    // A name several cards answer to ("A100", "910B"): the same card, and the assumption says which and why.
    const device::DeviceMatch m = device::match_device(devices, input.text);
    if (!m.assumption.empty()) assumptions.push_back(m.assumption);
    return m.device ? *m.device : *found;
  }
  const device::DeviceMatch matched = device::match_device(devices, input.text);
  if (matched.device) {
    if (!matched.assumption.empty()) assumptions.push_back(matched.assumption);
    return *matched.device;
  }
  const auto total = stated_total_bytes(input.text);
  if (!total) return make_error(ErrorKind::not_found, "device not in the catalogue and no total memory stated: " + input.text, input.origin);
  const device::DeviceMatch by_total = device::match_device_total(devices, *total, platform_named_in(input.text));
  if (by_total.device) {
    assumptions.push_back(by_total.assumption);
    return *by_total.device;
  }
  device::DeviceSpec synthetic;
  synthetic.id = "stated-device";
  synthetic.name = input.text;
  synthetic.memory_bytes = *total;
  synthetic.runtime_total_bytes = *total;
  synthetic.platform = contains_ci(input.text, "ascend") || contains_ci(input.text, "npu")
                           ? "npu"
                           : (contains_ci(input.text, "amd") || contains_ci(input.text, "rocm") ? "rocm" : "cuda");
  assumptions.push_back(format("device from the stated %.2f GiB total", bytes_to_gib(*total)));
  return synthetic;
}

}  // namespace preflight::deploy
