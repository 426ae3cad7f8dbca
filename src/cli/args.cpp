#include "cli/args.hpp"

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::cli {

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Expected<std::optional<int64_t>> Args::get_int(const std::string& name) const {
  auto v = get(name);
  if (!v) return std::optional<int64_t>{};
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(v->c_str(), &end, 10);
  if (errno != 0 || end == v->c_str() || *end != '\0') return make_error(ErrorKind::invalid_argument, format("--%s: expected an integer, got '%s'", name.c_str(), v->c_str()));
  return std::optional<int64_t>{parsed};
}

Expected<std::optional<double>> Args::get_double(const std::string& name) const {
  auto v = get(name);
  if (!v) return std::optional<double>{};
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(v->c_str(), &end);
  if (errno != 0 || end == v->c_str() || *end != '\0') return make_error(ErrorKind::invalid_argument, format("--%s: expected a number, got '%s'", name.c_str(), v->c_str()));
  return std::optional<double>{parsed};
}

Expected<deploy::Flags> deployment_flags(const Args& args) {
  deploy::Flags f;
  auto integer = [&](const char* name, std::optional<deploy::Given<int64_t>>& into) -> Status {
    PF_TRY(v, args.get_int(name));
    if (v) into = deploy::Given<int64_t>{*v, std::string("--") + name};
    return Ok{};
  };
  for (const auto& [name, into] : {std::pair{"tensor-parallel-size", &f.tensor_parallel_size}, std::pair{"pipeline-parallel-size", &f.pipeline_parallel_size},
                                   std::pair{"num-devices", &f.num_devices}, std::pair{"max-model-len", &f.max_model_len},
                                   std::pair{"max-num-seqs", &f.max_num_seqs}, std::pair{"max-num-batched-tokens", &f.max_num_batched_tokens}}) {
    PF_TRY(ok, integer(name, *into));
    (void)ok;
  }
  PF_TRY(util, args.get_double("gpu-memory-utilization"));
  if (util) f.gpu_memory_utilization = deploy::Given<double>{*util, "--gpu-memory-utilization"};
  for (const auto& [name, into] : {std::pair{"kv-cache-dtype", &f.kv_cache_dtype}, std::pair{"quantization", &f.quantization},
                                   std::pair{"limit-mm-per-prompt", &f.limit_mm_per_prompt}}) {
    if (auto v = args.get(name)) *into = deploy::Given<std::string>{*v, std::string("--") + name};
  }
  if (args.has("enforce-eager")) f.enforce_eager = deploy::Given<bool>{true, "--enforce-eager"};
  if (args.has("skip-mm-profiling")) f.skip_mm_profiling = deploy::Given<bool>{true, "--skip-mm-profiling"};
  return f;
}

Expected<Args> parse_args(const std::vector<std::string>& argv, const std::vector<FlagSpec>& flags) {
  Args args;
  std::vector<std::string> names;
  for (const auto& f : flags) names.push_back("--" + f.name);
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), value;
      bool inline_value = false;
      if (const auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      for (auto& c : name) if (c == '_') c = '-';
      const FlagSpec* spec = nullptr;
      for (const auto& f : flags) if (f.name == name) spec = &f;
      if (!spec) {
        std::string message = format("unknown flag --%s", name.c_str());
        const auto near = nearest_names("--" + name, names, 1);
        if (!near.empty()) message += "; did you mean " + near[0];
        return make_error(ErrorKind::invalid_argument, message);
      }
      if (spec->takes_value && !inline_value) {
        if (i + 1 >= argv.size()) return make_error(ErrorKind::invalid_argument, format("--%s needs a value", name.c_str()));
        value = argv[++i];
      }
      args.values[name] = spec->takes_value ? value : "1";
    } else {
      args.positional.push_back(a);
    }
  }
  return args;
}

}  // namespace preflight::cli
