#!/usr/bin/env python3
"""Turn a Hugging Face config.json into one record of data/architectures/models.json.

Usage:
  catalog_from_config.py MODEL_DIR_OR_CONFIG_JSON --id ORG/NAME [options]

MODEL_DIR is a directory holding config.json and, optionally, hf_quant_config.json
(NVIDIA ModelOpt) and quant_model_description.json (Ascend ModelSlim).

The record is printed to stdout as JSON. With --merge CATALOG the record is also
inserted into (or replaces the record with the same id in) CATALOG, which is then
rewritten sorted by id in the catalogue's fixed layout.

Source facts:
  --url, --via, --kind, --retrieved name where the config came from. When --via is
  not given and the model directory sits next to a SOURCES.md with a table row for
  "<dirname>/config.json" (the layout of shared/models/), via is taken from that row
  as "<repo> <path> @<commit[:7]>".

What is kept: the architecture-relevant keys of config.json, with their original
names and nesting. What is dropped, at any level outside quantization_config:
token ids, initializer_range, dropout keys, auto_map, transformers_version,
id2label/label2id, use_cache, output_router_logits, router_aux_loss_coef, norm
epsilons, _name_or_path, time_step_* keys, and rope_scaling sub-keys other than
type/rope_type/factor/original_max_position_embeddings/mrope_section.
quantization_config is kept verbatim.

Only the Python standard library is used.
"""

import argparse
import json
import os
import re
import sys

SCHEMA_VERSION = 1

DROP_EXACT = {
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "initializer_range",
    "auto_map",
    "transformers_version",
    "id2label",
    "label2id",
    "use_cache",
    "output_router_logits",
    "router_aux_loss_coef",
    "rms_norm_eps",
    "layer_norm_epsilon",
    "norm_eps",
    "_name_or_path",
}
ROPE_SCALING_KEEP = {"type", "rope_type", "factor", "original_max_position_embeddings", "mrope_section"}
# Objects kept exactly as published.
VERBATIM_KEYS = {"quantization_config", "compression_config"}
# hf_quant_config.json maps with more entries than this are dropped (and said so in notes).
MAX_QUANT_MAP_ENTRIES = 200
# quant_model_description.json: global keys; every other key maps a tensor name to its type.
MODELSLIM_GLOBAL_KEYS = {
    "model_quant_type", "version", "group_size", "kv_quant_type", "kv_cache_type",
    "fa_quant_type", "metadata", "optional", "reduce_quant_type",
}


def is_dropped(key):
    if key in DROP_EXACT:
        return True
    if key.endswith("_token_id"):
        return True
    if "dropout" in key:
        return True
    if key.startswith("time_step_"):
        return True
    return False


