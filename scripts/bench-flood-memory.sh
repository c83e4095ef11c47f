#!/usr/bin/env bash
# One duplex session flooded with N tiny server events (the Python `websockets` peer in
# tests/it/py/deflate_server.py, mode flood:N) among three sessions run one at a time;
# print rtload's exit code, peak RSS and the failure line. Shows the per-session event cap
# and the memory of publication after timing.
#
#   scripts/bench-flood-memory.sh [N] [CAP] [--as BYTES] [--cores C:S] [--bin PATH]
#
# N: events flooded into the first session (default 2000000). CAP:
# `[workload] max_events_per_session` (default: rtload's own, 100000). --as runs rtload
# under `prlimit --as=BYTES` (an address-space limit, as `ulimit -v` sets). Needs the
# test venv (scripts/test builds target/pytest-venv), GNU time and a release build.
# Only 127.0.0.1 is used.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
AS=() rest=()
while [ $# -gt 0 ]; do
  case $1 in
    --as) [ $# -ge 2 ] || { echo "--as wants bytes, e.g. --as 536870912" >&2; exit 2; }
      AS=(prlimit "--as=$2"); shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
parse_bench_flags "${rest[@]+"${rest[@]}"}"
N=${ARGS[0]:-2000000} CAP=${ARGS[1]:-}
PY=target/pytest-venv/bin/python
[ -x "$PY" ] || { echo "no $PY: run scripts/test once to build the test venv" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill "${py_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$BIN" dataset synth "$work/ds" >/dev/null
mkfifo "$work/stdin"
"${SERVER_PIN[@]}" "$PY" tests/it/py/deflate_server.py "flood:$N" "$work/log.jsonl" \
  <"$work/stdin" >"$work/port" 2>"$work/server.err" &
py_pid=$!
exec 3>"$work/stdin"
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(head -1 "$work/port")
cat >"$work/flood.toml" <<TOML
[target]
url = "ws://127.0.0.1:$port/v1/realtime"
[workload]
kind = "omniinteract"
dataset_path = "ds/data"
ref_audio = "ds/ref_audio.wav"
output_dir = "out"
${CAP:+max_events_per_session = $CAP}
[load]
samples = 3
max_concurrency = 1
[output]
json = "result.json"
TOML
set +e
/usr/bin/time -f "peak RSS %M KiB, %e s" "${AS[@]}" "${CLIENT_PIN[@]}" "$BIN" run "$work/flood.toml" \
  >"$work/run.out" 2>"$work/run.err"
code=$?
set -e
echo "flood $N events, cap ${CAP:-default}${AS:+, ${AS[1]}}: exit $code"
grep -h "peak RSS\|^note:" "$work/run.err" || true
grep -h "^verdict\|^ERROR" "$work/run.out" "$work/run.err" | sort -u | cut -c1-160 || true
[ -s "$work/result.json" ] && echo "result.json written" || echo "result.json MISSING"
