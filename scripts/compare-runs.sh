#!/usr/bin/env bash
# Runs the same small simulations with two flashlab binaries and compares their outputs
# byte for byte (the build's commit line aside): `run` on job files (a drive, a drive split
# into namespaces, a storage system, a run continued from a saved state), `replay` of a
# trace, `fio` command lines and a small sweep with its table.
#
# Usage: scripts/compare-runs.sh BASE_BINARY NEW_BINARY
# Prints one line per output and exits 1 if any differs.
set -u
base=$(realpath "$1")
new=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/ns.fio" <<'JOB'
[global]
ioengine=libaio
direct=1
bs=4k
size=64m
[one]
filename=ns1
rw=randwrite
iodepth=8
[two]
filename=ns2
rw=randread
iodepth=4
JOB
cat > "$work/small.fio" <<'JOB'
[global]
ioengine=libaio
direct=1
size=32m
[w]
rw=randwrite
bs=4k
iodepth=16
[r]
stonewall
rw=randread
bs=16k
iodepth=4
JOB
cat > "$work/rw.fio" <<'JOB'
[global]
ioengine=libaio
direct=1
size=${SIZE}
[randwrite]
rw=randwrite
bs=4k
iodepth=${QD}
JOB
cat > "$work/plan.toml" <<'PLAN'
job = "rw.fio"
device = "tiny-test-1gb"
seed = 3
[env]
SIZE = "16m"
[axes]
"set.capacity.spare_factor" = [0.1, 0.3]
env.QD = [1, 16]
PLAN
cat > "$work/cycle.toml" <<'SYS'
name = "cycle"
[drive.d]
preset = "tiny-test-1gb"
[raid.a]
level = 0
members = ["b", "d"]
[raid.b]
level = 0
members = ["a"]
SYS
cat > "$work/unknown.toml" <<'SYS'
name = "unknown"
[drive.d]
preset = "tiny-test-1gb"
[raid.a]
level = 1
members = ["d", "e"]
SYS
cat > "$work/tworoots.toml" <<'SYS'
name = "two"
[drive.d]
preset = "tiny-test-1gb"
[drive.e]
preset = "tiny-test-1gb"
SYS
cat > "$work/badenv.toml" <<'PLAN'
job = "rw.fio"
[env]
SIZE = "16m"
"bad name" = "1"
[axes]
env.QD = [1, 2]
PLAN
cat > "$work/badaxis.toml" <<'PLAN'
job = "rw.fio"
[env]
SIZE = "16m"
[axes]
seed = ["x"]
env.QD = []
PLAN

tiny="--device tiny-test-1gb"
ns="--set 'namespaces=[\"400MB\",\"400MB\"]'"
# One case a line: a name, then the arguments (run in $work, so relative paths resolve).
cases() {
    for f in json normal terse json+; do
        echo "run-mixed-$f|run $root/testdata/jobs/mixed.fio $tiny --output-format $f"
    done
    echo "run-small-json|run small.fio $tiny --output-format json --seed 7"
    echo "run-randread-job|run $root/jobs/randread-4k-qd32.fio $tiny --output-format json"
    echo "run-slice-normal|run small.fio --device wd-sn850-1tb --set sim.scale=0.02"
    echo "run-namespaces-json|run ns.fio $tiny $ns --output-format json"
    echo "run-namespaces-normal|run ns.fio $tiny $ns"
    echo "run-system-json|run small.fio --device hdd-2tb --output-format json"
    echo "run-system-raid0|run small.fio --device workstation-raid0 --output-format normal"
    echo "run-save|run small.fio $tiny --save-state S.state --output-format json"
    echo "run-load|run small.fio $tiny --load-state S.state --output-format json"
    echo "run-load-ns|run ns.fio $tiny $ns --save-state N.state --output-format json"
    echo "run-load-ns2|run ns.fio $tiny $ns --load-state N.state --output-format json"
    for t in msr:sample-msr.csv blkparse:sample-blkparse.txt fio-iolog:sample-fio-iolog.log; do
        echo "replay-${t%%:*}|replay $root/testdata/traces/${t#*:} --format ${t%%:*} $tiny --output-format json"
    done
    echo "replay-normal|replay $root/testdata/traces/sample-msr.csv --format msr $tiny --save-state R.state"
    echo "replay-loaded|replay $root/testdata/traces/sample-alibaba.csv --format alibaba $tiny --load-state R.state --output-format json"
    echo "replay-open|replay $root/testdata/traces/sample-tencent.csv --format tencent $tiny --mode open --output-format json"
    echo "fio-json|fio $tiny --name=a --rw=randrw --bs=4k --size=32m --iodepth=8 --output-format=json"
    echo "fio-normal|fio $tiny --name=a --rw=write --bs=128k --size=64m --name=b --rw=randread --bs=4k --size=16m"
    echo "fio-ambiguous|fio $tiny --name=a --rw=read --e=1"
    echo "fio-seed|fio $tiny --seed=x --name=a"
    echo "fio-eta|fio $tiny --eta=sometimes --name=a"
    echo "fio-status|fio $tiny --status-interval=1 --name=a"
    echo "fio-novalue|fio $tiny --name"
    echo "fio-minimal|fio $tiny --minimal --name=a --rw=randread --size=8m"
    echo "system-cycle|run small.fio --device cycle.toml"
    echo "system-unknown|run small.fio --device unknown.toml"
    echo "system-roots|run small.fio --device tworoots.toml"
    echo "sweep-badenv|sweep badenv.toml --list"
    echo "sweep-badaxis|sweep badaxis.toml --list"
    echo "sweep-list|sweep plan.toml --list"
    echo "sweep-run|sweep plan.toml --outdir OUT"
    echo "sweep-collect|sweep collect OUT"
}

status=0
for side in base new; do
    mkdir -p "$work/$side/samples/logs" "$work/bin-$side"
    cp "$work"/*.fio "$work"/*.toml "$work/$side/"
done
# The same file name, so usage lines match.
cp "$base" "$work/bin-base/flashlab"
cp "$new" "$work/bin-new/flashlab"
base=$work/bin-base/flashlab
new=$work/bin-new/flashlab
cases | while IFS='|' read -r name args; do
    for side in base new; do
        bin=$base
        [ "$side" = new ] && bin=$new
        (cd "$work/$side" && eval "\"$bin\" $args" > "$name.out" 2> "$name.err"; echo "exit $?" >> "$name.out")
        # The build's commit is the one expected difference; progress lines on standard
        # error follow the wall clock.
        cat "$work/$side/$name.out" "$work/$side/$name.err" |
            grep -v -e '"commit"' -e '^flashlab: \[' > "$work/$side/$name.cmp"
    done
    if cmp -s "$work/base/$name.cmp" "$work/new/$name.cmp"; then
        echo "same    $name ($(tail -1 "$work/base/$name.out"))"
    else
        echo "DIFFERS $name"
        diff "$work/base/$name.cmp" "$work/new/$name.cmp" | head -10
        echo 1 > "$work/failed"
    fi
done
for f in "$work"/base/OUT/*.json; do
    n=$(basename "$f")
    if ! diff <(grep -v '"commit"' "$f") <(grep -v '"commit"' "$work/new/OUT/$n") > /dev/null 2>&1; then
        echo "DIFFERS sweep point $n"
        echo 1 > "$work/failed"
    else
        echo "same    sweep point $n"
    fi
done
[ -e "$work/failed" ] && status=1
exit $status
