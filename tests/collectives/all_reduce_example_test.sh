#!/usr/bin/env bash
# Runs examples/all_reduce as its header shows: under mpirun, 3 ranks, on each backend (all
# traffic on loopback: rank 0 listens on a free port of 127.0.0.1, MPI's TCP stays on lo).
#   usage: all_reduce_example_test.sh MPIRUN PATH/TO/all_reduce
set -u
mpirun=$1
example=$2
status=0
for backend in gloo mpi; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if ! timeout 120 "$mpirun" --allow-run-as-root --oversubscribe --mca oob_tcp_if_include lo \
      --mca btl_tcp_if_include lo -x TROUPE_ADDRESS=127.0.0.1:$port -np 3 \
      "$example" --backend=$backend; then
    echo "all_reduce failed on $backend"
    status=1
  fi
done
exit $status
