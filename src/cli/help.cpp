#include "cli/help.hpp"

#include <map>
#include <vector>

namespace preflight::cli {

namespace {

const char* k_fit = R"(usage: preflight fit MODEL --device D [flags] [--json]

What vLLM / vLLM-Ascend will print at start-up on each device ("Model loading took", "Available KV cache
memory", "GPU KV cache size", "Maximum concurrency"), the memory terms behind them with their bands, the
verdict with the engine's own failure message and the cheapest fixes, then the decode speed.

  --device D                  catalogue device or alias (910B3, Ascend910B3, H100, A100-80G); see `preflight devices`
  --num-devices N             devices in the deployment; without --tensor-parallel-size, TP = N / PP
  --engine E[@VERSION]        vllm, vllm-ascend or llama.cpp, optionally a version (vllm-ascend@0.23); default:
                              the newest known for the device's platform
vLLM's flags, with vLLM's meanings (unset: that version's default):
  --tensor-parallel-size N    --pipeline-parallel-size N
  --max-model-len L           without it: the model's max_position_embeddings, and the largest context that fits
  --gpu-memory-utilization U  --kv-cache-dtype auto|fp8|fp8_e4m3|fp8_e5m2|int8
  --quantization Q            a method the checkpoint does not state (the engine's accepted list is checked)
  --max-num-seqs N            --max-num-batched-tokens N
  --enforce-eager             no graph capture; eager decode speed
  --skip-mm-profiling         leave the vision encoder out of the profile run
  --limit-mm-per-prompt JSON  '{"video": 0}': no dummy video in the profile run; '{"image": 0, "video": 0}': text only
Speed:
  --concurrency 1,4,16        streams to predict         --input-len I       prompt length for TTFT
  --decode-context C          context during decode      --bandwidth GB/s    measured copy bandwidth
Model resolution:
  --models DIR                directories with <org>__<name>/config.json   --offline | --refresh (hub cache)

exit: 0 fits, 1 does not fit, 2 bad input (a flag out of range names the flag),
      3 network or environment failure (hub unreachable, timeout)
)";

const char* k_plan = R"(usage: preflight plan --device D [--num-devices N] [targets] [--markdown|--json] [--all]
       preflight plan MODEL [--devices 910B4,910B3,H100] [--max-devices 16] [targets] [--markdown|--json]

What a device runs (every catalogue model that fits, ranked biggest first), or what a model needs (the
cheapest device count, layout and quantization per device), each with its KV tokens, concurrency, decode
speed and a ready-to-run start command (environment, vLLM flags, multi-node Ray lines).

targets:
  --context L                 context per request (default: 32768, or the model's maximum if smaller)
  --concurrency C             streams at once          --min-tok-s S       slowest acceptable per-stream decode
  --engine E[@VERSION]        --gpu-memory-utilization U                   --decode-context C
  --bandwidth GB/s            measured copy bandwidth (else `preflight bw --save`, else the catalogue)
  --all                       also list the candidates that were rejected, with the reason
  --models DIR, --offline | --refresh   model resolution as in `fit`

exit: 0 something fits, 1 nothing fits, 2 bad input,
      3 network or environment failure (hub unreachable, timeout)
)";

const char* k_inspect = R"(usage: preflight inspect MODEL [--models DIR] [--offline|--refresh] [--json]

Exact model facts from config.json, safetensors headers or GGUF tensor infos (never the weights): layers by
kind, parameters (total, text, vision, active per token, MTP), weight bytes per storage format, KV bytes per
token per cache dtype, and where each fact came from.

MODEL: a catalogue id, a directory, a config.json, a .gguf file, or hf:org/name[@rev] / ms:org/name[@rev].
exit: 0, 2 bad input (the model cannot be read: the message names the file and what is wrong),
      3 network or environment failure (hub unreachable, timeout)
)";

const char* k_validate = R"(usage: preflight validate FILE.jsonl... [--models DIR] [--json]

Runs recorded deployments (the schema of shared/validation/README.md) through the estimator: per case the
predicted against the observed value of every field and the verdict, then per field the number of cases and
the median / p90 / max absolute % error. Cases that cannot be resolved are listed as skipped, with the reason.
Each case is evaluated with the inputs it records, nothing more: no flag is taken from its notes or inferred
from its observed outcome, so a case whose recorded inputs give the wrong answer shows as wrong. Inputs are
checked as fit checks its flags (utilization in (0, 1], sizes at least 1, a known kv_cache_dtype).

exit: 0, 2 bad input: a malformed file or a bad recorded value (file, line, case and field named)
)";

const char* k_logs = R"(usage: preflight logs FILE [--device D] [--engine E] [--models DIR] [--emit-case] [--json]
       preflight explain FILE ...   (the same command)

Reads a vLLM / vLLM-Ascend start-up log: versions, engine arguments (with their line numbers), the printed
memory lines, and the root cause of a failure (the highest-priority error signature, never the generic
"Engine core initialization failed") with its fix. When the model resolves, the printed lines are compared
with the prediction for the same arguments. --emit-case prints the log as one validation case.

exit: 0 started or classified, 1 failed with a known cause, 2 bad input: unreadable, or an engine argument out of
      range (the log line named)
)";

const char* k_bench = R"(usage: preflight bench --url URL --model NAME [load] [--save [--db FILE]] [--json]

Measures a live OpenAI-compatible server: TTFT, TPOT, ITL, E2E (median, p90, p99), request and token
throughput, goodput against SLOs, per concurrency level or request rate; progress on stderr.

load:
  --concurrency 1,4,16,64     closed-loop levels         --request-rate R [--burstiness B] [--max-concurrency N]
  --num-prompts N             --input-len I --output-len O | --dataset FILE (JSONL prompts)
  --endpoint chat|completions --ignore-eos               --no-thinking       --api-key-env VAR
  --warmup N  --seed S  --timeout s  --stall-timeout s  --deadline s (each level; default 3600)
  --slo-ttft-ms T  --slo-tpot-ms T  --slo-e2e-ms T
comparison with the prediction:
  --device D --spec MODEL [--engine E]    or    --prediction FIT.json

exit: 0, 1 when requests failed (an unreachable server included), 2 bad input, 3 network failure outside the
      measured requests (a --spec hub model that cannot be fetched)
)";

