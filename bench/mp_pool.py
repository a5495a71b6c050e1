#!/usr/bin/env python3
"""The peer of bench/process_pool: Python's multiprocessing.Pool (fork, 2 workers) on the same
work. Prints `name value` lines for the C++ benchmark to read."""
import multiprocessing
import time


def plus_one(x):
    return x + 1


def spin_1ms(_):
    end = time.perf_counter() + 0.001
    while time.perf_counter() < end:
        pass
    return 0


def main():
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


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    main()
