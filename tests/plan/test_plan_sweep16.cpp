// Issue 16 acceptance, swept as a new user would read it: every recommended row of `plan --device D
// --num-devices N` over the whole catalogue (every catalogue device, 1/2/4/8 cards, every catalogue model,
// the DP+EP rows `plan` adds) and of `plan MODEL --devices ...`, checked clause by clause:
//  - "never --quantization X on a checkpoint that is not X": the checkpoint `vllm serve` loads is either the
//    repository as published (and then --quantization is absent, is the checkpoint's own quant_method, or is
//    fp8, which vLLM applies to a BF16 checkpoint while loading), or a repository of the quantized-checkpoint
//    catalogue (data/engines/quantized_checkpoints.json) published in that format from that base model, or the
//    output path a command of the row's prepare step writes (a comment saying "produce one" is no command);
//  - a quantized variant is never served from the BF16 repository without its --quantization;
//  - `--trust-remote-code` where the model's real config.json (../shared/models/) has an auto_map;
//  - a recommended row is sized at the --context target (--max-model-len / -c) and its KV cache holds at least
//    one request at it ("never lower a context target silently": a row below --context is not meeting the targets);
//  - full variant and model names: the row's variant is the full name of its record in
//    data/variants/quant_variants.json, and the text table prints the model id and variant name whole.
// Every violation is collected by kind with its first example, so a failure says what and where.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "../test_support.hpp"
#include "base/file.hpp"
#include "base/json_util.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/model_catalog.hpp"
#include "model/quant_variant.hpp"
#include "plan/dp_ep.hpp"
#include "plan/launch.hpp"
#include "plan_catalogs.hpp"
#include "report/render_plan.hpp"

using namespace preflight;

