#!/usr/bin/env python3
"""Refits the speed-model constants in data/engines/speed.json from measured decode speeds.

Procedure (rerun after adding cases):
  1. `preflight validate --json FILES` prints, for every speed case, the decode-step decomposition
     the C++ model computes (bytes per rank, copy bandwidth, compute time, operators per step, MoE
     layers, all-reduce latency units, communication bandwidth time) and the observed step time.
  2. Per engine/platform profile, this script minimises the sum of squared log errors of the
     predicted step time, plus a weak pull (weight PRIOR_WEIGHT) of each constant towards a physical
     prior, so that a constant no case informs stays at its prior instead of drifting.
  3. It prints the fitted constants and the per-case errors before and after; `--write` stores them
     (and the evidence line) in data/engines/speed.json.

Model (the same as src/estimate/speed.cpp):
  device  = max(bytes / (copy_bandwidth x bandwidth_efficiency), compute_s)
  host    = step_overhead + concurrency x sequence_overhead
  graph:  step = device + host + moe_layers x moe_layer_overhead + comm
  eager:  step = max(device, ops x eager_op_dispatch) + host + comm
  comm    = allreduce_latency_units x allreduce_latency + communication_bandwidth_s
            (allreduce_latency: the binary's allreduce_fixed_latency_s where it states one, i.e. a measured
            PCIe figure, never fitted; else the profile's fitted allreduce_latency_s)

`--check` refits nothing: it recomputes every case's step time with this model and the catalogue's constants and
exits 1 unless it equals the binary's predicted step (relative 1e-9); CTest runs it (fit_speed_matches_binary).

`sequence_overhead_s` is fitted only for a profile with a case at concurrency > 1 (at concurrency 1 it cannot be
told apart from step_overhead_s); otherwise it stays at its prior.

`--loo` refits every constant without each case in turn and prints the leave-one-out error of that case, then a
table by regime (engine, platform, dense/MoE, TP>1): LOO median and worst beside the in-sample median; a regime with
fewer than 3 cases is marked "prior". `--heldout FILE` predicts FILE's cases with the constants fitted here (never
fitted on) and prints the same table for them.

`--only ENGINE/PLATFORM` fits one profile on its cases alone (mindie/npu: the MindIE rows of the public decode file,
data/evidence/decode-speed-public.jsonl, issue 16 mindie34); the other profiles and their cases are untouched.

Usage: tools/fit_speed.py [--preflight build/preflight] [--write | --check] [--loo] [--only E/P] [--heldout FILE] FILES...
Standard library only.
"""
import argparse
import json
import math
import re
import sys

from validate_io import validate_report, write_catalog

PARAMS = ["bandwidth_efficiency", "step_overhead_s", "sequence_overhead_s", "eager_op_dispatch_s", "moe_layer_overhead_s", "allreduce_latency_s"]
# Physical priors (what a constant is taken to be when no case informs it) and bounds.
PRIORS = {
    "bandwidth_efficiency": (0.8, 0.3, 1.1),
    "step_overhead_s": (0.001, 0.0001, 0.02),
    # vLLM's CPU gap between decode steps grows with the running sequences: 4.6 ms at 10 sequences of ~4k tokens
    # (github.com/vllm-project/vllm/pull/24174, L20, nsys), fixed part included; sampler ~8.5% and detokenizer ~1.3%
    # of step time at A100 TP4 70B (github.com/vllm-project/vllm/pull/818). Prior 20 us per sequence (estimate).
    "sequence_overhead_s": (0.00002, 0.000001, 0.001),
    "eager_op_dispatch_s": (0.00003, 0.000002, 0.0005),
    # vLLM fused_moe at batch 1 beyond its expert bytes: ~50 us on A100 (Qwen3-30B-A3B shape, A100-PCIe-40GB: 109.2 us for
    # 75.5 MB, github.com/vllm-project/vllm/pull/19049), ~30 us on Hopper/Blackwell (sglang PR 11730, vllm PR 31448).
    "moe_layer_overhead_s": (0.00005, 0.000002, 0.001),
    "allreduce_latency_s": (0.00003, 0.000005, 0.001),
}
PRIOR_WEIGHT = 0.02
# Platform-specific priors: HCCL small-message all-reduce on Ascend is slower than NCCL's one-shot
# kernels on NVLink (an estimate: no TP case with a known Ascend SKU is in shared/validation yet).
# Ascend hosts (Kunpeng) run vLLM-Ascend's Python per-sequence work slower: 50 us per sequence (estimate).
PLATFORM_PRIORS = {"npu": {"allreduce_latency_s": (0.0001, 0.00001, 0.001), "eager_op_dispatch_s": (0.00006, 0.000002, 0.0005),
                           "sequence_overhead_s": (0.00005, 0.000001, 0.001)}}


