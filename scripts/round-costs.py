#!/usr/bin/env python3
"""What each preconditioning round of `flashlab suite ... --round-timed 100% --outdir DIR`
cost the drive per host IU, from the device counters at the end of each round's step
against the step before it (`DIR/1-DEVICE/NN-round-MM.json`).

Per round (`round01`, `round02`, ...): the host IUs written, and per host IU the IUs written
in SLC mode and folded, the IUs GC copied, the IUs programmed in native mode (NAND writes
less SLC writes), the array reads and native page programs the dies carried out, and the
array time booked (all planes, `media.array_busy_ns`); the round's write IOPS; and the share
of the planes' time the round booked. Prints one JSON object. Used by
docs/explain-slc-cache.md ("Why the fold lifts the steady random write by half").
"""
import glob
import json
import os
import re
import sys


def counters(path):
    with open(path) as f:
        doc = json.load(f)
    c = doc["flashlab"]["device_counters"]
    return doc, c


def main(outdir, planes):
    (device_dir,) = [d for d in glob.glob(os.path.join(outdir, "*")) if os.path.isdir(d)]
    steps = sorted(glob.glob(os.path.join(device_dir, "*.json")))
    out = {}
    for before, after in zip(steps, steps[1:]):
        m = re.match(r"\d+-round-(\d+)\.json$", os.path.basename(after))
        if not m:
            continue
        doc0, c0 = counters(before)
        doc, c1 = counters(after)
        d = lambda part, key: c1[part][key] - c0[part][key]
        host = d("ftl", "host_write_ius")
        seconds = (doc["flashlab"]["suite_step_end_ns"] - doc0["flashlab"]["suite_step_end_ns"]) / 1e9
        busy_ns = d("media", "array_busy_ns")
        out["round" + m.group(1)] = {
            "host_ius": host,
            "slc_written": d("ftl", "slc_write_ius") / host,
            "folded": d("ftl", "slc_folded_ius") / host,
            "gc_copied": d("ftl", "gc_copied_ius") / host,
            "native_written": (d("ftl", "nand_write_ius") - d("ftl", "slc_write_ius")) / host,
            "array_reads": d("media", "reads") / host,
            "native_programs": d("media", "native_programs") / host,
            "array_us": busy_ns / host / 1e3,
            "planes_busy": busy_ns / 1e9 / seconds / planes,
            "write_iops": doc["jobs"][0]["write"]["iops"],
        }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: round-costs.py OUTDIR PLANES (of flashlab suite ... --outdir; the drive's planes)")
    main(sys.argv[1], int(sys.argv[2]))
