// engine/allreduce_workspace: reads overheads[cuda].allreduce_fusion_workspace of engines.json (docs/memory-model.md,
// "The FlashInfer all-reduce workspace").
#include "engine/allreduce_workspace.hpp"
#include "engine/version_range.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::engine {

namespace {

constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;

Expected<AllreduceMaxInput> parse_max_input(const Json& item, const std::string& origin) {
  JsonObject d(item, origin, "overheads[].allreduce_fusion_workspace.max_inputs[]");
  PF_TRY(keys, d.only_keys({"devices", "tensor_parallel_size", "bytes"}));
  (void)keys;
  AllreduceMaxInput out;
  PF_TRY(devices, string_list(d.find("devices"), d.key_path("devices"), origin));
  if (devices.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: expected at least one device id", origin.c_str(), d.key_path("devices").c_str()), origin);
  out.devices = devices;
  PF_TRY(tp, d.int_("tensor_parallel_size"));
  if (tp < 2 || tp > 64) return make_error(ErrorKind::corrupt, format("%s: %s: expected 2-64", origin.c_str(), d.key_path("tensor_parallel_size").c_str()), origin);
  out.tensor_parallel_size = tp;
  PF_TRY(bytes, d.number("bytes"));
  if (!(bytes > 0 && bytes <= k_gib)) return make_error(ErrorKind::corrupt, format("%s: %s: expected more than 0 and at most 1 GiB", origin.c_str(), d.key_path("bytes").c_str()), origin);
  out.bytes = bytes;
  return out;
}

// A positive size of at most `max` bytes under `key`.
Expected<double> size_field(const JsonObject& r, const std::string& key, double max, const std::string& origin) {
  PF_TRY(v, r.number(key));
  if (!(v > 0 && v <= max)) return make_error(ErrorKind::corrupt, format("%s: %s: expected more than 0 and at most %.0f bytes", origin.c_str(), r.key_path(key).c_str(), max), origin);
  return v;
}

}  // namespace

double AllreduceFusionWorkspace::max_input_bytes(const std::string& device_id, int64_t tensor_parallel_size) const {
  for (const auto& m : max_inputs)
    if (m.tensor_parallel_size == tensor_parallel_size && std::find(m.devices.begin(), m.devices.end(), device_id) != m.devices.end()) return m.bytes;
  return 0;
}

bool AllreduceFusionWorkspace::allocated_by(const EngineProfile& e, int64_t tensor_parallel_size, int64_t pipeline_parallel_size, int64_t data_parallel_size,
                                            Interconnect interconnect) const {
  return tensor_parallel_size > 1 && pipeline_parallel_size <= pipeline_parallel_max && data_parallel_size <= data_parallel_max && e.engine == engine &&
         e.rule_applies(counted) && std::find(interconnects.begin(), interconnects.end(), interconnect) != interconnects.end();
}

Expected<AllreduceFusionWorkspace> parse_allreduce_fusion_workspace(const JsonObject& r, const std::string& origin) {
  PF_TRY(keys, r.only_keys({"engine", "version_min", "version_max", "version_source", "interconnects", "pipeline_parallel_max", "data_parallel_max",
                            "conditions_source", "max_inputs", "max_input_source", "lamport_copies", "flag_bytes_per_rank", "lamport_comm_max_bytes",
                            "buffer_alignment_bytes", "buffers_source", "signal_pad_bytes", "granularity_bytes", "granularity_source"}));
  (void)keys;
  AllreduceFusionWorkspace w;
  PF_TRY(engine, r.string("engine"));
  w.engine = engine;
  PF_TRY(counted, read_counted_versions(r, origin));
  w.counted = counted;
  PF_TRY(ics, string_list(r.find("interconnects"), r.key_path("interconnects"), origin));
  for (const auto& text : ics) {
    const auto ic = parse_interconnect(text);
    if (!ic) return make_error(ErrorKind::corrupt, format("%s: %s: expected one of %s, found '%s'", origin.c_str(), r.key_path("interconnects").c_str(), interconnect_choices().c_str(), text.c_str()), origin);
    w.interconnects.push_back(*ic);
  }
  if (w.interconnects.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: expected at least one interconnect", origin.c_str(), r.key_path("interconnects").c_str()), origin);
  PF_TRY(pp_max, r.int_("pipeline_parallel_max"));
  PF_TRY(dp_max, r.int_("data_parallel_max"));
  if (pp_max < 1 || dp_max < 1) return make_error(ErrorKind::corrupt, format("%s: %s: expected at least 1", origin.c_str(), r.key_path("pipeline_parallel_max").c_str()), origin);
  w.pipeline_parallel_max = pp_max;
  w.data_parallel_max = dp_max;
  PF_TRY(csrc, read_source_field(r, "conditions_source", origin));
  w.conditions_source = csrc;
  PF_TRY(rows, r.array("max_inputs"));
  for (const auto& item : *rows) {
    PF_TRY(m, parse_max_input(item, origin));
    w.max_inputs.push_back(std::move(m));
  }
  PF_TRY(msrc, read_source_field(r, "max_input_source", origin));
  w.max_input_source = msrc;
  PF_TRY(copies, r.int_("lamport_copies"));
  PF_TRY(flag, r.int_("flag_bytes_per_rank"));
  if (copies < 1 || copies > 8 || flag < 0 || flag > 1024 * 1024)
    return make_error(ErrorKind::corrupt, format("%s: %s: expected lamport_copies 1-8 and flag_bytes_per_rank 0-1 MiB", origin.c_str(), r.key_path("lamport_copies").c_str()), origin);
  w.lamport_copies = copies;
  w.flag_bytes_per_rank = flag;
  PF_TRY(comm_max, size_field(r, "lamport_comm_max_bytes", 4.0 * k_gib, origin));
  PF_TRY(align, size_field(r, "buffer_alignment_bytes", k_gib, origin));
  w.lamport_comm_max_bytes = comm_max;
  w.buffer_alignment_bytes = align;
  PF_TRY(bsrc, read_source_field(r, "buffers_source", origin));
  w.buffers_source = bsrc;
  PF_TRY(pad, size_field(r, "signal_pad_bytes", 1024.0 * 1024.0, origin));
  PF_TRY(gran, size_field(r, "granularity_bytes", 4.0 * k_gib, origin));
  w.signal_pad_bytes = pad;
  w.granularity_bytes = gran;
  PF_TRY(gsrc, read_source_field(r, "granularity_source", origin));
  w.granularity_source = gsrc;
  return w;
}

}  // namespace preflight::engine
