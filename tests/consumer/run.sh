#!/usr/bin/env bash
# Installs the troupe build in $1 into a scratch prefix, then configures, builds and runs two
# user projects against it, as a user does with find_package(troupe): one linking troupe::troupe,
# one asking for the pools component alone, whose configure must look up and whose link line must
# name none of the optional engines (gloo, MPI, HDF5, ONNX and its protobuf).
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" > /dev/null

build() { # <project folder> <build folder>
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release \
    > /dev/null
  cmake --build "$2" > /dev/null
}

build "$source_dir" "$scratch/all"
output=$("$scratch/all/consumer")
[ "$output" = "14" ] || { echo "consumer printed '$output', expected 14"; exit 1; }

build "$source_dir/pools_only" "$scratch/pools"
output=$("$scratch/pools/pools_consumer")
[ "$output" = "9" ] || { echo "pools_consumer printed '$output', expected 9"; exit 1; }
engines='gloo|mpi|hdf5|onnx|protobuf'
link_line=$(ninja -C "$scratch/pools" -t commands pools_consumer | tail -n 1)
if grep -Eio "[^ ]*($engines)[^ ]*" <<< "$link_line"; then
  echo "the pools-only consumer links an engine: $link_line"; exit 1
fi
if grep -Ei "^($engines|__pkg_config_checked_hdf5)[^:]*:" "$scratch/pools/CMakeCache.txt"; then
  echo "find_package(troupe COMPONENTS pools) looked up an engine (above, from its cache)"; exit 1
fi
# Asking for a component this troupe does not have fails the configure, naming it.
mkdir -p "$scratch/bad"
cat > "$scratch/bad/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(bad CXX)
find_package(troupe REQUIRED COMPONENTS pools no_such_component)
CMAKE
if cmake -S "$scratch/bad" -B "$scratch/bad/build" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
    > "$scratch/bad.log" 2>&1 || ! grep -q "no component 'no_such_component'" "$scratch/bad.log"; then
  echo "find_package(troupe COMPONENTS no_such_component) did not fail naming it:"
  cat "$scratch/bad.log"; exit 1
fi

# No CAF header may reach a user: every installed header must compile without CAF's.
if grep -rl "include <caf/" "$scratch/prefix/include"; then
  echo "installed headers include CAF"; exit 1
fi
echo "both consumers built against the installed package; the pools-only one links no engine"
