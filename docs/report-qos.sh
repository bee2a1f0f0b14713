#!/usr/bin/env bash
# Regenerates docs/report-qos.png, the README's picture of the qos report: runs the README's
# qos command and captures the top of the report it writes (title, summary, the first chart)
# in headless Chromium at 1000 x 1100 px. Run from the repository's root after a change that
# moves the README's qos figures (the docs test rewrites the figures; this the picture):
#   cargo build --release && docs/report-qos.sh
set -euo pipefail
cd "$(dirname "$0")/.."
flashlab=${FLASHLAB:-target/release/flashlab}
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

flashlab=$(realpath "$flashlab")
# In the scratch directory, so the command line the page shows is the README's.
(cd "$work" && XDG_CACHE_HOME="$work/cache" "$flashlab" suite qos \
    --device solidigm-d5-p5430-15.36tb --set sim.scale=0.001 --report qos.html > /dev/null 2>&1)
"$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --window-size=1000,1100 \
    --screenshot="$PWD/docs/report-qos.png" "file://$work/qos.html" 2> /dev/null
echo "docs/report-qos.png: the top of the qos report, 1000 x 1100"
