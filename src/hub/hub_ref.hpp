// hub/hub_ref: names a model on a hub and says where its files are served. A reference is
// "hf:org/name[/file.gguf][@rev]" (Hugging Face) or "ms:org/name[/file.gguf][@rev]" (ModelScope).
// Endpoints, tokens and the redaction rule follow the hubs' own clients (docs/hub.md):
//   Hugging Face: HF_ENDPOINT (default https://huggingface.co), GET {endpoint}/{repo}/resolve/{rev}/{file};
//                 token from HF_TOKEN, HUGGING_FACE_HUB_TOKEN, HF_TOKEN_PATH, $HF_HOME/token or
//                 ~/.cache/huggingface/token. Default revision "main".
//   ModelScope:   MODELSCOPE_DOMAIN (a host, default www.modelscope.cn; a value with "://" is used as
//                 the whole endpoint), GET {endpoint}/api/v1/models/{repo}/repo?Revision={rev}&FilePath={file};
//                 token from MODELSCOPE_API_TOKEN. Default revision "master".
// A token is sent only as an Authorization header, never placed in a URL, and redact() removes it
// from any text that leaves the module.
#pragma once

#include <optional>
#include <string>

#include "base/error.hpp"

namespace preflight::hub {

enum class HubKind { hugging_face, modelscope };

struct HubRef {
  HubKind hub = HubKind::hugging_face;
  std::string repo;        // "org/name"
  std::string revision;    // branch, tag or commit
  std::string gguf_file;   // set when the reference names one .gguf file in the repo
  std::string text() const;  // "hf:org/name@rev" (with "/file.gguf" when set)
};

// invalid_argument error for anything but prefix, two safe path segments, an optional .gguf path
// and an optional @rev of safe characters.
Expected<HubRef> parse_hub_ref(const std::string& text);
bool is_hub_ref(const std::string& text);  // starts with "hf:" or "ms:"

// Base URL without a trailing slash, from the environment (see above).
std::string hub_endpoint(HubKind hub);
// The URL of `file` in the repo at the revision; `endpoint` from hub_endpoint (tests pass their own).
std::string hub_file_url(const HubRef& ref, const std::string& endpoint, const std::string& file);
// "huggingface.co" from "https://huggingface.co:443/x": the cache folder name of an endpoint.
std::string endpoint_host(const std::string& endpoint);

// A token and where it was read from: the variable ("HF_TOKEN") or the file's path. Errors about
// the token name `source`, never the token.
struct HubToken {
  std::string value;
  std::string source;
};

// The token for `hub` from the environment or the usual token file; nullopt when none.
std::optional<std::string> hub_token(HubKind hub);
// The same with its source, but a token file that exists and cannot be read (a FIFO, a directory,
// no permission: HF_TOKEN_PATH pointing at the wrong thing) is an error naming the file instead of
// "no token", and a token holding a control character is invalid_argument naming its source
// (check_token_characters).
Expected<std::optional<HubToken>> load_hub_token(HubKind hub);

// `text` with every occurrence of `token` replaced by "***", and the credentials of any URL in it
// (HF_ENDPOINT=http://user:pw@host) replaced by "***" (base/text redact_url_credentials).
std::string redact(std::string text, const std::string& token);

// invalid_argument when `token` holds a control character: a CR or LF would end the Authorization
// header and start one of the server's choosing. `source` names where it came from (a variable or a file).
Status check_token_characters(const std::string& token, const std::string& source);

}  // namespace preflight::hub
