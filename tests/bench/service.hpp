// Test helper: starts a service process (the fake OpenAI server, the npm peer) on loopback, reads
// the port it reports, and kills it when the test ends.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace pftest {

inline bool require_services() {
  const char* v = std::getenv("PREFLIGHT_REQUIRE_SERVICES");
  return v && *v && std::string(v) != "0";
}

class Service {
 public:
  // Runs argv with extra environment entries ("K=V"); stdout goes to a pipe the caller can read
  // with wait_for_line().
  Service(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}, const std::string& cwd = {}) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return;
    m_pid = ::fork();
    if (m_pid == 0) {
      ::dup2(out[1], 1);
      if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(127);
      for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::close(out[1]);
    m_out = out[0];
    ::fcntl(m_out, F_SETFL, O_NONBLOCK);
  }
  ~Service() {
    kill(SIGKILL);
    if (m_out >= 0) ::close(m_out);
  }
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Waits (up to timeout) for a stdout line containing `needle`; returns that line, or "".
  std::string wait_for_line(const std::string& needle, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      char buf[4096];
      const ssize_t n = ::read(m_out, buf, sizeof buf);
      if (n > 0) m_buffer.append(buf, static_cast<size_t>(n));
      size_t pos = 0;
      while (true) {
        const size_t nl = m_buffer.find('\n', pos);
        if (nl == std::string::npos) break;
        const std::string line = m_buffer.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.find(needle) != std::string::npos) {
          m_buffer.erase(0, pos);
          return line;
        }
      }
      m_buffer.erase(0, pos);
      if (n <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }

  void kill(int sig) {
    if (m_pid > 0) {
      ::kill(m_pid, sig);
      ::waitpid(m_pid, nullptr, 0);
      m_pid = -1;
    }
  }
  bool running() const { return m_pid > 0; }
  pid_t pid() const { return m_pid; }

 private:
  pid_t m_pid = -1;
  int m_out = -1;
  std::string m_buffer;
};

}  // namespace pftest
