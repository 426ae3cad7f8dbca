// Loader for data/doctor/compat.json (validated like the catalogues: schema_version, unknown keys
// rejected, source required) and the version comparisons the checks use.
#include <cctype>
#include <set>

#include "base/embedded.hpp"
#include "base/json_util.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "doctor/doctor.hpp"

namespace preflight::doctor {

namespace {

constexpr const char* k_compat_file = "doctor/compat.json";

Error corrupt(const std::string& origin, const std::string& what) { return make_error(ErrorKind::corrupt, origin + ": " + what, origin); }

std::vector<int64_t> numeric_parts(const std::string& v) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < v.size() && out.size() < 6) {
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) break;
    int64_t n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) && n < 1000000000) n = n * 10 + (v[i++] - '0');
    out.push_back(n);
    if (i < v.size() && v[i] == '.' && i + 1 < v.size() && std::isdigit(static_cast<unsigned char>(v[i + 1]))) ++i;
    else break;
  }
  return out;
}

std::string normalized(std::string v) {
  v = to_lower(trim(v));
  if (!v.empty() && v[0] == 'v') v.erase(0, 1);
  return v;
}

Expected<SourcedList> sourced_list(const JsonObject& top, const std::string& key) {
  const Json* item = top.find(key);
  if (!item || !item->is_object()) return corrupt(top.origin(), key + ": expected an object with values and source");
  JsonObject o(*item, top.origin(), key);
  PF_TRY(keys, o.only_keys({"values", "source"}));
  (void)keys;
  PF_TRY(source, o.string("source"));
  if (source.empty()) return corrupt(top.origin(), key + ": source is empty");
  const Json* values = o.find("values");
  if (!values || !values->is_array() || values->empty()) return corrupt(top.origin(), key + ".values: expected a non-empty array");
  SourcedList list;
  list.source = source;
  for (const auto& v : *values) {
    if (!v.is_string()) return corrupt(top.origin(), key + ".values: expected strings");
    list.values.push_back(v.get<std::string>());
  }
  return list;
}

Expected<std::map<std::string, std::string>> string_map(const JsonObject& r, const std::string& key) {
  std::map<std::string, std::string> out;
  const Json* m = r.find(key);
  if (!m || m->is_null()) return out;
  if (!m->is_object()) return r.wrong_type(key, "an object of strings");
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (!it.value().is_string()) return r.wrong_type(key, "an object of strings");
    out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

}  // namespace

