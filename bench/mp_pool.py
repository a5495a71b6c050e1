#!/usr/bin/env python3
"""The peer of bench/process_pool and bench/scale: Python's multiprocessing.Pool (fork) on the
same work, one round per run. Prints `name value` lines for the C++ benchmarks to read.

  /usr/bin/python3 bench/mp_pool.py WORK_ITERATIONS
  /usr/bin/python3 bench/mp_pool.py --chunk1 WORKERS ITEMS   # map(x -> x + 1), chunksize 1
"""
import multiprocessing
import sys
import time

WORK = 1


def plus_one(x):
    return x + 1


def fixed_work(seed):
    """A fixed amount of CPU work: the same iterations whatever the clock says, so time a worker
    spends pre-empted is not counted as work done."""
    x = seed
    for _ in range(WORK):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return x


def cpu_seconds(workers, tasks):
    with multiprocessing.Pool(workers) as pool:
        pool.map(fixed_work, range(workers), chunksize=1)
        start = time.perf_counter()
        pool.map(fixed_work, range(tasks), chunksize=1)
        return time.perf_counter() - start


def chunk1(workers, items):
    with multiprocessing.Pool(workers) as pool:
        pool.map(plus_one, range(workers), chunksize=1)
        start = time.perf_counter()
        out = pool.map(plus_one, range(items), chunksize=1)
        assert out[-1] == items
        print("chunk1_items_per_s", items / (time.perf_counter() - start))


def main():
    global WORK
    if sys.argv[1] == "--chunk1":
        chunk1(int(sys.argv[2]), int(sys.argv[3]))
        return
    WORK = int(sys.argv[1])
    items = list(range(100_000))
    start = time.perf_counter()
    with multiprocessing.Pool(2) as pool:
        pool.map(plus_one, [0, 1], chunksize=1)
        print("startup_ms", (time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        out = pool.map(plus_one, items, chunksize=1)
        assert out[-1] == 100_000
        print("chunk1_items_per_s", len(items) / (time.perf_counter() - start))
        start = time.perf_counter()
        out = pool.map(plus_one, items)
        assert out[-1] == 100_000
        print("auto_items_per_s", len(items) / (time.perf_counter() - start))
    one, two = cpu_seconds(1, 200), cpu_seconds(2, 200)
    print("cpu_task_ms", one / 200 * 1000)
    print("cpu_speedup_2_vs_1", one / two)


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    main()
