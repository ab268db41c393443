#!/bin/sh
# test_csnweb_browser.sh: the browser test of csn-web (csnweb_browser.js), skipped (exit 77)
# with one line saying what is missing where chromium, node or playwright-core is not installed
# (.ci/run installs them: apt chromium nodejs npm, npm playwright-core in /opt/csn-npm).
# usage: test_csnweb_browser.sh BUILD_DIR SOURCE_DIR [SCREENSHOT]
set -u
build=$1 src=$2 shot=${3:-$1/csnweb-browser.png}
chromium=${CHROMIUM:-/usr/bin/chromium}
npm_prefix=${CSN_NPM_PREFIX:-/opt/csn-npm}
[ -x "$chromium" ] || { echo "SKIP: no chromium at $chromium (apt-get install chromium)"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "SKIP: no node (apt-get install nodejs)"; exit 77; }
[ -d "$npm_prefix/node_modules/playwright-core" ] ||
    { echo "SKIP: no playwright-core in $npm_prefix (npm install --prefix $npm_prefix playwright-core)"; exit 77; }
tmp=$(mktemp -d) || exit 1
python3 "$src/tools/csn-web/csn-web" --port 0 --dir "$tmp/runs" --build "$build" >"$tmp/out" 2>"$tmp/err" &
pid=$!
url=
for i in $(seq 1 100); do
    url=$(sed -n 's|^csn-web: listening on \(http://[0-9.:]*/\)$|\1|p' "$tmp/out")
    [ -n "$url" ] && break
    sleep 0.1
done
rc=1
if [ -n "$url" ]; then
    NODE_PATH="$npm_prefix/node_modules" CHROMIUM=$chromium timeout 300 node "$src/tests/csnbench/csnweb_browser.js" "$url" "$shot"
    rc=$?
else
    echo "FAIL: csn-web did not start"; cat "$tmp/err"
fi
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
# the run's csnbench is detached: wait until it has let go of its lock
for i in $(seq 1 100); do
    flock -n "$tmp/runs/.run.lock" true 2>/dev/null && break
    sleep 0.2
done
[ $rc -eq 0 ] && [ -s "$shot" ] || rc=1
rm -rf "$tmp"
exit $rc
