// Test helpers for the hub module: a fixture tree laid out like a hub's resolve/<rev>/ paths (sparse
// safetensors shards with real headers), a real nginx started on loopback, and a small scripted
// fault server for what nginx cannot do (close mid-body, stall, 500 then 200, 429 Retry-After,
// ignore Range).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"

namespace pfhub {

namespace fs = std::filesystem;

inline void write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct TensorDef {
  std::string name;
  std::string dtype;  // safetensors dtype name
  std::vector<uint64_t> shape;
  uint64_t bytes;     // stated by the caller, not computed from the shape
};

// The 8-byte length and JSON header of a safetensors file holding `tensors` back to back.
inline std::string safetensors_prefix(const std::vector<TensorDef>& tensors, uint64_t* data_bytes) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  header["__metadata__"] = {{"format", "pt"}};
  std::string json = header.dump();
  while (json.size() % 8 != 0) json += ' ';
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((static_cast<uint64_t>(json.size()) >> (8 * i)) & 0xff);
  *data_bytes = offset;
  return out + json;
}

// Writes the header and extends the file to its full size with a hole (no disk blocks for the weights).
inline uint64_t write_sparse_shard(const std::string& path, const std::string& prefix, uint64_t data_bytes) {
  write_file(path, prefix);
  const uint64_t size = prefix.size() + data_bytes;
  fs::resize_file(path, size);
  return size;
}

// A scratch directory (../test_support.hpp) removed with everything in it when the test ends, so
// the sparse multi-GB fixtures do not pile up in the temp directory.
struct TempTree {
  explicit TempTree(const std::string& name) : path(pftest::scratch_dir(name)) {}
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  const std::string path;
};

inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