namespace {

struct Findings {
  std::map<std::string, std::pair<size_t, std::string>> by_kind;  // kind -> (count, first example)
  size_t rows = 0;
  void add(const std::string& kind, const std::string& example) {
    auto& [n, first] = by_kind[kind];
    if (n++ == 0) first = example;
  }
  size_t total() const {
    size_t n = 0;
    for (const auto& [k, v] : by_kind) n += v.first;
    return n;
  }
  std::string summary() const {
    std::ostringstream o;
    o << rows << " rows checked, " << total() << " violations\n";
    for (const auto& [k, v] : by_kind) o << "  " << v.first << " x " << k << "\n      e.g. " << v.second << "\n";
    return o.str();
  }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The word after `flag ` in a command line, or "".
std::string flag_value(const std::string& command, const std::string& flag) {
  const auto at = command.find(" " + flag + " ");
  if (at == std::string::npos) return "";
  const auto begin = at + flag.size() + 2;
  return command.substr(begin, command.find(' ', begin) - begin);
}

const engine::QuantizedCatalog& quantized_catalog() {
  static const engine::QuantizedCatalog c = [] {
    auto q = engine::load_quantized_catalog();
    EXPECT_TRUE(q.has_value());
    return q ? *q : engine::QuantizedCatalog{};
  }();
  return c;
}

// Whether the model's real config.json (../shared/models/ORG__NAME/config.json) has an auto_map, at the top
// level or in text_config (VL wrappers): read here from the file, not from the catalogue record.
bool real_config_has_auto_map(const std::string& model_id) {
  static std::map<std::string, bool> cache;
  if (auto it = cache.find(model_id); it != cache.end()) return it->second;
  const std::string dir = model_id.substr(0, model_id.find('/')) + "__" + model_id.substr(model_id.find('/') + 1);
  bool has = false;
  const std::string path = pftest::shared_path("models/" + dir + "/config.json");
  if (std::filesystem::exists(path)) {
    auto text = read_text_file(path);
    auto j = text ? parse_json(*text, path) : Expected<Json>(text.error());
    if (j) has = j->contains("auto_map") || (j->contains("text_config") && (*j)["text_config"].contains("auto_map"));
  }
  return cache[model_id] = has;
}

std::string row_label(const plan::Candidate& c) {
  return c.model_id.str() + " [" + c.variant.str() + "] " + std::to_string(c.num_devices) + "x " + c.device_id.str() + ": " + c.launch->serve.substr(0, 200);
}

// A path is written when a command (not a comment) of the prepare step names it whole: "--save_path PATH ",
// output_dir="PATH" in a python3 -c line, "-o PATH".
bool prepare_writes(const plan::Launch& l, const std::string& path) {
  for (const auto& line : l.prepare) {
    if (line.empty() || line[0] == '#') continue;
    for (size_t at = line.find(path); at != std::string::npos; at = line.find(path, at + 1)) {
      const char before = at == 0 ? ' ' : line[at - 1], after = at + path.size() < line.size() ? line[at + path.size()] : ' ';
      if ((before == ' ' || before == '"' || before == '\'' || before == '=') && (after == ' ' || after == '"' || after == '\'')) return true;
    }
  }
  return false;
}

void check_checkpoint(const plan::Candidate& c, const model::ModelSpec& m, Findings& f) {
  const plan::Launch& l = *c.launch;
  const std::string label = row_label(c);
  const bool checkout_server = l.serve.rfind("llama.cpp/build/bin/llama-server ", 0) == 0;
  if (l.serve.rfind("llama-server ", 0) == 0 || checkout_server) {
    const std::string file = flag_value(l.serve, "-m");
    if (file == "MODEL.gguf" || (file.rfind("/models/", 0) == 0 && !prepare_writes(l, file))) f.add("llama.cpp: serves a GGUF file no command writes", label);
    // user37: a start that clones llama.cpp runs the llama-server it builds there, and builds it before the serve line.
    bool cloned = false, built = false;
    for (const auto& p : l.prepare) {
      cloned = cloned || p.rfind("git clone https://github.com/ggml-org/llama.cpp", 0) == 0;
      built = built || (p.rfind("cmake -S llama.cpp -B llama.cpp/build && cmake --build llama.cpp/build --target ", 0) == 0 && p.find(" llama-server -j") != std::string::npos);
    }
    if (cloned != checkout_server || checkout_server != built) f.add("llama.cpp: the serve line's llama-server is not the one the start builds", label);
    return;
  }
  if (l.serve.rfind("vllm serve " + l.checkpoint + " ", 0) != 0) {
    f.add("serve does not load launch.checkpoint", label);
    return;
  }
  const std::string x = flag_value(l.serve, "--quantization");
  const std::string repo = plan::hub_repo_id(m.id);
  const auto& q = quantized_catalog();
  const auto published = std::find_if(q.checkpoints.begin(), q.checkpoints.end(), [&](const auto& ck) { return ck.repo == l.checkpoint; });
  if (l.checkpoint == repo) {
    const bool own = m.quant.quantized() && x == m.quant.method;
    // fp8 or bitsandbytes, which vLLM applies to a BF16 checkpoint while loading (catalogue "in_flight", h-conv12).
    const bool fp8_at_load = !m.quant.quantized() && std::any_of(q.in_flight.begin(), q.in_flight.end(), [&](const auto& r) { return r.quantization_flag == x; });
    if (!x.empty() && !own && !fp8_at_load) f.add("--quantization X on the repository as published, which is not X", label);
    if (!c.variant_id.empty() && x.empty()) f.add("a quantized variant served from the repository as published without --quantization", label);
  } else if (published != q.checkpoints.end()) {
    if (published->quantization_flag != x) f.add("published checkpoint served with another --quantization", label);
    // The model itself, or the BF16 original of a vendor release of it (Qwen/Qwen3-32B-FP8 is "the FP8 version of
    // Qwen3-32B": its W8A8 row serves vllm-ascend/Qwen3-32B-W8A8, made from the same original).
    const auto* release = engine::find_checkpoint_by_repo(q, repo);
    const bool same_model = published->base_model == repo || (release && published->base_model == release->base_model);
    if (!same_model || published->variant != c.variant_id) f.add("published checkpoint of another model or variant", label);
  } else if (!prepare_writes(l, l.checkpoint)) {
    f.add("serves a path no prepare command writes (no conversion step)", label);
  } else {
    // The conversion that writes it is a recipe of the row's variant, and the serve line passes that recipe's flag.
    const bool recipe = std::any_of(q.conversions.begin(), q.conversions.end(), [&](const auto& r) {
      const auto& out = l.checkpoint;
      return r.variant == c.variant_id && r.quantization_flag == x && out.size() > r.output_suffix.size() &&
             out.compare(out.size() - r.output_suffix.size(), r.output_suffix.size(), r.output_suffix) == 0;
    });
    if (!recipe) f.add("converted checkpoint served with a --quantization its recipe does not write", label);
  }
  const bool needs_remote_code = real_config_has_auto_map(m.id) || !m.auto_map.empty();
  if (needs_remote_code && !contains(l.serve, " --trust-remote-code")) f.add("config.json has an auto_map, no --trust-remote-code", label);
}

void check_row(const plan::Candidate& c, const model::ModelSpec& m, int64_t context, Findings& f) {
  ++f.rows;
  const std::string label = row_label(c);
  if (c.launch->serve.empty()) {
    f.add("recommended row without a start command", label);
    return;
  }
  check_checkpoint(c, m, f);
  if (!c.meets) f.add("recommended row that does not meet the targets", label);
  const std::string len = c.launch->serve.rfind("vllm serve ", 0) == 0 ? flag_value(c.launch->serve, "--max-model-len") : flag_value(c.launch->serve, "-c");
  // The KV cache holds at least one request at the full context (max_concurrency; the printed KV tokens of a
  // hybrid model count one group's blocks, vLLM's "GPU KV cache size", and may read under the context).
  if (c.context_tokens < context || len.empty() || std::stoll(len) < context || c.fit.max_concurrency < 1.0)
    f.add("row below --context called meeting the targets",
          label + " (context " + std::to_string(c.context_tokens) + ", requests at it " + std::to_string(c.fit.max_concurrency) + ")");
  if (!c.variant_id.empty()) {
    const auto& vc = model::load_variant_catalog();
    auto v = vc ? model::find_variant(*vc, c.variant_id) : Expected<const model::QuantVariant*>(vc.error());
    if (!v || (*v)->name != c.variant) f.add("variant name is not its record's full name", label);
  }
}

// The text table prints each shown row's model id and variant whole, on its row.
void check_table(const plan::PlanResult& r, Findings& f) {
  const std::string text = report::render_plan(r, "sweep", report::PlanFormat::text, r.recommended.size());
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  size_t i = 0;
  for (const auto& c : r.recommended) {
    while (i < rows.size() && !contains(rows[i], c.device_id)) ++i;  // the next row line
    if (i >= rows.size() || rows[i].rfind(c.model_id.str() + " ", 0) != 0 || !contains(rows[i], " " + c.variant.str() + " ")) {
      f.add("model id or variant name cut in the text table", c.model_id.str() + " [" + c.variant.str() + "]: " + (i < rows.size() ? rows[i] : std::string("(no row)")));
      return;
    }
    ++i;
  }
}

std::vector<model::ModelSpec> catalogue_models() {
  std::vector<model::ModelSpec> models;
  for (const auto& e : model::builtin_model_catalog().models) {
    auto spec = model::model_spec_from_catalog(e);
    EXPECT_TRUE(spec.has_value()) << e.id;
    if (spec) models.push_back(std::move(*spec));
  }
  return models;
}

const model::ModelSpec& model_of(const std::vector<model::ModelSpec>& models, const std::string& id) {
  return *std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.id == id; });
}

