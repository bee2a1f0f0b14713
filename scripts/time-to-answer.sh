#!/usr/bin/env bash
# Time to answer: every suite at default settings on one device, cold (an empty precondition
# cache) and warm (the same cache again), as rows of a Markdown table for
# docs/benchmarks-suites.md. Usage:
#   scripts/time-to-answer.sh [DEVICE] [SUITE...]
# DEVICE defaults to each suite's own default device; SUITE defaults to every suite.
# FLASHLAB (default target/release/flashlab) is the binary; WORK (default a temporary
# directory, removed at the end) holds the cache and the outputs.
set -euo pipefail
bin=${FLASHLAB:-target/release/flashlab}
device=${1:-}
shift || true
work=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT
if [ $# -gt 0 ]; then
    suites=("$@")
else
    # The suite list as `flashlab suite --help` gives it: "The suite: a, b, ... or z".
    mapfile -t suites < <("$bin" suite --help | sed -n 's/^ *The suite: //p' | head -1 |
        sed 's/ or /, /' | tr ',' '\n' | sed 's/^ *//;/^$/d')
fi
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "| suite | device | cold wall | cold user CPU | warm wall | warm user CPU | peak memory | measured on |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
for suite in "${suites[@]}"; do
    args=(suite "$suite" --output-format json --progress never --state-cache "$work/cache-$suite")
    [ -z "$device" ] || args+=(--device "$device")
    rm -rf "$work/cache-$suite"
    row=("$suite" "${device:-default}")
    for pass in cold warm; do
        if ! /usr/bin/time -f "%e %U %M" -o "$work/time" "$bin" "${args[@]}" >"$work/$suite-$pass.json" 2>"$work/$suite-$pass.err"; then
            row+=("failed: $(tail -1 "$work/$suite-$pass.err")" "" )
            continue
        fi
        read -r wall user peak_kb <"$work/time"
        row+=("${wall} s" "${user} s")
    done
    row+=("$((peak_kb / 1000)) MB" "\`$commit\`")
    line="|"
    for cell in "${row[@]}"; do line+=" $cell |"; done
    echo "$line"
done
