#!/usr/bin/env bash
# Run two rtload builds side by side, at the same time, through one bench script, so both
# see the same machine: on a shared, noisy VM a before/after pair run one after the other
# can differ by 1.5x from the noise alone; run together, the ratio survives it.
#
#   scripts/bench-ab.sh BIN_A BIN_B ROUNDS SCRIPT [bench args…]
#   scripts/bench-ab.sh /tmp/rtload-old target/release/rtload 3 bench-duplex-sessions.sh 300 10000 --cores 1:0
#
# Each round starts both clients together (each with its own server, pinned as the bench
# args say: with --cores 1:0 both clients share core 1 and both servers core 0) and prints
# one line per build: CPU per live session-second, RSS per session in flight and send
# lateness p99. Both clients loading one core raise both figures: read the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
a=$1 b=$2 rounds=$3 script=scripts/$4
shift 4
[ -x "$a" ] && [ -x "$b" ] && [ -x "$script" ] || { echo "need two rtload binaries and a bench script" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
line() {
  local f=$1
  printf '%s µs/session-s, %s KiB/session, lateness p99 %s ms\n' \
    "$(grep -oE '= [0-9]+ µs CPU' "$f" | grep -oE '[0-9]+' || echo '?')" \
    "$(grep -oE 'RSS per session in flight: [0-9.]+' "$f" | grep -oE '[0-9.]+$' || echo '?')" \
    "$(sed -n 's/^send lateness:.* p99 \([0-9.]*\) ms.*/\1/p' "$f" | head -1)"
}
for i in $(seq "$rounds"); do
  "$script" "$@" --bin "$a" > "$out/a.txt" 2>&1 &
  pa=$!
  "$script" "$@" --bin "$b" > "$out/b.txt" 2>&1 &
  pb=$!
  wait "$pa" "$pb" || { cat "$out/a.txt" "$out/b.txt" >&2; exit 1; }
  echo "round $i  A $(line "$out/a.txt")"
  echo "round $i  B $(line "$out/b.txt")"
done
