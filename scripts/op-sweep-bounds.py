#!/usr/bin/env python3
"""What bounds a drive at each spare point of `flashlab suite op-sweep --outdir DIR`.

For each fraction's last measured run: its write IOPS and write amplification as the suite
reports them (`op-sweep.csv`), the IUs the dies programmed per second for them (IOPS x WA:
4 KiB writes of 4 KiB IUs), and the drive's average power over the run (its energy meter at
the end of the run's `NN-opF-run-*.json` step against the step before it). Prints one JSON object keyed
by the fraction's label (`op0`, `op10`: its last run) and by label and run (`op0_run_10min`)
for each run, and the suite's results as `results`. Used by docs/explain-qlc-spare.md.
Across the fractions: each figure's `KEY_min`, `KEY_max` and `KEY_spread_percent` (the
largest over the smallest, less one) for the dies' IUs per second and the power.
Per run also what GC's reads yield and cost: IUs copied per page read
(`copied_per_read_page`), pages read per host IU (`reads_per_host_write`), IUs wear
levelling moved, and with PLANES (the slice's planes) the share of the planes' time the run
booked (`planes_busy`, `media.array_busy_ns` over the run's time).
"""
import csv
import glob
import json
import os
import re
import sys


def counters(step_json):
    with open(step_json) as f:
        return json.load(f)["flashlab"]["device_counters"]


def main(outdir, planes=None):
    with open(os.path.join(outdir, "op-sweep.csv")) as f:
        results = {row["metric"]: float(row["value"]) for row in csv.DictReader(f)}
    (device_dir,) = [d for d in glob.glob(os.path.join(outdir, "*")) if os.path.isdir(d)]
    steps = sorted(glob.glob(os.path.join(device_dir, "*.json")))
    runs = []
    for i, path in enumerate(steps):
        m = re.match(r"\d+-(op\d+)-(run-[^.]+)\.json$", os.path.basename(path))
        if m:
            runs.append((m.group(1), m.group(2).replace("-", "_"), steps[i - 1], path))
    out = {}
    for label, run, before, after in runs:
        c0, c1 = counters(before), counters(after)
        start, end = c0["power"], c1["power"]
        seconds = (end["duration_ns"] - start["duration_ns"]) / 1e9
        d = lambda part, key: c1[part][key] - c0[part][key]
        # None (null) where a run read or wrote nothing of its own (a run too short for GC).
        ratio = lambda a, b: a / b if b else None
        iops = results[f"{label}_{run}_write_iops"]
        wa = results[f"{label}_{run}_write_amplification"]
        point = {
            "write_iops": iops,
            "write_amplification": wa,
            "nand_ius_per_s": iops * wa,
            "average_w": (end["energy_j"] - start["energy_j"]) / seconds,
            "copied_per_read_page": ratio(d("ftl", "gc_copied_ius"), d("ftl", "nand_read_pages")),
            "reads_per_host_write": ratio(d("ftl", "nand_read_pages"), d("ftl", "host_write_ius")),
            "wear_level_moved_ius": d("ftl", "wear_level_moved_ius"),
        }
        if planes:
            point["planes_busy"] = d("media", "array_busy_ns") / (seconds * 1e9 * planes)
        out[label] = out[f"{label}_{run}"] = point
    points = [out[label] for label in dict.fromkeys(label for label, *_ in runs)]
    for key in ("nand_ius_per_s", "average_w"):
        values = [point[key] for point in points]
        out[f"{key}_min"] = min(values)
        out[f"{key}_max"] = max(values)
        out[f"{key}_spread_percent"] = (max(values) / min(values) - 1) * 100
    out["results"] = results
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: op-sweep-bounds.py OUTDIR [PLANES] (OUTDIR of flashlab suite op-sweep --outdir)")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else None)
