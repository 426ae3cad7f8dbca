// libFuzzer target: bytes through the SSE framer (split at a fuzzer-chosen point, with a small
// line cap) and every event payload through the chunk reader and a request record.
#include <string>
#include <string_view>

#include "bench/measurement.hpp"
#include "bench/sse_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t split = all.empty() ? 0 : data[0] % (all.size() + 1);
  preflight::bench::RequestRecord record;
  preflight::bench::SseFramer framer(
      [&](std::string_view payload, int64_t t_ns) -> preflight::Status {
        auto chunk = preflight::bench::parse_chunk(payload);
        if (!chunk) return chunk.error();
        preflight::bench::apply_chunk(record, *chunk, t_ns);
        return preflight::Ok{};
      },
      preflight::bench::SseLimits{4096});
  (void)framer.feed(all.substr(0, split), 1);
  (void)framer.feed(all.substr(split), 2);
  (void)framer.finish(3);
  preflight::bench::finish_record(record, 4);
  (void)record.tpot_ms();
  return 0;
}
