#!/usr/bin/env bash
# Run two rtload builds through one bench script in the same sitting, so both see the same
# machine: on a shared, noisy VM a before/after pair run minutes apart can differ by 1.5x
# from the noise alone.
#
#   scripts/bench-ab.sh [--alternate] BIN_A BIN_B ROUNDS SCRIPT [bench args…]
#   scripts/bench-ab.sh /tmp/rtload-old target/release/rtload 3 bench-duplex-sessions.sh 300 10000 --cores 1:0
#
# By default each round starts both clients together (each with its own server, pinned as
# the bench args say: with --cores 1:0 both clients share core 1 and both servers core 0):
# both loading one core raise both figures, so read the ratio. With --alternate each
# round runs them one after the other, alone on their cores (A first in odd rounds, B
# first in even ones), and the end adds each build's median: the figures are then what a
# lone run costs, and CPU per session-second shows differences the shared core can hide.
# Each round prints one line per build: CPU per live session-second, RSS per session in
# flight, send lateness p99, its reference server's CPU per live session-second, and the
# build's own setup and publication CPU per session and CPU through publication per live
# session-second (`rtload.phase_cpu`; blank for a build that does not report them).
set -euo pipefail
cd "$(dirname "$0")/.."
alternate=
[ "${1:-}" = --alternate ] && { alternate=1; shift; }
[ $# -ge 4 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
a=$1 b=$2 rounds=$3 script=scripts/$4
shift 4
[ -x "$a" ] && [ -x "$b" ] && [ -x "$script" ] || { echo "need two rtload binaries and a bench script" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
line() {
  local f=$1
  printf '%s µs/session-s, %s KiB/session, lateness p99 %s ms, its server %s µs/session-s; setup %s, publication %s µs/session, through publication %s µs/session-s\n' \
    "$(grep -oE '= [0-9]+ µs CPU' "$f" | grep -oE '[0-9]+' || echo '?')" \
    "$(grep -oE 'RSS per session in flight: [0-9.]+' "$f" | grep -oE '[0-9.]+$' || echo '?')" \
    "$(sed -n 's/^send lateness:.* p99 \([0-9.]*\) ms.*/\1/p' "$f" | head -1)" \
    "$(sed -n 's/^server (reference.* = \([0-9]*\) µs per live session-second.*/\1/p' "$f" | head -1)" \
    "$(sed -n 's/^rtload.s own count per phase:.* (\([0-9?]*\) µs per session: connect.*/\1/p' "$f" | head -1)" \
    "$(sed -n 's/^rtload.s own count per phase:.*publication [0-9.?]* s (\([0-9?]*\) µs per session)$/\1/p' "$f" | head -1)" \
    "$(sed -n 's/^rtload.s own count through publication:.* = \([0-9?]*\) µs per live.*/\1/p' "$f" | head -1)"
}
cpu() { grep -oE '= [0-9]+ µs CPU' "$1" | grep -oE '[0-9]+' || true; }
median() { sort -n | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "?"}'; }
: > "$out/a.cpu"
: > "$out/b.cpu"
for i in $(seq "$rounds"); do
  if [ -n "$alternate" ]; then
    if [ $((i % 2)) = 1 ]; then order="a b"; else order="b a"; fi
    for w in $order; do
      if [ "$w" = a ]; then bin=$a; else bin=$b; fi
      "$script" "$@" --bin "$bin" > "$out/$w.txt" 2>&1 || { cat "$out/$w.txt" >&2; exit 1; }
    done
  else
    "$script" "$@" --bin "$a" > "$out/a.txt" 2>&1 &
    pa=$!
    "$script" "$@" --bin "$b" > "$out/b.txt" 2>&1 &
    pb=$!
    wait "$pa" "$pb" || { cat "$out/a.txt" "$out/b.txt" >&2; exit 1; }
  fi
  echo "round $i  A $(line "$out/a.txt")"
  echo "round $i  B $(line "$out/b.txt")"
  cpu "$out/a.txt" >> "$out/a.cpu"
  cpu "$out/b.txt" >> "$out/b.cpu"
done
if [ -n "$alternate" ]; then
  echo "median   A $(median < "$out/a.cpu") µs/session-s, B $(median < "$out/b.cpu") µs/session-s"
fi
