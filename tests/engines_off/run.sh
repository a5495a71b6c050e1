#!/usr/bin/env bash
# Configures the troupe source in $1 with every optional engine off (gloo, MPI, HDF5, ONNX),
# builds it all, and runs the tests that build has. Only the modules an engine touches are built
# from other sources there (collectives and graph_distributed are left out, staged and the
# assigner take their engine-less files); the others' tests are the same programs the main
# suite runs, so here run those of staged and the assigner, what a missing engine says
# (test_engines_off), the examples that remain, and the install consumers.
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
  -L 'test_staged$|test_assigner$|test_engines_off|install'