def predict(p, t):
    device = max(t["bytes"] / (t["copy_bandwidth"] * p["bandwidth_efficiency"]), t["compute_s"])
    # A measured per-round latency (PCIe-only cards under vLLM: NCCL) replaces the fitted one (issue 20).
    comm = t["allreduce_latency_units"] * (t.get("allreduce_fixed_latency_s") or p["allreduce_latency_s"]) + t["communication_bandwidth_s"]
    host = p["step_overhead_s"] + t.get("concurrency", 1) * p["sequence_overhead_s"]
    if t["eager"] > 0.5:
        return max(device, t["dispatch_ops"] * p["eager_op_dispatch_s"]) + host + comm
    return device + host + t["moe_layers"] * p["moe_layer_overhead_s"] + comm


def loss(p, rows, priors):
    err = sum(math.log(predict(p, r["speed_terms"]) / r["speed_terms"]["observed_step_s"]) ** 2 for r in rows)
    reg = sum(math.log(p[k] / priors[k][0]) ** 2 for k in PARAMS)
    return err + PRIOR_WEIGHT * reg


def priors_for(platform):
    priors = dict(PRIORS)
    priors.update(PLATFORM_PRIORS.get(platform, {}))
    return priors


def fit(rows, start, platform):
    priors = priors_for(platform)
    p = {k: min(max(start.get(k, priors[k][0]), priors[k][1]), priors[k][2]) for k in PARAMS}
    free = [k for k in PARAMS if k != "sequence_overhead_s" or any(r["speed_terms"].get("concurrency", 1) > 1 for r in rows)]
    if "sequence_overhead_s" not in free:
        p["sequence_overhead_s"] = priors["sequence_overhead_s"][0]
    for _ in range(60):
        for k in free:
            lo, hi = math.log(priors[k][1]), math.log(priors[k][2])
            # Golden-section search on log(k) with the others fixed.
            a, b = lo, hi
            g = (math.sqrt(5) - 1) / 2
            for _ in range(50):
                c1, c2 = b - g * (b - a), a + g * (b - a)
                q1, q2 = dict(p), dict(p)
                q1[k], q2[k] = math.exp(c1), math.exp(c2)
                if loss(q1, rows, priors) < loss(q2, rows, priors):
                    b = c2
                else:
                    a = c1
            p[k] = math.exp((a + b) / 2)
    return p


def check(rows, catalog):
    """0 when this file's model reproduces the binary's predicted step time for every speed case."""
    profiles = {p["engine"] + "/" + p["platform"]: p for p in catalog["profiles"] if not p.get("device")}
    bad = compared = 0
    for r in rows:
        t, prof = r["speed_terms"], profiles.get(r["speed_profile"])
        if prof is None or "predicted_step_s" not in t:
            continue
        compared += 1
        mine = predict({k: prof.get(k, 0.0) for k in PARAMS}, t)
        if abs(mine - t["predicted_step_s"]) > 1e-9 * t["predicted_step_s"]:
            bad += 1
            print(f"  {r['id'][:50]:50s} step {mine:.6g} s vs binary {t['predicted_step_s']:.6g} s")
    print(f"fit_speed model vs binary: {compared} cases compared, {bad} differ")
    return 1 if bad or not compared else 0


