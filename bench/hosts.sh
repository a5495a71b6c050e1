#!/usr/bin/env bash
# Runs bench/hosts on two hosts made of network namespaces (tests/hosts/testbed.sh; as root):
# rank 0 on one, rank 1 on the other, which prints the figures.
#   usage: bench/hosts.sh [PATH/TO/build/bench/hosts] [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
program=${1:-$here/../build/bench/hosts}
rounds=${2:-5}
source "$here/../tests/hosts/testbed.sh"
testbed_up 2
dir=$(mktemp -d)
testbed_files+=("$dir")
port=$((40000 + $$ % 20000))
for i in 0 1; do
  testbed_start "$i" env TROUPE_BENCH_RANK="$i" TROUPE_BENCH_IP="${TESTBED_IP[i]}" \
    TROUPE_ADDRESS="${TESTBED_IP[0]}:$port" TROUPE_BENCH_DIR="$dir" TROUPE_BENCH_ROUNDS="$rounds" \
    "$program"
done
testbed_wait 900
