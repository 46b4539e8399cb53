"""A run for `model RUN`'s peak placement (tests/t/t83): a gauge, the mark "load", a
200 MiB spike between samples (mapped, touched, unmapped), then "compute" and, 1.2 s
later, "write". Run with PYTHONPATH naming bindings/python and RSSWATCH_LIB the
library under test."""
import mmap
import time

import rsswatch

held = rsswatch.gauge("held_bytes")
held.set(0)
rsswatch.mark("load")
n = 200 << 20
m = mmap.mmap(-1, n)
held.set(n)
for i in range(0, n, 4096):
    m[i] = 1
m.close()
held.set(0)
rsswatch.mark("compute")
time.sleep(1.2)
rsswatch.mark("write")
