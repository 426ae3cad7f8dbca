#include "probe/host_bandwidth.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <system_error>
#include <thread>

#include "base/units.hpp"

namespace preflight::probe {

namespace {

// STREAM's triad scalar and initial values (stream.c: a = 1, b = 2, c = 0, scalar = 3) reordered so
// that a is the only array written: b = 1, c = 2, a starts at 0.
constexpr double k_scalar = 3.0;
constexpr double k_b_value = 1.0;
constexpr double k_c_value = 2.0;
constexpr int k_max_threads = 1024;
constexpr int k_max_repeats = 100000;
constexpr uint64_t k_check_stride = 509;  // sampled check: a prime stride touches every thread's slice

enum class Job { init, copy, read, triad, quit };

struct Slice {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// b is always allocated; a and c only when a kernel that writes a (copy, triad) or reads c (triad) runs,
// so that a read-only measurement first-touches one array, not three.
struct Arrays {
  std::unique_ptr<double[]> a, b, c;
  uint64_t count = 0;
};

// The calling thread's CPU time in seconds: a kernel's time on a core, without the moments the
// scheduler ran other work on it (clock_gettime(2), CLOCK_THREAD_CPUTIME_ID).
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void run_slice(Job job, Arrays& arrays, Slice s, double& sum_out) {
  double* __restrict a = arrays.a.get();
  const double* __restrict b = arrays.b.get();
  const double* __restrict c = arrays.c.get();
  switch (job) {
    case Job::init:
      for (uint64_t i = s.begin; i < s.end; ++i) arrays.b[i] = k_b_value;
      if (arrays.a) std::fill(a + s.begin, a + s.end, 0.0);
      if (arrays.c) std::fill(arrays.c.get() + s.begin, arrays.c.get() + s.end, k_c_value);
      break;
    case Job::copy:
      std::memcpy(a + s.begin, b + s.begin, (s.end - s.begin) * sizeof(double));
      break;
    case Job::read: {
      // Eight named sums stay in registers and keep the adds off the critical path, so that loads,
      // not add latency, bound the loop (an indexed array of sums was kept on the stack by -O2 and
      // ran at half the memory rate).
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
      uint64_t i = s.begin;
      for (; i + 8 <= s.end; i += 8) {
        s0 += b[i];
        s1 += b[i + 1];
        s2 += b[i + 2];
        s3 += b[i + 3];
        s4 += b[i + 4];
        s5 += b[i + 5];
        s6 += b[i + 6];
        s7 += b[i + 7];
      }
      for (; i < s.end; ++i) s0 += b[i];
      sum_out = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
      break;
    }
    case Job::triad:
      for (uint64_t i = s.begin; i < s.end; ++i) a[i] = b[i] + k_scalar * c[i];
      break;
    case Job::quit:
      break;
  }
}

// A fixed team of worker threads released together by a barrier; the caller times one job from the
// release to the moment the last worker finishes.
class Team {
 public:
  Team(Arrays& arrays, int threads)
      : m_arrays(arrays), m_sync(threads + 1), m_sums(static_cast<size_t>(threads), 0.0), m_cpu_seconds(static_cast<size_t>(threads), 0.0) {
    const uint64_t per = arrays.count / static_cast<uint64_t>(threads) / 8 * 8;  // whole cache lines per thread
    for (int t = 0; t < threads; ++t) {
      Slice s{per * static_cast<uint64_t>(t), t + 1 == threads ? arrays.count : per * static_cast<uint64_t>(t + 1)};
      m_slices.push_back(s);
    }
  }
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;
  ~Team() { stop(); }

  Status start() {
    try {
      for (size_t t = 0; t < m_slices.size(); ++t) m_workers.emplace_back([this, t] { work(t); });
    } catch (const std::system_error& e) {
      // Stand in for the workers that never started so that the started ones see quit and leave.
      m_job = Job::quit;
      for (size_t missing = m_workers.size(); missing < m_slices.size(); ++missing) (void)m_sync.arrive();
      m_sync.arrive_and_wait();
      for (auto& w : m_workers) w.join();
      m_workers.clear();
      return make_error(ErrorKind::io, format("host bandwidth: cannot start thread %zu of %zu: %s", m_workers.size() + 1, m_slices.size(), e.what()));
    }
    return Ok{};
  }

