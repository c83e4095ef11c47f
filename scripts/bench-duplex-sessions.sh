#!/usr/bin/env bash
# Run N concurrent OmniInteract duplex sessions (real-time paced audio + frames) against
# the reference server in its own process; print the client's CPU time, peak RSS, input
# pacing lag and the TTFP agreement with the server's own send stamps.
#
#   scripts/bench-duplex-sessions.sh [N] [CASE_MS] [--deltas K:MS] [--cores C:S] [--rate R] [--floor] …
#
# (other flags: scripts/lib.sh). With --floor the floor client then sends the same bytes
# to the same server, pinned the same way, and both CPU ratios are printed. --deltas K:MS
# makes the server answer each second with K audio deltas of MS ms each (default 3:100);
# a real server's finer cadence (e.g. 15:20) shows what a session keeps per delta.
# Defaults: N=50 sessions of 5 s cases. Only 127.0.0.1 is used. Needs GNU time
# (`apt-get install time`) and a release build (`cargo build --release`).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
parse_bench_flags "$@"
DELTAS=3 DELTA_MS=100 pos=()
for ((i = 0; i < ${#ARGS[@]}; i++)); do
  if [ "${ARGS[i]}" = --deltas ]; then
    spec=${ARGS[i + 1]:-}
    [[ $spec =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || { echo "--deltas wants COUNT:MS, e.g. --deltas 15:20" >&2; exit 2; }
    DELTAS=${spec%%:*} DELTA_MS=${spec#*:}; i=$((i + 1))
  else
    pos+=("${ARGS[i]}")
  fi
done

N=${pos[0]:-50}
CASE_MS=${pos[1]:-5000}
[ -x "$BIN" ] || { echo "build first: cargo build --release (or pass --bin PATH)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }
pick_floor floor_duplex

work=$(mktemp -d)
server_pid=
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

per_subset=$(( (N + 2) / 3 ))
"$BIN" dataset synth "$work/ds" --cases-per-subset "$per_subset" --duration-ms "$CASE_MS" > /dev/null

write_duplex_bench "$work" bench-duplex-sessions "$N" "$DELTAS" "$DELTA_MS"

start_server "$BIN" "$work/server.toml" "$work/server.log"

"${CLIENT_PIN[@]}" /usr/bin/time -f '%U %S %M %e' -o "$work/time.txt" \
  "${PERF[@]}" "$BIN" run "$work/scenario.toml" --target "ws://$addr" --output-json "$work/out.json" -q > "$work/report.txt"

SERVER_CPU=$(server_cpu_s)

if [ -n "$FLOOR" ]; then
  "${CLIENT_PIN[@]}" "$FLOOR" "$addr" "$work/ds" "$N" $RATE > "$work/floor.json"
fi

read -r user sys maxrss wall < "$work/time.txt"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); client pinned: ${CLIENT_PIN[*]:-no}; server pinned: ${SERVER_PIN[*]:-no}; arrivals: $(arrivals)"
grep -h "generator-bound" "$work/report.txt" || true
SERVER_CPU=$SERVER_CPU python3 - "$work" "$N" "$CASE_MS" "$user" "$sys" "$maxrss" "$wall" "$FLOOR" "$DELTAS deltas of $DELTA_MS ms a second" <<'PY'
import sys; sys.path.insert(0, 'scripts')
from resources import resources, server_line, phases
import json, sys, glob, os, math
work, n, case_ms, user, sys_t, rss, wall, floor, deltas = sys.argv[1:]
text = open(os.path.join(work, "out.json")).read()
for tok in ("-Infinity", "Infinity", "NaN"):
    text = text.replace(tok, "null")
d = json.loads(text)
rt = d["rtload"]
resources(rt)
phases(rt)
server_line(rt, os.environ["SERVER_CPU"])
if floor:
    from resources import floor_ratio
    floor_ratio(rt, json.load(open(os.path.join(work, "floor.json"))), int(n))
lags = [s["pacing_max_lag_ms"] for s in rt["samples"] if s.get("pacing_max_lag_ms") is not None]
print(f"sessions={n} case={int(case_ms)/1000:.1f}s concurrency={n} server audio: {deltas}")
print(f"client cpu: user {float(user):.2f} s + sys {float(sys_t):.2f} s over {float(wall):.2f} s wall"
      f" = {(float(user)+float(sys_t))/float(wall)*100:.0f}% of one core")
print(f"client peak RSS: {int(rss)/1024:.1f} MiB")
print(f"completed {d['completed']} failed {d['failed']}")
if lags:
    lags.sort()
    print(f"input pacing lag (per-session max): p50 {lags[len(lags)//2]:.3f} ms, max {lags[-1]:.3f} ms")
sl = rt.get("send_lateness") or {}
if sl:
    print(f"send lateness: mean {sl['mean_ms']:.3f} ms, p99 {sl['p99_ms']:.3f} ms, max {sl['max_ms']:.3f} ms")
diffs = []
for ev_path in glob.glob(os.path.join(work, "out", "*", "*", "events.json")):
    evs = json.load(open(ev_path))
    created, first = {}, {}
    for e in evs:
        rid = e.get("response_id") or (e.get("response") or {}).get("id")
        if not rid: continue
        if e.get("type") == "response.created": created.setdefault(rid, e)
        if e.get("type") in ("response.audio.delta", "response.output_audio.delta"): first.setdefault(rid, e)
    for rid, c in created.items():
        a = first.get(rid)
        if a and "server_sent_at_s" in a and "server_sent_at_s" in c:
            client = a["_client_received_at_s"] - c["_client_received_at_s"]
            server = a["server_sent_at_s"] - c["server_sent_at_s"]
            diffs.append(abs(client - server) * 1000)
if diffs:
    diffs.sort()
    q = lambda p: diffs[min(len(diffs)-1, int(math.ceil(p*len(diffs)))-1)]
    print(f"|client TTFP - server TTFP| over {len(diffs)} responses: p50 {q(0.5):.3f} ms, p99 {q(0.99):.3f} ms, max {diffs[-1]:.3f} ms")
PY
