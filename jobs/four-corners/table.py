#!/usr/bin/env python3
"""Print the calibration table of docs/calibration.md from flashlab JSON results.

usage: table.py RESULTS_DIR [fresh|steady]
Reads RESULTS_DIR/<preset>.json (output of `flashlab run ... --output-format json`) and
compares each corner with the target figures below (MB/s for sequential, IOPS for random).
"""
import json
import os
import sys

# (value, source) per corner. "steady" targets are compared with qd32.fio / enterprise.fio,
# "fresh" targets with client-fresh.fio (NVMe client briefs state random IOPS at a depth of
# several threads: their targets sit on the 8-job rows). "spec*": recalled from the product
# brief, not re-checked against it (see docs/calibration.md).
T = {
    "intel-ssd-710-200gb": {"steady": {"seq-read-128k": (270, "spec*"), "seq-write-128k": (210, "spec*"),
                            "rand-read-4k": (38500, "spec*"), "rand-write-4k": (2700, "spec*")}},
    "intel-ssd-320-300gb": {"steady": {"seq-read-128k": (270, "spec*"), "seq-write-128k": (205, "spec*"),
                            "rand-read-4k": (39500, "spec*")},
                            "fresh": {"rand-write-4k": (23000, "spec*, 8 GB span")}},
    "micron-p300-200gb": {"steady": {"seq-read-128k": (360, "spec, steady"), "seq-write-128k": (255, "spec, steady"),
                          "rand-read-4k-steady": (44000, "spec, steady"), "rand-write-4k": (16000, "spec, steady")},
                          "fresh": {"seq-read-128k": (360, "spec, empty"), "seq-write-128k": (275, "spec, empty"),
                          "rand-read-4k": (60000, "spec, empty"), "rand-write-4k": (45200, "spec, empty")}},
    "intel-x25-e-64gb": {"steady": {"seq-read-128k": (250, "spec*"), "seq-write-128k": (170, "spec*"),
                         "rand-read-4k": (35000, "spec"), "rand-write-4k": (3300, "spec")}},
    "ocz-vertex-3-240gb": {"steady": {"seq-write-128k": (240, "review, incompressible")},
                           "fresh": {"seq-read-128k": (550, "spec, compressible")}},
    "solidigm-d5-p5430-15.36tb": {"steady": {"seq-read-128k": (7400, "review"), "seq-write-128k": (3000, "review"),
                                  "rand-read-4k": (964000, "review"), "rand-write-4k": (140000, "review")}},
    "solidigm-d5-p5316-30.72tb": {"steady": {"seq-read-128k": (7000, "spec*"), "seq-write-128k": (3600, "spec*"),
                                  "rand-read-4k": (800000, "spec*")}},
    "solidigm-d7-p5520-7.68tb": {"steady": {"seq-read-128k": (7100, "spec*"), "seq-write-128k": (4200, "spec*"),
                                 "rand-read-4k": (1000000, "spec*")}},
    "solidigm-d7-p5520-15.36tb": {"steady": {"seq-read-128k": (7100, "spec*"), "seq-write-128k": (4200, "spec*"),
                                  "rand-read-4k": (1000000, "spec*")}},
    "samsung-pm9a3-7.68tb": {"steady": {"seq-read-128k": (6500, "spec"), "seq-write-128k": (3500, "spec"),
                             "rand-read-4k": (900000, "spec"), "rand-write-4k": (200000, "spec")}},
    "micron-7400-pro-7.68tb": {"steady": {"seq-read-128k": (6600, "spec"), "seq-write-128k": (5400, "spec*"),
                               "rand-read-4k": (1000000, "spec"), "rand-write-4k": (190000, "spec, best U.3")}},
    "kioxia-cd6-r-7.68tb": {"steady": {"seq-read-128k": (6200, "spec, series max"), "seq-write-128k": (4000, "spec, series max"),
                            "rand-read-4k": (1000000, "spec, series max"), "rand-write-4k": (85000, "spec, series max")}},
    "micron-3400-512gb": {"fresh": {"seq-read-128k": (6600, "spec"), "seq-write-128k": (3600, "spec")}},
    "samsung-pm981a-256gb": {"fresh": {"seq-read-128k": (3500, "spec"), "seq-write-128k": (2200, "spec"),
                             "rand-read-4k-8t": (240000, "spec"), "rand-write-4k-8t": (490000, "spec")}},
    "wd-sn850-1tb": {"fresh": {"seq-read-128k": (7000, "spec*"), "seq-write-128k": (5300, "spec*"),
                     "rand-read-4k-8t": (1000000, "spec*"), "rand-write-4k-8t": (720000, "spec*")}},
    "crucial-t700-2tb": {"fresh": {"seq-read-128k": (12400, "spec*"), "seq-write-128k": (11800, "spec*"),
                         "rand-read-4k-8t": (1500000, "spec*"), "rand-write-4k-8t": (1500000, "spec*")}},
}
CORNERS = ["seq-read-128k", "seq-write-128k", "rand-read-4k", "rand-write-4k",
           "rand-read-4k-8t", "rand-write-4k-8t"]


def corner_value(job, corner):
    d = job["read"] if "read" in corner else job["write"]
    return d["bw_bytes"] / 1e6 if corner.startswith("seq") else d["iops"]


def main():
    results, kind = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "steady")
    print("| preset | corner | target | source | simulated | error |")
    print("|---|---|---:|---|---:|---:|")
    for name in sorted(os.listdir(results)):
        if not name.endswith(".json"):
            continue
        preset = name[:-5]
        try:
            jobs = {j["jobname"]: j for j in json.load(open(os.path.join(results, name)))["jobs"]}
        except (ValueError, KeyError):
            continue
        targets = T.get(preset, {}).get(kind, {})
        for corner in CORNERS:
            if corner not in jobs:
                continue
            sim = corner_value(jobs[corner], corner)
            unit = "MB/s" if corner.startswith("seq") else "IOPS"
            if corner in targets:
                tgt, src = targets[corner]
                err = (sim - tgt) / tgt * 100
                print(f"| {preset} | {corner} | {tgt:,} {unit} | {src} | {sim:,.0f} {unit} | {err:+.0f}% |")
            else:
                print(f"| {preset} | {corner} | – | – | {sim:,.0f} {unit} | – |")


if __name__ == "__main__":
    main()