  // Runs one job on every worker and returns its wall time in seconds.
  double run(Job job) {
    m_job = job;
    const auto t0 = std::chrono::steady_clock::now();
    m_sync.arrive_and_wait();  // release
    m_sync.arrive_and_wait();  // all done
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
  }

  // The last job's longest per-worker CPU time: its time had every worker kept a core to itself.
  double max_cpu_seconds() const { return *std::max_element(m_cpu_seconds.begin(), m_cpu_seconds.end()); }

  double read_sum() const {
    double total = 0;
    for (double s : m_sums) total += s;
    return total;
  }

 private:
  void work(size_t t) {
    for (;;) {
      m_sync.arrive_and_wait();
      const Job job = m_job;
      if (job == Job::quit) return;
      const double cpu0 = thread_cpu_seconds();
      run_slice(job, m_arrays, m_slices[t], m_sums[t]);
      m_cpu_seconds[t] = thread_cpu_seconds() - cpu0;
      m_sync.arrive_and_wait();
    }
  }

  void stop() {
    if (m_workers.empty()) return;
    m_job = Job::quit;
    m_sync.arrive_and_wait();
    for (auto& w : m_workers) w.join();
    m_workers.clear();
  }

  Arrays& m_arrays;
  std::barrier<> m_sync;
  Job m_job = Job::init;  // written by the caller before a release; the barrier orders it
  std::vector<Slice> m_slices;
  std::vector<double> m_sums;
  std::vector<double> m_cpu_seconds;  // per worker, for the last job; written before the second barrier
  std::vector<std::thread> m_workers;
};

Job job_for(HostKernel kernel) {
  switch (kernel) {
    case HostKernel::copy: return Job::copy;
    case HostKernel::read: return Job::read;
    case HostKernel::triad: return Job::triad;
  }
  return Job::quit;
}

int arrays_counted(HostKernel kernel) {
  switch (kernel) {
    case HostKernel::copy: return 2;
    case HostKernel::read: return 1;
    case HostKernel::triad: return 3;
  }
  return 0;
}

const char* counting_note(HostKernel kernel) {
  switch (kernel) {
    case HostKernel::copy: return "read b + write a";
    case HostKernel::read: return "read b";
    case HostKernel::triad: return "read b, c + write a";
  }
  return "";
}

Status check_values(HostKernel kernel, const Arrays& arrays, double read_sum) {
  if (kernel == HostKernel::read) {
    const double expected = k_b_value * static_cast<double>(arrays.count);
    if (read_sum != expected) return make_error(ErrorKind::corrupt, format("host bandwidth: read summed %.17g, expected %.17g", read_sum, expected));
    return Ok{};
  }
  const double expected = kernel == HostKernel::copy ? k_b_value : k_b_value + k_scalar * k_c_value;
  for (uint64_t i = 0; i < arrays.count; i += k_check_stride) {
    if (arrays.a[i] != expected) {
      return make_error(ErrorKind::corrupt, format("host bandwidth: %s wrote %g at index %llu, expected %g", host_kernel_name(kernel), arrays.a[i],
                                                   static_cast<unsigned long long>(i), expected));
    }
  }
  if (arrays.a[arrays.count - 1] != expected) return make_error(ErrorKind::corrupt, format("host bandwidth: %s wrote a wrong last value", host_kernel_name(kernel)));
  return Ok{};
}

}  // namespace

const char* host_kernel_name(HostKernel kernel) {
  switch (kernel) {
    case HostKernel::copy: return "copy";
    case HostKernel::read: return "read";
    case HostKernel::triad: return "triad";
  }
  return "?";
}

Expected<HostKernel> parse_host_kernel(const std::string& name) {
  for (HostKernel k : {HostKernel::copy, HostKernel::read, HostKernel::triad}) {
    if (name == host_kernel_name(k)) return k;
  }
  return make_error(ErrorKind::invalid_argument, format("unknown host kernel '%s'; known: copy, read, triad", name.c_str()));
}

Expected<HostBandwidthReport> measure_host_bandwidth(const HostBandwidthOptions& options) {
  int threads = options.threads;
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads < 1 || threads > k_max_threads) return make_error(ErrorKind::invalid_argument, format("threads must be in [1, %d], got %d", k_max_threads, threads));
  if (options.repeats < 1 || options.repeats > k_max_repeats) return make_error(ErrorKind::invalid_argument, format("repeats must be in [1, %d], got %d", k_max_repeats, options.repeats));
  if (options.warmup < 0 || options.warmup > k_max_repeats) return make_error(ErrorKind::invalid_argument, format("warm-up runs must be in [0, %d], got %d", k_max_repeats, options.warmup));
  if (options.kernels.empty()) return make_error(ErrorKind::invalid_argument, "no host kernel to run");
  const uint64_t count = options.array_bytes / sizeof(double);
  if (count < 8ull * static_cast<uint64_t>(threads)) {
    return make_error(ErrorKind::invalid_argument, format("array size %llu B is too small for %d threads (at least 64 B per thread)",
                                                          static_cast<unsigned long long>(options.array_bytes), threads));
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0) {
    const double physical_bytes = static_cast<double>(pages) * static_cast<double>(page_bytes);
    if (3.0 * static_cast<double>(options.array_bytes) > physical_bytes / 2) {
      return make_error(ErrorKind::invalid_argument, format("3 arrays of %.0f MiB exceed half of physical memory (%.0f MiB)",
                                                            static_cast<double>(options.array_bytes) / k_mib, physical_bytes / k_mib));
    }
  }

