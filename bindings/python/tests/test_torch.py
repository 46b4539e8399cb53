"""rsswatch.torch_gauges against a real recorder, with a stand-in torch module: the
gauges arrive with the stand-in's values."""
import os
import subprocess
import sys

import pytest

import rsswatch
from conftest import HERE, workload

sys.path.insert(0, os.path.join(HERE, "fake_torch"))


def test_gauges_arrive_with_the_stand_ins_values(recorder):
    p = recorder.record(workload("torch_workload.py"))
    assert p.returncode == 0, "the recorded program failed: %s" % p.stderr
    seen = {}
    for c in rsswatch.counters(db=recorder.db, as_frame=False):
        seen.setdefault(c["name"], []).append(c["value"])
    assert seen["torch_allocated_bytes"][-1] == 5
    assert seen["torch_reserved_bytes"][-1] == 6
    assert seen["torch_max_allocated_bytes"][-1] == 7
    assert 300 << 20 in seen["torch_allocated_bytes"]
    assert 512 << 20 in seen["torch_reserved_bytes"]
    assert 640 << 20 in seen["torch_max_allocated_bytes"]
    assert (1 << 20) in seen["torch_allocated_bytes"]
    exp = recorder.jsonl("export", "--format", "jsonl")
    assert exp[-1]["counter.torch_reserved_bytes"] == 6
    show = recorder.verb("show")
    assert "torch_reserved_bytes" in show


def test_bad_interval_and_double_start(env):
    import torch  # the stand-in
    from rsswatch.torch_gauges import TorchGauges
    assert torch.cuda.FAKE
    with pytest.raises(ValueError):
        TorchGauges(interval=0)
    p = subprocess.run(["/usr/bin/python3", "-c", """
import sys; sys.path.insert(0, %r)
from rsswatch.torch_gauges import TorchGauges
g = TorchGauges(interval=0.01, prefix="cuda0_").start()
try:
    g.start()
except RuntimeError as e:
    print(e)
g.stop(); g.stop()
""" % os.path.join(HERE, "fake_torch")], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "TorchGauges already started\n"
