// The model caches (issue 16, llamacpp30): whether a model is whole in the Hugging Face cache and in ModelScope's,
// before an engine starts on it and finds a shard missing half-way through loading.
// Hugging Face (huggingface_hub, https://huggingface.co/docs/huggingface_hub/guides/manage-cache): the cache is
// HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub; a repo is models--org--name/ with refs/<branch>
// (the commit it points to), snapshots/<commit>/ (one symbolic link per file, into ../../blobs/) and blobs/<hash>;
// a download cut short leaves blobs/<hash>.incomplete and no link to it.
// ModelScope (modelscope/hub/file_download.py): MODELSCOPE_CACHE, else ~/.cache/modelscope/hub; a repo is
// models/org/name/ (older SDKs: org/name/; a '.' in the name stored as "___"), the files themselves, and the files
// still downloading under ._____temp/ in it.
// Whole means: config.json, and every shard model.safetensors.index.json's weight_map names (or model.safetensors)
// present with the size its own safetensors header gives (8 + header length + the end of its last tensor). A link
// whose real path leaves the cache root is not followed for its size. Nothing is deleted.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/checked.hpp"
#include "base/json_util.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "doctor/probe.hpp"

namespace preflight::doctor {

namespace {

constexpr uint64_t k_max_safetensors_header_bytes = 100ull * 1024 * 1024;  // safetensors' own limit (100 MB)
constexpr uint64_t k_max_index_bytes = 64ull * 1024 * 1024;                // DeepSeek-V3's index is 8.9 MB
constexpr size_t k_shown_names = 4;                                         // files named in a summary line

std::optional<std::string> real_path_of(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

bool inside(const std::string& real_root, const std::string& real) {
  if (real_root == "/") return !real.empty() && real[0] == '/';
  return real == real_root || starts_with(real, real_root + "/");
}

// GiB from 1 GiB up, MiB below (a shard's few MiB read 0.00 GiB).
std::string size_text(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  return b >= k_gib ? format("%.2f GiB", bytes_to_gib(b)) : format("%.2f MiB", b / (1024.0 * 1024.0));
}

// The size a safetensors file must have: 8 + its header's length + the end of its last tensor's data
// (https://github.com/huggingface/safetensors, format: u64 header length, JSON header, byte buffer). `fd` is open on
// the file, `size` its length; an error names what in the header is wrong.
struct ShardSize {
  uint64_t file_bytes = 0, tensor_bytes = 0;
};
Expected<ShardSize> safetensors_expected_size(int fd, uint64_t size, const std::string& name) {
  if (size < 8) return make_error(ErrorKind::corrupt, format("%s: %llu bytes, shorter than the 8-byte header length", name.c_str(), static_cast<unsigned long long>(size)));
  unsigned char len_bytes[8];
  if (::pread(fd, len_bytes, 8, 0) != 8) return make_error(ErrorKind::io, name + ": cannot read the header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > k_max_safetensors_header_bytes)
    return make_error(ErrorKind::corrupt, format("%s: header length %llu exceeds 100 MB", name.c_str(), static_cast<unsigned long long>(n)));
  if (n > size - 8)
    return make_error(ErrorKind::corrupt, format("%s: header length %llu runs past the end of the file (%llu bytes): cut short", name.c_str(),
                                                 static_cast<unsigned long long>(n), static_cast<unsigned long long>(size)));
  std::string text(n, '\0');
  if (static_cast<uint64_t>(::pread(fd, text.data(), n, 8)) != n) return make_error(ErrorKind::io, name + ": cannot read the header");
  PF_TRY(header, parse_json(text, name));
  if (!header.is_object()) return make_error(ErrorKind::corrupt, name + ": header: expected a JSON object of tensors");
  uint64_t end = 0;
  for (const auto& [tensor, info] : header.items()) {
    if (tensor == "__metadata__") continue;
    const Json* offsets = info.is_object() && info.contains("data_offsets") ? &info["data_offsets"] : nullptr;
    if (!offsets || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[1].is_number_unsigned() || !(*offsets)[0].is_number_unsigned())
      return make_error(ErrorKind::corrupt, format("%s: %s.data_offsets: expected two unsigned integers", name.c_str(), tensor.c_str()));
    end = std::max(end, (*offsets)[1].get<uint64_t>());
  }
  const auto expected = checked_add(8 + n, end);
  if (!expected) return make_error(ErrorKind::corrupt, name + ": data_offsets overflow");
  return ShardSize{*expected, end};
}

// One file of the snapshot: present, its real path inside the cache root, and (a safetensors shard) as long as its
// header says.
CachedFile examine_file(const std::string& dir_on_disk, const std::string& name, const std::string& real_cache_root, bool shard) {
  CachedFile f;
  f.name = name;
  const std::string path = join_path(dir_on_disk, name);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    f.state = CachedFileState::missing;
    return f;
  }
  const auto real = real_path_of(path);
  if (!real) {  // a link to a blob that is not there
    f.state = CachedFileState::missing;
    f.detail = "a link whose target is missing";
    return f;
  }
  if (!inside(real_cache_root, *real)) {
    f.state = CachedFileState::outside_cache;
    f.detail = "links to " + *real + ", outside the cache root " + real_cache_root + ": not followed, size not read";
    return f;
  }
  const int fd = ::open(real->c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat fst;
  if (fd < 0 || ::fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
    if (fd >= 0) ::close(fd);
    f.state = CachedFileState::unreadable;
    f.detail = fd < 0 ? std::string(std::strerror(errno)) : "not a regular file";
    return f;
  }
  f.size_bytes = static_cast<uint64_t>(fst.st_size);
  if (shard) {
    auto expected = safetensors_expected_size(fd, *f.size_bytes, name);
    if (!expected) {
      f.state = CachedFileState::truncated;
      f.detail = expected.error().message;
    } else {
      f.expected_bytes = expected->file_bytes;
      f.tensor_bytes = expected->tensor_bytes;
      if (*f.size_bytes < expected->file_bytes) f.state = CachedFileState::truncated;
      else if (*f.size_bytes > expected->file_bytes) f.state = CachedFileState::oversized;
      if (f.state != CachedFileState::ok)
        f.detail = format("%llu bytes, its header says %llu", static_cast<unsigned long long>(*f.size_bytes), static_cast<unsigned long long>(expected->file_bytes));
    }
  }
  ::close(fd);
  return f;
}

// The weight files the snapshot should hold: the shards of model.safetensors.index.json (each once, in order of first
// appearance) and its metadata.total_size, else model.safetensors alone. Empty with a reason when neither is there.
struct WeightList {
  std::vector<std::string> shards;
  std::optional<uint64_t> total_bytes;
  std::string index;  // the index file's name when one was read
  std::string problem;
};

WeightList weight_list(const std::string& dir_on_disk, const std::string& real_cache_root) {
  WeightList w;
  const std::string index = "model.safetensors.index.json";
  const CachedFile idx = examine_file(dir_on_disk, index, real_cache_root, false);
  if (idx.state == CachedFileState::ok) {
    w.index = index;
    auto text = read_text_file(real_path_of(join_path(dir_on_disk, index)).value_or(""), k_max_index_bytes);
    auto json = text ? parse_json(*text, index) : Expected<Json>(text.error());
    const Json* map = json && json->is_object() && json->contains("weight_map") ? &(*json)["weight_map"] : nullptr;
    if (!map || !map->is_object()) {
      w.problem = json ? index + ": weight_map: expected an object of tensor name -> shard file" : json.error().message;
      return w;
    }
    std::set<std::string> seen;
    for (const auto& [tensor, shard] : map->items()) {
      if (!shard.is_string() || shard.get<std::string>().find('/') != std::string::npos) {
        w.problem = index + ": weight_map[" + tensor + "]: expected a shard file name";
        return w;
      }
      if (seen.insert(shard.get<std::string>()).second) w.shards.push_back(shard.get<std::string>());
    }
    const Json* meta = json->contains("metadata") ? &(*json)["metadata"] : nullptr;
    if (meta && meta->is_object() && meta->contains("total_size") && (*meta)["total_size"].is_number_unsigned())
      w.total_bytes = (*meta)["total_size"].get<uint64_t>();
    return w;
  }
  if (idx.state == CachedFileState::outside_cache) {
    w.problem = index + " " + idx.detail;
    return w;
  }
  struct stat st;
  if (::lstat(join_path(dir_on_disk, "model.safetensors").c_str(), &st) == 0) {
    w.shards.push_back("model.safetensors");
    return w;
  }
  w.problem = "neither model.safetensors.index.json nor model.safetensors";
  return w;
}

// Free bytes for an unprivileged writer on the filesystem of `path_on_disk` (or of its nearest existing parent).
std::optional<uint64_t> free_bytes_at(std::string path_on_disk) {
  struct statvfs vfs;
  for (int depth = 0; depth < 64 && !path_on_disk.empty(); ++depth) {
    if (::statvfs(path_on_disk.c_str(), &vfs) == 0) return checked_mul(static_cast<uint64_t>(vfs.f_bavail), static_cast<uint64_t>(vfs.f_frsize));
    const auto slash = path_on_disk.find_last_of('/');
    if (slash == std::string::npos || slash == 0) break;
    path_on_disk.resize(slash);
  }
  return std::nullopt;
}

// Regular files directly in `dir_on_disk` whose names pass `keep`, with their sizes (links not followed).
std::vector<CachedFile> partial_files(const std::string& dir_on_disk, const std::string& shown_prefix, bool (*keep)(const std::string&)) {
  std::vector<CachedFile> out;
  for (const auto& name : list_directory(dir_on_disk)) {
    struct stat st;
    if (!keep(name) || ::lstat(join_path(dir_on_disk, name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    CachedFile f;
    f.name = shown_prefix + name;
    f.state = CachedFileState::truncated;
    f.size_bytes = static_cast<uint64_t>(st.st_size);
    out.push_back(f);
  }
  return out;
}

bool incomplete_blob(const std::string& name) { return ends_with(name, ".incomplete"); }
bool any_file(const std::string&) { return true; }

// Whether `text` is a 40-digit commit hash.
bool is_commit(const std::string& text) {
  return text.size() == 40 && std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// The snapshot files of `state` examined against the weight list, the partial downloads, the space left, and the state.
void examine_snapshot(ModelCacheState& state, const Probe& probe, const std::string& cache_root) {
  const auto real_root = real_path_of(probe.at(cache_root));
  if (!real_root) {
    state.state = CacheState::unverified;
    state.problem = "cannot resolve the cache root " + cache_root;
    return;
  }
  const std::string snap = probe.at(state.snapshot);
  state.files.push_back(examine_file(snap, "config.json", *real_root, false));
  const WeightList w = weight_list(snap, *real_root);
  state.index_total_bytes = w.total_bytes;
  if (!w.index.empty()) state.files.push_back(examine_file(snap, w.index, *real_root, false));
  for (const auto& shard : w.shards) state.files.push_back(examine_file(snap, shard, *real_root, ends_with(shard, ".safetensors")));
  state.problem = w.problem;
  bool missing = !w.problem.empty(), unverified = false;
  uint64_t whole_data = 0;
  for (const auto& f : state.files) {
    missing = missing || f.state == CachedFileState::missing || f.state == CachedFileState::truncated || f.state == CachedFileState::oversized;
    unverified = unverified || f.state == CachedFileState::outside_cache || f.state == CachedFileState::unreadable;
    if (f.state == CachedFileState::ok && f.tensor_bytes) whole_data += *f.tensor_bytes;
  }
  state.state = missing ? CacheState::incomplete : unverified ? CacheState::unverified : CacheState::complete;
  if (state.state == CacheState::incomplete) {
    // Still to fetch: the index's total (tensor bytes) less what the whole shards hold, or the cut shards' shortfall.
    if (w.total_bytes) {
      state.missing_bytes = *w.total_bytes > whole_data ? *w.total_bytes - whole_data : 0;
    } else {
      uint64_t short_by = 0;
      for (const auto& f : state.files)
        if (f.state == CachedFileState::truncated && f.expected_bytes && f.size_bytes) short_by += *f.expected_bytes - *f.size_bytes;
      if (short_by) state.missing_bytes = short_by;
    }
    state.free_bytes = free_bytes_at(probe.at(cache_root));
  }
}

ModelCacheState huggingface_state(const Probe& probe, const std::string& model, const std::string& revision) {
  ModelCacheState s;
  s.hub = "huggingface";
  const std::string home = probe.env("HOME").value_or("/root");
  const std::string hf_home = probe.env("HF_HOME").value_or(join_path(home, ".cache/huggingface"));
  const std::string root = probe.env("HF_HUB_CACHE").value_or(probe.env("HUGGINGFACE_HUB_CACHE").value_or(join_path(hf_home, "hub")));
  std::string repo = "models--";
  for (char c : model) repo += c == '/' ? std::string("--") : std::string(1, c);
  s.directory = join_path(root, repo);
  s.looked_in = {s.directory};
  s.download_command = "hf download " + model + (revision == "main" ? "" : " --revision " + revision);
  if (!probe.is_dir(s.directory)) return s;
  s.state = CacheState::incomplete;
  std::string commit = is_commit(revision) ? revision : "";
  if (commit.empty()) {
    if (auto ref = probe.read(join_path(join_path(s.directory, "refs"), revision), 4096)) commit = trim(*ref);
  }
  if (!is_commit(commit) || !probe.is_dir(join_path(join_path(s.directory, "snapshots"), commit))) {
    s.problem = is_commit(commit) ? "refs/" + revision + " names " + commit + ", which has no snapshot" : "no refs/" + revision + " naming a commit";
    s.partial = partial_files(probe.at(join_path(s.directory, "blobs")), "blobs/", incomplete_blob);
    s.free_bytes = free_bytes_at(probe.at(root));
    return s;
  }
  s.revision = commit;
  s.snapshot = join_path(join_path(s.directory, "snapshots"), commit);
  s.partial = partial_files(probe.at(join_path(s.directory, "blobs")), "blobs/", incomplete_blob);
  examine_snapshot(s, probe, root);
  return s;
}

ModelCacheState modelscope_state(const Probe& probe, const std::string& model) {
  ModelCacheState s;
  s.hub = "modelscope";
  const std::string home = probe.env("HOME").value_or("/root");
  const std::string root = probe.env("MODELSCOPE_CACHE").value_or(join_path(home, ".cache/modelscope/hub"));
  std::string stored;  // the SDK's '.' -> "___" (modelscope/hub/file_download.py)
  for (char c : model) stored += c == '.' ? std::string("___") : std::string(1, c);
  s.looked_in = {join_path(join_path(root, "models"), model), join_path(root, model)};
  if (stored != model) s.looked_in.push_back(join_path(join_path(root, "models"), stored));
  s.download_command = "modelscope download --model " + model;
  for (const auto& d : s.looked_in)
    if (s.directory.empty() && probe.is_dir(d)) s.directory = d;
  if (s.directory.empty()) {
    s.directory = s.looked_in.front();
    return s;
  }
  s.snapshot = s.directory;
  s.partial = partial_files(probe.at(join_path(s.directory, "._____temp")), "._____temp/", any_file);
  examine_snapshot(s, probe, root);
  return s;
}

std::string names_of(const std::vector<CachedFile>& files, CachedFileState wanted) {
  std::vector<std::string> names;
  for (const auto& f : files)
    if (f.state == wanted) names.push_back(f.name);
  std::string out;
  for (size_t i = 0; i < names.size() && i < k_shown_names; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > k_shown_names) out += format(" and %zu more", names.size() - k_shown_names);
  return out;
}

// The check of one cache: ok when whole, fail when incomplete or when the space left is below what is missing,
// warn when a file could not be checked (a link out of the cache) or a partial download lies beside a whole snapshot.
CheckResult cache_check(const ModelCacheState& s, const std::string& model) {
  const bool hf = s.hub == "huggingface";
  CheckResult c{hf ? "model_cache.huggingface" : "model_cache.modelscope", hf ? "Hugging Face cache" : "ModelScope cache", CheckStatus::skip, "", {}, ""};
  c.title += " (" + model + ")";
  if (s.state == CacheState::absent) {
    c.summary = "not downloaded here";
    for (const auto& d : s.looked_in) c.evidence.push_back("looked in " + d);
    return c;
  }
  c.evidence.push_back(s.snapshot.empty() ? s.directory : s.snapshot);
  for (const auto& f : s.files) {
    if (f.state == CachedFileState::ok) continue;
    c.evidence.push_back(f.name + ": " + cached_file_state_name(f.state) + (f.detail.empty() ? "" : " (" + f.detail + ")"));
  }
  for (const auto& p : s.partial)
    c.evidence.push_back(format("%s: a download cut short (%s so far)", p.name.c_str(), size_text(p.size_bytes.value_or(0)).c_str()));
  if (!s.problem.empty()) c.evidence.push_back(s.problem);
  size_t shards = 0;
  for (const auto& f : s.files) shards += f.expected_bytes || ends_with(f.name, ".safetensors") ? 1 : 0;
  if (s.state == CacheState::complete) {
    c.status = s.partial.empty() ? CheckStatus::ok : CheckStatus::warn;
    c.summary = format("whole: config.json and %zu shard%s at the sizes their headers give%s", shards, shards == 1 ? "" : "s",
                       s.partial.empty() ? "" : "; partial downloads left beside it (not deleted)");
    return c;
  }
  if (s.state == CacheState::unverified) {
    c.status = CheckStatus::warn;
    // hard31: the two lists joined by ", " (a link out of the cache beside a FIFO shard read "a.safetensorsb.safetensors")
    const std::string outside = names_of(s.files, CachedFileState::outside_cache), unreadable = names_of(s.files, CachedFileState::unreadable);
    c.summary = "present, but " + outside + (outside.empty() || unreadable.empty() ? "" : ", ") + unreadable + " could not be checked";
    return c;
  }
  c.status = CheckStatus::fail;
  std::string what;
  const std::string absent = names_of(s.files, CachedFileState::missing), cut = names_of(s.files, CachedFileState::truncated),
                    over = names_of(s.files, CachedFileState::oversized);
  if (!absent.empty()) what += "missing " + absent;
  if (!cut.empty()) what += (what.empty() ? "" : "; ") + std::string("cut short ") + cut;
  if (!over.empty()) what += (what.empty() ? "" : "; ") + std::string("longer than their headers say ") + over;
  if (what.empty()) what = s.problem;
  c.summary = "incomplete: " + what;
  c.fix = s.download_command + " (resumes the download; nothing is deleted)";
  if (s.missing_bytes && s.free_bytes) {
    c.evidence.push_back(format("about %s still to download (%s), %s free on the cache's filesystem", size_text(*s.missing_bytes).c_str(),
                                s.index_total_bytes ? "the index's total_size less the whole shards" : "the cut shards' shortfall",
                                size_text(*s.free_bytes).c_str()));
    if (*s.free_bytes < *s.missing_bytes) {
      c.summary += format("; only %s free for about %s still to download", size_text(*s.free_bytes).c_str(), size_text(*s.missing_bytes).c_str());
      c.fix = "free space on the cache's filesystem (or point " + std::string(s.hub == "huggingface" ? "HF_HUB_CACHE" : "MODELSCOPE_CACHE") +
              " elsewhere), then " + c.fix;
    }
  }
  return c;
}

}  // namespace

const char* cached_file_state_name(CachedFileState s) {
  switch (s) {
    case CachedFileState::ok: return "ok";
    case CachedFileState::missing: return "missing";
    case CachedFileState::truncated: return "cut short";
    case CachedFileState::oversized: return "longer than its header says";
    case CachedFileState::outside_cache: return "outside the cache";
    case CachedFileState::unreadable: return "unreadable";
  }
  return "?";
}

const char* cache_state_name(CacheState s) {
  switch (s) {
    case CacheState::absent: return "absent";
    case CacheState::complete: return "complete";
    case CacheState::incomplete: return "incomplete";
    case CacheState::unverified: return "unverified";
  }
  return "?";
}

void check_model_cache(CheckContext& ctx) {
  const auto& model = ctx.probe.options().model;
  if (!model) return;
  const std::string revision = ctx.probe.options().model_revision.empty() ? "main" : ctx.probe.options().model_revision;
  ModelCacheState hf = huggingface_state(ctx.probe, *model, revision);
  ModelCacheState ms = modelscope_state(ctx.probe, *model);
  CheckResult hf_check = cache_check(hf, *model), ms_check = cache_check(ms, *model);
  if (hf.state == CacheState::absent && ms.state == CacheState::absent) {
    hf_check.status = CheckStatus::warn;
    hf_check.summary = "in neither cache: the engine downloads it at start";
    hf_check.fix = hf.download_command + " (or " + ms.download_command + ")";
  }
  ctx.report.checks.push_back(std::move(hf_check));
  ctx.report.checks.push_back(std::move(ms_check));
  ctx.report.model_caches.push_back(std::move(hf));
  ctx.report.model_caches.push_back(std::move(ms));
}

}  // namespace preflight::doctor
