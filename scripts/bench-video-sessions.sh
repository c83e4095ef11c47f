#!/usr/bin/env bash
# Run N concurrent realtime video sessions against the reference server in its own
# process and print the client's CPU time, peak RSS and the cadence it observed.
#
#   scripts/bench-video-sessions.sh [N] [CHUNKS] [INTERVAL_MS] [--cores C:S] [--rate R] [--floor] [--save-video] …
#
# --save-video makes every session save the media it receives (`save_video`), which the
# client spools to disk as it arrives and publishes when the session ends.
# (flags: scripts/lib.sh). With --floor the floor client (examples/floor_video.rs: raw
# sockets, frame headers only) then receives the same chunks from the same server,
# pinned the same way, and rtload's CPU is printed as a ratio of it.
# Defaults: N=100 sessions, 40 chunks each, one chunk every 50 ms per session (so the
# client receives N*20 chunks/s). Only 127.0.0.1 is used. Needs GNU time
# (`apt-get install time`) and a release build (`cargo build --release`).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
parse_bench_flags "$@"

SAVE= SAVE_LINE= pos=()
for a in "${ARGS[@]}"; do
  if [ "$a" = --save-video ]; then SAVE=1 SAVE_LINE='save_video = "saved"'; else pos+=("$a"); fi
done
N=${pos[0]:-100}
CHUNKS=${pos[1]:-40}
INTERVAL_MS=${pos[2]:-50}
[ -x "$BIN" ] || { echo "build first: cargo build --release (or pass --bin PATH)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }
pick_floor floor_video

work=$(mktemp -d)
server_pid=
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

cat > "$work/server.toml" <<TOML
workers = 1
[video]
first_chunk_ms = 200
chunk_interval_ms = $INTERVAL_MS
jitter_ms = 0
ramp_chunks = 0
chunk_bytes = 16384
max_frames = $(( CHUNKS * 12 + 12 ))   # room for any CHUNKS (the default caps at 64)
TOML

cat > "$work/scenario.toml" <<TOML
name = "bench-video-sessions"
[workload]
kind = "video-cadence"
num_chunks = $CHUNKS
warmup_chunks = 6
target_fps = 16
ping_interval = 0
$SAVE_LINE
[load]
samples = $N
max_concurrency = $N
$(rate_line)
TOML

start_server "$BIN" "$work/server.toml" "$work/server.log"

"${CLIENT_PIN[@]}" /usr/bin/time -f '%U %S %M %e' -o "$work/time.txt" \
  "${PERF[@]}" "$BIN" run "$work/scenario.toml" --target "ws://$addr" --output-json "$work/out.json" > "$work/report.txt"

SERVER_CPU=$(server_cpu_s)

if [ -n "$FLOOR" ]; then
  "${CLIENT_PIN[@]}" "$FLOOR" "$addr" "$N" $(( CHUNKS * 12 - 3 )) $RATE > "$work/floor.json"
fi

read -r user sys maxrss wall < "$work/time.txt"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); client pinned: ${CLIENT_PIN[*]:-no}; server pinned: ${SERVER_PIN[*]:-no}; arrivals: $(arrivals)"
grep -h "generator-bound" "$work/report.txt" || true
SERVER_CPU=$SERVER_CPU python3 - "$work/out.json" "$N" "$CHUNKS" "$INTERVAL_MS" "$user" "$sys" "$maxrss" "$wall" "${FLOOR:+$work/floor.json}" <<'PY'
import sys; sys.path.insert(0, 'scripts')
from resources import resources, server_line, phases
import os
import json, sys
out, n, chunks, interval, user, sys_t, rss, wall, floor = sys.argv[1:]
d = json.load(open(out))
rt, m = d["rtload"], d["metrics"]
resources(rt)
phases(rt)
server_line(rt, os.environ["SERVER_CPU"])
if floor:
    from resources import floor_ratio
    floor_ratio(rt, json.load(open(floor)), int(n))
cad = rt.get("cadence_vs_server") or {}
late = rt.get("send_lateness") or {}
steady = m.get("steady_interval_ms_mean", m.get("interval_steady", {}).get("mean_ms"))
print(f"sessions={n} chunks/session={chunks} server interval={interval} ms")
print(f"client cpu: user {float(user):.2f} s + sys {float(sys_t):.2f} s over {float(wall):.2f} s wall"
      f" = {(float(user)+float(sys_t))/float(wall)*100:.0f}% of one core")
print(f"client peak RSS: {int(rss)/1024:.1f} MiB")
print(f"failed sessions: {rt['failed_sessions']}")
print(f"steady interval mean (client): {steady:.3f} ms")
if cad:
    print(f"cadence vs server stamps: client {cad['client_mean_interval_ms']:.3f} ms,"
          f" server {cad['server_mean_interval_ms']:.3f} ms, diff {cad['difference_ms']:+.4f} ms"
          f" over {cad['pairs']} intervals")
    # Per-interval agreement: |client gap - server gap| distribution.
    diffs = []
    for row in rt["samples"]:
        s, c = row.get("server_sent_at_s") or [], row.get("client_arrival_s") or []
        for i in range(1, min(len(s), len(c))):
            if s[i] is not None and s[i-1] is not None:
                diffs.append(abs((c[i]-c[i-1]) - (s[i]-s[i-1])) * 1000)
    diffs.sort()
    if diffs:
        q = lambda p: diffs[min(len(diffs)-1, int(p*(len(diffs)-1)))]
        print(f"|client gap - server gap|: p50 {q(0.5):.3f} ms, p99 {q(0.99):.3f} ms, max {diffs[-1]:.3f} ms")
if late:
    print(f"send lateness: mean {late['mean_ms']:.3f} ms, p99 {late['p99_ms']:.3f} ms, max {late['max_ms']:.3f} ms")
PY
if [ -n "$SAVE" ]; then
  echo "saved: $(find "$work/saved" -name '*.mp4' | wc -l) files, $(du -sb "$work/saved" | cut -f1) bytes"
fi
