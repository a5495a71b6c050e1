#!/usr/bin/env bash
# Starts a world example as a user would: one process per name given (three without names),
# told its rank (and name) by the environment, rank 0 on a free port of 127.0.0.1. EXAMPLE_ARGS,
# if set, are the example's arguments.
#   usage: world_example_test.sh PATH/TO/example [NAME...]
set -u
example=$1
shift
names=("$@")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pids=()
cleanup() { kill -9 "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

size=${#names[@]}
if [ "$size" -eq 0 ]; then size=3; fi
for rank in $(seq 0 $((size - 1))); do
  name=()
  if [ ${#names[@]} -gt 0 ]; then name=(TROUPE_NAME="${names[$rank]}"); fi
  # shellcheck disable=SC2086 # EXAMPLE_ARGS are words
  env "${name[@]}" TROUPE_RANK=$rank TROUPE_WORLD_SIZE=$size TROUPE_ADDRESS=127.0.0.1:$port \
    timeout 90 "$example" ${EXAMPLE_ARGS:-} &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
pids=()
exit $status
