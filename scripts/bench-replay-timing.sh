#!/usr/bin/env bash
# How closely `rtload run --replay` keeps a recording's send offsets, on a server's own
# clock: records N sessions of scenarios/transcription.toml against `rtload serve`, then
# replays the recording's client side against a Python `websockets` server rtload did not
# write (scripts/replay_stamp_server.py), which stamps every message's arrival. Prints,
# per replayed message, |server arrival − recorded send| (each side's offsets taken from
# the session's first message: the server cannot see the client's open), the same
# against the recording's intended times, and against the replay's own send stamps (the
# wire and the stamping server's own delay), plus the replay's send lateness.
#
#   scripts/bench-replay-timing.sh [N] [--cores C:S] [--bin PATH]
#
# Defaults: N=20 sessions, Poisson arrivals at 5/s (the replay keeps the recorded
# arrival keys; the stamping server handles one handshake at a time, and a message
# queued behind another connection's handshake would be stamped late). Only 127.0.0.1
# is used. Needs a release build and python3 with venv (websockets 16.1 from PyPI the first time, into
# ${XDG_CACHE_HOME:-~/.cache}/rtload-bench/ws-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
parse_bench_flags "$@"
N=${ARGS[0]:-20}
[ -x "$BIN" ] || { echo "build first: cargo build --release (or pass --bin PATH)" >&2; exit 2; }
VENV=${XDG_CACHE_HOME:-$HOME/.cache}/rtload-bench/ws-venv
if ! "$VENV/bin/python" -c 'import websockets' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check websockets==16.1 >&2
fi
work=$(mktemp -d)
server_pid= stamp_pid=
trap 'kill "$server_pid" "$stamp_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
start_server "$BIN" scenarios/transcription.toml "$work/server.log"
"${CLIENT_PIN[@]}" "$BIN" run scenarios/transcription.toml --target "ws://$addr/v1/realtime" \
  --num-prompts "$N" --max-concurrency "$N" --request-rate 5 --record "$work/rec" -q --output-json "$work/rec.json" > /dev/null
SERVER_CPU=$(server_cpu_s)
kill "$server_pid"; server_pid=
"${SERVER_PIN[@]}" "$VENV/bin/python" scripts/replay_stamp_server.py "$work/stamps.json" > "$work/port" &
stamp_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(head -1 "$work/port")
# The stamping server answers no reply the recording expects: a short grace, and the
# run's verdict (failed on missing replies) is not what this measures.
"${CLIENT_PIN[@]}" "$BIN" run --replay "$work/rec" --target "ws://127.0.0.1:$port/v1/realtime" \
  --replay-grace-s 0.2 --record "$work/rec2" -q --output-json "$work/replay.json" > /dev/null || true
kill -TERM "$stamp_pid"; wait "$stamp_pid" || true; stamp_pid=
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); client pinned: ${CLIENT_PIN[*]:-no}; server pinned: ${SERVER_PIN[*]:-no}"
SERVER_CPU=$SERVER_CPU python3 - "$work" <<'PY'
import glob, json, os, sys
sys.path.insert(0, 'scripts')
from resources import server_line
work = sys.argv[1]
server_line(json.load(open(f"{work}/rec.json"))["rtload"], os.environ["SERVER_CPU"],
            "rtload serve during the recording, its own core")
stamps = json.load(open(f"{work}/stamps.json"))

def sessions(d):
    out = []
    for f in sorted(glob.glob(f"{d}/sessions/*.jsonl"), key=lambda p: int(p.rsplit("/", 1)[1].split(".")[0])):
        rows = [json.loads(l) for l in open(f)][1:]
        out.append([(r["t_s"], r.get("intended_s")) for r in rows
                    if r.get("dir") == "out" and r.get("kind") in ("text", "binary")])
    return out

rec, rep = sessions(f"{work}/rec"), sessions(f"{work}/rec2")

def offsets(xs):
    return [x - xs[0] for x in xs]

def errs(conn, ts):
    return [(a - b) * 1e3 for a, b in zip(offsets([c[0] for c in conn]), offsets(ts))]

def centred(es):
    """`es` less the session's median: its one constant (the first message's own
    delay, loopback transit) taken out, what is left being the cadence's error."""
    m = sorted(es)[len(es) // 2]
    return [e - m for e in es]

# The server numbers connections in the order they opened: pair each with the replayed
# session (and so the recorded one) whose message count and offsets it matches best.
free = set(range(len(rep)))
sent, intended, wire, late, c_sent, c_intended, firsts = [], [], [], [], [], [], []
for conn in stamps:
    k = min((k for k in free if len(rep[k]) == len(conn)),
            key=lambda k: sum(abs(e) for e in errs(conn, [t for t, _ in rep[k]])))
    free.discard(k)
    e = errs(conn, [t for t, _ in rec[k]])
    sent += e
    c_sent += centred(e)
    firsts.append(sorted(e)[len(e) // 2])
    sched, floor = [], 0.0
    for t, i in rec[k]:
        floor = max(floor, i if i is not None else t)
        sched.append(floor)
    e = errs(conn, sched)
    intended += e
    c_intended += centred(e)
    wire += errs(conn, [t for t, _ in rep[k]])
    late += [(t - i) * 1e3 for t, i in rep[k] if i is not None]

def q(xs):
    a = sorted(abs(x) for x in xs)
    pick = lambda p: a[min(len(a) - 1, int(p / 100 * len(a)))]
    return f"p50 {pick(50):.3f} / p99 {pick(99):.3f} / max {a[-1]:.3f} ms"

print(f"{len(sent)} replayed messages over {len(stamps)} sessions")
print(f"|server arrival − recorded send offset|:      {q(sent)}")
print(f"|server arrival − recorded intended offset|:  {q(intended)}")
print(f"the same, each session's median taken out:    sent {q(c_sent)}; intended {q(c_intended)}")
print(f"(each session's median, signed: {sorted(round(f, 3) for f in firsts)})")
print(f"|server arrival − the replay's own send|:     {q(wire)}")
print(f"replay send lateness:                          {q(late)}")
PY
