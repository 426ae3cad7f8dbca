#include "model/hub_repo_id.hpp"

#include "base/json_writer.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::model {

namespace {

constexpr size_t k_max_part_chars = 96;  // huggingface_hub REPO_ID_REGEX: [\w\-.]{1,96}

bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

std::string part_problem(const std::string& part, const char* which) {
  if (part.empty()) return format("the %s is empty", which);
  if (part.size() > k_max_part_chars) return format("the %s has %zu characters, more than 96", which, part.size());
  for (char c : part) {
    if (!word_char(c) && c != '-' && c != '.') {
      const unsigned char u = static_cast<unsigned char>(c);
      return u < 0x20 || u >= 0x7f ? format("the %s holds byte 0x%02x", which, u) : format("the %s holds '%c'", which, c);
    }
  }
  if (!word_char(part.front()) || !word_char(part.back())) return format("the %s starts or ends with '-' or '.'", which);
  return "";
}

}  // namespace

std::string hub_repo_id_problem(const std::string& id) {
  const size_t slash = id.find('/');
  if (slash == std::string::npos) return "no '/' between org and name";
  if (id.find('/', slash + 1) != std::string::npos) return "more than one '/'";
  if (std::string p = part_problem(id.substr(0, slash), "org"); !p.empty()) return p;
  if (std::string p = part_problem(id.substr(slash + 1), "name"); !p.empty()) return p;
  if (id.find("--") != std::string::npos || id.find("..") != std::string::npos) return "it holds \"--\" or \"..\"";
  if (ends_with(id, ".git")) return "it ends in \".git\"";
  return "";
}

Status check_hub_repo_id(const std::string& id, const std::string& origin) {
  const std::string problem = hub_repo_id_problem(id);
  if (problem.empty()) return Ok{};
  return make_error(ErrorKind::invalid_argument,
                    format("%s: expected a hub repo id org/name (letters, digits, '-', '_', '.'), found %s: %s", origin.c_str(),
                           dump_json(Json(clip_text(id, 120))).c_str(), problem.c_str()),
                    origin);
}

}  // namespace preflight::model
