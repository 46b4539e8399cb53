"""A recorded program for the PyTorch helper's test, with the stand-in torch first on
sys.path: TorchGauges publishes its figures from its thread, the figures change, the
thread is seen to publish them, and the program waits (bounded) until the recorder
has stored the final ones."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_torch"))
import torch  # noqa: E402  the stand-in
import rsswatch  # noqa: E402
from rsswatch.torch_gauges import TorchGauges  # noqa: E402

assert torch.__file__.startswith(os.path.dirname(os.path.abspath(__file__))), torch.__file__
fake = torch.cuda.FAKE[0]


def wait(cond, what, secs=20):
    deadline = time.monotonic() + secs
    while not cond():
        if time.monotonic() > deadline:
            print("torch_workload: %s did not happen in %d s (stored: %s)" % (what, secs, stored()), file=sys.stderr)
            sys.exit(3)
        time.sleep(0.01)


def stored():
    rid = [r["id"] for r in rsswatch.runs(as_frame=False) if r["pid"] == os.getpid()]
    last = {}
    for c in rsswatch.counters(rid[0], as_frame=False) if rid else []:
        last[c["name"]] = c["value"]
    return last


g = TorchGauges(interval=0.01)
fake.update(allocated=1 << 20, reserved=2 << 20, max=1 << 20)
with g:
    n = torch.cuda.calls[0]
    wait(lambda: torch.cuda.calls[0] >= n + 6, "two rounds of the thread")
    wait(lambda: stored().get("torch_reserved_bytes") == 2 << 20, "the first figures stored")
    fake.update(allocated=300 << 20, reserved=512 << 20, max=640 << 20)
    n = torch.cuda.calls[0]
    wait(lambda: torch.cuda.calls[0] >= n + 6, "two rounds of the thread")
    wait(lambda: stored().get("torch_reserved_bytes") == 512 << 20, "the second figures stored")
    assert g._thread.daemon
    g._stop.set()           # the thread ends its wait: no round of its own after this
    g._thread.join()
    fake.update(allocated=5, reserved=6, max=7)     # stop() publishes once more: these
want = {"torch_allocated_bytes": 5, "torch_reserved_bytes": 6, "torch_max_allocated_bytes": 7}
n = torch.cuda.calls[0]
wait(lambda: stored() == want, "the final figures stored")
assert torch.cuda.calls[0] == n, "the thread went on after stop()"
assert g._thread is None
