# Shared by the bench scripts: start `rtload serve` on 127.0.0.1 (any free port) in its
# own process and wait until it announces its address.
#
#   start_server BIN CONFIG LOG   → sets server_pid and addr (host:port)

start_server() {
  local bin=$1 config=$2 log=$3
  "$bin" serve --port 0 --config "$config" 2> "$log" &
  server_pid=$!
  for _ in $(seq 100); do
    grep -q "listening on" "$log" 2>/dev/null && break
    sleep 0.1
  done
  addr=$(sed -n 's/.*listening on ws:\/\/\([^ ]*\).*/\1/p' "$log" | head -1)
  [ -n "$addr" ] || { cat "$log" >&2; exit 1; }
}
