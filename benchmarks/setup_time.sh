#!/usr/bin/env bash
# Time from `git clone` to a ready server (scripts/serve), and the size of the venv it made;
# then, in a second fresh clone, the time and size of the test venv (scripts/bootstrap test).
#
#   benchmarks/setup_time.sh            # clones this repository's HEAD into a temporary folder
#
# pip's cache is off for the run (PIP_NO_CACHE_DIR=1), so every package is fetched and unpacked
# as on a fresh machine; the machine's own pip configuration (index, local wheel mirror) is kept.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
port="${PORT:-8765}"
cleanup() { [ -z "${server:-}" ] || kill "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

echo "command: benchmarks/setup_time.sh  (cores: $(nproc), $(python3 --version))"
started=$(date +%s.%N)
git clone -q "$repo" "$work/clone"
cd "$work/clone"
PIP_NO_CACHE_DIR=1 scripts/serve --port "$port" > "$work/serve.log" 2>&1 &
server=$!
until python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/readyz', timeout=1)" 2>/dev/null; do
    kill -0 "$server" 2>/dev/null || { echo "scripts/serve exited:"; tail -20 "$work/serve.log"; exit 1; }
    sleep 0.2
done
ready=$(date +%s.%N)
printf 'git clone to ready: %.1f s\n' "$(echo "$ready - $started" | bc)"
echo "venv size: $(du -sm .venv | cut -f1) MB"
python3 - "$port" <<'PY'
import json, sys, urllib.request
body = json.dumps({"token": "king", "k": 2}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/tables/minilm/neighbors",
                                 data=body, headers={"content-type": "application/json"})
print("neighbours of king:", json.load(urllib.request.urlopen(request))["neighbors"])
PY
if .venv/bin/python -c "import torch" 2>/dev/null; then echo "torch is installed"; exit 1; fi
echo "torch: not installed"
kill "$server"; wait "$server" 2>/dev/null || true; server=""  # the second part runs alone

started=$(date +%s.%N)
git clone -q "$repo" "$work/tests"
cd "$work/tests"
PIP_NO_CACHE_DIR=1 scripts/bootstrap test 2> "$work/bootstrap.log" ||
    { echo "scripts/bootstrap test failed:"; tail -20 "$work/bootstrap.log"; exit 1; }
printf 'git clone to a test venv: %.1f s\n' "$(echo "$(date +%s.%N) - $started" | bc)"
echo "test venv size: $(du -sm .venv | cut -f1) MB"
