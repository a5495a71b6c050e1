#!/usr/bin/env bash
# Starts examples/param_server as its header shows: a server and two workers, told their rank
# and name by the environment.
#   usage: param_server_example_test.sh PATH/TO/param_server
set -u
example=$1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pids=()
cleanup() { kill -9 "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

names=(server worker-1 worker-2)
for rank in 0 1 2; do
  TROUPE_RANK=$rank TROUPE_NAME=${names[$rank]} TROUPE_WORLD_SIZE=3 \
    TROUPE_ADDRESS=127.0.0.1:$port timeout 90 "$example" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
pids=()
exit $status
