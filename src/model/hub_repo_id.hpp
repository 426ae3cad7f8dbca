// model/hub_repo_id: whether a text is a hub repository id, before any path is built from it. A model id names a
// directory of the Hugging Face cache (models--org--name) and of ModelScope's (models/org/name), and `..`, an absolute
// path, a NUL or a backslash in it joined into those paths: "x/../../elsewhere" read a config.json outside the cache
// (issue 19, hard31).
#pragma once

#include <string>

#include "base/error.hpp"

namespace preflight::model {

// huggingface_hub's own rules (utils/_validators.py validate_repo_id, REPO_ID_REGEX): "namespace/name", each part 1 to
// 96 of ASCII letters, digits, '-', '_' and '.', starting and ending with a letter, digit or '_'; no "--" or ".."
// anywhere; not ending in ".git". preflight wants the namespace (a bare name is a catalogue name or a local path) and
// applies the name's 96 to it too. ModelScope's ids take the same form. The reason `id` is not one ("" when it is).
std::string hub_repo_id_problem(const std::string& id);
inline bool is_hub_repo_id(const std::string& id) { return hub_repo_id_problem(id).empty(); }

// invalid_argument "<origin>: expected a hub repo id org/name (...), found "<id>": <reason>", the id JSON-quoted and cut.
Status check_hub_repo_id(const std::string& id, const std::string& origin);

}  // namespace preflight::model
