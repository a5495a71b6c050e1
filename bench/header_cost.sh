#!/usr/bin/env bash
# What #include <troupe/troupe.hpp> costs a user's file to compile, beside what no troupe header
# can avoid (the standard library headers troupe's use and cereal's), interleaved, best of 5:
#   bench/header_cost.sh [source dir]     (CXX picks the compiler; default g++)
set -euo pipefail
source_dir=$(cd "${1:-$(dirname "$0")/..}" && pwd)
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
includes=()
for d in "$source_dir"/*/include "$source_dir"/include; do includes+=("-I$d"); done
echo '#include <troupe/troupe.hpp>' > "$work/troupe.cpp"
{
  for h in string vector optional memory functional chrono mutex thread condition_variable \
           algorithm tuple map unordered_map variant deque span ranges atomic; do
    echo "#include <$h>"
  done
  for h in cereal.hpp types/vector.hpp types/utility.hpp types/unordered_map.hpp types/tuple.hpp \
           types/string.hpp types/optional.hpp types/map.hpp types/array.hpp; do
    echo "#include <cereal/$h>"
  done
} > "$work/baseline.cpp"
seconds() { # compile time of $1, in seconds
  local start end
  start=$(date +%s.%N)
  "$cxx" -std=c++20 -O2 "${includes[@]}" -c "$1" -o /dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
best_troupe=99 best_baseline=99
for _ in 1 2 3 4 5; do
  t=$(seconds "$work/troupe.cpp"); best_troupe=$(echo "if ($t < $best_troupe) $t else $best_troupe" | bc)
  b=$(seconds "$work/baseline.cpp"); best_baseline=$(echo "if ($b < $best_baseline) $b else $best_baseline" | bc)
done
printf 'troupe_hpp_compile_s %.2f s\n' "$best_troupe"
printf 'std_and_cereal_headers_compile_s %.2f s\n' "$best_baseline"
printf 'troupe_hpp_ratio_to_std_and_cereal %.2f x\n' "$(echo "$best_troupe / $best_baseline" | bc -l)"
