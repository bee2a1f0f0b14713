#!/usr/bin/env python3
"""What bounds a drive at each spare point of `flashlab suite op-sweep --outdir DIR`.

For each fraction's last measured run: its write IOPS and write amplification as the suite
reports them (`op-sweep.csv`), the IUs the dies programmed per second for them (IOPS x WA:
4 KiB writes of 4 KiB IUs), and the drive's average power over the run (its energy meter at
the end of the run's `NN-opF-run-*.json` step against the step before it). Prints one JSON object keyed
by the fraction's label (`op0`, `op10`). Used by docs/explain-gc.md ("Spare area on the
QLC drives").
Across the fractions: each figure's `KEY_min`, `KEY_max` and `KEY_spread_percent` (the
largest over the smallest, less one) for the dies' IUs per second and the power.
"""
import csv
import glob
import json
import os
import re
import sys


def meter(step_json):
    with open(step_json) as f:
        return json.load(f)["flashlab"]["device_counters"]["power"]


def main(outdir):
    with open(os.path.join(outdir, "op-sweep.csv")) as f:
        results = {row["metric"]: float(row["value"]) for row in csv.DictReader(f)}
    (device_dir,) = [d for d in glob.glob(os.path.join(outdir, "*")) if os.path.isdir(d)]
    steps = sorted(glob.glob(os.path.join(device_dir, "*.json")))
    runs = {}
    for i, path in enumerate(steps):
        m = re.match(r"\d+-(op\d+)-(run-[^.]+)\.json$", os.path.basename(path))
        if m:
            runs[m.group(1)] = (m.group(2).replace("-", "_"), steps[i - 1], path)
    out = {}
    for label, (run, before, after) in runs.items():
        start, end = meter(before), meter(after)
        seconds = (end["duration_ns"] - start["duration_ns"]) / 1e9
        iops = results[f"{label}_{run}_write_iops"]
        wa = results[f"{label}_{run}_write_amplification"]
        out[label] = {
            "write_iops": iops,
            "write_amplification": wa,
            "nand_ius_per_s": iops * wa,
            "average_w": (end["energy_j"] - start["energy_j"]) / seconds,
        }
    points = list(out.values())
    for key in ("nand_ius_per_s", "average_w"):
        values = [point[key] for point in points]
        out[f"{key}_min"] = min(values)
        out[f"{key}_max"] = max(values)
        out[f"{key}_spread_percent"] = (max(values) / min(values) - 1) * 100
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: op-sweep-bounds.py OUTDIR (of flashlab suite op-sweep --outdir)")
    main(sys.argv[1])
