#!/usr/bin/env bash
# Three hosts made of network namespaces on one bridge, each with private addresses that exist
# only inside them and an /etc/hosts that maps the machine's name to 127.0.1.1, as Debian does:
# a world over TLS forms across them and a gloo group all-reduces 1 MiB. Every member's host
# name resolves to a loopback address, so gloo must advertise the address the others reach it
# at. Needs root with CAP_NET_ADMIN; says so and exits 77 (skipped) elsewhere.
#   usage: gloo_across_hosts_test.sh PATH/TO/test_distributed PATH/TO/make-certs.sh
set -u
program=$1
make_certs=$2
tag=tr$$
subnet=10.252.$(($$ % 250))
port=$((40000 + $$ % 20000))
bridge=br$tag
certs=$(mktemp -d)
pids=()
shm_before=$(ls /dev/shm)

cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
  wait 2>/dev/null
  for i in 0 1 2; do
    ip netns del "${tag}h$i" 2>/dev/null
    rm -rf "/etc/netns/${tag}h$i"
  done
  ip link del "$bridge" 2>/dev/null
  rm -rf "$certs"
  # A member killed by the timeout leaves its inboxes; nothing else makes queues meanwhile (the
  # test holds ctest's shm lock).
  for entry in $(ls /dev/shm); do
    [[ $entry == troupe.* ]] && ! grep -qxF "$entry" <<<"$shm_before" && rm -f "/dev/shm/$entry"
  done
}
trap cleanup EXIT

if [[ $(id -u) != 0 ]] || ! command -v ip >/dev/null; then
  echo "skipped: needs root with CAP_NET_ADMIN and iproute2 (ip netns)"
  exit 77
fi
if ! ip link add "$bridge" type bridge 2>/dev/null || ! ip link set "$bridge" up; then
  echo "skipped: cannot make a bridge here (CAP_NET_ADMIN)"
  exit 77
fi
for i in 0 1 2; do
  ns=${tag}h$i
  ip netns add "$ns" &&
    ip link add "${tag}v$i" type veth peer name "${tag}p$i" &&
    ip link set "${tag}p$i" netns "$ns" &&
    ip link set "${tag}v$i" master "$bridge" && ip link set "${tag}v$i" up &&
    ip netns exec "$ns" ip addr add "$subnet.$((i + 1))/24" dev "${tag}p$i" &&
    ip netns exec "$ns" ip link set "${tag}p$i" up &&
    ip netns exec "$ns" ip link set lo up || { echo "skipped: cannot make host $i"; exit 77; }
  mkdir -p "/etc/netns/$ns"
  printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$(hostname)" > "/etc/netns/$ns/hosts"
done

"$make_certs" "$certs" "0=$subnet.1" 1 2 || exit 1
for i in 0 1 2; do
  ip netns exec "${tag}h$i" env TROUPE_TEST_ROLE=host_member TROUPE_RANK=$i TROUPE_NAME=$i \
    TROUPE_WORLD_SIZE=3 TROUPE_ADDRESS="$subnet.1:$port" TROUPE_TEST_CERTS="$certs" \
    timeout 60 "$program" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
pids=()
[[ $status == 0 ]] && echo "3 hosts: formed, all-reduced" || echo "a member failed"
exit $status
