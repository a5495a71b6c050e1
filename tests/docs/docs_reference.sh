#!/usr/bin/env bash
# The API reference builds without a warning: every public name documented, no comment Doxygen
# cannot read. Skipped (77) where doxygen is not installed (scripts/setup.sh installs it).
#   usage: docs_reference.sh DOXYFILE OUTPUT_DIR
set -u
doxyfile=${1:-}
output=${2:-}
if ! command -v doxygen >/dev/null || [[ -z $doxyfile || ! -f $doxyfile ]]; then
  echo "doxygen is not installed (scripts/setup.sh installs it), or troupe was configured without it"
  exit 77
fi
mkdir -p "$output"
rm -f "$output/warnings.txt"
doxygen "$doxyfile" >/dev/null || { echo "doxygen failed"; exit 1; }
if [[ -s $output/warnings.txt ]]; then
  echo "the reference has $(wc -l <"$output/warnings.txt") warning lines; the first:"
  head -40 "$output/warnings.txt"
  exit 1
fi
pages=$(find "$output/html" -name '*.html' | wc -l)
grep -q "troupe::thread_pool" "$output/html/classtroupe_1_1thread__pool.html" ||
  { echo "no page for troupe::thread_pool"; exit 1; }
echo "the API reference: $pages pages, no warning"
