#!/usr/bin/env bash
# One case of the hosts tests: three hosts made of network namespaces (testbed.sh; four for
# world_join), a member of host_roles on each (or a pool and two nodes), and the faults the case
# makes.
#   usage: host_case.sh PATH/TO/test_hosts PATH/TO/make-certs.sh CASE
#   CASE: world_plain world_tls world_join gloo servers graph pool_nodes pool_node_returns
#         cut_call cut_rejoin cut_all_reduce slow_link store_partition store_world
#   or:    host_case.sh PATH/TO/test_collectives_mpi PATH/TO/make-certs.sh mpi PATH/TO/mpirun
set -u
program=$1
make_certs=$2
case_name=$3
mpiexec=${4:-}
source "$(dirname "$0")/testbed.sh"
case $case_name in
world_join) testbed_up 4 ;;
store_partition | store_world)
  command -v etcd >/dev/null || { echo "etcd is not installed (scripts/setup.sh installs etcd-server)"; exit 77; }
  if [[ $case_name == store_partition ]]; then testbed_up 5; else testbed_up 4; fi
  ;;
*) testbed_up 3 ;;
esac

dir=$(mktemp -d)
testbed_files+=("$dir")
port=$((40000 + $$ % 20000))
"$make_certs" "$dir/certs" "0=${TESTBED_IP[0]}" "pool=${TESTBED_IP[0]}" 1 2 3 >/dev/null || exit 1

# Member $1 of the world playing role $2; more environment after.
member() {
  local rank=$1 role=$2
  shift 2
  testbed_start "$rank" env TROUPE_TEST_ROLE="$role" TROUPE_RANK="$rank" TROUPE_NAME="$rank" \
    TROUPE_WORLD_SIZE=3 TROUPE_ADDRESS="${TESTBED_IP[0]}:$port" TROUPE_TEST_DIR="$dir" "$@" \
    "$program"
}
tls_of() {
  echo "TROUPE_TLS_CERT=$dir/certs/$1.pem TROUPE_TLS_KEY=$dir/certs/$1.key" \
    "TROUPE_TLS_CA=$dir/certs/ca.pem"
}
members() { # role, tls or plain
  local i
  for i in 0 1 2; do
    if [[ $2 == tls ]]; then member "$i" "$1" $(tls_of "$i"); else member "$i" "$1"; fi
  done
}
# etcd servers on hosts $@ as one cluster (client port 2379, peer port 2380 on each host's
# address), their data on tmpfs; they end with the test bed (every process of its namespaces).
# etcd's own heartbeat and election timeouts, and pre-vote (tests/world/store/etcd_servers.cpp).
# With etcd_tls=1, clients reach them over TLS and must show a certificate of the test's CA
# (certs/etcdN.pem names host N's address).
etcd_cluster() {
  local data cluster="" i scheme=http
  data=$(mktemp -d /dev/shm/troupe-etcd-XXXXXX)
  testbed_files+=("$data")
  [[ ${etcd_tls:-0} == 1 ]] && scheme=https
  for i in "$@"; do cluster+="${cluster:+,}etcd$i=http://${TESTBED_IP[i]}:2380"; done
  for i in "$@"; do
    local tls=()
    [[ $scheme == https ]] && tls=(--cert-file "$dir/certs/etcd$i.pem" --key-file "$dir/certs/etcd$i.key"
      --client-cert-auth --trusted-ca-file "$dir/certs/ca.pem")
    ip netns exec "${TESTBED_NS[i]}" etcd --name "etcd$i" --data-dir "$data/etcd$i" "${tls[@]}" \
      --listen-client-urls "$scheme://${TESTBED_IP[i]}:2379" \
      --advertise-client-urls "$scheme://${TESTBED_IP[i]}:2379" \
      --listen-peer-urls "http://${TESTBED_IP[i]}:2380" \
      --initial-advertise-peer-urls "http://${TESTBED_IP[i]}:2380" \
      --initial-cluster "$cluster" --initial-cluster-token "$data" --initial-cluster-state new \
      --heartbeat-interval 100 --election-timeout 1000 --pre-vote \
      --logger zap --log-outputs "$data/etcd$i.log" &
    etcd_pids[i]=$!
    disown # ended by testbed_down with its namespace, without a job notice
  done
}

