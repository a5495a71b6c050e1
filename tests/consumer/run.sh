#!/usr/bin/env bash
# Installs the troupe build in $1 into a scratch prefix, then configures, builds and runs the
# consumer project against it: what a user does with find_package(troupe).
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" > /dev/null
cmake -S "$source_dir" -B "$scratch/build" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$scratch/build" > /dev/null
output=$("$scratch/build/consumer")
[ "$output" = "14" ] || { echo "consumer printed '$output', expected 14"; exit 1; }
# No CAF header may reach a user: every installed header must compile without CAF's.
if grep -rl "include <caf/" "$scratch/prefix/include"; then
  echo "installed headers include CAF"; exit 1
fi
echo "consumer built against the installed package and printed $output"