// `bash -n` on a script: it parses as a shell script (quotes closed, no stray characters); 0 when it does.
int shell_syntax(const std::string& script, const std::string& name) {
  const std::string path = pftest::scratch_dir("sweep16-" + name) + "/start.sh";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return -1;
  std::fputs(script.c_str(), f);
  std::fclose(f);
  return std::system(("bash -n " + path + " 2>/dev/null").c_str());
}

// Every start block of a plan (`plan --commands`), without the "start MODEL (VARIANT) on N x D:" headers: what a
// user pastes, row after row.
std::string start_blocks(const plan::PlanResult& r) {
  std::istringstream lines(report::render_plan_commands(r, report::PlanFormat::text, r.recommended.size()));
  std::string line, script;
  while (std::getline(lines, line))
    if (!(line.rfind("start ", 0) == 0 && !line.empty() && line.back() == ':')) script += line + "\n";
  return script;
}

Json json_of(const pftest::CliRun& r) {
  auto j = parse_json(r.out, "stdout");
  EXPECT_TRUE(j.has_value()) << r.out.substr(0, 400);
  return j ? *j : Json();
}

}  // namespace

// `plan --device D --num-devices N` for every catalogue device and N = 1, 2, 4, 8 at a 32,768-token context,
// with the DP+EP rows the command adds: every recommended row's start command passes every check above.
TEST(PlanSweep16, Issue16_EveryRecommendedRowOverTheCatalogueRunsAsWritten) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& cat = test::catalogs();
  const auto models = catalogue_models();
  ASSERT_GE(models.size(), 60u);
  plan::PlanInputs in = cat.inputs();
  plan::PlanTargets t;
  t.context_tokens = 32768;
  const std::vector<int64_t> counts = {1, 2, 4, 8};
  auto plans = plan::plan_for_devices(models, cat.devices.devices, counts, in, t, 0);
  ASSERT_EQ(plans.size(), cat.devices.devices.size() * counts.size());
  Findings f;
  std::map<std::string, std::string> scripts;  // per device: every start block of its four plans, for one `bash -n`
  for (auto& p : plans) {
    if (p.num_devices > 1) plan::add_dp_ep_rows_for_device(p.result, models, *device::find_device(cat.devices, p.device_id), in, t);
    for (const auto& c : p.result.recommended) check_row(c, model_of(models, c.model_id), 32768, f);
    check_table(p.result, f);
    scripts[p.device_id] += start_blocks(p.result);
  }
  size_t script_bytes = 0;
  for (const auto& [device, script] : scripts) {
    script_bytes += script.size();
    if (!script.empty() && shell_syntax(script, "device") != 0) f.add("start commands that do not parse as a shell script (bash -n)", device);
  }
  EXPECT_GE(script_bytes, 10'000'000u) << "the start blocks were not rendered";
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("plan --device sweep: %zu device x count plans in %.1f s, %.1f MB of start commands through bash -n\n%s", plans.size(), seconds,
              static_cast<double>(script_bytes) / 1e6, f.summary().c_str());
  EXPECT_GE(f.rows, 1000u) << "the sweep found too few rows to mean anything";
  EXPECT_EQ(f.total(), 0u) << f.summary();
}

