#!/usr/bin/python3
"""Cost per call of the Python package's client calls (rsswatch.mark, Counter.add,
Gauge.set), beside the C calls' cost measured in the same run (build/bench/bench_client)
and an empty Python call (the interpreter's floor). Each is timed over a loop of N
calls, REPS times; the medians are printed in ns per call. No recorder reads the page.

    make bench-bin && bench/python-client.py [REPS]      (BUILD: the build dir)"""
import os
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, os.environ.get("BUILD", "build"))
os.environ.setdefault("RSSWATCH_LIB", os.path.join(BUILD, "librsswatch.so"))
sys.path.insert(0, os.path.join(TOP, "bindings", "python"))
import rsswatch  # noqa: E402

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 9
N = 200000


def timed(fn):
    runs = []
    for _ in range(REPS):
        t = time.perf_counter_ns()
        fn()
        runs.append((time.perf_counter_ns() - t) / N)
    return statistics.median(runs)


def empty():
    f = (lambda v: None)
    for i in range(N):
        f(i)


c = rsswatch.counter("bench_items")
g = rsswatch.gauge("bench_depth")


def add():
    a = c.add
    for i in range(N):
        a(1)


def gset():
    s = g.set
    for i in range(N):
        s(i)


def mark():
    m = rsswatch.mark
    for i in range(N):
        m("stage 123456789012345678")


rows = [("empty Python call (floor)", timed(empty)), ("Counter.add(1)", timed(add)),
        ("Gauge.set(v)", timed(gset)), ("rsswatch.mark (24-byte label)", timed(mark))]
for name, ns in rows:
    print("%-36s %8.1f ns" % (name, ns))
c_bench = os.path.join(BUILD, "bench", "bench_client")
if os.access(c_bench, os.X_OK):
    print("C, same run (%s):" % c_bench)
    sys.stdout.flush()
    subprocess.run([c_bench, str(REPS)], check=False)
