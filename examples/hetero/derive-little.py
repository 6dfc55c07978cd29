#!/usr/bin/env python3
"""derive-little.py - the example "little core" profiles of docs/placement.md ("Heterogeneous cores: place hetero").

HAND-MADE, NOT MEASURED: this host has one core type.  Each little profile is a recorded profile of docs/data/corun
(measured on this machine's Xeon cores, the example's "big" type) with the shared resources (LLC and memory) changed
by fixed rules that stand for a smaller, slower core: it tolerates 40 % of the pressure the big core tolerated (a
smaller private cache leans on the LLC and memory more), and causes 60 % of what the big core caused (fewer requests
per second).  Everything else is copied.  Run from the repository root: examples/hetero/derive-little.py
"""
import json
import os

SHARED = ("mem-cap", "mem-bw", "llc-cap", "llc-bw")
TOLERATED, CAUSED = 0.4, 0.6
here = os.path.dirname(os.path.abspath(__file__))
corun = os.path.join(here, "..", "..", "docs", "data", "corun")
for app in ("disk", "dram", "llc", "memcached", "redis", "xz"):
    with open(os.path.join(corun, app + ".json")) as f:
        p = json.load(f)
    p["machine"]["cpu_model"] = "hand-made little core (examples/hetero/derive-little.py)"
    for s in p["sois"]:
        if s["soi"] not in SHARED or s["status"] != "measured":
            continue
        s["tolerated"] = round(s["tolerated"] * TOLERATED, 4)
        s["tolerated_bracket"] = [round(x * TOLERATED, 4) for x in s["tolerated_bracket"]]
        for pt in s["curve"]:  # the ramp's points move with the tolerance
            pt["intensity"] = round(pt["intensity"] * TOLERATED, 4)
        s["caused"] = s["caused"] * CAUSED
        d = s["caused_detail"]
        d["se"] = d["se"] * CAUSED
        d["rounds"] = [x * CAUSED for x in d["rounds"]]
        d["beside"] = d["alone"] * (1 - s["caused"] / 100)  # the rates kept consistent with the new figure
    with open(os.path.join(here, app + "-little.json"), "w") as f:
        json.dump(p, f, indent=2)
        f.write("\n")
