#include "cli/args.hpp"

#include <cerrno>
#include <cstdlib>

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