// `plan MODEL --devices ...` for every catalogue model on one card of each kind a user compares (Ascend 32 and
// 64 GB, NVIDIA 80/48/24 GB, AMD, Apple), up to 16 devices, at 32,768 and 131,072-token contexts: the same checks.
TEST(PlanSweep16, Issue16_EveryModelsPlanRunsAsWritten) {
  const auto& cat = test::catalogs();
  const auto models = catalogue_models();
  std::vector<device::DeviceSpec> devices;
  for (const char* id : {"910B4", "910B3", "H100-SXM", "A100-80G-SXM", "L40S", "RTX4090", "MI300X", "M3-Max"}) devices.push_back(test::dev(id));
  Findings f;
  // 131,072 tokens is above the maximum of many catalogue models (Llama-2-7b 4,096, Qwen3-8B 40,960): their rows
  // are rejected, never kept at a lower context.
  for (const int64_t context : {int64_t{32768}, int64_t{131072}}) {
    plan::PlanTargets t;
    t.context_tokens = context;
    for (const auto& m : models) {
      const auto r = plan::plan_for_model(m, devices, cat.inputs(), t, 16);
      for (const auto& c : r.recommended) check_row(c, m, context, f);
      check_table(r, f);
    }
  }
  std::printf("plan MODEL sweep: %zu models\n%s", models.size(), f.summary().c_str());
  EXPECT_GE(f.rows, 200u);
  EXPECT_EQ(f.total(), 0u) << f.summary();
}

