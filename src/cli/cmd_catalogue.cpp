#include "cli/cmd_catalogue.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "base/build_info.hpp"
#include "base/units.hpp"
#include "cli/args.hpp"
#include "cli/common.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "model/model_catalog.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

// What `preflight devices | engines | models` take.
struct CatalogueRequest {
  bool json = false;
};

std::vector<Option> catalogue_options(CatalogueRequest& r) { return {json_flag(r.json)}; }

// The flags of the catalogue commands and `version`: --json only; an argument they do not take is bad input (its usage).
Status parse_catalogue_request(const std::vector<std::string>& argv, const std::string& command, CatalogueRequest& r) {
  auto positional = parse_options(argv, catalogue_options(r));
  if (!positional) return positional.error();
  if (!positional->empty()) return make_error(ErrorKind::invalid_argument, command_usage(command));
  return Ok{};
}

const CommandText k_catalogue_text{
    "usage: preflight devices | engines | models [--json]",
    R"(devices: the device catalogue with capacity as the runtime sees it, bandwidth, compute by dtype and aliases,
  marking measured overrides. engines: engine versions with their defaults, block sizes, accepted
  quantization, batch defaults, the profile run's sampler path and MXFP4 layouts. models: the embedded models.)",
    "",
    "exit: 0, 2 bad input (an unreadable overlay file, an argument the command does not take, a flag given twice)"};

const CommandText k_version_text{"usage: preflight version [--json]   (also: preflight --version)",
                                  "The release and the commit this binary was built from (--json: the envelope every command's JSON starts with).", "",
                                  "exit: 0, 2 bad input (an argument it does not take, a flag given twice)"};

}  // namespace

CommandHelp catalogue_help() {
  static CatalogueRequest scratch;
  return CommandHelp{k_catalogue_text, catalogue_options(scratch)};
}

CommandHelp version_help() {
  static CatalogueRequest scratch;
  return CommandHelp{k_version_text, catalogue_options(scratch)};
}

int cmd_models(const std::vector<std::string>& argv) {
  CatalogueRequest r;
  if (auto checked = parse_catalogue_request(argv, "models", r); !checked) return report_error(checked.error());
  const auto& catalog = model::builtin_model_catalog();
  Json list = Json::array();
  for (const auto& m : catalog.models) {
    auto spec = model::model_spec_from_catalog(m);
    Json row = {{"id", m.id}, {"aliases", m.aliases}, {"source", m.source_url}, {"kind", m.source_kind}};
    if (spec) {
      const auto p = model::count_params(*spec);
      row["architecture"] = spec->architecture;
      row["params"] = p.total;
      row["active_params"] = p.active;
      row["weight_gib"] = bytes_to_gib(model::compute_weight_bytes(*spec).total);
    } else {
      row["error"] = spec.error().describe();
    }
    list.push_back(row);
  }
  if (r.json) {
    Json j = report::envelope("models");
    j["models"] = list;
    print_json(j);
    return k_exit_ok;
  }
  fmt::print("{:<44} {:<36} {:>10} {:>10} {:>9}\n", "id", "architecture", "params(B)", "active(B)", "GiB");
  for (const auto& row : list) {
    if (row.contains("error")) {
      fmt::print("{:<44} error: {}\n", row["id"].get<std::string>(), row["error"].get<std::string>());
      continue;
    }
    fmt::print("{:<44} {:<36} {:>10.2f} {:>10.2f} {:>9.2f}\n", row["id"].get<std::string>(), row["architecture"].get<std::string>(),
               row["params"].get<double>() / 1e9, row["active_params"].get<double>() / 1e9, row["weight_gib"].get<double>());
  }
  return k_exit_ok;
}

