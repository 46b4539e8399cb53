"""The Python package's PyTorch helper (rsswatch.torch_gauges) against real CUDA memory,
under a real recorder, for tests/gpu/torch-gauges-on-gpu.sh on the GPU machine.

Three steps, each held until the recorder has stored the helper's figures for it (read
back through rsswatch.counters(), bounded waits, no fixed sleeps):
  1. a 2 GiB tensor: allocated 2 GiB, reserved at least that;
  2. a further 4 GiB tensor, then the 2 GiB one freed: allocated 4 GiB, reserved still
     6 GiB (the caching allocator keeps the freed block), max allocated 6 GiB;
  3. everything freed and torch.cuda.empty_cache(): allocated and reserved 0, max
     allocated still 6 GiB.
At each step it prints torch's own figures ("truth: STEP allocated A reserved R max M")
and what the recorder stored ("stored: STEP ..."), and exits 3 when a figure the recorder
stored differs from torch's, 4 when it is not stored in time."""
import os
import sys
import time

import torch
import rsswatch
from rsswatch.torch_gauges import TorchGauges

GIB = 1 << 30


def stored():
    rid = [r["id"] for r in rsswatch.runs(as_frame=False) if r["pid"] == os.getpid()]
    last = {}
    for c in rsswatch.counters(rid[0], as_frame=False) if rid else []:
        last[c["name"]] = c["value"]
    return last


def truth():
    return {"torch_allocated_bytes": torch.cuda.memory_allocated(),
            "torch_reserved_bytes": torch.cuda.memory_reserved(),
            "torch_max_allocated_bytes": torch.cuda.max_memory_allocated()}


def step(name):
    want = truth()
    print("truth: %s allocated %d reserved %d max %d" % (
        name, want["torch_allocated_bytes"], want["torch_reserved_bytes"],
        want["torch_max_allocated_bytes"]), flush=True)
    deadline = time.monotonic() + 20
    while True:
        got = stored()
        if all(got.get(k) == v for k, v in want.items()):
            break
        if time.monotonic() > deadline:
            print("stored: %s %s (not torch's in 20 s)" % (name, got), flush=True)
            sys.exit(4)
        time.sleep(0.02)
    print("stored: %s %s" % (name, {k: got[k] for k in want}), flush=True)
    return want


torch.cuda.init()
torch.zeros(1, device="cuda")       # the context first
with TorchGauges(interval=0.05):
    a = torch.ones(2 * GIB // 4, dtype=torch.float32, device="cuda")
    t1 = step("one")
    b = torch.ones(4 * GIB // 4, dtype=torch.float32, device="cuda")
    del a
    t2 = step("two")
    del b
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    t3 = step("three")
ok = (t1["torch_allocated_bytes"] == 2 * GIB and t2["torch_allocated_bytes"] == 4 * GIB and
      t2["torch_reserved_bytes"] >= 6 * GIB and t2["torch_max_allocated_bytes"] == 6 * GIB and
      t3["torch_allocated_bytes"] == 0 and t3["torch_reserved_bytes"] == 0)
print("torch_gauges: %s" % ("the three steps as planned" if ok else "torch's figures not as planned"))
sys.exit(0 if ok else 3)