// msModelSlim W4A16 has no published checkpoint of any catalogue model and no conversion recipe in
// data/engines/quantized_checkpoints.json (only msmodelslim-w8a8, msmodelslim-w4a8 and llm-compressor's AWQ
// W4A16): a plan no longer offers it, since its start command would serve /models/NAME-w4a16 that no command
// writes (before: 1,006 such rows in the sweep above). With a published W4A16 checkpoint of the model it is
// offered again, served from that checkpoint.
TEST(PlanSweep16, Issue16_AVariantNoCommandProducesIsNotOffered) {
  const auto& cat = test::catalogs();
  const auto models = catalogue_models();
  const auto& m = model_of(models, "Qwen/Qwen3-235B-A22B");
  auto eng = engine::select_engine(cat.engines, engine::default_engine_for("npu"), "");
  ASSERT_TRUE(eng.has_value());
  const auto offered = plan::quantization_variants(m, *eng);
  EXPECT_EQ(std::count(offered.begin(), offered.end(), "w4a16"), 0);
  EXPECT_EQ(std::count(offered.begin(), offered.end(), "w4a8_dynamic"), 1);  // msmodelslim-w4a8 writes it
  EXPECT_EQ(std::count(offered.begin(), offered.end(), "w8a8"), 1);

  engine::QuantizedCatalog with_w4a16 = quantized_catalog();
  with_w4a16.checkpoints.push_back({"example/Qwen3-235B-A22B-W4A16", "huggingface", "Qwen/Qwen3-235B-A22B", "w4a16", "msModelSlim W4A16", "ascend",
                                    "https://huggingface.co/example/Qwen3-235B-A22B-W4A16", "test record"});
  const auto again = plan::quantization_variants(m, *eng, &with_w4a16);
  EXPECT_EQ(std::count(again.begin(), again.end(), "w4a16"), 1);

  // Through the real binary: no W4A16 row on 8 x 910B4, and no start command serves a -w4a16 path.
  const auto js = pftest::run_cli("plan --device 910B4 --num-devices 8 --json", {.with_stderr = false});
  ASSERT_EQ(js.code, 0);
  const Json plan = json_of(js);  // a named value: a range over a member of the temporary would dangle
  for (const auto& r : plan["recommended"]) {
    EXPECT_NE(r["variant_id"], "w4a16") << r["model"];
    EXPECT_FALSE(contains(r["launch"]["serve"].get<std::string>(), "-w4a16 ")) << r["launch"]["serve"];
  }
}

namespace {
// The start block `plan` prints after "start the first one (...):" (text), up to its notes: what a user pastes.
std::string first_start_block(const std::string& out) {
  const auto at = out.find("start the first one (");
  if (at == std::string::npos) return "";
  std::istringstream lines(out.substr(out.find('\n', at) + 1));
  std::string line, block;
  while (std::getline(lines, line) && !line.empty() && line.rfind("  # ", 0) != 0 && line.rfind("why it fits", 0) != 0) block += line + "\n";
  return block;
}

// Every "start MODEL (VARIANT) on Nx D:" block of `plan --commands`, in order.
std::vector<std::string> command_blocks(const std::string& out) {
  std::vector<std::string> blocks;
  std::istringstream lines(out);
  std::string line;
  bool in = false;
  while (std::getline(lines, line)) {
    if (line.rfind("start ", 0) == 0 && line.back() == ':' && !contains(line, "start the first one")) {
      blocks.emplace_back();
      in = true;
    } else if (line.empty()) {
      in = false;
    } else if (in) {
      blocks.back() += line + "\n";
    }
  }
  return blocks;
}

// The serve line of a block, and whether a command line before it (not a comment) writes the path it serves.
std::string serve_line(const std::string& block) {
  const auto at = block.find("vllm serve ");
  return at == std::string::npos ? "" : block.substr(at, block.find('\n', at) - at);
}
}  // namespace

