"""A recorded program for the tests: marks and stages, a counter added to from several
threads, a gauge, then a wait (bounded) until the recorder has stored what it wrote, read
back through rsswatch.marks() and counters() from its own run. Exits 0, or 3 saying
what never arrived.

    workload.py THREADS ADDS"""
import os
import sys
import threading
import time

import rsswatch

threads, adds = int(sys.argv[1]), int(sys.argv[2])
rsswatch.mark("start")
items = rsswatch.counter("items")
chunk = rsswatch.counter("chunk_bytes")


def work():
    mine = rsswatch.counter("items")    # the same slot as items, from another lookup
    for i in range(adds):
        (items if i % 2 else mine).add(1)
        chunk.add(4096)
    chunk.add(-4096 * adds)


with rsswatch.stage("threads"):
    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()

depth = rsswatch.gauge("queue_depth")


@rsswatch.stage("gauging", end="gauged")
def gauging():
    for v in (3, 9, 4):
        depth.set(v)
    rsswatch.gauge("held_bytes").set(1 << 40)


gauging()
try:
    with rsswatch.stage("boom"):
        raise KeyError("a stage left by an exception")
except KeyError:
    pass
rsswatch.mark("end")

want_marks = ["start", "threads", "threads done", "gauging", "gauged", "boom", "boom failed",
              "end"]
want = {"items": threads * adds, "chunk_bytes": 0, "queue_depth": 4, "held_bytes": 1 << 40}


def mine():
    for r in rsswatch.runs(as_frame=False):
        if r["pid"] == os.getpid():
            return r["id"]
    return None


deadline = time.monotonic() + 60
while True:
    rid = mine()
    got_marks = [m["label"] for m in rsswatch.marks(rid, as_frame=False)] if rid else []
    last = {}
    for c in rsswatch.counters(rid, as_frame=False) if rid else []:
        last[c["name"]] = c["value"]
    if got_marks == want_marks and last == want:
        sys.exit(0)
    if time.monotonic() > deadline:
        print("workload: not stored after 60 s: marks %s, counters %s" % (got_marks, last),
              file=sys.stderr)
        sys.exit(3)
    time.sleep(0.05)    # polling the database, not synchronising on time