  const bool writes_a = std::any_of(options.kernels.begin(), options.kernels.end(), [](HostKernel k) { return k != HostKernel::read; });
  const bool reads_c = std::find(options.kernels.begin(), options.kernels.end(), HostKernel::triad) != options.kernels.end();
  Arrays arrays;
  arrays.count = count;
  arrays.b.reset(new (std::nothrow) double[count]);
  if (writes_a) arrays.a.reset(new (std::nothrow) double[count]);
  if (reads_c) arrays.c.reset(new (std::nothrow) double[count]);
  if (!arrays.b || (writes_a && !arrays.a) || (reads_c && !arrays.c)) {
    return make_error(ErrorKind::io, format("host bandwidth: cannot allocate %d arrays of %llu B", 1 + int{writes_a} + int{reads_c},
                                            static_cast<unsigned long long>(count * sizeof(double))));
  }

  Team team(arrays, threads);
  PF_TRY(started, team.start());
  (void)started;
  team.run(Job::init);  // first touch on the thread that will use each page

  HostBandwidthReport report;
  report.threads = threads;
  report.array_bytes = count * sizeof(double);
  for (HostKernel kernel : options.kernels) {
    if (options.on_progress) {
      options.on_progress(format("host %s: %d warm-up + %d timed runs on %d threads", host_kernel_name(kernel), options.warmup, options.repeats, threads));
    }
    BandwidthResult r;
    r.operation = host_kernel_name(kernel);
    r.warmup = options.warmup;
    const int arrays_moved = arrays_counted(kernel);
    r.bytes_per_repeat = static_cast<double>(arrays_moved) * static_cast<double>(report.array_bytes);
    r.counting = format("%d x %llu B (%s; STREAM convention, write-allocate not counted)", arrays_moved,
                        static_cast<unsigned long long>(report.array_bytes), counting_note(kernel));
    for (int i = 0; i < options.warmup; ++i) team.run(job_for(kernel));
    for (int i = 0; i < options.repeats; ++i) {
      r.seconds.push_back(team.run(job_for(kernel)));
      r.cpu_seconds.push_back(team.max_cpu_seconds());
    }
    PF_TRY(checked, check_values(kernel, arrays, team.read_sum()));
    (void)checked;
    PF_TRY(summarized, summarize_bandwidth(r));
    (void)summarized;
    report.results.push_back(std::move(r));
  }
  return report;
}

}  // namespace preflight::probe