// The issue's first example: Qwen3-14B on one 910B4 at 32,768 tokens. BF16 weights (14.8B parameters x 2 B =
// 27.5 GiB) exceed the 27.1 GiB budget (0.92 x 29.5 GiB), so the row is msModelSlim W8A8; no W8A8 checkpoint
// of Qwen3-14B is catalogued (vllm-ascend publishes Qwen3-32B-W8A8 and Qwen3-235B-A22B-W8A8), so the block
// downloads the BF16 repository, converts it with msModelSlim, then serves the conversion's output. Before:
// `vllm serve Qwen/Qwen3-14B ... --quantization ascend` on the BF16 repository.
TEST(PlanSweep16, Issue16_FirstExampleIsPasteable) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-14B --devices 910B4 --context 32768", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string block = first_start_block(r.out);
  ASSERT_FALSE(block.empty()) << r.out;
  EXPECT_EQ(shell_syntax(block, "example1"), 0) << block;
  EXPECT_FALSE(contains(block, "vllm serve Qwen/Qwen3-14B ")) << block;
  const auto download = block.find("hf download Qwen/Qwen3-14B --local-dir /models/Qwen3-14B\n");
  const auto convert = block.find("msmodelslim quant --model_path /models/Qwen3-14B --save_path /models/Qwen3-14B-W8A8 ");
  const auto serve = block.find("vllm serve /models/Qwen3-14B-W8A8 ");
  ASSERT_NE(download, std::string::npos) << block;
  ASSERT_NE(convert, std::string::npos) << block;
  ASSERT_NE(serve, std::string::npos) << block;
  EXPECT_LT(download, convert);
  EXPECT_LT(convert, serve);
  EXPECT_TRUE(contains(serve_line(block), " --quantization ascend")) << block;
  EXPECT_TRUE(contains(serve_line(block), " --max-model-len 32768 ")) << block;
}

// The issue's second example: Qwen3-235B-A22B on 910B4, 910B3 and H100. No row serves the BF16 repository with
// --quantization (before: `vllm serve Qwen/Qwen3-235B-A22B --quantization awq`); `--commands` prints a start for
// every row (before: only the first row had one, the others printed an empty block), each parses as a shell
// script and serves what a command before it writes.
TEST(PlanSweep16, Issue16_SecondExampleIsPasteableOnEveryRow) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-235B-A22B --devices 910B4,910B3,H100 --commands", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  // ux32: with --commands the first row's start is printed once, in the list below (each block checked there).
  EXPECT_EQ(first_start_block(r.out), "") << r.out;
  const auto js = pftest::run_cli("plan Qwen/Qwen3-235B-A22B --devices 910B4,910B3,H100 --json", {.with_stderr = false});
  const size_t rows = json_of(js)["recommended"].size();
  ASSERT_GE(rows, 3u);
  const auto blocks = command_blocks(r.out);
  ASSERT_EQ(blocks.size(), rows) << r.out;
  for (size_t i = 0; i < blocks.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i) + ":\n" + blocks[i]);
    const std::string serve = serve_line(blocks[i]);
    ASSERT_FALSE(serve.empty());
    EXPECT_EQ(shell_syntax(blocks[i], "example2-" + std::to_string(i)), 0);
    EXPECT_FALSE(contains(serve, "vllm serve Qwen/Qwen3-235B-A22B ")) << "BF16 does not fit one node of any of the three at 32,768 tokens";
    const std::string path = serve.substr(11, serve.find(' ', 11) - 11);
    EXPECT_EQ(path.rfind("/models/Qwen3-235B-A22B-", 0), 0u) << serve;
    plan::Launch l;
    std::istringstream lines(blocks[i].substr(0, blocks[i].find("vllm serve ")));
    for (std::string line; std::getline(lines, line);) l.prepare.push_back(line);
    EXPECT_TRUE(prepare_writes(l, path)) << "no command before the serve line writes " << path;
  }
}

