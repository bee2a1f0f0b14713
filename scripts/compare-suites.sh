#!/usr/bin/env bash
# Runs every suite on the tiny drive and on a slice of one preset with two flashlab builds,
# and diffs standard output, the exit status and every step file each writes; then the
# precondition cache's targets (qos, precondition, four-corners, op-sweep) cold and warm.
# Usage: scripts/compare-suites.sh BASE NEW [SUITE...]
# Suites default to those NEW lists (a suite BASE lacks is run by NEW alone and reported).
# Exit status: 0 when every output is byte-identical, 1 otherwise.
set -u
base=$1
new=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The suites a build knows, one a line, from the error that lists them.
suite_names() {
    "$1" suite no-such-suite 2>&1 | sed -n 's/.*valid suites: //p' | tr ',' '\n' | tr -d ' '
}

if [ $# -gt 0 ]; then
    suites=("$@")
else
    mapfile -t suites < <(suite_names "$new")
fi

# A slice of a preset: quick, and a real drive's geometry rather than the test drive's.
# Short rounds and windows (options every suite takes) keep the whole comparison quick.
quick=(--round 5% --max-rounds 5 --runtime 200ms)
preset=(--device intel-x25-e-64gb --set sim.scale=0.02 "${quick[@]}")
tiny=(--device tiny-test-1gb "${quick[@]}")

status=0
# run BIN OUT ARGS...: stdout, stderr without progress lines, exit status and the outdir.
run() {
    local bin=$1 out=$2
    shift 2
    mkdir -p "$out/dir"
    "$bin" "$@" --output-format json --outdir "$out/dir" >"$out/stdout" 2>"$out/stderr.raw"
    echo $? >"$out/rc"
    # Progress lines carry wall-clock figures; everything else on stderr must match.
    grep -v '^flashlab: \[' "$out/stderr.raw" | sed -e "s#$work#WORK#g" -e 's#[0-9a-f]\{16,\}\.state#KEY.state#g' >"$out/stderr" || true
    rm "$out/stderr.raw"
    # The build's commit is part of the provenance; everything else must match.
    find "$out" -type f -exec sed -i -E 's/"commit": "[0-9a-f]+(-dirty)?"/"commit": "COMMIT"/' {} +
}

compare() {
    local label=$1
    shift
    for side in base new; do
        local bin=$base
        [ $side = new ] && bin=$new
        run "$bin" "$work/$label/$side" "$@"
    done
    if diff -r "$work/$label/base" "$work/$label/new" >"$work/$label.diff"; then
        echo "same      $label (exit $(cat "$work/$label/new/rc"))"
    else
        echo "DIFFERENT $label"
        head -20 "$work/$label.diff"
        status=1
    fi
}

for s in "${suites[@]}"; do
    if ! suite_names "$base" | grep -qx -- "$s"; then
        run "$new" "$work/new-only-$s" suite "$s" "${tiny[@]}" --no-state-cache
        echo "new only  $s (exit $(cat "$work/new-only-$s/rc"))"
        continue
    fi
    compare "tiny-$s" suite "$s" "${tiny[@]}" --no-state-cache
    compare "preset-$s" suite "$s" "${preset[@]}" --no-state-cache
done

# The precondition cache's targets: cold (writes entries), then warm (reads them); each build
# keeps its own entries (the key holds a hash of the executable).
for s in qos precondition four-corners op-sweep; do
    compare "cold-$s" suite "$s" "${tiny[@]}" --state-cache "$work/cache"
    compare "warm-$s" suite "$s" "${tiny[@]}" --state-cache "$work/cache"
done
exit $status