def filter_config(value):
    """Returns a copy of a config value without the keys the catalogue drops."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if is_dropped(key):
                continue
            if key in VERBATIM_KEYS:
                out[key] = item
            elif key == "rope_scaling" and isinstance(item, dict):
                out[key] = {k: v for k, v in item.items() if k in ROPE_SCALING_KEEP}
            else:
                out[key] = filter_config(item)
        return out
    if isinstance(value, list):
        return [filter_config(item) for item in value]
    return value


def load_json(path):
    with open(path, "r", encoding="utf-8") as f:
        return json.load(f)


def reduce_hf_quant_config(hf_quant, notes):
    """Keeps the producer and quantization blocks; drops per-layer maps over the cap."""
    out = {}
    for key in ("producer", "quantization"):
        if key in hf_quant:
            out[key] = hf_quant[key]
    quant = out.get("quantization")
    if isinstance(quant, dict):
        reduced = {}
        for key, item in quant.items():
            if isinstance(item, (dict, list)) and len(item) > MAX_QUANT_MAP_ENTRIES:
                notes.append(
                    "hf_quant_config.json quantization.%s (%d entries) dropped from the catalogue"
                    % (key, len(item)))
                continue
            reduced[key] = item
        out["quantization"] = reduced
    return out


def reduce_modelslim_description(desc, notes):
    """Keeps the global keys of a ModelSlim quant_model_description.json and counts the rest."""
    out = {k: v for k, v in desc.items() if k in MODELSLIM_GLOBAL_KEYS}
    per_tensor = {k: v for k, v in desc.items() if k not in MODELSLIM_GLOBAL_KEYS}
    counts = {}
    for v in per_tensor.values():
        counts[str(v)] = counts.get(str(v), 0) + 1
    out["tensor_type_counts"] = dict(sorted(counts.items()))
    notes.append("quant_model_description.json per-tensor map (%d entries) reduced to "
                 "tensor_type_counts" % len(per_tensor))
    return out


def via_from_sources_md(model_dir):
    """Reads 'repo path @commit' for <dirname>/config.json from ../SOURCES.md, if present."""
    sources = os.path.join(os.path.dirname(os.path.abspath(model_dir)), "SOURCES.md")
    if not os.path.isfile(sources):
        return None
    want = "`%s/config.json`" % os.path.basename(os.path.abspath(model_dir))
    with open(sources, "r", encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 4 and cells[0] == want:
                repo = cells[1]
                path = cells[2].strip("`")
                commit = cells[3].strip("`")
                if re.fullmatch(r"[0-9a-f]{40}", commit):
                    commit = commit[:7]
                return "%s %s @%s" % (repo, path, commit)
    return None


def build_record(args):
    path = args.path
    model_dir = path if os.path.isdir(path) else os.path.dirname(path)
    config_path = os.path.join(path, "config.json") if os.path.isdir(path) else path
    config = load_json(config_path)
    notes = []
    if args.notes:
        notes.append(args.notes)

    via = args.via or via_from_sources_md(model_dir)
    url = args.url or "https://huggingface.co/%s/blob/main/config.json" % args.id
    record = {
        "id": args.id,
        "aliases": sorted(set(a.lower() for a in (args.alias or []))),
        "source": {
            "url": url,
            "via": via,
            "retrieved": args.retrieved,
            "kind": args.kind,
        },
        "published_params": args.published_params,
        "published_checkpoint_bytes": args.published_checkpoint_bytes,
    }

    hf_quant_path = os.path.join(model_dir, "hf_quant_config.json")
    hf_quant = None
    if os.path.isfile(hf_quant_path) and not args.no_quant_files:
        hf_quant = reduce_hf_quant_config(load_json(hf_quant_path), notes)
    slim_path = os.path.join(model_dir, "quant_model_description.json")
    slim = None
    if os.path.isfile(slim_path) and not args.no_quant_files:
        slim = reduce_modelslim_description(load_json(slim_path), notes)

    record["notes"] = " ".join(notes)
    record["config"] = filter_config(config)
    if hf_quant is not None:
        record["hf_quant_config"] = hf_quant
    if slim is not None:
        record["quant_model_description"] = slim
    return record


# ---- deterministic layout -------------------------------------------------

def _scalar_list(value):
    return isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)


def dump(value, indent=0, step=2):
    """JSON text: objects one key a line, lists of scalars on one line."""
    pad = " " * indent
    inner = " " * (indent + step)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ["%s%s: %s" % (inner, json.dumps(k, ensure_ascii=False), dump(v, indent + step, step))
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if _scalar_list(value):
            return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
        items = [inner + dump(v, indent + step, step) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def dump_catalog(models):
    models = sorted(models, key=lambda m: m["id"])
    ids = [m["id"] for m in models]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate ids in catalogue")
    return dump({"schema_version": SCHEMA_VERSION, "models": models}) + "\n"


def merge(catalog_path, record):
    models = []
    if os.path.isfile(catalog_path):
        models = load_json(catalog_path).get("models", [])
    models = [m for m in models if m["id"] != record["id"]] + [record]
    text = dump_catalog(models)
    with open(catalog_path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("path", help="model directory (with config.json) or a config.json file")
    p.add_argument("--id", required=True, help="hub id, exact casing")
    p.add_argument("--alias", action="append", help="lowercase short name (repeatable)")
    p.add_argument("--url", help="page of the model (default: its HF config.json page)")
    p.add_argument("--via", help="the copy that was read: repo path @commit")
    p.add_argument("--kind", default="published config.json (vendored copy)")
    p.add_argument("--retrieved", required=True, help="YYYY-MM-DD")
    p.add_argument("--published-params", type=float, default=None)
    p.add_argument("--published-checkpoint-bytes", type=int, default=None)
    p.add_argument("--notes", default="")
    p.add_argument("--no-quant-files", action="store_true",
                   help="ignore hf_quant_config.json / quant_model_description.json beside config.json")
    p.add_argument("--merge", metavar="CATALOG", help="insert the record into this models.json")
    args = p.parse_args(argv)

    record = build_record(args)
    if args.merge:
        merge(args.merge, record)
    sys.stdout.write(dump(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
