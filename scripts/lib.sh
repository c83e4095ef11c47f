# Shared by the bench scripts: start `rtload serve` on 127.0.0.1 (any free port) in its
# own process and wait until it announces its address.
#
#   start_server BIN CONFIG LOG   → sets server_pid and addr (host:port)
#
# and parse the flags every bench script takes (the rest stay in ARGS):
#   --cores CLIENT:SERVER   pin the client and the server with taskset (CPU lists, e.g. 1:0)
#   --rate R                Poisson arrivals at R sessions/s ([load] request_rate) instead
#                           of starting every session at once
#   --bin PATH              the rtload binary (default target/release/rtload), e.g. an
#                           older build to compare against in the same run
#   --perf FILE             record the client with `perf record -g -o FILE` (then
#                           `perf report -i FILE`); CPU figures include perf's overhead
#   --perf-server FILE      record the server the same way, from when it listens until
#                           the client has finished (its CPU figure includes perf's cost)
#   --floor                 after rtload, run the floor client (examples/floor_duplex.rs,
#                           or floor_video.rs for the video script:
#                           the same bytes from a raw socket, frames built before timing)
#                           on the same server and print rtload's CPU as a ratio of it
#                           (needs `cargo build --release --examples`)

parse_bench_flags() {
  BIN=target/release/rtload RATE= CLIENT_PIN=() SERVER_PIN=() ARGS=() PERF=() FLOOR= PERF_SERVER= perf_server_pid=
  while [ $# -gt 0 ]; do
    case $1 in
      --cores)
        [ $# -ge 2 ] && [[ $2 == *:* ]] || { echo "--cores wants CLIENT:SERVER CPU lists, e.g. --cores 1:0" >&2; exit 2; }
        CLIENT_PIN=(taskset -c "${2%%:*}") SERVER_PIN=(taskset -c "${2#*:}"); shift 2 ;;
      --rate)
        [ $# -ge 2 ] || { echo "--rate wants sessions per second, e.g. --rate 200" >&2; exit 2; }
        RATE=$2; shift 2 ;;
      --bin)
        [ $# -ge 2 ] || { echo "--bin wants a path" >&2; exit 2; }
        BIN=$2; shift 2 ;;
      --perf)
        [ $# -ge 2 ] || { echo "--perf wants an output file" >&2; exit 2; }
        PERF=(perf record -q -g -o "$2" --); shift 2 ;;
      --perf-server)
        [ $# -ge 2 ] || { echo "--perf-server wants an output file" >&2; exit 2; }
        PERF_SERVER=$2; shift 2 ;;
      --floor)
        FLOOR=yes; shift ;;
      *) ARGS+=("$1"); shift ;;
    esac
  done
}

# With --floor, FLOOR becomes the path of the script's floor client (NAME under
# target/release/examples), which must be built.
pick_floor() {
  [ -n "$FLOOR" ] || return 0
  FLOOR=target/release/examples/$1
  [ -x "$FLOOR" ] || { echo "--floor needs: cargo build --release --examples" >&2; exit 2; }
}

# The arrival process in words, for the summary line.
arrivals() {
  if [ -n "$RATE" ]; then echo "Poisson $RATE/s"; else echo "all at once"; fi
}

# The `[load]` lines for the chosen arrival process.
rate_line() {
  if [ -n "$RATE" ]; then echo "request_rate = $RATE"; fi
}

# The server process's CPU so far (user + system seconds, from /proc): read it before the
# server is stopped, after the client has finished, to say whether the server had room.
server_cpu_s() {
  local f
  if [ -n "$perf_server_pid" ] && kill -INT "$perf_server_pid" 2>/dev/null; then
    # until perf has written its file and exited (a zombie counts as exited)
    while grep -qs '^State:[[:space:]]*[^Z]' "/proc/$perf_server_pid/status"; do sleep 0.1; done
  fi
  read -ra f < "/proc/$server_pid/stat" || { echo "?"; return; }
  # fields 14 and 15 (utime, stime) in clock ticks; the comm field has no spaces here
  echo "$(( f[13] + f[14] )) $(getconf CLK_TCK)" | awk '{printf "%.2f", $1 / $2}'
}

# The duplex benchmark's files in DIR: the server (a response every second of input,
# DELTAS audio deltas of DELTA_MS ms each at RTF 0.2, final decision listen, plus any
# EXTRA lines for [duplex]) and the scenario NAME over DIR/ds with N sessions at once
# or at --rate.
#   write_duplex_bench DIR NAME N DELTAS DELTA_MS [EXTRA]
write_duplex_bench() {
  local dir=$1 name=$2 n=$3 deltas=$4 delta_ms=$5 extra=${6:-}
  cat > "$dir/server.toml" <<TOML
workers = 1
[duplex]
respond_every_s = 1.0
audio_deltas = $deltas
delta_ms = $delta_ms
rtf = 0.2
first_response_delay_ms = 100
final_decision = "listen"
$extra
TOML
  cat > "$dir/scenario.toml" <<TOML
name = "$name"
[workload]
kind = "omniinteract"
dataset_path = "ds"
ref_audio = "ds/ref_audio.wav"
output_dir = "out"
[load]
samples = $n
max_concurrency = $n
$(rate_line)
TOML
}

start_server() {
  local bin=$1 config=$2 log=$3
  "${SERVER_PIN[@]}" "$bin" serve --port 0 --config "$config" 2> "$log" &
  server_pid=$!
  for _ in $(seq 100); do
    grep -q "listening on" "$log" 2>/dev/null && break
    sleep 0.1
  done
  addr=$(sed -n 's/.*listening on ws:\/\/\([^ ]*\).*/\1/p' "$log" | head -1)
  [ -n "$addr" ] || { cat "$log" >&2; exit 1; }
  if [ -n "$PERF_SERVER" ]; then
    perf record -q -g -p "$server_pid" -o "$PERF_SERVER" &
    perf_server_pid=$!
  fi
}
