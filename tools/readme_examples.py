#!/usr/bin/env python3
"""Checks that the README's example outputs are what the binary prints today.

In every fenced code block of the README, a line `$ preflight ...` is a command and the lines after it, up to the
next `$ ` line or the end of the block, are an excerpt of its output. Each excerpt line must match a line of the
real output, in order (the README may leave lines out): exactly, except that `...` inside a line stands for any text
and a line that is only `...` for any lines. A block whose output belongs to a command shown earlier (the README
splits a long output) is preceded by a comment naming it:

    <!-- output of: preflight fit Qwen/Qwen3.5-27B --device 910B3 ... -->

Commands that need a server, a network or write files (bench, report, calibrate, doctor, hub access, --kubernetes,
--config-out) are not run; neither is a command shown without output. The commands run offline on the embedded
catalogue, with HOME and the XDG/Hugging Face/ModelScope caches pointed at an empty folder, so a measured bandwidth
or a cached model of the machine running the check cannot change what it prints.

Usage: tools/readme_examples.py --preflight build/preflight [README.md]   exit 0: all match; 1: a mismatch (each
printed with the closest real line); 2: a command failed to run (exit status other than 0 or 1).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

NOT_RUN = {"bench", "report", "calibrate", "doctor", "bw", "hub", "download"}
NOT_RUN_FLAGS = ("--url", "--kubernetes", "--config-out", "--save", "--html")


def examples(text):
    """[(line number, command, [expected lines])] from the README's fenced blocks."""
    out, lines = [], text.splitlines()
    i, pending = 0, None
    while i < len(lines):
        m = re.match(r"<!-- output of: (preflight .*?) -->\s*$", lines[i])
        if m:
            pending = m.group(1)
        if not lines[i].startswith("```"):
            i += 1
            continue
        j = i + 1
        block = []
        while j < len(lines) and not lines[j].startswith("```"):
            block.append((j + 1, lines[j]))
            j += 1
        current = None
        if pending:
            current = (i + 1, pending, [])
            out.append(current)
            pending = None
        k = 0
        while k < len(block):
            number, line = block[k]
            if line.startswith("$ "):
                command = line[2:]
                while command.endswith("\\") and k + 1 < len(block):
                    k += 1
                    command = command[:-1] + " " + block[k][1].strip()
                current = (number, command, []) if command.startswith("preflight ") else None
                if current:
                    out.append(current)
            elif current is not None:
                current[2].append(line.rstrip())
            k += 1
        i = j + 1
    return out


def pattern(line):
    parts = line.split("...")
    # "text ..." elides the rest of the line, including the space before the dots
    return re.compile("^" + ".*".join(re.escape(p.rstrip() if k < len(parts) - 1 else p) for k, p in enumerate(parts)) + "$")


def runnable(argv):
    return len(argv) > 1 and argv[1] not in NOT_RUN and not any(a.startswith(NOT_RUN_FLAGS) for a in argv)


def run(binary, argv, home):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "NO_COLOR": "1", "LANG": "C.UTF-8"}
    for var in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HF_HOME", "MODELSCOPE_CACHE"):
        env[var] = os.path.join(home, var.lower())
    env["HF_HUB_OFFLINE"] = "1"
    p = subprocess.run([binary] + argv[1:], capture_output=True, text=True, env=env, cwd=home, timeout=120)
    return p.returncode, (p.stdout + p.stderr).splitlines()


def closest(expected, actual):
    def common(a, b):
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n
    return max(actual, key=lambda a: common(expected, a), default="")


def check(binary, readme):
    text = open(readme, encoding="utf-8").read()
    bad, ran = 0, 0
    with tempfile.TemporaryDirectory() as home:
        for number, command, expected in examples(text):
            argv = shlex.split(command, comments=True)
            if not expected or not runnable(argv):
                continue
            code, actual = run(binary, argv, home)
            ran += 1
            if code not in (0, 1):
                print(f"{readme}:{number}: `{command}` exited {code}:\n  " + "\n  ".join(actual[-5:]))
                return 2
            pos = 0
            for want in expected:
                if want.strip() == "...":
                    continue
                rx = pattern(want)
                hit = next((n for n in range(pos, len(actual)) if rx.match(actual[n].rstrip())), None)
                if hit is None:
                    bad += 1
                    print(f"{readme}:{number}: `{command}`\n  README: {want}\n  prints: {closest(want, actual[pos:] or actual)}")
                    break
                pos = hit + 1
    print(f"{ran} README examples run, {bad} differ from the binary's output")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preflight", default="build/preflight")
    ap.add_argument("readme", nargs="?", default="README.md")
    a = ap.parse_args()
    sys.exit(check(os.path.abspath(a.preflight), a.readme))


if __name__ == "__main__":
    main()
