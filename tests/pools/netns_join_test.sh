#!/usr/bin/env bash
# A node in another network namespace joins a pool across a veth pair: the join crosses a real
# interface, not loopback. Needs root (ip netns); skipped (77) when it cannot set that up.
#   usage: netns_join_test.sh PATH/TO/remote_workers
set -u
example=$1
ns=troupe_ns_$$
host_if=tp$$ node_if=tn$$
host_ip=10.251.$(($$ % 250)).1 node_ip=10.251.$(($$ % 250)).2
port=$((40000 + $$ % 20000))

out=$(mktemp)
certs=$(mktemp -d)
cleanup() {
  ip netns del "$ns" 2>/dev/null
  ip link del "$host_if" 2>/dev/null
  rm -rf "$out" "$certs"
}
trap cleanup EXIT

if [[ $(id -u) != 0 ]] || ! command -v ip >/dev/null; then
  echo "skipped: needs root and iproute2"
  exit 77
fi
if ! { ip netns add "$ns" &&
       ip link add "$host_if" type veth peer name "$node_if" &&
       ip link set "$node_if" netns "$ns" &&
       ip addr add "$host_ip/24" dev "$host_if" && ip link set "$host_if" up &&
       ip netns exec "$ns" ip addr add "$node_ip/24" dev "$node_if" &&
       ip netns exec "$ns" ip link set "$node_if" up; } 2>&1; then
  echo "skipped: cannot create a network namespace here"
  exit 77
fi

# Beyond loopback, over TLS, as across hosts.
"$(dirname "$0")/../../scripts/make-certs.sh" "$certs" "pool=$host_ip" node
export TROUPE_SECRET=netns-$$
timeout 60 "$example" --listen "$host_ip:$port" --nodes 1 --tls-dir "$certs" --tls-name pool \
  > "$out" 2>&1 &
pool=$!
sleep 0.5
TROUPE_TLS_CERT=$certs/node.pem TROUPE_TLS_KEY=$certs/node.key TROUPE_TLS_CA=$certs/ca.pem \
  timeout 60 ip netns exec "$ns" "$example" --troupe-join "$host_ip:$port"
node_status=$?
wait "$pool"
pool_status=$?
cat "$out"
# The pool listens on the veth address only, and the example fails unless the node ran work.
[[ $node_status == 0 && $pool_status == 0 ]] || { echo "node $node_status, pool $pool_status"; exit 1; }
