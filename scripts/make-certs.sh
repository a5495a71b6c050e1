#!/usr/bin/env bash
# Makes a certificate authority and one certificate per name, for troupe worlds and pools over
# TLS:
#
#   scripts/make-certs.sh certs trainer=host-a.example,10.0.0.5 worker-1 worker-2
#
# writes certs/ca.pem (and ca.key: keep it off the hosts), and certs/NAME.pem + certs/NAME.key for
# each name. Give each process its NAME.pem, NAME.key and ca.pem (troupe::tls_options). A
# certificate names NAME (its common name and a DNS entry) and the hosts or addresses after '=':
# a world member's certificate must name the member, and the certificate of a process that others
# connect to by address (a world's rank 0, a pool) must name that host or address. Valid for 365
# days.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 DIR NAME[=HOST,...]..." >&2
  exit 2
fi
dir=$1
shift
mkdir -p "$dir"
umask 077

if [ ! -f "$dir/ca.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=troupe-ca" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
fi
ip_pattern='^([0-9]+\.){3}[0-9]+$|:'
for spec in "$@"; do
  name=${spec%%=*}
  names="DNS:$name"
  if [ "$spec" != "$name" ]; then
    IFS=, read -ra hosts <<<"${spec#*=}"
    for host in "${hosts[@]}"; do
      if [[ $host =~ $ip_pattern ]]; then names+=",IP:$host"; else names+=",DNS:$host"; fi
    done
  fi
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -days 365 -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -out "$dir/$name.pem" -extfile <(printf 'subjectAltName=%s\n' "$names") \
    2>/dev/null
  rm -f "$dir/$name.csr"
done
rm -f "$dir/ca.srl"
chmod 644 "$dir"/*.pem
