#!/usr/bin/env bash
# Makes a certificate authority and one certificate per name, for troupe worlds over TLS:
#
#   scripts/make-certs.sh certs host-a host-b
#
# writes certs/ca.pem (and ca.key: keep it off the hosts), and certs/NAME.pem + certs/NAME.key for
# each name. Give each process its NAME.pem, NAME.key and ca.pem (troupe::tls_options). A
# certificate is valid for 365 days; the names are the certificates' common names.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 DIR NAME..." >&2
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
for name in "$@"; do
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -days 365 -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -out "$dir/$name.pem" 2>/dev/null
  rm -f "$dir/$name.csr"
done
rm -f "$dir/ca.srl"
chmod 644 "$dir"/*.pem
