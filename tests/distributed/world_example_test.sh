#!/usr/bin/env bash
# Starts a world example as a user would: three processes, told their rank (and, if given,
# their name) by the environment, rank 0 on a free port of 127.0.0.1.
#   usage: world_example_test.sh PATH/TO/example [NAME0 NAME1 NAME2]
set -u
example=$1
shift
names=("$@")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pids=()
cleanup() { kill -9 "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

for rank in 0 1 2; do
  name=()
  if [ ${#names[@]} -gt 0 ]; then name=(TROUPE_NAME="${names[$rank]}"); fi
  env "${name[@]}" TROUPE_RANK=$rank TROUPE_WORLD_SIZE=3 TROUPE_ADDRESS=127.0.0.1:$port \
    timeout 90 "$example" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
pids=()
exit $status
