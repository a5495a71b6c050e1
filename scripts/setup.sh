#!/usr/bin/env bash
# Installs every Debian package troupe's build, tests and benchmarks need.
# Idempotent: when everything is present it only checks and returns.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  clang-format # the tree's style, checked by the clang_format test
  libcaf-dev libssl-dev openssl
  libcereal-dev
  xtensor-dev libxsimd-dev
  libboost-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev
  nlohmann-json3-dev
  libcli11-dev
  libspdlog-dev
  libtbb-dev
  libgloo-dev
  libopenmpi-dev openmpi-bin
  libhdf5-dev
  libonnx-dev libprotobuf-dev
  python3
  etcd-server etcd-client # the world's store (world_options::store) and its tests' clusters
  iproute2 # ip netns, ip link, tc: the hosts tests' test bed (tests/hosts/testbed.sh)
  doxygen graphviz # the API reference (cmake --build build --target docs; test docs_reference)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
