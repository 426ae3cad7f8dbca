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
  graph:  step = device + step_overhead + moe_layers x moe_layer_overhead + comm
  eager:  step = max(device, ops x eager_op_dispatch) + step_overhead + comm
  comm    = allreduce_latency_units x allreduce_latency + communication_bandwidth_s

`--check` refits nothing: it recomputes every case's step time with this model and the catalogue's constants and
exits 1 unless it equals the binary's predicted step (relative 1e-9); CTest runs it (fit_speed_matches_binary).

Usage: tools/fit_speed.py [--preflight build/preflight] [--write | --check] FILES...
Standard library only.
"""
import argparse
import json
import math
import sys

from validate_io import validate_report, write_catalog

PARAMS = ["bandwidth_efficiency", "step_overhead_s", "eager_op_dispatch_s", "moe_layer_overhead_s", "allreduce_latency_s"]
# Physical priors (what a constant is taken to be when no case informs it) and bounds.
PRIORS = {
    "bandwidth_efficiency": (0.8, 0.3, 1.1),
    "step_overhead_s": (0.001, 0.0001, 0.02),
    "eager_op_dispatch_s": (0.00003, 0.000002, 0.0005),
    "moe_layer_overhead_s": (0.00005, 0.000002, 0.001),
    "allreduce_latency_s": (0.00003, 0.000005, 0.001),
}
PRIOR_WEIGHT = 0.02
# Platform-specific priors: HCCL small-message all-reduce on Ascend is slower than NCCL's one-shot
# kernels on NVLink (an estimate: no TP case with a known Ascend SKU is in shared/validation yet).
PLATFORM_PRIORS = {"npu": {"allreduce_latency_s": (0.0001, 0.00001, 0.001), "eager_op_dispatch_s": (0.00006, 0.000002, 0.0005)}}


def predict(p, t):
    device = max(t["bytes"] / (t["copy_bandwidth"] * p["bandwidth_efficiency"]), t["compute_s"])
    comm = t["allreduce_latency_units"] * p["allreduce_latency_s"] + t["communication_bandwidth_s"]
    if t["eager"] > 0.5:
        return max(device, t["dispatch_ops"] * p["eager_op_dispatch_s"]) + p["step_overhead_s"] + comm
    return device + p["step_overhead_s"] + t["moe_layers"] * p["moe_layer_overhead_s"] + comm


def loss(p, rows, priors):
    err = sum(math.log(predict(p, r["speed_terms"]) / r["speed_terms"]["observed_step_s"]) ** 2 for r in rows)
    reg = sum(math.log(p[k] / priors[k][0]) ** 2 for k in PARAMS)
    return err + PRIOR_WEIGHT * reg


def fit(rows, start, platform):
    priors = dict(PRIORS)
    priors.update(PLATFORM_PRIORS.get(platform, {}))
    p = {k: min(max(start.get(k, priors[k][0]), priors[k][1]), priors[k][2]) for k in PARAMS}
    for _ in range(60):
        for k in PARAMS:
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
        mine = predict({k: prof[k] for k in PARAMS}, t)
        if abs(mine - t["predicted_step_s"]) > 1e-9 * t["predicted_step_s"]:
            bad += 1
            print(f"  {r['id'][:50]:50s} step {mine:.6g} s vs binary {t['predicted_step_s']:.6g} s")
    print(f"fit_speed model vs binary: {compared} cases compared, {bad} differ")
    return 1 if bad or not compared else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preflight", default="build/preflight")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true", help="compare this model with the binary's predicted steps; refit nothing")
    ap.add_argument("--loo", action="store_true", help="also report leave-one-out errors (each case predicted by a fit without it)")
    ap.add_argument("--catalog", default="data/engines/speed.json")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    report = validate_report(args.preflight, args.files)
    rows = [r for r in report["rows"] if r.get("speed_terms")]
    catalog = json.load(open(args.catalog))
    if args.check:
        sys.exit(check(rows, catalog))
    by_profile = {}
    for r in rows:
        by_profile.setdefault(r["speed_profile"], []).append(r)
    for prof in catalog["profiles"]:
        key = prof["engine"] + "/" + prof["platform"]
        cases = by_profile.get(key, [])
        if not cases:
            print(f"{key}: no measured case; constants left as they are")
            continue
        before = {k: prof[k] for k in PARAMS}
        after = fit(cases, before, prof["platform"])
        print(f"{key}: {len(cases)} case(s)")
        for k in PARAMS:
            print(f"  {k:24s} {before[k]:.6g} -> {after[k]:.6g}")
        errs = []
        for r in cases:
            t = r["speed_terms"]
            e0 = predict(before, t) / t["observed_step_s"] - 1
            e1 = predict(after, t) / t["observed_step_s"] - 1
            errs.append(abs(e1))
            print(f"  {r['id'][:50]:50s} step error {e0 * 100:+6.1f}% -> {e1 * 100:+6.1f}%")
        if args.loo:
            for i, r in enumerate(cases):
                rest = cases[:i] + cases[i + 1:]
                p_loo = fit(rest, before, prof["platform"]) if rest else before
                t = r["speed_terms"]
                print(f"  leave-one-out {r['id'][:40]:40s} tok/s error {(t['observed_step_s'] / predict(p_loo, t) - 1) * 100:+6.1f}%")
        if args.write:
            for k in PARAMS:
                prof[k] = float(f"{after[k]:.3g}")
            ids = ", ".join(r["id"] for r in cases)
            prof["evidence"] = (f"fitted by tools/fit_speed.py on {len(cases)} measured case(s) of shared/validation ({ids}); "
                                f"median abs step error {sorted(errs)[len(errs) // 2] * 100:.1f}%; constants no case informs stay at the priors in the script")
    if args.write:
        write_catalog(args.catalog, catalog, indent=2)


if __name__ == "__main__":
    main()