int cmd_devices(const std::vector<std::string>& argv) {
  CatalogueRequest r;
  if (auto checked = parse_catalogue_request(argv, "devices", r); !checked) return report_error(checked.error());
  auto catalog = device::load_device_catalog();
  if (!catalog) return report_error(catalog.error());
  // A card without a measured runtime total is sized by its memory class's rule (derive_class_runtime_totals).
  auto sized_by_class = [](const device::DeviceSpec& d) { return !d.runtime_total_bytes && d.class_runtime_total_bytes.has_value(); };
  auto class_rule = [](const device::DeviceSpec& d) {
    return fmt::format("nominal x median ratio of {} measured {} {} cards", d.class_runtime_total_cards, d.vendor, d.memory_kind);
  };
  Json list = Json::array();
  for (const auto& d : catalog->devices) {
    Json by_class;
    if (sized_by_class(d))
      by_class = {{"gib", bytes_to_gib(*d.class_runtime_total_bytes)}, {"low_gib", bytes_to_gib(d.class_runtime_total_low_bytes)},
                  {"high_gib", bytes_to_gib(d.class_runtime_total_high_bytes)}, {"median_ratio", d.class_runtime_total_ratio},
                  {"measured_cards", d.class_runtime_total_cards}, {"rule", class_rule(d)}};
    list.push_back({{"id", d.id}, {"name", d.name}, {"platform", d.platform}, {"memory_gib", bytes_to_gib(d.memory_bytes)},
                    {"runtime_total_gib", d.runtime_total_bytes ? Json(bytes_to_gib(*d.runtime_total_bytes)) : Json()},
                    {"class_runtime_total", by_class},
                    {"hbm_bandwidth_gb_s", d.hbm_bandwidth_bytes_per_s ? Json(*d.hbm_bandwidth_bytes_per_s / 1e9) : Json()},
                    {"aliases", d.aliases}, {"overrides", d.overrides}, {"origin", d.origin},
                    // ux29: the server's device count plan takes as a node (16 for the 910C dies of an Atlas 800 A3), and the
                    // dtypes the card computes in (no bf16: plan starts bf16 checkpoints with --dtype float16).
                    {"devices_per_node", d.node_devices()}, {"dtypes", d.dtypes}});
  }
  if (r.json) {
    Json j = report::envelope("devices");
    j["devices"] = list;
    print_json(j);
    return k_exit_ok;
  }
  fmt::print("{:<16} {:<8} {:>10} {:>12} {:>12}  {}\n", "id", "platform", "mem GiB", "runtime GiB", "HBM GB/s", "name");
  for (const auto& d : catalog->devices) {
    const bool by_class = sized_by_class(d);
    fmt::print("{:<16} {:<8} {:>10.2f} {:>12} {:>12}  {}{}\n", d.id, d.platform, bytes_to_gib(d.memory_bytes),
               d.runtime_total_bytes ? fixed(bytes_to_gib(*d.runtime_total_bytes), 2) : by_class ? "~" + fixed(bytes_to_gib(*d.class_runtime_total_bytes), 2) : "-",
               d.hbm_bandwidth_bytes_per_s ? fixed(*d.hbm_bandwidth_bytes_per_s / 1e9, 0) : "-", d.name, d.overrides.empty() ? "" : " (measured overrides)");
    if (by_class)
      fmt::print("{:<16} class rule: {} GiB (band {}-{}) = {} ({:.4f})\n", "", fixed(bytes_to_gib(*d.class_runtime_total_bytes), 2),
                 fixed(bytes_to_gib(d.class_runtime_total_low_bytes), 2), fixed(bytes_to_gib(d.class_runtime_total_high_bytes), 2), class_rule(d),
                 d.class_runtime_total_ratio);
  }
  return k_exit_ok;
}

int cmd_engines(const std::vector<std::string>& argv) {
  CatalogueRequest r;
  if (auto checked = parse_catalogue_request(argv, "engines", r); !checked) return report_error(checked.error());
  auto catalog = engine::load_engine_catalog();
  if (!catalog) return report_error(catalog.error());
  Json list = Json::array();
  for (const auto& p : catalog->profiles) {
    list.push_back({{"id", p.id}, {"engine", p.engine}, {"versions", p.version_min.text() + " - " + p.version_max.text()}, {"platform", p.platform},
                    {"default_gpu_memory_utilization", p.default_gpu_memory_utilization}, {"block_size", p.block_size},
                    {"max_num_seqs", p.max_num_seqs}, {"max_num_batched_tokens", p.max_num_batched_tokens},
                    {"large_device", {{"max_num_seqs", p.max_num_seqs_large_device}, {"max_num_batched_tokens", p.max_num_batched_tokens_large_device}}},
                    {"sampler", {{"logit_copies", p.sampler_logit_copies}, {"logit_copies_if_flashinfer", p.sampler_logit_copies_if_flashinfer},
                                 {"fixed_bytes", p.sampler_fixed_bytes}, {"source", p.sampler_source}}},
                    {"profiles_mm_encoder", p.profiles_mm_encoder}, {"mxfp4_layouts", [&] {
                       Json l = Json::array();
                       for (const auto& x : p.mxfp4_layouts) l.push_back({{"backend", x.backend}, {"devices", x.devices}, {"families", x.families}, {"source", x.source}});
                       return l;
                     }()},
                    {"graph_memory_in_budget", p.graph_memory_in_budget}, {"supported_quantization", p.supported_quantization}, {"source", p.source}});
  }
  if (r.json) {
    Json j = report::envelope("engines");
    j["engines"] = list;
    print_json(j);
    return k_exit_ok;
  }
  fmt::print("{:<24} {:<22} {:<5} {:>5} {:>6} {:>11} {:>8}  {}\n", "id", "versions", "plat", "util", "block", "seqs/tokens", "sampler", "quantization accepted");
  for (const auto& p : catalog->profiles) {
    fmt::print("{:<24} {:<22} {:<5} {:>5.2f} {:>6} {:>11} {:>7.1f}x  {}\n", p.id, p.version_min.text() + " - " + p.version_max.text(), p.platform,
               p.default_gpu_memory_utilization, p.block_size, fmt::format("{}/{}", p.max_num_seqs, p.max_num_batched_tokens), p.sampler_logit_copies,
               fmt::join(p.supported_quantization, ","));
  }
  return k_exit_ok;
}

int cmd_version(const std::vector<std::string>& argv) {
  CatalogueRequest r;
  if (auto checked = parse_catalogue_request(argv, "version", r); !checked) return report_error(checked.error());
  if (r.json) {
    print_json(report::envelope("version"));
    return k_exit_ok;
  }
  fmt::print("preflight {} ({})\n", PREFLIGHT_VERSION, build_commit());
  return k_exit_ok;
}

}  // namespace preflight::cli
