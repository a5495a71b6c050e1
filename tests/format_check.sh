#!/usr/bin/env bash
# Every C++ source file of the tree in $1 follows .clang-format, as Debian's clang-format reads it.
set -euo pipefail
cd "$1"
clang_format=$(command -v clang-format || true)
[ -n "$clang_format" ] || { echo "clang-format is not installed (scripts/setup.sh installs it)"; exit 1; }
mapfile -t files < <(find actors queues pools inbatch world collectives servers graph staged \
  assigner include tests examples bench tools -name '*.cpp' -o -name '*.hpp' | sort)
[ ${#files[@]} -gt 100 ] || { echo "found only ${#files[@]} source files"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$clang_format" --dry-run -Werror "${files[@]}" 2> "$log"; then
  grep -o '^[^:]*:[0-9]*:' "$log" | cut -d: -f1 | sort -u | sed 's/$/: not as .clang-format has it/'
  echo "fix with: clang-format -i <file>"
  exit 1
fi
echo "${#files[@]} files follow .clang-format"
