#!/usr/bin/env bash
# Runs the short benchmarks and prints each tooling line beside its goal, the goal being the last
# one BENCHMARKS.md's tables give that line (a row whose first cell names it in backticks and
# whose last cell begins with <, <=, > or >=). Lines short of their goal are marked SHORT; the
# exit status is the number of them (capped at 100). Timings: run it before a submission and
# record what it printed; it is no CI test.
#
#   bench/check.sh [BUILD_DIR]            # default: build
#
# A goal is read without its row's conditions (idle, busy, machine): compare like with like.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-"$here/../build"}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

short_benchmarks=(
  "pool_overhead"
  "process_pool"
  "queue_throughput"
  "actors"
  "scale --quick"
  "world 64"
  "graph"
  "world 256" # last: 256 processes load the machine for a while after
)
for command in "${short_benchmarks[@]}"; do
  program=${command%% *}
  if [ ! -x "$build/bench/$program" ]; then
    echo "# $program: not built (cmake --build $build --target ${program}_bench or $program)"
    continue
  fi
  echo "# $command" >&2
  # shellcheck disable=SC2086 # the command's arguments split on purpose
  "$build/bench/"$command 2>/dev/null >> "$out" || echo "# $command failed" >&2
done

python3 - "$here/../BENCHMARKS.md" "$out" <<'PY'
import re, sys

goal_cell = re.compile(r"^\s*(<=|>=|<|>)\s*([0-9][0-9,]*\.?[0-9]*)")
goals = {}
for row in open(sys.argv[1], encoding="utf-8"):
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if len(cells) < 2 or not row.lstrip().startswith("|"):
        continue
    name = re.match(r"`([A-Za-z0-9_]+)`", cells[0])
    goal = goal_cell.match(cells[-1])
    if name and goal:
        goals[name.group(1)] = (goal.group(1), float(goal.group(2).replace(",", "")))

meets = {"<": lambda v, g: v < g, "<=": lambda v, g: v <= g,
         ">": lambda v, g: v > g, ">=": lambda v, g: v >= g}
short = 0
for line in open(sys.argv[2], encoding="utf-8"):
    fields = line.split()
    if len(fields) < 2 or line.startswith("#"):
        continue
    try:
        value = float(fields[1])
    except ValueError:
        continue
    name, unit = fields[0], " ".join(fields[2:])
    if name not in goals:
        print(f"{name} {fields[1]} {unit}")
        continue
    op, bound = goals[name]
    ok = meets[op](value, bound)
    short += not ok
    print(f"{name} {fields[1]} {unit}  goal {op} {bound:g}  {'met' if ok else 'SHORT'}")
sys.exit(min(short, 100))
PY
