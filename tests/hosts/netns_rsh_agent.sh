#!/bin/sh
# Open MPI's plm_rsh_agent for the hosts tests: where mpirun would ssh to a host to start its
# daemon there, this runs the command in that host's network namespace. TESTBED_HOSTS_FILE lines
# are "ADDRESS NAMESPACE", written by host_case.sh.
#   usage (by mpirun): netns_rsh_agent.sh HOST COMMAND...
host=$1
shift
ns=$(awk -v host="$host" '$1 == host { print $2 }' "$TESTBED_HOSTS_FILE")
[ -n "$ns" ] || { echo "netns_rsh_agent: no host $host in $TESTBED_HOSTS_FILE" >&2; exit 1; }
echo "$ns" >>"$TESTBED_HOSTS_FILE.started" # for the test to check where ranks ran
# Each host has a /tmp and a /dev/shm of its own, as real ones do: Open MPI's daemons keep their session
# (and a shared-memory copy of the machine's topology) under a path made of the host name, which
# every namespace shares, so two daemons in one /tmp would write the same files.
export TMPDIR="$TESTBED_HOSTS_FILE.tmp/$ns"
mkdir -p "$TMPDIR"
exec ip netns exec "$ns" sh -c "mount -t tmpfs -o size=1g,mode=1777 testbed-shm /dev/shm && $*"
