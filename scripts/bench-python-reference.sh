#!/usr/bin/env bash
# Run N concurrent OmniInteract duplex sessions with rtload, then with the Python
# reference client itself (vLLM-Omni's `run_omniinteract_case`, PyPI vllm-omni==0.30.0,
# through scripts/pyref_omni.py), against the same reference server in its own process,
# pinned the same way; print each one's CPU per live session-second and per session,
# peak RSS, the ratio python / rtload, and the server's own CPU per live session-second
# while each ran.
#
#   scripts/bench-python-reference.sh [N] [CASE_MS] [--cores C:S] [--rate R] [--bin PATH]
#
# (--cores, --rate, --bin: scripts/lib.sh). The server is the one of
# bench-duplex-sessions.sh (3 audio deltas of 100 ms a second, RTF 0.2, final decision
# listen) and the dataset is synthesized once with `rtload dataset synth --mp4` (the
# reference prepares media from video containers with ffprobe/ffmpeg, before timing,
# as rtload does). The server names its deltas `response.output_audio.delta` /
# `response.output_audio_transcript.delta` (`upstream_event_names`): the only names this
# reference version reads (rtload reads both), so both clients do their full per-delta
# work (decode, playback acks, transcript) on the same bytes.
# Defaults: N=50 sessions of 5 s cases. Only 127.0.0.1 is used; every client run is
# bounded by `timeout`. Needs ffmpeg, python3 with venv, a release build, and PyPI (the
# first time) for the venv: ${XDG_CACHE_HOME:-~/.cache}/rtload-bench/pyref-venv, pinned
# (PYREF_WHEEL=path/to/vllm_omni-0.30.0-py3-none-any.whl installs that wheel instead of
# fetching it).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
parse_bench_flags "$@"
[ -z "$FLOOR" ] && [ ${#PERF[@]} -eq 0 ] || { echo "--floor and --perf are not supported here" >&2; exit 2; }
pos=("${ARGS[@]}")

N=${pos[0]:-50}
CASE_MS=${pos[1]:-5000}
[[ $N =~ ^[1-9][0-9]*$ && $CASE_MS =~ ^[1-9][0-9]*$ ]] || { echo "N and CASE_MS are positive integers" >&2; exit 2; }
[ -x "$BIN" ] || { echo "build first: cargo build --release (or pass --bin PATH)" >&2; exit 2; }
command -v ffmpeg > /dev/null && command -v ffprobe > /dev/null || { echo "needs ffmpeg and ffprobe: apt-get install ffmpeg" >&2; exit 2; }

# The reference client's venv: vllm-omni without its (server-side, GPU) dependencies, plus
# the few packages its client path imports. Rebuilt when the pinned set changes.
PINS=(websockets==16.1 pybase64==1.5.1 prettytable==3.18.0 wcwidth==0.9.4)
VENV=${XDG_CACHE_HOME:-$HOME/.cache}/rtload-bench/pyref-venv
WHEEL=${PYREF_WHEEL:-vllm-omni==0.30.0}
spec="vllm-omni==0.30.0 ${PINS[*]}"
if [ "$(cat "$VENV/.rtload-pyref-spec" 2>/dev/null)" != "$spec" ]; then
  echo "creating $VENV ($spec)" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --only-binary :all: "$WHEEL" "${PINS[@]}" >&2
  "$VENV/bin/python" -c 'import importlib.metadata as m; assert m.version("vllm-omni") == "0.30.0"'
  echo "$spec" > "$VENV/.rtload-pyref-spec"
fi

work=$(mktemp -d)
server_pid=
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

per_subset=$(( (N + 2) / 3 ))
"$BIN" dataset synth "$work/ds" --mp4 --cases-per-subset "$per_subset" --duration-ms "$CASE_MS" > /dev/null

write_duplex_bench "$work" bench-python-reference "$N" 3 100 "upstream_event_names = true"

start_server "$BIN" "$work/server.toml" "$work/server.log"
port=${addr##*:}
[ "${addr%:*}" = 127.0.0.1 ] || { echo "server is not on 127.0.0.1: $addr" >&2; exit 1; }

# Media preparation (ffmpeg, one case after another) comes before each client's timing;
# the bound leaves room for it.
bound=$(( 1200 + N * 2 + CASE_MS / 1000 * 4 ))

timeout "$bound" "${CLIENT_PIN[@]}" "$BIN" run "$work/scenario.toml" --target "ws://$addr" \
  --output-json "$work/out.json" -q > "$work/report.txt" || { echo "rtload run failed (exit $?)" >&2; tail -20 "$work/report.txt" >&2; }
SERVER_CPU=$(server_cpu_s)

timeout "$bound" "${CLIENT_PIN[@]}" "$VENV/bin/python" scripts/pyref_omni.py "127.0.0.1:$port" "$work/ds" "$N" \
  ${RATE:+--rate "$RATE"} --out "$work/py-out" > "$work/py.json" 2> "$work/py.err" \
  || { echo "python reference failed (exit $?)" >&2; tail -20 "$work/py.err" >&2; }
SERVER_CPU2=$(server_cpu_s)

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); client pinned: ${CLIENT_PIN[*]:-no}; server pinned: ${SERVER_PIN[*]:-no}; arrivals: $(arrivals)"
echo "sessions=$N case=$(awk "BEGIN{printf \"%.1f\", $CASE_MS/1000}")s concurrency=$N server audio: 3 deltas of 100 ms a second"
grep -h "generator-bound" "$work/report.txt" || true
SERVER_CPU=$SERVER_CPU SERVER_CPU2=$SERVER_CPU2 python3 - "$work" "$N" <<'PY'
import sys; sys.path.insert(0, 'scripts')
from resources import resources, server_line, phases
import json, os
work, n = sys.argv[1], int(sys.argv[2])
try:
    text = open(os.path.join(work, "out.json")).read()
except OSError:
    sys.exit("no rtload result")
for tok in ("-Infinity", "Infinity", "NaN"):
    text = text.replace(tok, "null")
d = json.loads(text)
rt = d["rtload"]
r = rt.get("resources") or {}
print(f"rtload: completed {d['completed']} failed {d['failed']}")
resources(rt)
phases(rt)
server_line(rt, os.environ["SERVER_CPU"])
r_sess = r["cpu_s"] / n * 1e6 if r.get("cpu_s") is not None else None
if r_sess is not None:
    print(f"rtload: {r_sess:.0f} µs CPU per session; peak RSS per session {r['peak_rss_mib'] * 1024 / n:.1f} KiB")
lags = sorted(s["pacing_max_lag_ms"] for s in rt["samples"] if s.get("pacing_max_lag_ms") is not None)
if lags:
    print(f"rtload: input pacing lag (per-session max): p50 {lags[len(lags) // 2]:.3f} ms, max {lags[-1]:.3f} ms")
name = "python reference (vllm-omni 0.30.0, unmodified)"
try:
    p = json.loads(open(os.path.join(work, "py.json")).read().strip().splitlines()[-1])
except (OSError, IndexError, ValueError):
    sys.exit(f"{name}: no result (see stderr above)")
print(f"{name}: completed {p['completed']} failed {p['failed']}"
      + (f" (first failure: {p['first_failure']})" if p["first_failure"] else ""))
print(f"  {p['cpu_s']:.2f} s CPU (user {p['user_s']:.2f} + sys {p['sys_s']:.2f}) over {p['live_session_s']:.0f} session-s"
      f" = {p['cpu_us_per_session_s']:.0f} µs CPU per live session-second, {p['cpu_us_per_session']:.0f} µs per session;"
      f" {p['cpu_core_share'] * 100:.0f}% of one core over {p['wall_s']:.1f} s wall")
print(f"  peak RSS {p['peak_rss_mib']:.1f} MiB = {p['peak_rss_mib'] * 1024 / n:.1f} KiB per session; RSS per session in flight"
      f" {p['rss_per_session_kib']:.1f} KiB ({p['rss_at_start_mib']:.1f} MiB at the live start, prepared media included,"
      f" {p['live_rss_peak_mib']:.1f} MiB sampled peak, {p['peak_sessions_in_flight']} in flight)")
try:
    # The server's CPU between the end of rtload's run and the end of the reference's.
    py_server = float(os.environ["SERVER_CPU2"]) - float(os.environ["SERVER_CPU"])
    print(f"  server (reference, its own core) while it ran: cpu {py_server:.2f} s ="
          f" {py_server / p['live_session_s'] * 1e6:.0f} µs per live session-second")
except (ValueError, ZeroDivisionError):
    pass
lag = p["pacing_max_lag_ms"]
if lag["p50"] is not None:
    print(f"  input pacing lag (per-session max): p50 {lag['p50']:.3f} ms, max {lag['max']:.3f} ms;"
          f" {p['responses']} responses, {p['audio_bytes_kept'] / 1e6:.2f} MB audio kept;"
          f" artifacts published after timing: {p['post_cpu_s']:.2f} s CPU")
if r.get("cpu_us_per_session_s") and p.get("cpu_us_per_session_s") and r_sess:
    print(f"python / rtload: {p['cpu_us_per_session_s'] / r['cpu_us_per_session_s']:.2f}× CPU per live session-second,"
          f" {p['cpu_us_per_session'] / r_sess:.2f}× per session;"
          f" peak RSS {p['peak_rss_mib'] / r['peak_rss_mib']:.2f}×")
PY