STALE_TOLERANCE = 0.01


def check_fit_current(rows, catalog):
    """0 when every profile whose evidence names exactly the cases these files hold for it stores what a refit on them
    gives (relative STALE_TOLERANCE: the stored constants are rounded to 3 significant figures). Catches a model change
    that moves the predicted steps without a refit (spec35's per-tensor GGUF bytes left llama.cpp/cuda at its old fit)."""
    by_profile, stale = {}, 0
    for r in rows:
        by_profile.setdefault(r["speed_profile"], []).append(r)
    for prof in catalog["profiles"]:
        key = prof["engine"] + "/" + prof["platform"]
        named = re.search(r"measured case\(s\) of shared/validation \(([^)]*)\)", prof.get("evidence", ""))
        cases = by_profile.get(key, [])
        if prof.get("device") or not named or not cases or set(named.group(1).split(", ")) != {r["id"] for r in cases}:
            continue
        stored = {k: prof.get(k, priors_for(prof["platform"])[k][0]) for k in PARAMS}
        refit = fit(cases, stored, prof["platform"])
        off = [k for k in PARAMS if abs(refit[k] - stored[k]) > STALE_TOLERANCE * stored[k]]
        print(f"fit_speed {key}: stored constants {'differ from' if off else 'match'} a refit on its {len(cases)} case(s)"
              + "".join(f"; {k} {stored[k]:.6g} vs {refit[k]:.6g}" for k in off))
        stale += bool(off)
    return 1 if stale else 0


def regimes(r):
    """The regimes a case belongs to: engine, platform, dense/MoE, TP>1. A case whose device text names a CPU is
    platform "cpu" (llama.cpp on a CPU runs on the llama.cpp/cpu profile, issue 20; none of its constants is fitted)."""
    t = r["speed_terms"]
    engine, platform = r["speed_profile"].split("/")
    if "cpu" in r.get("device", "").lower():
        platform = "cpu"
    return ["engine " + engine, "platform " + platform, "MoE" if t["moe_layers"] > 0 else "dense",
            "TP>1" if t["allreduce_latency_units"] > 0 else "TP1"]


def tok_s_error(p, t):
    """Signed error of the predicted tok/s against the observed one."""
    return t["observed_step_s"] / predict(p, t) - 1


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2) if n else float("nan")


def regime_table(title, errors, last="in-sample"):
    """errors: list of (case row, {"loo": e or None, "fit": e}). Prints the table by regime and overall."""
    groups = {"all": [e for e in errors]}
    for row, e in errors:
        for g in regimes(row):
            groups.setdefault(g, []).append((row, e))
    print(f"\n{title}")
    print(f"  {'regime':18s} {'cases':>5s} {'LOO median':>10s} {'LOO worst':>10s} {last:>10s}  note")
    for g, rows in sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        loo = [abs(e["loo"]) for _, e in rows if e.get("loo") is not None]
        ins = [abs(e["fit"]) for _, e in rows]
        note = "prior (< 3 cases)" if len(rows) < 3 else ""
        lm = f"{median(loo) * 100:9.1f}%" if loo else f"{'-':>10s}"
        lw = f"{max(loo) * 100:9.1f}%" if loo else f"{'-':>10s}"
        print(f"  {g:18s} {len(rows):5d} {lm} {lw} {median(ins) * 100:9.1f}%  {note}")


