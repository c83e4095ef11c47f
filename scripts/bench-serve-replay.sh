#!/usr/bin/env bash
# How exactly `rtload serve --replay` answers as the recorded server did: records N
# sessions (one at a time, so connection order is session order, which the replay's
# round-robin follows) of scenarios/transcription.toml and scenarios/openai-realtime.toml
# against `rtload serve`, serves each recording with `rtload serve --replay`, runs the same
# scenario against it, and prints per session replayed − recorded for TTFT and
# finalization (transcription) and first audio and response time (OpenAI-Realtime).
#
#   scripts/bench-serve-replay.sh [N] [--cores C:S] [--bin PATH]
#
# Defaults: N=8. Only 127.0.0.1 is used. Needs a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
parse_bench_flags "$@"
N=${ARGS[0]:-8}
[ -x "$BIN" ] || { echo "build first: cargo build --release (or pass --bin PATH)" >&2; exit 2; }
work=$(mktemp -d)
server_pid=
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
one() {
  local name=$1 sc=scenarios/$1
  start_server "$BIN" "$sc" "$work/$name.server.log"
  "${CLIENT_PIN[@]}" "$BIN" run "$sc" --target "ws://$addr/v1/realtime" --num-prompts "$N" \
    --max-concurrency 1 --record "$work/$name.rec" -q --output-json "$work/$name.rec.json" > /dev/null
  server_cpu_s > "$work/$name.rec.cpu"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  "${SERVER_PIN[@]}" "$BIN" serve --port 0 --replay "$work/$name.rec" 2> "$work/$name.replay.log" &
  server_pid=$!
  for _ in $(seq 100); do grep -q "listening on" "$work/$name.replay.log" 2>/dev/null && break; sleep 0.1; done
  addr=$(sed -n 's/.*listening on ws:\/\/\([^ ]*\).*/\1/p' "$work/$name.replay.log" | head -1)
  [ -n "$addr" ] || { cat "$work/$name.replay.log" >&2; exit 1; }
  "${CLIENT_PIN[@]}" "$BIN" run "$sc" --target "ws://$addr/v1/realtime" --num-prompts "$N" \
    --max-concurrency 1 -q --output-json "$work/$name.replayed.json" > /dev/null
  server_cpu_s > "$work/$name.replayed.cpu"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
}
one transcription.toml
one openai-realtime.toml
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); client pinned: ${CLIENT_PIN[*]:-no}; server pinned: ${SERVER_PIN[*]:-no}"
python3 - "$work" <<'PY'
import json, sys
sys.path.insert(0, 'scripts')
from resources import server_line
work = sys.argv[1]

for name in ("transcription.toml", "openai-realtime.toml"):
    for run, what in (("rec", "rtload serve, recording"), ("replayed", "rtload serve --replay")):
        server_line(json.load(open(f"{work}/{name}.{run}.json"))["rtload"],
                    open(f"{work}/{name}.{run}.cpu").read().strip(), f"{name}, {what}")

def rows(doc, key, at, metric):
    out = {}
    for r in doc[key]:
        h = r
        for k in at:
            h = h[k]
        v = h[metric]
        out[r["idx"]] = v if isinstance(v, list) else [v]
    return out

for name, key, at, metrics in [("transcription.toml", "files", [], ["ttft_ms", "finalization_ms"]),
                               ("openai-realtime.toml", "sessions", ["values"], ["first_audio_ms", "response_ms"])]:
    a = json.load(open(f"{work}/{name}.rec.json"))
    b = json.load(open(f"{work}/{name}.replayed.json"))
    for m in metrics:
        ra, rb = rows(a, key, at, m), rows(b, key, at, m)
        pairs = [(i, j, y - x) for i in ra for j, (x, y) in enumerate(zip(ra[i], rb.get(i, []))) if x is not None and y is not None]
        d = sorted(p[2] for p in pairs)
        far = [f"session {i} value {j}: {e:+.3f}" for i, j, e in pairs if abs(e) > 2.0]
        ad = sorted(abs(x) for x in d)
        print(f"{name} {m}: {len(d)} values, replayed − recorded median {d[len(d) // 2]:+.3f} ms, "
              f"|diff| p50 {ad[len(ad) // 2]:.3f} / max {ad[-1]:.3f} ms; "
              f"within 2 ms: {sum(x <= 2.0 for x in ad)} of {len(ad)}" + (f" (beyond: {', '.join(far)})" if far else ""))
PY