std::optional<int> compare_versions(const std::string& a, const std::string& b) {
  const auto pa = numeric_parts(normalized(a)), pb = numeric_parts(normalized(b));
  if (pa.empty() || pb.empty()) return std::nullopt;
  for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    const int64_t x = i < pa.size() ? pa[i] : 0, y = i < pb.size() ? pb[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

bool satisfies(const std::string& installed, const std::string& pin) {
  std::string op, want = trim(pin);
  for (const char* candidate : {"==", "<=", ">=", "<", ">"}) {
    if (starts_with(want, candidate)) {
      op = candidate;
      want = trim(want.substr(op.size()));
      break;
    }
  }
  if (op.empty() || op == "==") {
    std::string have = normalized(installed);
    const std::string need = normalized(want);
    if (need.find('+') == std::string::npos) have = have.substr(0, have.find('+'));
    return have == need;
  }
  const auto c = compare_versions(installed, want);
  if (!c) return false;
  if (op == "<") return *c < 0;
  if (op == "<=") return *c <= 0;
  if (op == ">") return *c > 0;
  return *c >= 0;
}

const CompatRow* Compat::row_for(const std::string& version) const {
  const std::string v = normalized(version);
  for (const auto& r : rows) if (normalized(r.vllm_ascend) == v) return &r;
  for (const auto& r : rows) if (starts_with(v, normalized(r.vllm_ascend))) return &r;
  for (const auto& r : rows) {
    const auto c = compare_versions(r.vllm_ascend, v);
    if (c && *c == 0 && numeric_parts(normalized(r.vllm_ascend)).size() >= 3) return &r;
  }
  return nullptr;
}

double Compat::default_utilization(const std::string& vllm_version) const {
  for (const auto& d : utilization_defaults) {
    const auto c = compare_versions(vllm_version, d.from_vllm);
    if (c && *c >= 0) return d.value;
  }
  return utilization_defaults.empty() ? 0.9 : utilization_defaults.back().value;
}

Expected<Compat> parse_compat(const std::string& text, const std::string& origin) {
  PF_TRY(root, parse_json(text, origin));
  if (!root.is_object()) return corrupt(origin, "expected a JSON object");
  JsonObject top(root, origin);
  PF_TRY(keys, top.only_keys({"schema_version", "note", "rows", "cann_prefixes", "driver_lib_dir", "tbe_python_deps", "cuda_only_packages",
                              "compile_cache_dirs", "gpu_memory_utilization_default"}));
  (void)keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  Compat c;
  c.origin = origin;
  const Json* rows = top.find("rows");
  if (!rows || !rows->is_array()) return corrupt(origin, "rows: expected an array");
  std::set<std::string> ids;
  for (const auto& item : *rows) {
    if (!item.is_object()) return corrupt(origin, "rows[]: expected an object");
    JsonObject pre(item, origin, "rows[]");
    PF_TRY(id, pre.string("vllm_ascend"));
    JsonObject r(item, origin, "rows[" + id + "]");
    PF_TRY(row_keys, r.only_keys({"vllm_ascend", "vllm", "python_min", "python_below", "cann", "torch", "torch_npu", "triton_ascend", "requires",
                                  "wheel_glibc_min", "source"}));
    (void)row_keys;
    if (!ids.insert(id).second) return corrupt(origin, "duplicate row " + id);
    CompatRow row;
    row.vllm_ascend = id;
    for (auto [key, slot] : {std::pair<const char*, std::string*>{"vllm", &row.vllm}, {"python_min", &row.python_min}, {"python_below", &row.python_below},
                             {"cann", &row.cann}, {"torch", &row.torch}, {"torch_npu", &row.torch_npu}, {"source", &row.source}}) {
      PF_TRY(value, r.string(key));
      if (value.empty()) return corrupt(origin, "rows[" + id + "]." + key + ": empty");
      *slot = value;
    }
    if (!compare_versions(row.vllm_ascend, "0") || !compare_versions(row.torch, "0")) return corrupt(origin, "rows[" + id + "]: version does not start with a number");
    PF_TRY(triton, r.opt_string("triton_ascend"));
    row.triton_ascend = triton;
    PF_TRY(req, string_map(r, "requires"));
    row.requires_ = std::move(req);
    PF_TRY(glibc, string_map(r, "wheel_glibc_min"));
    row.wheel_glibc_min = std::move(glibc);
    c.rows.push_back(std::move(row));
  }
  if (c.rows.empty()) return corrupt(origin, "rows: empty");
  PF_TRY(prefixes, sourced_list(top, "cann_prefixes"));
  c.cann_prefixes = prefixes;
  PF_TRY(driver, sourced_list(top, "driver_lib_dir"));
  c.driver_lib_dir = driver;
  PF_TRY(tbe, sourced_list(top, "tbe_python_deps"));
  c.tbe_python_deps = tbe;
  PF_TRY(cuda, sourced_list(top, "cuda_only_packages"));
  c.cuda_only_packages = cuda;
  PF_TRY(cache, sourced_list(top, "compile_cache_dirs"));
  c.compile_cache_dirs = cache;
  const Json* util = top.find("gpu_memory_utilization_default");
  if (!util || !util->is_object()) return corrupt(origin, "gpu_memory_utilization_default: expected an object");
  JsonObject u(*util, origin, "gpu_memory_utilization_default");
  PF_TRY(ukeys, u.only_keys({"values", "source"}));
  (void)ukeys;
  PF_TRY(usource, u.string("source"));
  c.utilization_source = usource;
  const Json* uvalues = u.find("values");
  if (!uvalues || !uvalues->is_array()) return corrupt(origin, "gpu_memory_utilization_default.values: expected an array");
  for (const auto& v : *uvalues) {
    if (!v.is_object()) return corrupt(origin, "gpu_memory_utilization_default.values[]: expected an object");
    JsonObject e(v, origin, "gpu_memory_utilization_default.values[]");
    PF_TRY(ekeys, e.only_keys({"from_vllm", "value"}));
    (void)ekeys;
    PF_TRY(from, e.string("from_vllm"));
    PF_TRY(value, e.number("value"));
    if (value <= 0 || value > 1) return corrupt(origin, "gpu_memory_utilization_default: value must be in (0, 1]");
    c.utilization_defaults.push_back({from, value});
  }
  return c;
}

Expected<Compat> load_compat() {
  const auto text = embedded_data(k_compat_file);
  if (text.empty()) return make_error(ErrorKind::not_found, std::string("embedded data ") + k_compat_file + " is missing", k_compat_file);
  return parse_compat(std::string(text), std::string("data/") + k_compat_file);
}

const char* check_status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::ok: return "ok";
    case CheckStatus::warn: return "warn";
    case CheckStatus::fail: return "fail";
    case CheckStatus::skip: return "skip";
  }
  return "skip";
}

}  // namespace preflight::doctor
