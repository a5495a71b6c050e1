#!/usr/bin/env bash
# troupe-assign end to end: JSON output on a fixture, text output, the Graphviz file, and a
# clear error for a bad file.
set -euo pipefail
cli=$1
data=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

json=$("$cli" --format json "$data/instances/n08_m2_tight_cpu_s0.json")
for key in '"assignment":' '"cost":' '"feasible":true'; do
  grep -q "$key" <<<"$json" || { echo "json output lacks $key: $json"; exit 1; }
done
[ "$(grep -o '"assignment":\[[0-9,]*\]' <<<"$json" | tr -cd ',' | wc -c)" = 7 ] ||
  { echo "expected 8 device indices: $json"; exit 1; }

text=$("$cli" --dot "$scratch/p.dot" "$data/instances/n08_m2_tight_cpu_s0.json")
grep -q "fits every device" <<<"$text" || { echo "text output: $text"; exit 1; }
grep -q "^digraph placement" "$scratch/p.dot" || { echo "no dot graph"; exit 1; }
grep -q "cluster_1" "$scratch/p.dot" || { echo "dot graph lacks a device cluster"; exit 1; }

echo '{"n": 1}' > "$scratch/bad.json"
if "$cli" "$scratch/bad.json" 2> "$scratch/err"; then echo "bad file accepted"; exit 1; fi
grep -q 'missing field "m"' "$scratch/err" || { echo "error: $(cat "$scratch/err")"; exit 1; }
echo "troupe-assign: json, text, dot and errors as expected"
