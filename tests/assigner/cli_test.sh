#!/usr/bin/env bash
# troupe-assign end to end: JSON output on a fixture, text output, the Graphviz file, and a
# clear error for a bad file; on PyTorch's ONNX exports, modules cut into the model's repeated
# blocks unless --group-depth says otherwise (and said so), columns that line up whatever the
# names' length, and --help's examples for each kind of input.
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
help=$("$cli" --help)
for example in 'instances/n16_m4_tight_cpu_s0.json' 'encoder_static.onnx' '--group-depth 0' \
  '"memory_bytes"'; do
  grep -qF -- "$example" <<<"$help" || { echo "--help shows no example with $example"; exit 1; }
done

# Each row of the table headed "$2 ..." is as long as its header: every column padded to its
# widest entry (names of any length), numbers right-aligned under their headings.
aligned() {
  awk -v first="$2" '
    $1 == first && $2 != "" { rows = 1; width = length($0); next }
    rows && NF == 0 { rows = 0 }
    rows && length($0) != width { bad = 1; print "misaligned: " $0 }
    END { exit bad }' <<<"$1"
}
onnx=$data/../onnx
if "$cli" "$onnx/encoder_static.onnx" --group-depth 1 >/dev/null 2>"$scratch/err" ||
  ! grep -q "no ONNX reader" "$scratch/err"; then
  text=$("$cli" "$onnx/encoder_static.onnx" 2>"$scratch/said")
  grep -q "repeated blocks, enc.layers.0, enc.layers.1, ... (--group-depth 3)" "$scratch/said" ||
    { echo "the depth picked is not said: $(cat "$scratch/said")"; exit 1; }
  [ "$(grep -c '^enc\.layers\.[01] ' <<<"$text")" = 2 ] || { echo "not one module a layer: $text"; exit 1; }
  text=$("$cli" "$onnx/gpt_decoder.onnx" --dim seq=16 2>"$scratch/said")
  grep -q "blocks.0, blocks.1, ... (--group-depth 2)" "$scratch/said" ||
    { echo "gpt: $(cat "$scratch/said")"; exit 1; }
  text=$("$cli" "$onnx/encoder_static.onnx" --group-depth 0 2>"$scratch/said")
  [ ! -s "$scratch/said" ] || { echo "a depth given is not announced: $(cat "$scratch/said")"; exit 1; }
  [ "$(grep -c ' cpu ' <<<"$text")" -gt 100 ] || { echo "--group-depth 0: $text"; exit 1; }
  aligned "$text" module || { echo "module table: $text"; exit 1; }
  aligned "$text" device || { echo "device table: $text"; exit 1; }
fi
echo "troupe-assign: json, text, dot, ONNX grouping, tables and errors as expected"
