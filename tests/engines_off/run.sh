#!/usr/bin/env bash
# Configures the troupe source in $1 with every optional engine off (gloo, MPI, HDF5, ONNX),
# builds it all, and runs that build's tests: those of staged and the assigner (built from their
# engine-less files there), what a missing engine says (test_engines_off), the install
# consumers, and every other binary that makes nothing in /dev/shm. Those that do (queues,
# process pools, worlds, servers, security) are the same programs the main suite runs beside
# this one, and would race its checks of /dev/shm.
set -euo pipefail
source_dir=$1
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cmake -S "$source_dir" -B "$build" -G Ninja -DTROUPE_BUILD_BENCH=OFF \
  -DTROUPE_WITH_GLOO=OFF -DTROUPE_WITH_MPI=OFF -DTROUPE_WITH_HDF5=OFF -DTROUPE_WITH_ONNX=OFF \
  > "$build/configure.log" || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" > "$build/build.log" 2>&1 || { tail -n 60 "$build/build.log"; exit 1; }
for absent in troupe_collectives troupe_graph_distributed test_collectives staged_fft; do
  if ninja -C "$build" -t query "$absent" > /dev/null 2>&1; then
    echo "$absent is built with every engine off"; exit 1
  fi
done
ctest --test-dir "$build" --output-on-failure -j2 \
  -L 'test_(actors|pools|inbatch|graph|graph_memory|staged|assigner|assigner_memory|engines_off)$|install'
