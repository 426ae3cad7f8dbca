#include "hub/hub_ref.hpp"

#include <cstdlib>
#include <vector>

#include "base/file.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "model/hub_repo_id.hpp"

namespace preflight::hub {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool safe_segment(const std::string& s) {
  if (s.empty() || s == "." || s == ".." || s.size() > 200) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string percent_encode(const std::string& s, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}
}  // namespace

std::string HubRef::text() const {
  std::string out = (hub == HubKind::hugging_face ? "hf:" : "ms:") + repo;
  if (!gguf_file.empty()) out += "/" + gguf_file;
  return out + "@" + revision;
}

bool is_hub_ref(const std::string& text) { return starts_with(text, "hf:") || starts_with(text, "ms:"); }

Expected<HubRef> parse_hub_ref(const std::string& raw) {
  const std::string text = trim(raw);
  if (!is_hub_ref(text)) return make_error(ErrorKind::invalid_argument, "a hub reference starts with hf: or ms:", text);
  HubRef ref;
  ref.hub = starts_with(text, "hf:") ? HubKind::hugging_face : HubKind::modelscope;
  ref.revision = ref.hub == HubKind::hugging_face ? "main" : "master";
  std::string rest = text.substr(3);
  const auto at = rest.rfind('@');
  if (at != std::string::npos) {
    ref.revision = rest.substr(at + 1);
    rest = rest.substr(0, at);
    if (!safe_segment(ref.revision)) {
      return make_error(ErrorKind::invalid_argument, format("%s: revision '%s' must be letters, digits, '-', '_' or '.'", text.c_str(), ref.revision.c_str()), text);
    }
  }
  const auto parts = split(rest, '/');
  if (parts.size() < 2) return make_error(ErrorKind::invalid_argument, format("%s: expected org/name after the hub prefix", text.c_str()), text);
  for (const auto& p : parts) {
    if (!safe_segment(p)) return make_error(ErrorKind::invalid_argument, format("%s: path segment '%s' must be letters, digits, '-', '_' or '.'", text.c_str(), p.c_str()), text);
  }
  ref.repo = parts[0] + "/" + parts[1];
  // Issue 19 (hard31): the repo id by the hub's own rules before it names a cache directory ("a--b" and "a..b" passed
  // the segment check and are no repo id the hub accepts).
  PF_TRY(repo_ok, model::check_hub_repo_id(ref.repo, text));
  (void)repo_ok;
  if (parts.size() > 2) {
    for (size_t i = 2; i < parts.size(); ++i) ref.gguf_file += (i > 2 ? "/" : "") + parts[i];
    if (!ends_with(to_lower(ref.gguf_file), ".gguf")) {
      return make_error(ErrorKind::invalid_argument, format("%s: a file in a hub reference must be a .gguf file, found '%s'", text.c_str(), ref.gguf_file.c_str()), text);
    }
  }
  return ref;
}

std::string hub_endpoint(HubKind hub) {
  std::string out;
  if (hub == HubKind::hugging_face) {
    out = env("HF_ENDPOINT");
    if (out.empty()) out = "https://huggingface.co";
  } else {
    out = env("MODELSCOPE_DOMAIN");
    if (out.empty()) out = "www.modelscope.cn";
    if (out.find("://") == std::string::npos) out = "https://" + out;
  }
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

std::string hub_file_url(const HubRef& ref, const std::string& endpoint, const std::string& file) {
  if (ref.hub == HubKind::hugging_face) return endpoint + "/" + ref.repo + "/resolve/" + percent_encode(ref.revision, false) + "/" + percent_encode(file, true);
  return endpoint + "/api/v1/models/" + ref.repo + "/repo?Revision=" + percent_encode(ref.revision, false) + "&FilePath=" + percent_encode(file, false);
}

std::string endpoint_host(const std::string& endpoint) {
  std::string host = endpoint;
  if (const auto p = host.find("://"); p != std::string::npos) host = host.substr(p + 3);
  if (const auto p = host.find('/'); p != std::string::npos) host = host.substr(0, p);
  if (const auto p = host.rfind('@'); p != std::string::npos) host = host.substr(p + 1);
  std::string out;
  for (char c : host) out += (c == ':') ? '_' : c;
  return safe_segment(out) ? out : std::string("endpoint");
}

Expected<std::optional<HubToken>> load_hub_token(HubKind hub) {
  auto checked = [](std::string value, std::string source) -> Expected<std::optional<HubToken>> {
    PF_TRY(ok, check_token_characters(value, source));
    (void)ok;
    return std::optional<HubToken>{HubToken{std::move(value), std::move(source)}};
  };
  for (const char* name : hub == HubKind::modelscope ? std::vector<const char*>{"MODELSCOPE_API_TOKEN"} : std::vector<const char*>{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    std::string v = trim(env(name));
    if (!v.empty()) return checked(std::move(v), name);
  }
  if (hub == HubKind::modelscope) return std::optional<HubToken>{};
  // Which setting named the file, for the error: HF_TOKEN_PATH names the file itself (a wrong one is bad input, exit
  // 2); HF_HOME, or HOME's default, names the place it is looked for (a place that cannot be read is the machine's,
  // exit 3: HF_HOME naming a file).
  std::string path = env("HF_TOKEN_PATH");
  std::string setting = "HF_TOKEN_PATH";
  if (path.empty()) {
    std::string home = env("HF_HOME");
    setting = "$HF_HOME/token";
    if (home.empty()) {
      home = join_path(env("HOME").empty() ? "/root" : env("HOME"), ".cache/huggingface");
      setting = "the default ~/.cache/huggingface/token";
    }
    path = join_path(home, "token");
  }
  // read_text_file never blocks: a FIFO here is refused, not waited on.
  auto text = read_text_file(path, 4096);
  if (!text) {
    if (text.error().kind == ErrorKind::not_found) return std::optional<HubToken>{};
    std::string why = text.error().message;
    if (starts_with(why, path + ": ")) why = why.substr(path.size() + 2);
    const ErrorKind kind = setting == "HF_TOKEN_PATH" || text.error().kind != ErrorKind::io ? text.error().kind : ErrorKind::environment;
    return make_error(kind, format("%s: cannot read the hub token file (%s): %s", path.c_str(), setting.c_str(), why.c_str()), path);
  }
  std::string token = trim(*text);
  if (token.empty()) return std::optional<HubToken>{};
  return checked(std::move(token), path);
}

std::optional<std::string> hub_token(HubKind hub) {
  auto token = load_hub_token(hub);
  if (!token || !*token) return std::nullopt;
  return (*token)->value;
}

std::string redact(std::string text, const std::string& token) {
  if (!token.empty()) {
    for (size_t pos = text.find(token); pos != std::string::npos; pos = text.find(token, pos + 3)) text.replace(pos, token.size(), "***");
  }
  return redact_url_credentials(std::move(text));
}

Status check_token_characters(const std::string& token, const std::string& source) {
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c < 0x20 || c == 0x7f) {
      return make_error(ErrorKind::invalid_argument, format("%s: the token holds control character 0x%02x at byte %zu (a CR or LF would inject an HTTP header); not sent",
                                                           source.c_str(), c, i), source);
    }
  }
  return Ok{};
}

}  // namespace preflight::hub
