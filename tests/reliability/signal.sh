# tests/reliability/signal.sh - signalling a background `cowsim run` at a
# chosen point and timing its exit, for the interrupt tests; sourced after
# tests/tap.sh.
#
#   "$cowsim" run T --csv "$csv" ... &
#   pid=$!
#   await_rows "$csv" 20 has_lines 2     # the run has written its first row
#   signal_and_time "$pid" INT           # sets $status and $ms
#
# Until the run ends its rows go to CSV.tmp-XXXXXX (results/output_file.c),
# so the point is read from that file.

# tmp_csv CSV: the run's temporary file, or nothing yet.
tmp_csv() { ls "$1".tmp-* 2>/dev/null | head -n 1; }

# has_lines N FILE: FILE has at least N lines (the header counts).
has_lines() { [ "$(wc -l <"$2")" -ge "$1" ]; }

# await_rows CSV SECONDS TEST ARGS...: polls every 20 ms, for at most
# SECONDS, until `TEST ARGS... TMPFILE` holds for the run's temporary file.
await_rows() {
  local csv=$1 seconds=$2 tmp k
  shift 2
  for k in $(seq $((seconds * 50))); do
    tmp=$(tmp_csv "$csv")
    [ -n "$tmp" ] && "$@" "$tmp" && return 0
    sleep 0.02
  done
  return 1
}

# signal_and_time PID SIG: sends SIG, waits for PID; $status is its exit
# status and $ms the milliseconds from the signal to the exit.
signal_and_time() {
  local start
  start=$(date +%s%N)
  kill -s "$2" "$1"
  wait "$1" 2>/dev/null
  status=$?
  ms=$((($(date +%s%N) - start) / 1000000))
}