# Whether etcd (etcdctl, from host 0) lists a key under $2 at endpoints $1, within 30 s; TLS
# with host 0's member certificate when etcd_tls=1.
etcd_has_key() {
  local tries tls=()
  [[ ${etcd_tls:-0} == 1 ]] && tls=(--cacert "$dir/certs/ca.pem" --cert "$dir/certs/0.pem"
    --key "$dir/certs/0.key")
  for tries in $(seq 60); do
    [[ -n $(ip netns exec "${TESTBED_NS[0]}" env ETCDCTL_API=3 etcdctl --endpoints "$1" "${tls[@]}" \
      get --prefix --keys-only "$2" 2>/dev/null) ]] && return 0
    sleep 0.5
  done
  echo "etcd has no key under $2 within 30 s"
  return 1
}

# Waits for marks, 60 s at most each.
await() {
  local name
  for name in "$@"; do
    testbed_await_file "$dir/$name" 60 || { echo "no mark '$name' within 60 s"; return 1; }
  done
}

status=0
case $case_name in
world_plain) members world_ring plain ;;
world_tls) members world_ring tls ;;
world_join) # a world of three on hosts 0-2, and member 3 joining it from host 3
  for i in 0 1 2; do member "$i" world_grows TROUPE_MAX_WORLD_SIZE=4 $(tls_of "$i"); done
  member 3 joins_world TROUPE_MAX_WORLD_SIZE=4 $(tls_of 3)
  ;;
servers) members servers plain ;;
graph) members graph_partition plain ;;
gloo)
  member 0 gloo_every_operation $(tls_of 0)
  member 1 gloo_every_operation $(tls_of 1)
  member 2 gloo_every_operation $(tls_of 2) TROUPE_SOCKET_IFNAME="$(testbed_link 2)"
  ;;
pool_nodes)
  testbed_start 0 env TROUPE_TEST_ROLE=pool_with_nodes TROUPE_SECRET=hosts-secret \
    TROUPE_TEST_PORT="$port" TROUPE_TEST_DIR="$dir" $(tls_of pool) "$program"
  await pool_listens || status=1
  for i in 1 2; do
    testbed_start "$i" env TROUPE_SECRET=hosts-secret $(tls_of "$i") \
      "$program" --troupe-join "${TESTBED_IP[0]}:$port"
  done
  ;;
pool_node_returns) # host 2's link down 5 s: its node is lost, exits, and is started again
  testbed_start 0 env TROUPE_TEST_ROLE=pool_node_returns TROUPE_SECRET=hosts-secret \
    TROUPE_TEST_PORT="$port" TROUPE_TEST_DIR="$dir" $(tls_of pool) "$program"
  await pool_listens || status=1
  node() { testbed_start "$1" env TROUPE_SECRET=hosts-secret $(tls_of "$1") \
    "$program" --troupe-join "${TESTBED_IP[0]}:$port"; }
  node 1
  node 2
  await nodes_in && testbed_cut 2 && sleep 5 && testbed_restore 2 && await node_lost && node 2 ||
    status=1
  ;;
cut_call)
  members cut_call plain
  await cut && testbed_cut 2 && await lost_seen_by_0 lost_seen_by_1 lost_seen_by_2 &&
    testbed_restore 2 && touch "$dir/restored" || status=1
  ;;
cut_rejoin) # host 2's link down 5 s; members with world_options::rejoin
  for i in 0 1 2; do member "$i" cut_rejoin TROUPE_REJOIN=1 $(tls_of "$i"); done
  await cut && testbed_cut 2 && sleep 5 && testbed_restore 2 && touch "$dir/restored" || status=1
  ;;
cut_all_reduce)
  members cut_all_reduce plain
  await cut && testbed_cut 2 || status=1
  ;;
mpi) # mpirun on host 0 starts its daemons on hosts 1 and 2 through netns_rsh_agent.sh
  hosts_file=$dir/hosts
  for i in 0 1 2; do echo "${TESTBED_IP[i]} ${TESTBED_NS[i]}" >>"$hosts_file"; done
  testbed_start 0 env TESTBED_HOSTS_FILE="$hosts_file" TROUPE_TEST_RANK0_HOST="${TESTBED_IP[0]}" \
    "$mpiexec" --allow-run-as-root --oversubscribe \
    --host "${TESTBED_IP[0]},${TESTBED_IP[1]},${TESTBED_IP[2]}" \
    --mca plm_rsh_agent "$(dirname "$0")/netns_rsh_agent.sh" \
    --mca oob_tcp_if_include "$testbed_subnet.0/24" --mca btl_tcp_if_include "$testbed_subnet.0/24" \
    --mca btl self,tcp --mca mpi_yield_when_idle 1 -x TROUPE_TEST_RANK0_HOST -np 3 "$program"
  ;;
