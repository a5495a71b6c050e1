# Hosts made of network namespaces, for the tests beside this file (source it; bash).
#
#   testbed_up 3                 # hosts 0..2 on one bridge: TESTBED_NS[i], TESTBED_IP[i]
#   testbed_start 1 env A=b prog # runs prog on host 1 in the background, with a /dev/shm of
#                                # its own (its pid kept)
#   testbed_wait 60              # waits for every started process, 60 s at most; 0 if all exited 0
#   testbed_cut 2 / testbed_restore 2        # takes host 2's link down, and up again
#   testbed_netem 1 delay 20ms loss 1%       # shapes what host 1 sends (skipped if unsupported)
#
# Each host has private addresses that exist only inside it (10.x.y.1..N on its one link) and an
# /etc/hosts (through /etc/netns/NAME/) mapping the machine's name to 127.0.1.1, as Debian does,
# so that a member advertising its host name advertises loopback, as on real machines. Names
# carry this shell's pid: a run sweeps what runs whose shell is gone left behind, and tears its
# own down on exit, whatever happened. Needs root with CAP_NET_ADMIN: otherwise testbed_up
# prints why and exits 77, which ctest reads as skipped.

testbed_tag=trb$$
TESTBED_NS=()
TESTBED_IP=()
testbed_pids=()
testbed_files=() # removed on exit
testbed_subnet=10.$((200 + $$ % 50)).$(($$ / 50 % 250))
testbed_shm_before=$(ls /dev/shm)

testbed_veth() { echo "${testbed_tag}v$1"; } # the host side of host $1's link, on the bridge
testbed_link() { echo "${testbed_tag}p$1"; } # host $1's own end

# Deletes namespaces, links and /etc/netns folders of runs whose shell is gone.
testbed_sweep() {
  local name pid
  for name in $(ip netns list 2>/dev/null | awk '{print $1}') $(ls /etc/netns 2>/dev/null); do
    [[ $name =~ ^trb([0-9]+)h[0-9]+$ ]] || continue
    pid=${BASH_REMATCH[1]}
    kill -0 "$pid" 2>/dev/null && continue
    ip netns pids "$name" 2>/dev/null | xargs -r kill -9
    ip netns del "$name" 2>/dev/null
    rm -rf "/etc/netns/$name"
  done
  for name in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    [[ $name =~ ^trb([0-9]+)(br|v[0-9]+)$ ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null &&
      ip link del "$name" 2>/dev/null
  done
}

testbed_down() {
  local pid ns entry i
  for pid in "${testbed_pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
  for ns in "${TESTBED_NS[@]}"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9
  done
  wait 2>/dev/null
  # Deleting a link here at once: a namespace's own go with it only when the kernel gets to it.
  for ((i = 0; i < ${#TESTBED_NS[@]}; i++)); do ip link del "$(testbed_veth "$i")" 2>/dev/null; done
  for ns in "${TESTBED_NS[@]}"; do
    ip netns del "$ns" 2>/dev/null
    rm -rf "/etc/netns/$ns"
  done
  ip link del "${testbed_tag}br" 2>/dev/null
  ((${#testbed_files[@]})) && rm -rf "${testbed_files[@]}"
  # A member killed here leaves its inboxes; nothing else makes queues meanwhile (the tests
  # hold ctest's shm lock).
  for entry in $(ls /dev/shm); do
    [[ $entry == troupe.* ]] && ! grep -qxF "$entry" <<<"$testbed_shm_before" &&
      rm -f "/dev/shm/$entry"
  done
  return 0
}

testbed_skip() {
  echo "skipped: $1 (the hosts tests need root with CAP_NET_ADMIN and iproute2's ip netns)"
  exit 77
}

testbed_up() {
  local n=$1 i ns
  [[ $(id -u) == 0 ]] || testbed_skip "not root"
  command -v ip >/dev/null || testbed_skip "no ip command"
  trap testbed_down EXIT
  testbed_sweep
  ip link add "${testbed_tag}br" type bridge 2>/dev/null && ip link set "${testbed_tag}br" up ||
    testbed_skip "cannot make a bridge"
  for ((i = 0; i < n; i++)); do
    ns=${testbed_tag}h$i
    ip netns add "$ns" || testbed_skip "cannot make a network namespace"
    TESTBED_NS+=("$ns")
    TESTBED_IP+=("$testbed_subnet.$((i + 1))")
    ip link add "$(testbed_veth "$i")" type veth peer name "$(testbed_link "$i")" &&
      ip link set "$(testbed_link "$i")" netns "$ns" &&
      ip link set "$(testbed_veth "$i")" master "${testbed_tag}br" &&
      ip link set "$(testbed_veth "$i")" up &&
      ip netns exec "$ns" ip addr add "${TESTBED_IP[i]}/24" dev "$(testbed_link "$i")" &&
      ip netns exec "$ns" ip link set "$(testbed_link "$i")" up &&
      ip netns exec "$ns" ip link set lo up || testbed_skip "cannot link host $i"
    mkdir -p "/etc/netns/$ns"
    printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$(hostname)" >"/etc/netns/$ns/hosts"
  done
}

# Runs a command on host $1 in the background. It gets a /dev/shm of its own, as a process on
# another machine would: troupe's members on one host talk through shared memory, and must not
# find each other's inboxes across "hosts" that share this machine's.
testbed_start() {
  local host=$1
  shift
  ip netns exec "${TESTBED_NS[host]}" sh -c \
    'mount -t tmpfs -o size=4g,mode=1777 testbed-shm /dev/shm && exec "$@"' testbed "$@" &
  testbed_pids+=($!)
}

# Waits for every started process, killing what is still running after $1 seconds.
testbed_wait() {
  local limit=$1 status=0 pid waited=0
  while ((waited < limit * 10)); do
    local running=0
    for pid in "${testbed_pids[@]}"; do kill -0 "$pid" 2>/dev/null && running=1; done
    ((running)) || break
    sleep 0.1
    ((waited++))
  done
  for pid in "${testbed_pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      echo "process $pid still running after ${limit} s: killed"
      kill -9 "$pid"
      status=1
    fi
    wait "$pid" || status=1
  done
  testbed_pids=()
  return $status
}

testbed_cut() { ip link set "$(testbed_veth "$1")" down; }
testbed_restore() { ip link set "$(testbed_veth "$1")" up; }

# Shapes what host $1 sends with netem; returns 1 (and says so) where the kernel lacks it.
testbed_netem() {
  local host=$1
  shift
  ip netns exec "${TESTBED_NS[host]}" tc qdisc add dev "$(testbed_link "$host")" root netem "$@" \
    2>/dev/null || { echo "no netem here (sch_netem)"; return 1; }
}

# Waits up to $2 seconds for file $1 to exist.
testbed_await_file() {
  local tries=$(($2 * 10))
  while [[ ! -e $1 ]] && ((tries-- > 0)); do sleep 0.1; done
  [[ -e $1 ]]
}