// `plan --device 910B4 --model 'Qwen/Qwen3*'`: only the catalogue's Qwen3 models (ids read from
// data/architectures/models.json here), every one of them listed, and in --json a start command on every
// recommended row; on 8 cards with --commands, a start block per row shown.
TEST(PlanSweep16, Issue16_ModelFilterHasAStartCommandOnEveryRow) {
  std::set<std::string> qwen3;
  for (const auto& e : model::builtin_model_catalog().models)
    if (e.id.rfind("Qwen/Qwen3", 0) == 0) qwen3.insert(e.id);
  ASSERT_GE(qwen3.size(), 10u);
  const auto js = pftest::run_cli("plan --device 910B4 --model 'Qwen/Qwen3*' --json", {.with_stderr = false});
  ASSERT_EQ(js.code, 0) << js.out.substr(0, 400);
  const Json j = json_of(js);
  std::set<std::string> seen;
  for (const char* list : {"recommended", "rejected"})
    for (const auto& row : j[list]) seen.insert(row["model"].get<std::string>());
  EXPECT_EQ(seen, qwen3);
  ASSERT_FALSE(j["recommended"].empty());
  for (const auto& row : j["recommended"]) {
    const std::string serve = row["launch"]["serve"].get<std::string>(), checkpoint = row["launch"]["checkpoint"].get<std::string>();
    EXPECT_EQ(serve.rfind("vllm serve " + checkpoint + " ", 0), 0u) << row["model"] << " " << serve;
    if (contains(serve, " --quantization ") && checkpoint == row["model"].get<std::string>())
      EXPECT_EQ(flag_value(serve, "--quantization"), "fp8") << serve;  // only fp8 quantizes a BF16 repository at load
  }
  const auto text = pftest::run_cli("plan --device 910B4 --num-devices 8 --model 'Qwen/Qwen3*' --commands", {.with_stderr = false});
  ASSERT_EQ(text.code, 0);
  const auto js8 = pftest::run_cli("plan --device 910B4 --num-devices 8 --model 'Qwen/Qwen3*' --json", {.with_stderr = false});
  const size_t shown = std::min<size_t>(15, json_of(js8)["recommended"].size());
  const auto blocks = command_blocks(text.out);
  ASSERT_EQ(blocks.size(), shown) << text.out.substr(0, 2000);
  for (const auto& b : blocks) EXPECT_FALSE(serve_line(b).empty()) << b;
}

// `plan --device D --engine llama.cpp` (Apple, CPU, and a CUDA card) for every catalogue model: a published
// safetensors checkpoint is not a GGUF file, so the row converts it first (llama.cpp's convert_hf_to_gguf.py, in the
// dtype the row is sized in) and serves the file it writes. Before: `llama-server -m MODEL.gguf` with no step
// producing it, on every row. Qwen3-8B (config.json: torch_dtype bfloat16) by hand: /models/Qwen3-8B-BF16.gguf.
TEST(PlanSweep16, Issue16_LlamaCppRowsServeTheGgufTheirConversionWrites) {
  const auto& cat = test::catalogs();
  const auto models = catalogue_models();
  plan::PlanInputs in = cat.inputs();
  in.engine = "llama.cpp";
  plan::PlanTargets t;
  t.context_tokens = 32768;
  std::vector<device::DeviceSpec> devices;
  for (const char* id : {"M3-Max", "M3-Ultra", "cpu", "RTX4090"}) devices.push_back(test::dev(id));
  const auto plans = plan::plan_for_devices(models, devices, {1}, in, t, 0);
  Findings f;
  const plan::Candidate* qwen3_8b = nullptr;
  for (const auto& p : plans) {
    for (const auto& c : p.result.recommended) {
      check_row(c, model_of(models, c.model_id), 32768, f);
      if (c.model_id == "Qwen/Qwen3-8B" && c.device_id == "M3-Max") qwen3_8b = &c;
    }
  }
  std::printf("llama.cpp sweep\n%s", f.summary().c_str());
  EXPECT_GE(f.rows, 40u);
  EXPECT_EQ(f.total(), 0u) << f.summary();
  ASSERT_NE(qwen3_8b, nullptr);
  const plan::Launch& l = *qwen3_8b->launch;
  EXPECT_EQ(l.serve.rfind("llama.cpp/build/bin/llama-server -m /models/Qwen3-8B-BF16.gguf -c 32768 ", 0), 0u) << l.serve;
  std::string prepare;
  for (const auto& line : l.prepare) prepare += line + "\n";
  EXPECT_TRUE(contains(prepare, "hf download Qwen/Qwen3-8B --local-dir /models/Qwen3-8B\n")) << prepare;
  EXPECT_TRUE(contains(prepare, "python3 llama.cpp/convert_hf_to_gguf.py /models/Qwen3-8B --outtype bf16 --outfile /models/Qwen3-8B-BF16.gguf\n")) << prepare;
  EXPECT_EQ(shell_syntax(prepare + l.serve + "\n", "llama"), 0) << prepare;
}
