// hub/metadata_cache: fetched metadata on disk, one entry per repo and revision:
//   $XDG_CACHE_HOME/preflight/hub/<endpoint host>/<org>/<name>/<revision>/   (~/.cache when unset)
// holding config.json, the index, quantization descriptors, header stubs (model/header_stub) and
// manifest.json, which is written last. An entry is built in a temporary sibling directory and
// renamed into place in one step, so a reader sees either a whole entry or none: a failed or
// interrupted fetch never leaves a partial or corrupt entry. Files are not fsync'ed (a cache: a
// damaged entry after a crash is detected from the sizes in its manifest and fetched again). Tokens
// are never written here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "hub/hub_ref.hpp"

namespace preflight::hub {

// The cache root: `override_root` when set, else $XDG_CACHE_HOME/preflight/hub, else ~/.cache/preflight/hub.
std::string metadata_cache_root(const std::string& override_root = {});

// The entry directory for `ref` (a GGUF reference gets its own entry, "<revision>@<file>").
std::string metadata_entry_dir(const std::string& root, const std::string& endpoint, const HubRef& ref);

// True when `dir` holds a committed entry (its manifest.json).
bool metadata_entry_complete(const std::string& dir);

// An entry under construction. Files go to a temporary directory; commit() writes manifest.json
// and renames the directory into place (replacing an older entry); destruction without commit
// removes everything written, the directories begin() created for it included (the cache root, the
// endpoint's and the repo's folders), so a failed fetch leaves the cache as it found it.
class EntryStaging {
 public:
  // environment error (exit 3) naming the directory when the cache cannot be created there
  // (XDG_CACHE_HOME a file, a read-only place).
  static Expected<EntryStaging> begin(const std::string& entry_dir);
  EntryStaging(EntryStaging&& other) noexcept;
  EntryStaging& operator=(EntryStaging&&) = delete;
  EntryStaging(const EntryStaging&) = delete;
  EntryStaging& operator=(const EntryStaging&) = delete;
  ~EntryStaging();

  // `name` is a plain file name (no '/').
  Status write_file(const std::string& name, const std::string& bytes);
  Status commit(const std::string& manifest_json);
  // The temporary directory files are written to (readable before commit, for validation).
  const std::string& dir() const { return m_temp_dir; }

 private:
  EntryStaging(std::string entry_dir, std::string temp_dir, std::vector<std::string> created_dirs);
  std::string m_entry_dir;
  std::string m_temp_dir;
  std::vector<std::string> m_created_dirs;  // made by begin(), deepest first: removed again when empty
  bool m_committed = false;
};

}  // namespace preflight::hub