inline bool port_open(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

inline const char* k_nginx = "/usr/sbin/nginx";

inline bool services_required() {
  const char* v = std::getenv("PREFLIGHT_REQUIRE_SERVICES");
  return v && *v && std::string(v) != "0";
}

// One access-log line: status, bytes sent (headers included), connection, request URI, Range header.
struct AccessEntry {
  int status = 0;
  uint64_t bytes_sent = 0;
  uint64_t connection = 0;  // nginx's connection serial number: equal numbers = a reused connection
  std::string uri;
  std::string range;
};

// nginx in the foreground (daemon off, master_process off) on a free loopback port, serving `root`.
// Everything it writes (pid, logs, temp paths) stays in `work_dir`. `extra` is added inside server{}.
class Nginx {
 public:
  bool start(const std::string& work_dir, const std::string& root, const std::string& extra = {}) {
    m_work = work_dir;
    fs::create_directories(work_dir);
    for (int attempt = 0; attempt < 5 && m_pid <= 0; ++attempt) {
      m_port = free_port();
      std::ostringstream conf;
      conf << "daemon off;\nmaster_process off;\nworker_processes 1;\npid " << work_dir << "/nginx.pid;\n"
           << "error_log " << work_dir << "/error.log warn;\nevents { worker_connections 512; }\nhttp {\n"
           << "  log_format hub '$status $bytes_sent $connection \"$request_uri\" \"$http_range\"';\n"
           << "  access_log " << work_dir << "/access.log hub;\n"
           << "  client_body_temp_path " << work_dir << "/body;\n  proxy_temp_path " << work_dir << "/proxy;\n"
           << "  fastcgi_temp_path " << work_dir << "/fastcgi;\n  uwsgi_temp_path " << work_dir << "/uwsgi;\n"
           << "  scgi_temp_path " << work_dir << "/scgi;\n  default_type application/octet-stream;\n"
           << "  keepalive_requests 100000;\n"
           << "  server {\n    listen 127.0.0.1:" << m_port << ";\n    root " << root << ";\n" << extra << "\n  }\n}\n";
      write_file(work_dir + "/nginx.conf", conf.str());
      const pid_t pid = ::fork();
      if (pid == 0) {
        const int devnull = ::open("/dev/null", O_RDWR);
        ::dup2(devnull, 1);
        ::dup2(devnull, 2);
        const std::string conf_path = work_dir + "/nginx.conf";
        ::execl(k_nginx, k_nginx, "-c", conf_path.c_str(), "-p", work_dir.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
      for (int i = 0; i < 100; ++i) {
        if (port_open(m_port)) {
          m_pid = pid;
          break;
        }
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (m_pid <= 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
    return m_pid > 0;
  }
  ~Nginx() { stop(); }
  void stop() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGTERM);
      ::waitpid(m_pid, nullptr, 0);
      m_pid = -1;
    }
  }
  int port() const { return m_port; }
  std::string url(const std::string& path = {}) const { return "http://127.0.0.1:" + std::to_string(m_port) + path; }
  std::string error_log() const { return read_file(m_work + "/error.log"); }
  // The access log so far (nginx writes each line when the request ends).
  // nginx writes a line after the response has gone out, so the client can be ahead of the log:
  // wait until the file has not grown for 40 ms (at most 1 s) before reading it.
  std::vector<AccessEntry> access_log() const {
    std::vector<AccessEntry> out;
    std::string text = read_file(m_work + "/access.log");
    for (int quiet = 0, round = 0; quiet < 2 && round < 50; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::string again = read_file(m_work + "/access.log");
      quiet = again.size() == text.size() ? quiet + 1 : 0;
      text = std::move(again);
    }
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      AccessEntry e;
      std::istringstream ls(line);
      ls >> e.status >> e.bytes_sent >> e.connection;
      const auto q1 = line.find('"');
      const auto q2 = line.find('"', q1 + 1);
      const auto q3 = line.find('"', q2 + 1);
      const auto q4 = line.find('"', q3 + 1);
      if (q2 != std::string::npos) e.uri = line.substr(q1 + 1, q2 - q1 - 1);
      if (q4 != std::string::npos) e.range = line.substr(q3 + 1, q4 - q3 - 1);
      out.push_back(e);
    }
    return out;
  }
  void clear_access_log() { write_file(m_work + "/access.log", ""); }

 private:
  std::string m_work;
  int m_port = 0;
  pid_t m_pid = -1;
};

// A file the fault server can serve: its first bytes and its declared size (zeros after the prefix).
struct ServedFile {
  std::string prefix;
  uint64_t size = 0;
};

// drip: a 200 whose body comes at 5 bytes/s (one byte every 200 ms), a server that is alive but too slow.
enum class Fault { serve, status_500, status_429, close_mid_body, ignore_range, stall, not_found, drip };

// A loopback HTTP/1.1 server, one connection at a time per thread, "Connection: close" on every
// answer. `script(path, nth)` picks the behaviour for the nth request (from 0) for a path.
class FaultServer {
 public:
  using Script = std::function<Fault(const std::string& path, int nth)>;

  FaultServer(std::map<std::string, ServedFile> files, Script script) : m_files(std::move(files)), m_script(std::move(script)) {
    m_listen = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
    m_port = ntohs(addr.sin_port);
    ::listen(m_listen, 64);
    m_thread = std::thread([this] { loop(); });
  }
  ~FaultServer() {
    m_stop = true;
    ::shutdown(m_listen, SHUT_RDWR);
    ::close(m_listen);
    m_thread.join();
    for (auto& t : m_workers) t.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  int requests() const { return m_requests; }
  uint64_t max_bytes_written_one_request() const { return m_max_written; }

 private:
  void loop() {
    while (!m_stop) {
      const int fd = ::accept(m_listen, nullptr, nullptr);
      if (fd < 0) return;
      std::lock_guard<std::mutex> lock(m_mutex);
      m_workers.emplace_back([this, fd] { handle(fd); });
    }
  }

  bool send_all(int fd, const std::string& data, uint64_t* written) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
      *written += static_cast<uint64_t>(n);
    }
    return true;
  }

  void handle(int fd) {
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        ::close(fd);
        return;
      }
      req.append(buf, static_cast<size_t>(n));
    }
    const auto sp1 = req.find(' ');
    const auto sp2 = req.find(' ', sp1 + 1);
    const std::string path = req.substr(sp1 + 1, sp2 - sp1 - 1);
    uint64_t first = 0, last = UINT64_MAX;
    bool ranged = false;
    if (const auto r = req.find("\r\nRange: bytes="); r != std::string::npos) {
      ranged = true;
      const auto dash = req.find('-', r);
      first = std::stoull(req.substr(r + 15, dash - r - 15));
      const auto eol = req.find("\r\n", dash);
      if (eol > dash + 1) last = std::stoull(req.substr(dash + 1, eol - dash - 1));
    }
    int nth = 0;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      nth = m_seen[path]++;
      ++m_requests;
    }
    const Fault fault = m_script(path, nth);
    uint64_t written = 0;
    auto it = m_files.find(path);
    if (fault == Fault::not_found || it == m_files.end()) {
      send_all(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", &written);
    } else if (fault == Fault::status_500) {
      send_all(fd, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\nConnection: close\r\n\r\noops\n", &written);
    } else if (fault == Fault::status_429) {
      send_all(fd, "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", &written);
    } else if (fault == Fault::stall) {
      while (!m_stop) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } else if (fault == Fault::drip) {
      const ServedFile& f = it->second;
      bool ok = send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(f.size) + "\r\nConnection: close\r\n\r\n", &written);
      for (uint64_t pos = 0; ok && !m_stop && pos < f.size; ++pos) {
        ok = send_all(fd, std::string(1, pos < f.prefix.size() ? f.prefix[pos] : '\0'), &written);
        for (int i = 0; ok && i < 10 && !m_stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    } else {
      const ServedFile& f = it->second;
      if (!ranged || fault == Fault::ignore_range) {
        first = 0;
        last = f.size - 1;
      }
      last = std::min(last, f.size - 1);
      const uint64_t length = last - first + 1;
      std::ostringstream head;
      if (ranged && fault != Fault::ignore_range) {
        head << "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " << first << "-" << last << "/" << f.size << "\r\n";
      } else {
        head << "HTTP/1.1 200 OK\r\n";
      }
      head << "Content-Length: " << length << "\r\nConnection: close\r\n\r\n";
      bool ok = send_all(fd, head.str(), &written);
      // Body: the prefix bytes, then zeros; close_mid_body stops after half of what was asked.
      const uint64_t send_end = fault == Fault::close_mid_body ? first + length / 2 : last + 1;
      const std::string zeros(64 * 1024, '\0');
      for (uint64_t pos = first; ok && pos < send_end;) {
        std::string chunk;
        if (pos < f.prefix.size()) {
          chunk = f.prefix.substr(pos, std::min<uint64_t>(send_end, f.prefix.size()) - pos);
        } else {
          chunk = zeros.substr(0, std::min<uint64_t>(zeros.size(), send_end - pos));
        }
        ok = send_all(fd, chunk, &written);
        pos += chunk.size();
        if (m_stop) break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_max_written = std::max(m_max_written, written);
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }

  std::map<std::string, ServedFile> m_files;
  Script m_script;
  int m_listen = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_requests{0};
  std::mutex m_mutex;
  std::map<std::string, int> m_seen;
  uint64_t m_max_written = 0;
  std::thread m_thread;
  std::vector<std::thread> m_workers;
};

// 1 GiB: one BF16 tensor of 16384 x 32768 elements (2 bytes each).
inline constexpr uint64_t k_gib_tensor = 16384ull * 32768ull * 2ull;

inline std::vector<TensorDef> shard_tensors(int shard, int per_shard) {
  std::vector<TensorDef> out;
  for (int i = 0; i < per_shard; ++i) {
    const int layer = shard * per_shard + i;
    out.push_back({"model.layers." + std::to_string(layer) + ".mlp.down_proj.weight", "BF16", {16384, 32768}, k_gib_tensor});
  }
  return out;
}

inline std::string shard_name(int i, int n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05d-of-%05d.safetensors", i + 1, n);
  return buf;
}

// A sharded repo under <root>/<prefix>/<org>/<name>/resolve/main/: config.json (Qwen3-8B's real
// config), the index and sparse shards. Returns the served files (for the fault server).
inline std::map<std::string, ServedFile> make_repo(const std::string& root, const std::string& url_prefix, int shards, int per_shard,
                                                   const std::vector<int>& omit_shards = {}) {
  std::map<std::string, ServedFile> served;
  const std::string base = url_prefix + "/acme/tiny-sharded/resolve/main/";
  const std::string config = read_file(pftest::shared_path("models/Qwen__Qwen3-8B/config.json"));
  write_file(root + base + "config.json", config);
  served[base + "config.json"] = {config, config.size()};
  nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  for (int s = 0; s < shards; ++s) {
    uint64_t data = 0;
    const auto tensors = shard_tensors(s, per_shard);
    const std::string prefix = safetensors_prefix(tensors, &data);
    for (const auto& t : tensors) index["weight_map"][t.name] = shard_name(s, shards);
    if (std::find(omit_shards.begin(), omit_shards.end(), s) != omit_shards.end()) continue;
    const uint64_t size = write_sparse_shard(root + base + shard_name(s, shards), prefix, data);
    served[base + shard_name(s, shards)] = {prefix, size};
  }
  const std::string index_text = index.dump();
  write_file(root + base + "model.safetensors.index.json", index_text);
  served[base + "model.safetensors.index.json"] = {index_text, index_text.size()};
  return served;
}

#define REQUIRE_NGINX()                                                                                          \
  do {                                                                                                           \
    if (!pfhub::fs::exists(pfhub::k_nginx)) {                                                                    \
      if (pfhub::services_required()) FAIL() << "nginx not found at /usr/sbin/nginx (PREFLIGHT_REQUIRE_SERVICES)"; \
      GTEST_SKIP() << "nginx not found at /usr/sbin/nginx; scripts/install-deps.sh installs it";                \
    }                                                                                                            \
  } while (0)

}  // namespace pfhub
