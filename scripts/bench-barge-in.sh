#!/usr/bin/env bash
# Barge-in against a known answer: N OmniInteract sessions each interrupt the reply of
# `rtload serve` set to react in REACTION_MS, and this prints what the sessions measured —
# stop latency from the onset (stop_ms), the server's part of it (stop_ms minus the
# receipt of its speech_started), the answer's latency — as p50 / p99 / max over the
# sessions, from the run's JSON, and the server's own CPU per live session-second.
#
#   scripts/bench-barge-in.sh [N] [REACTION_MS] [--cores C:S] [--rate R] [--bin PATH]
#
# (--cores, --rate, --bin: scripts/lib.sh). Cases are 2 s synthesized speech; the reply
# is 4 s of audio sent at RTF 0.5, interrupted 200–600 ms into it with 600 ms of speech.
# Defaults: N=30 sessions, REACTION_MS=150. Only 127.0.0.1 is used. Needs a release build
# and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
parse_bench_flags "$@"
pos=("${ARGS[@]}")
N=${pos[0]:-30}
REACTION=${pos[1]:-150}
[[ $N =~ ^[1-9][0-9]*$ && $REACTION =~ ^[0-9]+$ ]] || { echo "N is a positive integer, REACTION_MS an integer" >&2; exit 2; }
[ -x "$BIN" ] || { echo "build first: cargo build --release (or pass --bin PATH)" >&2; exit 2; }

work=$(mktemp -d)
server_pid=
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

per_subset=$(( (N + 2) / 3 ))
"$BIN" dataset synth "$work/ds" --cases-per-subset "$per_subset" --duration-ms 2000 > /dev/null
cat > "$work/server.toml" <<TOML
[duplex]
respond_every_s = 2.2
audio_deltas = 20
delta_ms = 200
rtf = 0.5
first_response_delay_ms = 50
final_decision = "listen"
[duplex.vad]
barge_in_reaction_ms = $REACTION
TOML
start_server "$BIN" "$work/server.toml" "$work/server.log"
cat > "$work/run.toml" <<TOML
name = "bench-barge-in"
[target]
url = "ws://$addr"
[workload]
kind = "omniinteract"
dataset_path = "$work/ds/data"
ref_audio = "$work/ds/ref_audio.wav"
output_dir = "$work/out"
timeout_s = 30.0
barge_in_after_ms = 200
barge_in_after_max_ms = 600
barge_in_speech_ms = 600
[load]
samples = $N
max_concurrency = $N
$(rate_line)
[output]
json = "$work/result.json"
TOML
"${CLIENT_PIN[@]}" "$BIN" run --quiet "$work/run.toml" > /dev/null
SERVER_CPU=$(server_cpu_s)
SERVER_CPU=$SERVER_CPU python3 - "$work/result.json" "$REACTION" <<'PY'
import json, os, sys
sys.path.insert(0, 'scripts')
from resources import server_line
doc = json.load(open(sys.argv[1]))
server_line(doc["rtload"], os.environ["SERVER_CPU"])
rows = [r["barge_in"] for r in doc["rtload"]["samples"] if r.get("barge_in")]
def q(xs, p):
    xs = sorted(xs); k = (len(xs) - 1) * p; i = int(k)
    return xs[i] if i + 1 >= len(xs) else xs[i] + (xs[i + 1] - xs[i]) * (k - i)
def line(name, xs):
    if xs:
        print(f"{name:<34} n={len(xs):<4} p50={q(xs, .5):8.2f}  p99={q(xs, .99):8.2f}  max={max(xs):8.2f} ms")
    else:
        print(f"{name:<34} none")
stopped = [r for r in rows if r.get("stop_ms") is not None]
print(f"sessions interrupting: {len(rows)}, replies stopped: {len(stopped)} "
      f"({', '.join(sorted({str(r['stop_by']) for r in stopped}))}); reaction {sys.argv[2]} ms")
line("stop_ms", [r["stop_ms"] for r in stopped])
line("stop_ms - speech_started_ms", [r["stop_ms"] - r["speech_started_ms"] for r in stopped if r.get("speech_started_ms") is not None])
line("speech_started_ms", [r["speech_started_ms"] for r in rows if r.get("speech_started_ms") is not None])
line("answer_ms", [r["answer_ms"] for r in rows if r.get("answer_ms") is not None])
line("heard_after_onset_ms", [r["heard_after_onset_ms"] for r in rows if r.get("heard_after_onset_ms") is not None])
PY
