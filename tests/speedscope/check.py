"""Check a csampler speedscope file: both JSON schemas, then what a schema
cannot say, then print the timeline facts a test asserts on.

usage: check.py FILE PERIOD_NS [FOLDED] [SPEEDSCOPE_SCHEMA]
  FOLDED: csampler's folded output of the same run with --threads: each
          profile's CPU (weights of its non-empty samples) must equal its
          thread's count there, in periods.
Prints one line per (profile, frame name) with samples:
  fact PROFILE FRAME first_start_ms last_end_ms cpu_ms
and exits 1 with the reason on the first violation."""
import json
import os
import sys

import jsonschema


def die(msg):
    print("check.py: " + msg)
    sys.exit(1)


def main():
    path, period = sys.argv[1], int(sys.argv[2])
    folded = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    official = sys.argv[4] if len(sys.argv) > 4 else None
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "csampler.schema.json")) as f:
        jsonschema.validate(doc, json.load(f))
    if official:
        with open(official) as f:
            jsonschema.validate(doc, json.load(f))

    frames = doc["shared"]["frames"]
    profiles = doc["profiles"]
    if profiles and doc["activeProfileIndex"] >= len(profiles):
        die("activeProfileIndex out of range")
    cpu_by_name = {}
    for p in profiles:
        samples, weights = p["samples"], p["weights"]
        if len(samples) != len(weights):
            die("%s: %d samples but %d weights" % (p["name"], len(samples), len(weights)))
        t = 0
        cpu = 0
        facts = {}
        prev_empty = False
        for stack, w in zip(samples, weights):
            if not stack:
                if prev_empty:
                    die("%s: two gaps in a row" % p["name"])
                prev_empty = True
                t += w
                continue
            prev_empty = False
            if w % period:
                die("%s: weight %d is not a whole number of periods" % (p["name"], w))
            for i in stack:
                if i >= len(frames):
                    die("%s: frame %d out of range" % (p["name"], i))
            for name in set(frames[i]["name"] for i in stack):
                fa = facts.setdefault(name, [t, t + w, 0])
                fa[1] = t + w
                fa[2] += w
            cpu += w
            t += w
        if t > p["endValue"]:
            die("%s: samples run to %d, past endValue %d" % (p["name"], t, p["endValue"]))
        cpu_by_name[p["name"]] = cpu
        for name, (first, last, w) in sorted(facts.items()):
            print("fact %s %s %.1f %.1f %.1f" % (p["name"], name.replace(" ", "_"),
                                                first / 1e6, last / 1e6, w / 1e6))
    if folded:
        counts = {}
        with open(folded, encoding="utf-8", errors="replace") as f:
            for line in f:
                stack, _, n = line.rstrip("\n").rpartition(" ")
                root = stack.split(";")[0]
                counts[root] = counts.get(root, 0) + int(n)
        for name, cpu in cpu_by_name.items():
            label = name.split("] ", 1)[-1]
            if counts.get(label, 0) * period != cpu:
                die("%s: %d ns of samples, but the folded output has %d periods of %s" %
                    (name, cpu, counts.get(label, 0), label))
        if sum(counts.values()) * period != sum(cpu_by_name.values()):
            die("the folded output has samples of threads with no profile")
    print("ok %d profiles, %d frames" % (len(profiles), len(frames)))


main()
