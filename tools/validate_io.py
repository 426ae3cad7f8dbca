"""Shared by the fitting tools: run `preflight validate --json` and write a catalogue back atomically."""
import json
import os
import subprocess
import sys


def validate_report(preflight, files):
    """The validate report for FILES (exit 1 only means some case did not fit or was off)."""
    out = subprocess.run([preflight, "validate", "--json", *files], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit("preflight validate failed: " + out.stderr)
    report = json.loads(out.stdout)
    return report.get("result", report)


def write_catalog(path, catalog, indent):
    """Replaces PATH with CATALOG as JSON (temporary file + rename, so a failed write loses nothing)."""
    with open(path + ".tmp", "w") as f:
        json.dump(catalog, f, indent=indent, ensure_ascii=False)
        f.write("\n")
    os.replace(path + ".tmp", path)
