#include "plan/launch.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>
#include <utility>

#include "base/fixed_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/flag_versions.hpp"
#include "engine/speculative_methods.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/model_spec.hpp"
#include "model/quant_variant.hpp"
#include "plan/launch_words.hpp"
#include "plan/llama_rows.hpp"

namespace preflight::plan {

// planq32: whether the plan's settings arguments (options.engine_args) hold one starting with `flag` ("--dtype ").
namespace {
bool given_arg(const LaunchOptions& options, const std::string& flag) {
  const EngineArgs* a = options.engine_args;
  return a && std::any_of(a->serve_args.begin(), a->serve_args.end(), [&](const std::string& arg) { return starts_with(arg, flag); });
}
bool given_arg_exactly(const LaunchOptions& options, const std::string& flag) {  // ux33: a switch (--enable-auto-tool-choice)
  const EngineArgs* a = options.engine_args;
  return a && std::find(a->serve_args.begin(), a->serve_args.end(), flag) != a->serve_args.end();
}
}  // namespace

std::string shell_single_quoted(const std::string& text) {
  std::string out = "'";
  for (const char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string shell_word(const std::string& text) {
  const auto plain = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./:@%+=,-", c) != nullptr; };
  return !text.empty() && std::all_of(text.begin(), text.end(), plain) ? text : shell_single_quoted(text);
}

using launch_words::base_name;
using launch_words::local_folder;
using launch_words::shell_path;

namespace {

struct RuleContext {
  const model::ModelSpec& model;
  const engine::EngineProfile& engine;
  std::string model_id_lower;    // the candidate's model id, lowercased once for every rule
  std::string model_type_lower;  // the model's model_type, likewise
  bool multi_node;
  Workload workload;
  const std::string& device_family;  // the card's device catalogue family; empty when not known
};

// `lowered` (already lowercase) against a rule's text in any case, without a lowercased copy of it: the
// rules are matched for every row of a plan.
bool same_lowered(char lowered, char any) { return lowered == static_cast<char>(std::tolower(static_cast<unsigned char>(any))); }
bool contains_lowered(const std::string& lowered, const std::string& text) {
  return std::search(lowered.begin(), lowered.end(), text.begin(), text.end(), same_lowered) != lowered.end();
}
bool equals_lowered(const std::string& lowered, const std::string& text) {
  return lowered.size() == text.size() && std::equal(lowered.begin(), lowered.end(), text.begin(), same_lowered);
}
bool starts_lowered(const std::string& lowered, const std::string& prefix) {
  return prefix.size() <= lowered.size() && std::equal(prefix.begin(), prefix.end(), lowered.begin(), [](char p, char l) { return same_lowered(l, p); });
}

bool rule_applies(const engine::LaunchRule& r, const RuleContext& ctx) {
  const auto& e = ctx.engine;
  if (r.engine != "*" && r.engine != e.engine) return false;
  if (r.engine == "*" && e.engine == "llama.cpp") return false;
  // A version the user named decides alone (issue 16: --engine vllm-ascend@0.13.0 inside the 0.13-0.14 profile has
  // no --default-chat-template-kwargs, which vLLM 0.14 added); without one, any version of the profile may take it.
  if (e.version_named ? (*e.version_named < r.version_min || r.version_max < *e.version_named)
                      : (e.version_max < r.version_min || r.version_max < e.version_min))
    return false;
  if (!r.workload.empty() && r.workload != workload_name(ctx.workload)) return false;
  if (r.multi_node && !ctx.multi_node) return false;
  if (!r.device_families.empty() && std::find(r.device_families.begin(), r.device_families.end(), ctx.device_family) == r.device_families.end()) return false;
  const std::string& id = ctx.model_id_lower;
  if (!r.model_id_contains.empty()) {
    bool named = false;
    for (const auto& s : r.model_id_contains) named |= contains_lowered(id, s);
    if (!named) return false;
  }
  for (const auto& s : r.model_id_excludes)
    if (contains_lowered(id, s)) return false;
  if (r.always) return true;
  if (r.vision && ctx.model.vision_params > 0) return true;
  const std::string& mt = ctx.model_type_lower;
  if (mt.empty()) return false;
  for (const auto& t : r.model_types)
    if (equals_lowered(mt, t)) return true;
  for (const auto& p : r.model_type_prefixes)
    if (starts_lowered(mt, p)) return true;
  return false;
}


// The --served-model-name vLLM is given: the name's last part in lower case, without a leading '-' (vLLM's argparse would
// read "-rf" as an option; issue 19, hard30).
std::string served_name(const std::string& id) {
  std::string name = to_lower(base_name(id));
  name.erase(0, std::min(name.find_first_not_of('-'), name.size()));
  return name.empty() ? std::string("model") : name;
}

// Issue 19 (hard30): a comment quotes the model id, any text for a local folder: a newline would begin a command (hard32: llama.cpp rows too).
void comments_on_one_line(std::vector<std::string>& prepare) {
  for (auto& line : prepare) if (starts_with(line, "#")) std::replace_if(line.begin(), line.end(), [](char ch) { return ch == '\n' || ch == '\r'; }, ' ');
}


// A hub reference ("hf:org/name@rev", "ms:org/name@rev": hub/hub_ref's form of ModelSpec::id) as `vllm serve`
// takes it: the repo id, the revision when it is not the hub's default (Hugging Face "main", ModelScope
// "master"), and whether vLLM fetches it from ModelScope (VLLM_USE_MODELSCOPE=true). vLLM reads neither the
// prefix nor "@rev": `vllm serve hf:org/name@main` fails to resolve the repo.
struct ServedRepo {
  std::string repo, revision;
  bool modelscope = false;
};

ServedRepo served_repo(const std::string& id) {
  ServedRepo r{id, "", false};
  const bool hf = starts_with(id, "hf:"), ms = starts_with(id, "ms:");
  if (!hf && !ms) return r;
  std::string rest = id.substr(3), rev;
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    rev = rest.substr(at + 1);
    rest.erase(at);
  }
  r.repo = rest;
  r.modelscope = ms;
  if (!rev.empty() && rev != (ms ? "master" : "main")) r.revision = rev;
  return r;
}

// Issue 19 (planfast13): the head of a `vllm serve` line ("vllm serve CHECKPOINT [--served-model-name NAME] [--revision
// REV]") and the served repo of the model id, as build_launch writes them, kept per thread by the three values they read:
// the checkpoint, the model id and whether the plan's settings give --served-model-name. The counts, cards and
// classes of one (model, variant) start the same checkpoint, and each of the whole-catalogue plan's 4,053 start
// commands quoted it, named and parsed it again (kept, 7.5 M instructions fewer). The last few are kept (a variant's counts may
// alternate between a published checkpoint and a conversion's output).
struct ServeHead {
  std::string checkpoint, model_id;
  bool named = false;  // --served-model-name given by the settings: not written here
  ServedRepo hub;
  std::string text;
};

const ServeHead& serve_head(const std::string& checkpoint, const std::string& model_id, bool named) {
  thread_local std::vector<ServeHead> kept;
  thread_local size_t next = 0;
  for (const ServeHead& h : kept)
    if (h.named == named && h.checkpoint == checkpoint && h.model_id == model_id) return h;
  ServeHead h{checkpoint, model_id, named, served_repo(model_id), {}};
  FixedText s;
  s << "vllm serve " << shell_path(checkpoint);
  if (!named) s << " --served-model-name " << shell_word(served_name(h.hub.repo));  // planq32: else the user's
  if (checkpoint == h.hub.repo && !h.hub.revision.empty()) s << " --revision " << h.hub.revision;
  h.text = s.take();
  constexpr size_t k_kept = 4;
  if (kept.size() < k_kept) {
    kept.push_back(std::move(h));
    return kept.back();
  }
  ServeHead& slot = kept[next];
  next = (next + 1) % k_kept;
  slot = std::move(h);
  return slot;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

// msModelSlim's --device: "npu" for one card, "npu:0,1,..." for several.
std::string npu_devices(int64_t n) {
  if (n <= 1) return "npu";
  std::string s = "npu:";
  for (int64_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(i);
  }
  return s;
}

// Whether a checkpoint stating quant_method `method` is what --quantization `flag` reads (vLLM's names:
// '-' and '_' alike, case-insensitive).
bool same_method(std::string method, std::string flag) {
  for (auto* t : {&method, &flag}) {
    *t = to_lower(*t);
    std::replace(t->begin(), t->end(), '-', '_');
  }
  return method == flag;
}

// ux28: a checkpoint whose config.json states AWQ or GPTQ is served without --quantization (the catalogue's empty
// quantization_flag): vLLM then upgrades it to the Marlin kernel where the card has one.
const std::string k_method_from_config = "no --quantization: vLLM reads quant_method from the checkpoint's config.json and picks the Marlin kernel where the card has one; --quantization ";
const std::string k_method_from_config_tail =
    " would force the slower kernel ('... you specified quantization=awq explicitly, so forcing awq. Use quantization=awq_marlin for faster inference', vllm#20112)";

// Where a recipe's input comes from: the hub (its own download command fetches it), or a cast's output or a local folder
// (its download command is dropped and {model_id} names that directory).
enum class RecipeInput { hub, cast_output };

// Issue 19 (planfast6): the candidate's fields the checkpoint choice read beyond its model and variant (LaunchMemo keys on
// them only where they were read).
struct CheckpointReads {
  bool tensor_parallel = false;  // a published checkpoint the engine refuses under TP was found: the TP size decides
  bool devices = false;          // a recipe's command names {devices} (msModelSlim's --device): the card count decides
};

// The commands of `recipe` with its templates filled: {model_id}, {model_name}, {model_dir}, {output_dir},
// {devices}, {model_type} (the tool's adapter name for the model: engine::recipe_model_type). After a cast the recipe reads the cast's output, not the hub: its download command
// ("hf download ...") is dropped and {model_id} names the cast's output directory.
void push_recipe(const engine::ConversionRecipe& recipe, const std::string& model_id, const std::string& model_dir, const std::string& output_dir,
                 const std::string& devices, const std::string& model_type, RecipeInput input, Launch& l, CheckpointReads& reads) {
  const bool after_cast = input == RecipeInput::cast_output;
  const std::string name = base_name(model_id);
  // The six names in the order they are filled, and their values.
  const std::pair<std::string_view, std::string_view> names[] = {{"{model_id}", after_cast ? model_dir : model_id},
                                                                 {"{model_name}", name},
                                                                 {"{model_dir}", model_dir},
                                                                 {"{output_dir}", output_dir},
                                                                 {"{devices}", devices},
                                                                 {"{model_type}", model_type}};
  // Round 17 (issue 19): one pass over the command when no value holds a brace and every '{' of the command opens one of
  // the names: the name-by-name passes can then match only the command's own names (a brace comes only from the
  // command, and each of its '{' begins a name), so one pass writes what they write. Otherwise they run as before.
  bool one_pass = true;
  for (const auto& [from, to] : names) one_pass = one_pass && to.find_first_of("{}") == std::string_view::npos;
  for (const auto& cmd : recipe.commands) {
    if (after_cast && cmd.rfind("hf download ", 0) == 0) continue;
    // A value may hold a name the passes below then fill: only the one pass is known to write {devices} nowhere else.
    if (!one_pass || cmd.find("{devices}") != std::string::npos) reads.devices = true;
    std::string s;
    bool filled = one_pass;
    if (filled) {
      s.reserve(cmd.size() + 64);
      for (size_t at = 0; at < cmd.size() && filled;) {
        const size_t open = cmd.find('{', at);
        s.append(cmd, at, open == std::string::npos ? std::string::npos : open - at);
        if (open == std::string::npos) break;
        const std::string_view rest = std::string_view(cmd).substr(open);
        const auto* hit = std::find_if(std::begin(names), std::end(names), [&](const auto& n) { return rest.substr(0, n.first.size()) == n.first; });
        if (hit == std::end(names)) filled = false;  // a brace that opens no name
        else s.append(hit->second), at = open + hit->first.size();
      }
    }
    if (!filled) {
      s = cmd;
      for (const auto& [from, to] : names) s = replace_all(s, std::string(from), std::string(to));
    }
    l.prepare.push_back(std::move(s));
  }
}

// The variant a published quantized checkpoint is (its own descriptor), or nullptr.
const model::QuantVariant* published_variant(const model::ModelSpec& m) {
  const auto& variants = model::load_variant_catalog();
  return variants && m.quant.quantized() ? model::variant_of_checkpoint(*variants, m.quant) : nullptr;
}

// The conversion `cv` of the model, with the cast to BF16 first when the model is published quantized
// (`cast`: DeepSeek's fp8_cast_bf16.py for an FP8 block checkpoint): msModelSlim quantizes BF16 weights.
// Disk and host memory in the notes come from the sizes: the published checkpoint's weight bytes and
// 2 B per parameter for the BF16 copy (MTP layers included: the cast writes every tensor).

void add_conversion(const model::ModelSpec& m, const Candidate& c, const std::string& model_id, const engine::QuantizedCatalog& catalog, const engine::ConversionRecipe& cv,
                    const engine::ConversionRecipe* cast, int64_t devices_per_node, Launch& l, CheckpointReads& reads) {
  const std::string folder = local_folder(m, model_id);
  const std::string name = base_name(folder.empty() ? model_id : folder);
  const std::string model_dir = folder.empty() ? "/models/" + name : folder;
  const RecipeInput source = folder.empty() ? RecipeInput::hub : RecipeInput::cast_output;  // a local folder: no download
  const std::string input_dir = cast ? model_dir + cast->output_suffix : model_dir;
  const std::string output_dir = "/models/" + name + cv.output_suffix;
  const model::ParamCounts params = model::count_params(m);
  const double bf16_gib = bytes_to_gib(static_cast<double>(params.total) * 2.0);
  const std::string devices = npu_devices(std::min(c.num_devices, devices_per_node));
  if (cast) {
    const model::QuantVariant* own = published_variant(m);
    const model::WeightBytes published = model::compute_weight_bytes(m);
    const double cast_bf16_gib = bytes_to_gib(static_cast<double>(params.total + params.mtp) * 2.0);
    l.prepare.push_back(format("# %s is published in %s only and %s quantizes BF16 weights: cast it to BF16 with %s first, then convert it once, then serve the output",
                               c.model_id.c_str(), own ? own->name.c_str() : m.quant.detail.c_str(), cv.tool.c_str(), cast->tool.c_str()));
    push_recipe(*cast, model_id, model_dir, input_dir, devices, engine::recipe_model_type(catalog, *cast, name, m.model_type).value_or(name), source, l, reads);
    std::string note = replace_all(cast->note, "{published_gib}", fixed(bytes_to_gib(published.total + published.mtp), 0));
    note = replace_all(note, "{bf16_gib}", fixed(cast_bf16_gib, 0));
    l.notes.push_back(cast->id + ": " + note + " (" + cast->source + ")");
  } else {
    l.prepare.push_back(format("# no published checkpoint of %s in this variant (%s) is known: convert it once with %s, then serve the output",
                               model_id.c_str(), c.variant.c_str(), cv.tool.c_str()));
  }
  const std::string model_type = engine::recipe_model_type(catalog, cv, name, m.model_type).value_or(name);
  push_recipe(cv, model_id, input_dir, output_dir, devices, model_type, cast ? RecipeInput::cast_output : source, l, reads);
  // Issue 16 (quant30): a model of a family the tool has an adapter for, under a name the tool does not list, gets a name
  // of that adapter (msModelSlim keys adapters by --model_type name; each name of a group loads the group's adapter).
  if (const engine::ModelAdapter* a = engine::recipe_model_type(catalog, cv, name) ? nullptr : engine::family_adapter(catalog, cv, m.model_type)) {
    std::string names;
    for (const auto& n : a->names) names += (names.empty() ? "" : ", ") + n;
    std::string tool = cv.tool;
    for (const auto& list : catalog.model_types)
      if (list.id == cv.model_types) tool = list.tool;
    l.notes.push_back(format("--model_type %s: %s lists no name for %s; its model_type %s is of the family of %s's adapter %s, which each of its names "
                             "(%s) loads; the name (the longest common ending, then the nearest length) picks among that adapter's practices",
                             model_type.c_str(), tool.c_str(), name.c_str(), m.model_type.c_str(), tool.c_str(), a->id.c_str(), names.c_str()));
  }
  l.checkpoint = output_dir;
  l.notes.push_back(cv.id + ": " + replace_all(cv.note, "{bf16_gib}", fixed(bf16_gib, 0)) + " (" + cv.source + ")");
}

// What `vllm serve` loads for the candidate's variant, and the --quantization it passes. Never
// --quantization X on a checkpoint that is not X: a published X checkpoint, else the conversion
// that produces one (its commands go to `prepare`; from a checkpoint published quantized, after the
// cast back to BF16 the catalogue has for its format), else vLLM's own load-time quantization (fp8).
// A published quantized checkpoint is served as it is for its own method. Returns "" when the checkpoint `serve`
// loads is published or written by a command of `prepare`; else why no command can produce it (issue 16: the
// planner rejects such a row with it), and `prepare` says the same and names the path it would serve.
// Issue 19 (round 18): with CheckpointText::reason_only only that answer is the same: no notes, environment or `prepare`
// lines and no conversion commands are written, so `l` is not what a start command holds (unservable_reason asks for
// every (model, variant) of a plan, twice, and reads nothing but the answer).
enum class CheckpointText { full, reason_only };
std::string choose_checkpoint(const model::ModelSpec& m, const Candidate& c, const engine::EngineProfile& e, const engine::QuantizedCatalog& catalog,
                              int64_t devices_per_node, Launch& l, std::string& flag, CheckpointReads& reads, CheckpointText text = CheckpointText::full) {
  const bool full = text == CheckpointText::full;
  const std::string model_id = hub_repo_id(c.model_id);
  l.checkpoint = model_id;
  flag = c.quantization_flag;
  // Issue 16: served as published only as its own variant; the same method with another storage (compressed-tensors
  // W8A16 asked of an FP8 compressed-tensors checkpoint, ModelOpt FP8 of a mixed NVFP4 one) is not that checkpoint.
  const model::QuantVariant* own_variant = m.quant.quantized() ? published_variant(m) : nullptr;
  const bool as_own = own_variant && own_variant->id == c.variant_id;
  if (flag.empty() || (m.quant.quantized() && (c.variant_id.empty() || (same_method(m.quant.method, flag) && as_own)))) return "";
  const std::string& variant = c.variant_id.empty() ? c.quantization_flag : c.variant_id;
  // A quantized repo the catalogue lists as a release of a BF16 original (Qwen/Qwen3-32B-FP8 of Qwen/Qwen3-32B):
  // the variant is looked up, or converted, from that original; no cast.
  const engine::QuantizedCheckpoint* release = m.quant.quantized() ? engine::find_checkpoint_by_repo(catalog, model_id) : nullptr;
  const std::string base_id = release ? release->base_model : model_id;
  if (release && full)
    l.notes.push_back(model_id + " is " + release->format + " of " + base_id + " (" + release->source + "): the " + variant + " row starts from that BF16 original");
  const engine::InFlightQuantization* in_flight = engine::find_in_flight(catalog, variant, e.platform);
  const auto* ck = engine::find_quantized_checkpoint(catalog, base_id, variant);
  const bool refused_under_tp = ck && in_flight && !in_flight->published_tp_rejection.empty();
  if (refused_under_tp) reads.tensor_parallel = true;
  if (refused_under_tp && c.tensor_parallel_size > 1 && (!m.quant.quantized() || release)) {
    if (full)
      l.notes.push_back("not " + ck->repo + " at TP " + std::to_string(c.tensor_parallel_size) + ": vLLM raises \"" + in_flight->published_tp_rejection +
                      "\" for a pre-quantized checkpoint of this format (" + in_flight->source + ")");
    ck = nullptr;  // the BF16 original, quantized at load, below
  }
  if (ck) {
    l.checkpoint = ck->repo;
    flag = ck->quantization_flag;
    if (!full) return "";
    if (ck->hub == "modelscope") l.env.push_back("VLLM_USE_MODELSCOPE=true");
    if (flag.empty()) l.notes.push_back(k_method_from_config + c.quantization_flag.str() + k_method_from_config_tail);
    l.notes.push_back("checkpoint " + ck->repo + ": " + ck->format + " of " + ck->base_model + ", published on " + ck->hub + " (" + ck->url + "; " +
                      ck->source + ")" + (ck->hub == "modelscope" ? "; VLLM_USE_MODELSCOPE=true makes vLLM fetch it from ModelScope" : ""));
    return "";
  }
  const model::QuantVariant* own = published_variant(m);
  const engine::ConversionRecipe* cast = own && !release ? engine::find_cast(catalog, own->id) : nullptr;
  const engine::ConversionRecipe* cv = engine::find_conversion(catalog, variant, e.platform);
  const std::string placeholder = "/models/" + base_name(base_id) + "-" + variant;
  // Issue 16 (quant29): a recipe whose tool has no adapter for the model (msModelSlim's --model_type) is no recipe for it:
  // the tool would fall back to its default adapter and default practice, not the command the row names.
  std::string no_adapter;
  if (cv && !engine::recipe_model_type(catalog, *cv, base_name(base_id), m.model_type)) {
    for (const auto& list : catalog.model_types)
      if (list.id == cv->model_types)
        no_adapter = format("%s registers no model adapter for %s, nor for its model_type %s (%s): `--model_type %s` would load its default "
                            "adapter and default practice",
                            list.tool.c_str(), base_name(base_id).c_str(), m.model_type.empty() ? "(none)" : m.model_type.c_str(), list.source.c_str(),
                            base_name(base_id).c_str());
    cv = nullptr;
  }
  // Issue 19 (hard30): a recipe's commands carry the model id as it is, as shell words and inside quoted Python strings
  // (oneshot(model="{model_id}")): an id that is not one plain shell word (a local folder named "a b;touch x") gets no
  // recipe rather than commands that run something else.
  std::string unsafe_id;
  if (cv && shell_word(base_id) != base_id) {
    unsafe_id = format("the model id %s is not one plain shell word (a space, a quote or one of ;&|<>$`\\()*?!#~ in it), which the %s commands carry "
                       "unquoted", shell_word(base_id).c_str(), cv->tool.c_str());
    cv = nullptr;
  }
  if (cv && (!m.quant.quantized() || release || cast)) {
    if (full) add_conversion(m, c, base_id, catalog, *cv, cast, devices_per_node, l, reads);
    flag = cv->quantization_flag;
    if (full && flag.empty()) l.notes.push_back(k_method_from_config + c.quantization_flag.str() + k_method_from_config_tail);
    return "";
  }
  // The engine quantizes the BF16 weights itself while loading (fp8, bitsandbytes NF4): the BF16 repo with that flag.
  if (in_flight && (!m.quant.quantized() || release)) {
    l.checkpoint = base_id;  // a release's BF16 original (issue 16: FP8 per-tensor asked of a block FP8 release)
    flag = in_flight->quantization_flag;
    if (full) l.notes.push_back("--quantization " + flag + " on a BF16 checkpoint: " + in_flight->note + " (" + in_flight->source + ")");
    return "";
  }
  std::string gap;
  if (cv) {  // the model is published quantized and its format has no cast back to BF16
    gap = format("%s is published in %s and no cast of that format back to BF16 (what the %s conversion reads) is known", c.model_id.c_str(),
                 own ? own->name.c_str() : m.quant.detail.c_str(), variant.c_str());
    if (full) l.prepare.push_back("# " + gap + format(": produce a %s checkpoint at %s first", c.variant.c_str(), placeholder.c_str()));
  } else if (!unsafe_id.empty()) {
    gap = format("no published checkpoint of %s in this variant (%s), and %s", c.model_id.c_str(), c.variant.c_str(), unsafe_id.c_str());
    if (full) l.prepare.push_back("# " + gap + ": produce one at " + shell_word(placeholder) + " first");
  } else if (!no_adapter.empty()) {
    gap = format("no published checkpoint of %s in this variant (%s), and %s", c.model_id.c_str(), c.variant.c_str(), no_adapter.c_str());
    if (full) l.prepare.push_back("# " + gap + ": produce one at " + placeholder + " first");
  } else {
    gap = format("no published checkpoint of %s in this variant (%s) and no conversion recipe on %s", c.model_id.c_str(), c.variant.c_str(), e.platform.c_str());
    if (const auto* why = engine::find_missing_recipe(catalog, variant, e.platform)) gap += ": " + why->reason;  // issue 16 (quant31)
    if (full) l.prepare.push_back("# " + gap + ": produce one at " + placeholder + " first");
  }
  l.checkpoint = placeholder;
  return "no start command: " + gap;
}

}  // namespace

std::string unservable_reason(const model::ModelSpec& m, const Candidate& c, const engine::EngineProfile& e, const engine::QuantizedCatalog& catalog) {
  if (e.engine == "llama.cpp") return "";
  Launch scratch;
  std::string flag;
  CheckpointReads reads;
  // The node size only shapes a conversion's --device list in `prepare`, which the reason does not read.
  return choose_checkpoint(m, c, e, catalog, std::max<int64_t>(1, c.num_devices), scratch, flag, reads, CheckpointText::reason_only);
}

bool converts_published_checkpoint(const model::ModelSpec& m, const engine::EngineProfile& e, const engine::QuantizedCatalog& catalog) {
  const model::QuantVariant* own = published_variant(m);
  if (!own || !(engine::find_checkpoint_by_repo(catalog, hub_repo_id(m.id)) || engine::find_cast(catalog, own->id))) return false;
  return !e.accepts_quantization(m.quant.method) || (same_method(m.quant.method, "fp8") && !e.fp8_requires.empty());
}

std::string hub_repo_id(const std::string& model_id) { return served_repo(model_id).repo; }

const char* workload_name(Workload workload) {
  switch (workload) {
    case Workload::chat: return "chat";
    case Workload::agent: return "agent";
  }
  return "chat";
}

bool same_launch(const Candidate& a, const Candidate& b) {
  return a.model_id == b.model_id && a.variant == b.variant && a.variant_id == b.variant_id && a.quantization_flag == b.quantization_flag &&
         a.num_devices == b.num_devices && a.tensor_parallel_size == b.tensor_parallel_size && a.pipeline_parallel_size == b.pipeline_parallel_size &&
         a.fit.decode_context_parallel_size == b.fit.decode_context_parallel_size &&
         a.context_tokens == b.context_tokens && a.fit.gpu_memory_utilization == b.fit.gpu_memory_utilization && a.fit.kv_cache_dtype == b.fit.kv_cache_dtype &&
         a.no_video == b.no_video && a.skip_mm_profiling == b.skip_mm_profiling && a.fit_with_encoder_pass_tokens == b.fit_with_encoder_pass_tokens;
}

bool same_launch_family(const engine::LaunchRules& rules, const std::string& a, const std::string& b) {
  if (a == b) return true;
  for (const auto& r : rules.rules) {
    if (r.device_families.empty()) continue;
    const bool holds_a = std::find(r.device_families.begin(), r.device_families.end(), a) != r.device_families.end();
    const bool holds_b = std::find(r.device_families.begin(), r.device_families.end(), b) != r.device_families.end();
    if (holds_a != holds_b) return false;
  }
  return true;
}

namespace {

// The launch rules' part of a start command for a candidate of `model_id` (its lines, environment, flags each once, and
// notes, in the rules' order).
LaunchMemo::RulePart rule_part(const model::ModelSpec& m, const SharedText& model_id, const engine::EngineProfile& e, const engine::LaunchRules& rules,
                               bool multi_node, const LaunchOptions& options) {
  LaunchMemo::RulePart p{multi_node, options.device_family, model_id, {}, {}, {}, {}};
  const RuleContext ctx{m, e, to_lower(model_id), to_lower(m.model_type), multi_node, options.workload, options.device_family};
  for (const auto& r : rules.rules) {
    if (!rule_applies(r, ctx)) continue;
    p.shell.insert(p.shell.end(), r.shell.begin(), r.shell.end());
    for (const auto& [k, v] : r.env) p.env.push_back(k + "=" + v);
    for (const auto& f : r.flags)
      if (std::find(p.flags.begin(), p.flags.end(), f) == p.flags.end()) p.flags.push_back(f);
    std::string note;
    note.reserve(r.id.size() + r.note.size() + r.source.size() + 5);
    note.append(r.id).append(": ").append(r.note).append(" (").append(r.source).append(")");
    p.notes.push_back(std::move(note));
  }
  return p;
}

// choose_checkpoint's answer for candidate `c` and what it wrote, with the fields of `c` it read.
LaunchMemo::CheckpointPart checkpoint_part(const model::ModelSpec& m, const Candidate& c, const engine::EngineProfile& e, const engine::QuantizedCatalog& catalog,
                                           int64_t devices_per_node) {
  Launch l;
  LaunchMemo::CheckpointPart p;
  CheckpointReads reads;
  choose_checkpoint(m, c, e, catalog, devices_per_node, l, p.flag, reads);
  // Issue 16 (quant30): a --quantization the engine serves through an out-of-tree package from a version on (GGUF on
  // vLLM 0.24.0 and later: vllm-gguf-plugin) has that package installed first.
  if (const engine::ServePlugin* plugin = engine::find_serve_plugin(catalog, p.flag, e.engine, e.rule_version().text())) {
    l.prepare.insert(l.prepare.end(), plugin->commands.begin(), plugin->commands.end());
    l.notes.push_back(plugin->id + ": " + plugin->note + " (" + plugin->source + ")");
  }
  p.model_id = c.model_id;
  p.variant = c.variant;
  p.variant_id = c.variant_id;
  p.quantization_flag = c.quantization_flag;
  p.reads_tensor_parallel = reads.tensor_parallel;
  p.reads_devices = reads.devices;
  p.tensor_parallel_size = c.tensor_parallel_size;
  p.devices = std::min(c.num_devices, devices_per_node);  // add_conversion's --device list
  p.checkpoint = std::move(l.checkpoint);
  p.env = std::move(l.env);
  p.notes = std::move(l.notes);
  p.prepare = std::move(l.prepare);
  comments_on_one_line(p.prepare);
  return p;
}

// `memo` for a call with these inputs: emptied first when its last call had others.
// The node size is not compared: the one part that reads it (a conversion's --device list) is keyed by what it read.
void key_memo(LaunchMemo& memo, const model::ModelSpec& m, const engine::EngineProfile& e, const engine::LaunchRules& rules, const LaunchOptions& options) {
  if (memo.model == &m && memo.engine == &e && memo.rules == &rules && memo.workload == options.workload &&
      memo.speculative_config == options.speculative_config && memo.compilation_config == options.compilation_config)
    return;
  SharedRuleParts* shared = memo.shared;  // keyed on its own
  memo = LaunchMemo{&m, &e, &rules, options.workload, options.speculative_config, options.compilation_config, {}, {}, shared};
}

const LaunchMemo::RulePart& memo_rule_part(LaunchMemo& memo, const model::ModelSpec& m, const SharedText& model_id, const engine::EngineProfile& e,
                                           const engine::LaunchRules& rules, bool multi_node, const LaunchOptions& options) {
  for (const auto& p : memo.rule_parts)
    if (p.multi_node == multi_node && p.model_id == model_id && same_launch_family(rules, p.device_family, options.device_family)) return p;
  if (SharedRuleParts* s = memo.shared) {
    const std::lock_guard<std::mutex> lock(s->mu);
    if (!s->model) {
      s->model = memo.model, s->engine = memo.engine, s->rules = memo.rules, s->workload = memo.workload;
      s->speculative_config = memo.speculative_config, s->compilation_config = memo.compilation_config;
    }
    if (s->model == memo.model && s->engine == memo.engine && s->rules == memo.rules && s->workload == memo.workload &&
        s->speculative_config == memo.speculative_config && s->compilation_config == memo.compilation_config) {
      for (const auto& p : s->parts)
        if (p.multi_node == multi_node && p.model_id == model_id && same_launch_family(rules, p.device_family, options.device_family)) return p;
      s->parts.push_back(rule_part(m, model_id, e, rules, multi_node, options));
      return s->parts.back();  // a list moves no element
    }
  }
  memo.rule_parts.push_back(rule_part(m, model_id, e, rules, multi_node, options));
  return memo.rule_parts.back();
}

const LaunchMemo::CheckpointPart& memo_checkpoint_part(LaunchMemo& memo, const model::ModelSpec& m, const Candidate& c, const engine::EngineProfile& e,
                                                       const engine::QuantizedCatalog& catalog, int64_t devices_per_node) {
  for (const auto& p : memo.checkpoints)
    if (p.model_id == c.model_id && p.variant == c.variant && p.variant_id == c.variant_id && p.quantization_flag == c.quantization_flag &&
        (!p.reads_tensor_parallel || p.tensor_parallel_size == c.tensor_parallel_size) &&
        (!p.reads_devices || p.devices == std::min(c.num_devices, devices_per_node)))
      return p;
  memo.checkpoints.push_back(checkpoint_part(m, c, e, catalog, devices_per_node));
  return memo.checkpoints.back();
}

// quant34 (issue 16): the speculative config in the form the engine version's parser takes: --speculative-config from vLLM
// 0.8.2, V0's --speculative-model / --num-speculative-tokens before it (engine::speculative_serve_args). A config the
// version cannot start is refused before any row is made (cli plan); were one to reach here, the flag is written as given
// and the note says why it fails.
std::string speculative_args(const model::ModelSpec& m, const engine::EngineProfile& e, const std::string& given, Launch& l) {
  // spec35: the method under the name the version takes ("mtp" from vLLM 0.11.0, the model's own MTP name before it).
  std::string config = given;
  if (const auto& methods = engine::shipped_speculative_methods(); methods) {
    config = engine::speculative_config_for_version(*methods, e.engine, e.rule_version(), given, m.model_type);
    if (config != given)
      l.notes.push_back("--speculative-config written as " + e.engine + " " + e.rule_version().text() + " takes its method: '" + config + "' for '" + given + "' (" +
                        methods->origin + ")");
  }
  const auto& flags = engine::shipped_flag_versions();
  auto args = flags ? engine::speculative_serve_args(*flags, e.engine, e.rule_version(), config, m.model_type) : Expected<std::vector<engine::GivenFlag>>(flags.error());
  if (!args) {
    l.notes.push_back(args.error().message);
    return " --speculative-config " + shell_single_quoted(config);
  }
  std::string out;
  for (const auto& a : *args)  // a switch (store_true, spec35) has no value
    out += " " + a.flag + (a.value.empty() ? "" : " " + (a.flag == "--speculative-config" ? shell_single_quoted(a.value) : shell_word(a.value)));
  if (const engine::FlagVersions* modern = flags->find("--speculative-config"); modern && (args->empty() || args->front().flag != "--speculative-config"))
    l.notes.push_back("speculative decoding as " + e.engine + " " + e.rule_version().text() + " takes it: vLLM before " + modern->version_min.text() +
                      " has no --speculative-config; its V0 flags carry '" + config + "' (" + flags->origin + " speculative_legacy)");
  return out;
}

}  // namespace

Launch build_launch(const model::ModelSpec& m, const Candidate& c, const engine::EngineProfile& e, const engine::LaunchRules& rules, int64_t devices_per_node,
                    const LaunchOptions& options, LaunchMemo* memo) {
  Launch l;
  const bool multi_node = c.num_devices > devices_per_node;
  const bool rules_multi_node = multi_node || options.node_span == NodeSpan::several;  // ux28: DP replicas over nodes
  if (memo) key_memo(*memo, m, e, rules, options);
  LaunchMemo::RulePart own_rules;
  const LaunchMemo::RulePart& applied = memo ? memo_rule_part(*memo, m, c.model_id, e, rules, rules_multi_node, options)
                                             : (own_rules = rule_part(m, c.model_id, e, rules, rules_multi_node, options));
  l.shell = applied.shell;
  l.env = applied.env;
  l.notes = applied.notes;
  const std::vector<std::string>& extra_flags = applied.flags;
  if (e.engine == "llama.cpp") {
    // ux29: on a CPU host there is nothing to offload: -ngl 999 asked a CPU build for GPU layers it ignores with a warning.
    const bool host = options.device_platform == "cpu";
    // Issue 16 (llamacpp30): -c is the KV cells the row is sized with, -np the slots sharing them (plan/llama_rows).
    const LlamaRowBuffers* b = c.fit.llama.get();
    const int64_t ctx = b ? b->ctx_size : c.context_tokens, slots = b ? b->slots : 1;
    FixedText s;
    s << launch_words::llama_server_and_model(m, c, l, rules.quantized) << " -c " << ctx << " -np " << slots;
    if (host && options.host_cores > 0) s << " -t " << options.host_cores;
    if (!host) s << " -ngl 999";
    s << " --host 0.0.0.0 --port 8000";
    l.serve = s.take();
    if (b)
      l.notes.push_back(format("-c %lld -np %lld: llama.cpp allocates the KV cache of all %lld cells when it starts, %lld a slot (n_ctx_seq = n_ctx / n_seq_max); "
                               "without -np, llama-server makes 4 slots sharing one unified cache (tools/server/server.cpp: 'setting n_parallel = 4 and "
                               "kv_unified = true'). It should print about: model buffer %.2f MiB, KV buffer %.2f MiB%s, compute buffer %.2f MiB, output buffer "
                               "%.2f MiB (load_tensors / llama_kv_cache%s / sched_reserve / llama_context), %.2f GiB on %s",
                               static_cast<long long>(ctx), static_cast<long long>(slots), static_cast<long long>(ctx), static_cast<long long>(ctx / std::max<int64_t>(1, slots)),
                               b->model_bytes / 1048576.0, b->kv_bytes / 1048576.0,
                               // Issue 16 (llamacpp31): a hybrid model's recurrent state, llama_memory_recurrent's 'RS buffer size' line.
                               b->rs_bytes > 0 ? format(", RS buffer %.2f MiB", b->rs_bytes / 1048576.0).c_str() : "", b->compute_bytes / 1048576.0,
                               b->output_bytes / 1048576.0, b->rs_bytes > 0 ? " / llama_memory_recurrent" : "",
                               b->device_bytes / 1073741824.0, host ? "the host" : b->device.c_str()));
    if (std::string w = llama_ctx_train_warning(m, LlamaServerContext{.slots = slots, .ctx_size = ctx}); !w.empty()) l.notes.push_back(std::move(w));
    if (b)  // llamacpp31: where the CANN backend leaves a MoE model's experts (plan/llama_rows: llama_cann_expert_warning)
      for (const auto& a : b->assumptions)
        if (starts_with(a, k_llama_cann_note_prefix)) l.notes.push_back(a);
    if (host)
      l.notes.push_back(std::string("CPU host: no -ngl (no layers to offload); ") +
                        (options.host_cores > 0 ? format("-t %lld, the host's cores (--host-cores); ", static_cast<long long>(options.host_cores))
                                                : std::string("no -t: llama.cpp then runs cpu_get_num_math() threads, the physical cores (hyper-threads not "
                                                              "counted, P-cores only on an Intel hybrid CPU; common/common.cpp, -t default -1); "
                                                              "`plan --host-cores N` writes -t N for another host; ")) +
                        "decode speed follows the memory bandwidth those threads reach (`preflight bw --target host --save --device cpu` measures it)");
    comments_on_one_line(l.prepare);
    return l;
  }
  LaunchMemo::CheckpointPart own_checkpoint;
  const LaunchMemo::CheckpointPart& chosen = memo ? memo_checkpoint_part(*memo, m, c, e, rules.quantized, devices_per_node)
                                                  : (own_checkpoint = checkpoint_part(m, c, e, rules.quantized, devices_per_node));
  const std::string& flag = chosen.flag;
  l.checkpoint = chosen.checkpoint;
  l.env.insert(l.env.end(), chosen.env.begin(), chosen.env.end());
  l.notes.insert(l.notes.end(), chosen.notes.begin(), chosen.notes.end());
  l.prepare = chosen.prepare;
  const ServeHead& start = serve_head(l.checkpoint, c.model_id, given_arg(options, "--served-model-name "));  // read before the next serve_head
  const ServedRepo& hub = start.hub;
  // Planfast6: written through FixedText (printf's text for %lld and %.2f) rather than one format() per flag.
  FixedText s;
  s << start.text;
  if (l.checkpoint == hub.repo && hub.modelscope) l.env.push_back("VLLM_USE_MODELSCOPE=true");
  s << " --tensor-parallel-size " << c.tensor_parallel_size;
  if (c.pipeline_parallel_size > 1) s << " --pipeline-parallel-size " << c.pipeline_parallel_size;
  if (c.fit.decode_context_parallel_size > 1) s << " --decode-context-parallel-size " << c.fit.decode_context_parallel_size;
  s << " --max-model-len " << c.context_tokens;
  s << " --gpu-memory-utilization ";
  s.fixed(c.fit.gpu_memory_utilization, 2);
  // Issue 16 (ux29): a card without bfloat16 (310P, 910A, V100, T4): vLLM takes a bf16 config's dtype as it is, and the
  // card cannot compute in it; float16 is what vLLM-Ascend's 310P guides and tests pass and what vLLM's capability error asks for.
  // planq32: not where the plan's --dtype is among the settings' arguments (the user's choice, carried as given).
  const bool to_float16 = options.half_precision == CardHalfPrecision::fp16_only && m.dtype == model::Dtype::bf16 && !given_arg(options, "--dtype ");
  if (to_float16) s << " --dtype float16";
  if (!flag.empty()) s << " --quantization " << flag;
  // vLLM's GGUF page: the base repository's tokenizer beside the one .gguf file (its own conversion of a GGUF vocabulary is
  // slow and unstable for large ones; https://docs.vllm.ai/en/v0.9.2/features/quantization/gguf.html).
  if (flag == "gguf" && ends_with(l.checkpoint, ".gguf") && l.checkpoint != hub.repo) {
    s << " --tokenizer " << shell_word(hub.repo);
    if (hub.modelscope) l.env.push_back("VLLM_USE_MODELSCOPE=true");
  }
  if (c.fit.kv_cache_dtype != "auto" && !c.fit.kv_cache_dtype.empty()) s << " --kv-cache-dtype " << c.fit.kv_cache_dtype.str();
  // The encoder's profiling pass would leave less KV than the context asks for: skip it, and say so.
  const bool skip_mm = c.skip_mm_profiling;
  if (c.no_video) s << " --limit-mm-per-prompt '{\"video\": 0}'";
  if (skip_mm) s << " --skip-mm-profiling";
  if (multi_node) s << " --distributed-executor-backend ray";
  if (!options.speculative_config.empty()) s << speculative_args(m, e, options.speculative_config, l);
  if (!options.compilation_config.empty()) s << " --compilation-config " << shell_single_quoted(options.compilation_config);
  // Issue 15/16 (plan28): the engine settings fit takes, as given (their environment only on the platform that reads it).
  if (const EngineArgs* a = options.engine_args) {
    for (const auto& arg : a->serve_args) s << " " << arg;
    l.env.insert(l.env.end(), a->env.begin(), a->env.end());
    if (e.platform == "npu") l.env.insert(l.env.end(), a->npu_env.begin(), a->npu_env.end());
  }
  // A context above the model's derived length starts only with VLLM_ALLOW_LONG_MAX_MODEL_LEN (vllm/config/model.py;
  // the planner sizes such a row only where that variable was set).
  if (m.derived_max_model_len > 0 && c.context_tokens > m.derived_max_model_len) l.env.push_back("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
  if (!m.auto_map.empty()) {
    if (!given_arg(options, "--trust-remote-code")) s << " --trust-remote-code";  // planq32: once, where plan --trust-remote-code gave it
    l.notes.push_back("--trust-remote-code: config.json has an auto_map (" + m.auto_map.front() + "), classes from the repository's own code");
  }
  for (const auto& f : extra_flags) {
    // planq32 (ux33: any flag of a rule the user's pasted line also gives): the user's is carried; vLLM keeps the last of two, so the rule's is said, not added.
    if (const std::string name = f.substr(0, f.find(' ')); given_arg(options, name + " ") || given_arg_exactly(options, name)) {
      l.notes.push_back("not added, since " + name + " was given: " + f + " (vLLM keeps only the last " + name + ")");
      continue;
    }
    s << " " << f;
  }
  l.serve = s.take();
  if (to_float16)
    l.notes.push_back("--dtype float16: the card has no bfloat16 and the checkpoint's config says bfloat16 (vLLM-Ascend 310P guide, v0.11.0: 'the 310I series "
                      "only supports eager mode and the float16 data type'; its 310P tests start with --dtype float16, and its 310P GDN kernels refuse "
                      "q/k/v that are not float16; 910A: 'supports float16, not bf16', vllm-ascend #9294; vLLM: 'Bfloat16 is only supported on GPUs with "
                      "compute capability of at least 8.0 ... --dtype=half', vllm#946); float16 keeps 2 bytes per weight, so the sizes above hold");
  if (c.no_video)
    l.notes.push_back(format("--limit-mm-per-prompt '{\"video\": 0}': at a %s-token context the profile run would encode a dummy video longer than any image "
                             "and leave no room for the KV cache; without video input it profiles the largest image (images still work)",
                             with_thousands(c.context_tokens).c_str()));
  if (skip_mm)
    l.notes.push_back(format("--skip-mm-profiling: profiling the vision encoder on its largest image would leave %s KV tokens, under the %s-token context, "
                             "and the engine would not start; images at serve time then draw on the memory above --gpu-memory-utilization, so keep prompts "
                             "to a few images or set max_pixels",
                             with_thousands(c.fit_with_encoder_pass_tokens).c_str(), with_thousands(c.context_tokens).c_str()));
  if (multi_node) {
    const int64_t nodes = (c.num_devices + devices_per_node - 1) / devices_per_node;
    // Every node: the environment first (toolkit, ATB with the matching cxx_abi, exports), then
    // `ray start`: Ray's workers on that node inherit exactly this environment.
    std::vector<std::string> common = l.shell;
    for (const auto& env : l.env) common.push_back("export " + env);
    NodeCommands head{"head", common}, worker{"worker", common};
    head.lines.push_back("ray start --head --port=6379");
    worker.lines.push_back("ray start --address=${HEAD_IP:?set HEAD_IP to the head node address}:6379");
    l.multi_node.push_back(format("# %lld nodes x %lld devices: TP stays inside a node, PP crosses nodes; same versions and the model at the same path on every node",
                                  static_cast<long long>(nodes), static_cast<long long>(devices_per_node)));
    l.multi_node.push_back("# on every node first: NIC=<interface that carries the nodes' addresses>; HEAD_IP=<head node address>");
    l.multi_node.push_back("# ---- head node ----");
    l.multi_node.insert(l.multi_node.end(), head.lines.begin(), head.lines.end());
    l.multi_node.push_back(format("# ---- each of the %lld worker node(s), after the head is up ----", static_cast<long long>(nodes - 1)));
    l.multi_node.insert(l.multi_node.end(), worker.lines.begin(), worker.lines.end());
    l.multi_node.push_back("# ---- then on the head node, in the same shell ----");
    l.nodes.push_back(std::move(head));
    l.nodes.push_back(std::move(worker));
  }
  return l;
}

}  // namespace preflight::plan