const char* k_bw = R"(usage: preflight bw [--target host|cuda|npu] [--device-index N] [--size MiB] [--threads N]
                    [--repeats N] [--warmup N] [--kernel copy,read,triad] [--runtime-lib PATH] [--save --device D] [--json]

Measures memory bandwidth the way the field report does (a copy counts one read and one write): median and
spread over the repeats. --save --device D stores it as a measured override that fit and plan then use.
exit: 0, 1 when the runtime is missing or the measurement fails, 2 bad input
)";

const char* k_doctor = R"(usage: preflight doctor [--root DIR] [--venv DIR] [--script FILE] [--cache-dir DIR[,DIR]] [--fix] [--json]

Checks an Ascend / CUDA serving stack before it wastes a day: CANN, driver and torch_npu versions against the
vllm-ascend compatibility table, the ATB cxx_abi, missing Python packages, stale TBE lock files, and a deploy
script's traps (set -u around set_env.sh). --fix removes only exact *.lock files, listing each one.
exit: 0 all checks pass, 1 a check fails, 2 bad input
)";

const char* k_calibrate = R"(usage: preflight calibrate [--db FILE] [--save] [--json]

Refits the speed model's decode efficiency per device and engine from stored bench runs and prints the error
before and after; --save writes the profile to ~/.config/preflight/speed.json, which fit, plan and bench use.
exit: 0, 1 when no stored run can be fitted, 2 bad input
)";

const char* k_report = R"(usage: preflight report --html FILE [--from-db FILE] [--run ID] [--fit-json FIT.json] [--json]

Writes one self-contained HTML report (no network) of a stored bench sweep, with the prediction alongside.
exit: 0, 2 bad input (a missing database or run)
)";

const char* k_catalogue = R"(usage: preflight devices | engines | models [--json]

devices: the device catalogue with capacity as the runtime sees it, bandwidth, compute by dtype and aliases,
  marking measured overrides. engines: engine versions with their defaults, block sizes, accepted
  quantization, batch defaults, the profile run's sampler path and MXFP4 layouts. models: the embedded models.
exit: 0, 2 bad input (an unreadable overlay file)
)";

// Each command's accepted flags, next to its help text: the parser takes them from here and the tests
// check that the two name the same flags.
struct CommandDoc {
  const char* help;
  std::vector<FlagSpec> flags;
};

const std::vector<FlagSpec> k_model_flags = {{"models", true}, {"offline", false}, {"refresh", false}};

