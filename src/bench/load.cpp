#include "bench/load.hpp"

#include <fstream>
#include <istream>
#include <random>

#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "base/units.hpp"

namespace preflight::bench {

Json build_request_body(const RequestOptions& options, const Prompt& prompt) {
  Json body = {{"model", options.model}, {"stream", true}, {"stream_options", {{"include_usage", true}}}, {"max_tokens", prompt.output_tokens}};
  if (options.api == Api::chat) {
    body["messages"] = Json::array({{{"role", "user"}, {"content", prompt.text}}});
  } else {
    body["prompt"] = prompt.text;
  }
  if (options.eos == RequestOptions::Eos::ignore) body["ignore_eos"] = true;
  if (options.thinking == RequestOptions::Thinking::off) body["chat_template_kwargs"] = {{"enable_thinking", false}};
  if (options.temperature) body["temperature"] = *options.temperature;
  return body;
}

Status check_load_bounds(const LoadPlan& plan) {
  if (plan.num_prompts < 1 || plan.num_prompts > k_max_num_prompts) {
    return make_error(ErrorKind::invalid_argument, format("--num-prompts must be between 1 and %lld, found %lld", static_cast<long long>(k_max_num_prompts),
                                                          static_cast<long long>(plan.num_prompts)));
  }
  const int64_t cap = plan.mode == LoadMode::concurrency ? plan.concurrency : plan.max_concurrency;
  if (cap > k_max_concurrency || (plan.mode == LoadMode::concurrency && cap < 1)) {
    return make_error(ErrorKind::invalid_argument, format("--%s must be between 1 and %lld, found %lld", plan.mode == LoadMode::concurrency ? "concurrency" : "max-concurrency",
                                                          static_cast<long long>(k_max_concurrency), static_cast<long long>(cap)));
  }
  if (plan.mode == LoadMode::request_rate && !(plan.request_rate >= k_min_request_rate && plan.request_rate <= k_max_request_rate)) {
    return make_error(ErrorKind::invalid_argument, format("--request-rate must be between %g and %g requests/s, found %g", k_min_request_rate, k_max_request_rate, plan.request_rate));
  }
  if (plan.warmup_requests < 0 || plan.warmup_requests > k_max_concurrency) {
    return make_error(ErrorKind::invalid_argument, format("--warmup must be between 0 and %lld, found %lld", static_cast<long long>(k_max_concurrency),
                                                          static_cast<long long>(plan.warmup_requests)));
  }
  return Ok{};
}

std::vector<Prompt> synthetic_prompts(int64_t count, int64_t input_tokens, int64_t output_tokens, uint64_t seed) {
  static const char* const k_words[] = {"alpha", "river", "stone", "cloud", "green", "table", "music", "light",
                                        "north", "paper", "glass", "horse", "bread", "field", "storm", "plant"};
  std::mt19937_64 rng(seed);
  std::vector<Prompt> prompts;
  prompts.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    Prompt p;
    p.input_tokens = input_tokens;
    p.output_tokens = output_tokens;
    p.text = format("%lld", static_cast<long long>(i));  // a distinct first token per prompt
    for (int64_t w = 1; w < input_tokens; ++w) {
      p.text += ' ';
      p.text += k_words[rng() % 16];
    }
    prompts.push_back(std::move(p));
  }
  return prompts;
}

namespace {

// Every prompt is held in memory, and std::getline takes a line of any length: a dataset of one 300 MB line took
// 1.7 GB and 51 s, then was sent (issue 19). One prompt is at most 16 MiB of JSON (about 4 million tokens of text, above
// any served context) and a dataset at most 1 GiB.
constexpr uint64_t k_max_dataset_line_bytes = 16ull << 20;
constexpr uint64_t k_max_dataset_bytes = 1ull << 30;

// One line without its newline into `line`, reading at most `cap` + 1 bytes of it: false at the end of the input,
// `too_long` when the line runs past `cap`.
bool read_bounded_line(std::istream& in, std::string& line, uint64_t cap, bool& too_long) {
  line.clear();
  too_long = false;
  char buf[64 * 1024];
  while (true) {
    in.getline(buf, sizeof buf);
    const auto got = static_cast<size_t>(in.gcount());
    const bool ended = !in.fail();  // the newline was read (gcount counts it) or the input ended after some bytes
    const size_t text = ended && got > 0 && !in.eof() ? got - 1 : got;
    line.append(buf, text);
    if (line.size() > cap) {
      too_long = true;
      return true;
    }
    if (ended) return got > 0 || !in.eof();
    if (in.eof()) return !line.empty();
    in.clear();  // the buffer filled before the newline: read on
  }
}

}  // namespace

Expected<std::vector<Prompt>> load_dataset(const std::string& path, int64_t default_output_tokens) {
  // FileReader::open first: it refuses a FIFO or device without blocking, which ifstream would not.
  PF_TRY(checked, FileReader::open(path));
  if (checked.size_bytes() > k_max_dataset_bytes) {
    return make_error(ErrorKind::invalid_argument, format("%s: a dataset of %llu bytes, more than the %llu accepted", path.c_str(),
                                                          static_cast<unsigned long long>(checked.size_bytes()), static_cast<unsigned long long>(k_max_dataset_bytes)),
                      path);
  }
  std::ifstream in(path);
  if (!in) return make_error(ErrorKind::io, "cannot open dataset", path);
  std::vector<Prompt> prompts;
  std::string line;
  int64_t number = 0;
  bool too_long = false;
  while (read_bounded_line(in, line, k_max_dataset_line_bytes, too_long)) {
    ++number;
    if (too_long) {
      return make_error(ErrorKind::invalid_argument, format("%s:%lld: a line longer than the %llu bytes accepted for one prompt", path.c_str(),
                                                            static_cast<long long>(number), static_cast<unsigned long long>(k_max_dataset_line_bytes)),
                        path);
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string origin = format("%s:%lld", path.c_str(), static_cast<long long>(number));
    PF_TRY(j, parse_owned_json(line, origin));  // hard31: preflight's own dataset form; a repeated "prompt" is refused
    if (!j.is_object()) return make_error(ErrorKind::corrupt, origin + ": expected a JSON object per line");
    JsonObject o(j, origin);
    PF_TRY(text, o.string("prompt"));
    PF_TRY(out, o.opt_int("output_len"));
    PF_TRY(in_len, o.opt_int("input_len"));
    if (out && *out <= 0) return make_error(ErrorKind::invalid_argument, origin + ": output_len must be positive");
    prompts.push_back({text, in_len.value_or(-1), out.value_or(default_output_tokens)});
  }
  if (prompts.empty()) return make_error(ErrorKind::invalid_argument, "dataset has no prompts", path);
  return prompts;
}

std::vector<double> arrival_offsets_s(int64_t n, double rate, double burstiness, uint64_t seed) {
  std::vector<double> offsets;
  if (n <= 0 || rate <= 0 || burstiness <= 0) return offsets;
  std::mt19937_64 rng(seed);
  std::gamma_distribution<double> gap(burstiness, 1.0 / (rate * burstiness));
  std::vector<double> gaps(static_cast<size_t>(n));
  double sum = 0;
  for (auto& g : gaps) sum += (g = gap(rng));
  const double scale = sum > 0 ? (static_cast<double>(n) / rate) / sum : 0;
  double t = 0;
  for (int64_t i = 0; i < n; ++i) {
    offsets.push_back(t);
    t += gaps[static_cast<size_t>(i)] * scale;
  }
  return offsets;
}

}  // namespace preflight::bench