store_partition) # a world on etcd; hosts 3 and 4 (an etcd server on 3) cut from 0-2 (servers
  # on 0 and 1) for at least 5 s, then healed
  etcd_cluster 0 1 3
  store="etcd://${TESTBED_IP[0]}:2379,${TESTBED_IP[1]}:2379,${TESTBED_IP[3]}:2379/hosts"
  for i in 0 1 2 3 4; do
    testbed_start "$i" env TROUPE_TEST_ROLE=store_member TROUPE_RANK="$i" TROUPE_NAME="$i" \
      TROUPE_WORLD_SIZE=5 TROUPE_STORE="$store" TROUPE_TEST_DIR="$dir" "$program"
  done
  await in_0 in_1 in_2 in_3 in_4 && testbed_cut 3 && testbed_cut 4 && sleep 5 &&
    await saw_cut_0 saw_cut_1 saw_cut_2 cut_off_3 cut_off_4 && testbed_restore 3 &&
    testbed_restore 4 && touch "$dir/restored" || status=1
  ;;
store_world) # a world with its tables in etcd (a server on hosts 0-2, TLS with the world's CA):
  # host 2's server killed once every member is in; then rank 0, the coordinator, SIGKILLed
  # while a member joins from host 3; rank 0 started again once the other two saw it lost
  for i in 0 1 2; do "$make_certs" "$dir/certs" "etcd$i=${TESTBED_IP[i]}" >/dev/null || exit 1; done
  "$make_certs" "$dir/certs" joiner >/dev/null || exit 1
  etcd_tls=1 etcd_cluster 0 1 2
  endpoints="https://${TESTBED_IP[0]}:2379,https://${TESTBED_IP[1]}:2379,https://${TESTBED_IP[2]}:2379"
  store="etcd://${TESTBED_IP[0]}:2379,${TESTBED_IP[1]}:2379,${TESTBED_IP[2]}:2379/hosts"
  first=${#testbed_pids[@]}
  # A store world has no rank 0 address: TROUPE_ADDRESS empty leaves the default (loopback).
  member 0 store_world_member TROUPE_STORE="$store" TROUPE_ADDRESS= TROUPE_MAX_WORLD_SIZE=4 $(tls_of 0)
  # Rank 0 claims first, so it is the oldest member: the coordinator the others lose.
  etcd_tls=1 etcd_has_key "$endpoints" /troupe/hosts/members/ || status=1
  for i in 1 2; do
    member "$i" store_world_member TROUPE_STORE="$store" TROUPE_ADDRESS= TROUPE_MAX_WORLD_SIZE=4 \
      $(tls_of "$i")
  done
  if [[ $status == 0 ]] && await in_0 in_1 in_2; then
    kill -9 "${etcd_pids[2]}" && touch "$dir/server_2_killed"
    await still_0 still_1 still_2 || status=1
    testbed_start 3 env TROUPE_TEST_ROLE=store_world_joiner TROUPE_RANK=any TROUPE_NAME=joiner \
      TROUPE_WORLD_SIZE=3 TROUPE_MAX_WORLD_SIZE=4 TROUPE_STORE="$store" TROUPE_TEST_DIR="$dir" \
      $(tls_of joiner) "$program"
    kill -9 "${testbed_pids[first]}"
    wait "${testbed_pids[first]}" 2>/dev/null
    unset "testbed_pids[first]" # killed on purpose: not a failure of the case
    await saw_loss_1 saw_loss_2 &&
      member 0 store_world_returns TROUPE_STORE="$store" TROUPE_ADDRESS= TROUPE_MAX_WORLD_SIZE=4 \
        $(tls_of 0) ||
      status=1
  else
    status=1
  fi
  ;;
slow_link)
  for i in 0 1 2; do
    testbed_netem "$i" delay 20ms loss 1% || exit 77
  done
  members slow_link plain
  ;;
*)
  echo "no case '$case_name'"
  exit 2
  ;;
esac
testbed_wait 150 || status=1
if [[ $case_name == mpi ]] && [[ $(sort -u "$dir/hosts.started" 2>/dev/null | wc -l) != 2 ]]; then
  echo "mpirun did not start its daemons on hosts 1 and 2"
  status=1
fi
[[ $status == 0 ]] && echo "$case_name: passed on ${#TESTBED_NS[@]} hosts" || echo "$case_name: failed"
exit $status