def fit_profiles(catalog, by_profile, args):
    """Fits every profile with cases; returns {profile key: fitted constants} and the per-case errors."""
    fitted, errors = {}, []
    for prof in catalog["profiles"]:
        key = prof["engine"] + "/" + prof["platform"]
        cases = by_profile.get(key, [])
        before = {k: prof.get(k, priors_for(prof["platform"])[k][0]) for k in PARAMS}
        if not cases:
            print(f"{key}: no measured case; constants left as they are")
            fitted[key] = before
            continue
        after = fit(cases, before, prof["platform"])
        fitted[key] = after
        print(f"{key}: {len(cases)} case(s)")
        for k in PARAMS:
            print(f"  {k:24s} {before[k]:.6g} -> {after[k]:.6g}")
        for i, r in enumerate(cases):
            t = r["speed_terms"]
            e = {"before": tok_s_error(before, t), "fit": tok_s_error(after, t)}
            if args.loo:
                rest = cases[:i] + cases[i + 1:]
                e["loo"] = tok_s_error(fit(rest, before, prof["platform"]) if rest else before, t)
            errors.append((r, e))
            loo = f", leave-one-out {e['loo'] * 100:+6.1f}%" if "loo" in e else ""
            print(f"  {r['id'][:50]:50s} tok/s error {e['before'] * 100:+6.1f}% -> {e['fit'] * 100:+6.1f}%{loo}")
        if args.write:
            for k in PARAMS:
                prof[k] = float(f"{after[k]:.3g}")
            ids = ", ".join(r["id"] for r in cases)
            errs = [abs(e["fit"]) for r, e in errors if r["speed_profile"] == key]
            prof["evidence"] = (f"fitted by tools/fit_speed.py on {len(cases)} measured case(s) of shared/validation ({ids}); "
                                f"median abs tok/s error {median(errs) * 100:.1f}%; constants no case informs stay at the priors in the script")
    return fitted, errors


def ordered(profile):
    """The profile with sequence_overhead_s right after step_overhead_s (where a reader looks for it)."""
    out = {}
    for k, v in profile.items():
        if k == "sequence_overhead_s":
            continue
        out[k] = v
        if k == "step_overhead_s" and "sequence_overhead_s" in profile:
            out["sequence_overhead_s"] = profile["sequence_overhead_s"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preflight", default="build/preflight")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true", help="compare this model with the binary's predicted steps; refit nothing")
    ap.add_argument("--loo", action="store_true", help="also report leave-one-out errors (each case predicted by a fit without it) and a table by regime")
    ap.add_argument("--heldout", action="append", default=[], help="a file predicted with the fitted constants, never fitted on")
    ap.add_argument("--only", help="fit this profile alone (engine/platform, e.g. mindie/npu); the cases of other profiles are left out and their constants kept")
    ap.add_argument("--catalog", default="data/engines/speed.json")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    report = validate_report(args.preflight, args.files)
    rows = [r for r in report["rows"] if r.get("speed_terms") and (not args.only or r["speed_profile"] == args.only)]
    catalog = json.load(open(args.catalog))
    if args.check:
        sys.exit(check(rows, catalog) | check_fit_current(rows, catalog))
    by_profile = {}
    for r in rows:
        by_profile.setdefault(r["speed_profile"], []).append(r)
    fitted, errors = fit_profiles(catalog, by_profile, args)
    if args.loo:
        regime_table(f"fitted cases ({len(errors)}): |tok/s error| by regime", errors)
    if args.heldout:
        held = [r for r in validate_report(args.preflight, args.heldout)["rows"] if r.get("speed_terms") and (not args.only or r["speed_profile"] == args.only)]
        out = [(r, {"fit": tok_s_error(fitted[r["speed_profile"]], r["speed_terms"])}) for r in held if r["speed_profile"] in fitted]
        for r, e in out:
            print(f"  held out {r['id'][:50]:50s} tok/s error {e['fit'] * 100:+6.1f}%")
        regime_table(f"held-out cases ({len(out)}, never fitted on): |tok/s error| by regime", out, last="held out")
    if args.write:
        catalog["profiles"] = [ordered(p) for p in catalog["profiles"]]
        write_catalog(args.catalog, catalog, indent=2)


if __name__ == "__main__":
    main()