std::vector<FlagSpec> with(std::vector<FlagSpec> a, const std::vector<FlagSpec>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::map<std::string, CommandDoc>& docs() {
  static const std::map<std::string, CommandDoc> k_docs = {
      {"fit", {k_fit, with({{"json", false}, {"device", true}, {"num-devices", true}, {"engine", true}, {"tensor-parallel-size", true},
                            {"pipeline-parallel-size", true}, {"max-model-len", true}, {"gpu-memory-utilization", true}, {"kv-cache-dtype", true},
                            {"quantization", true}, {"max-num-seqs", true}, {"max-num-batched-tokens", true}, {"enforce-eager", false},
                            {"skip-mm-profiling", false}, {"limit-mm-per-prompt", true}, {"concurrency", true}, {"input-len", true}, {"decode-context", true}, {"bandwidth", true}},
                           k_model_flags)}},
      {"plan", {k_plan, with({{"json", false}, {"markdown", false}, {"all", false}, {"device", true}, {"devices", true}, {"num-devices", true},
                              {"max-devices", true}, {"context", true}, {"concurrency", true}, {"min-tok-s", true}, {"engine", true},
                              {"decode-context", true}, {"bandwidth", true}, {"gpu-memory-utilization", true}},
                             k_model_flags)}},
      {"inspect", {k_inspect, with({{"json", false}}, k_model_flags)}},
      {"validate", {k_validate, {{"json", false}, {"models", true}}}},
      {"logs", {k_logs, {{"json", false}, {"emit-case", false}, {"device", true}, {"engine", true}, {"models", true}}}},
      {"bench", {k_bench, {{"json", false}, {"url", true}, {"model", true}, {"endpoint", true}, {"concurrency", true}, {"request-rate", true},
                           {"burstiness", true}, {"max-concurrency", true}, {"num-prompts", true}, {"input-len", true}, {"output-len", true},
                           {"dataset", true}, {"ignore-eos", false}, {"no-thinking", false}, {"api-key-env", true}, {"device", true}, {"spec", true},
                           {"engine", true}, {"prediction", true}, {"save", false}, {"db", true}, {"slo-ttft-ms", true}, {"slo-tpot-ms", true},
                           {"slo-e2e-ms", true}, {"stall-timeout", true}, {"timeout", true}, {"deadline", true}, {"warmup", true}, {"seed", true}}}},
      {"bw", {k_bw, {{"target", true}, {"device-index", true}, {"size", true}, {"threads", true}, {"repeats", true}, {"warmup", true},
                     {"kernel", true}, {"runtime-lib", true}, {"device", true}, {"save", false}, {"json", false}}}},
      {"doctor", {k_doctor, {{"json", false}, {"root", true}, {"venv", true}, {"script", true}, {"cache-dir", true}, {"fix", false}}}},
      {"calibrate", {k_calibrate, {{"json", false}, {"db", true}, {"save", false}}}},
      {"report", {k_report, {{"json", false}, {"from-db", true}, {"run", true}, {"html", true}, {"fit-json", true}}}},
      {"devices", {k_catalogue, {{"json", false}}}},
      {"engines", {k_catalogue, {{"json", false}}}},
      {"models", {k_catalogue, {{"json", false}}}},
  };
  return k_docs;
}

const CommandDoc* find_doc(const std::string& command) {
  const auto it = docs().find(command == "explain" ? std::string("logs") : command);
  return it == docs().end() ? nullptr : &it->second;
}

}  // namespace

std::vector<std::string> documented_commands() {
  std::vector<std::string> names;
  for (const auto& [name, doc] : docs()) names.push_back(name);
  return names;
}

const char* command_help(const std::string& command) {
  const CommandDoc* doc = find_doc(command);
  return doc ? doc->help : nullptr;
}

const std::vector<FlagSpec>& command_flags(const std::string& command) {
  static const std::vector<FlagSpec> k_none;
  const CommandDoc* doc = find_doc(command);
  return doc ? doc->flags : k_none;
}

std::string command_usage(const std::string& command) {
  const char* help = command_help(command);
  if (!help) return "usage: preflight " + command;
  const std::string text = help;
  const auto end = text.find("\n\n");
  std::string usage = text.substr(0, end == std::string::npos ? text.size() : end);
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  return usage + "\n(preflight " + command + " --help explains each flag)";
}

}  // namespace preflight::cli
