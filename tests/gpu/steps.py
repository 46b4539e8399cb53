"""GPU memory in known steps, for checking rsswatch's GPU figures on a real GPU.

Holds 1 GiB, then 3 GiB, then 2 GiB of device memory (plain cudaMalloc through
PyTorch's allocator, emptied between steps), a few seconds each, marking each step
through librsswatch (ctypes) and asking nvidia-smi what it sees at each step.

    rsswatch record -i 200ms -- python3 tests/gpu/steps.py [LIBRSSWATCH.so] [OUTDIR]
"""
import ctypes
import os
import subprocess
import sys
import time

import torch

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "librsswatch.so")
lib.rsw_mark.argtypes = [ctypes.c_char_p]
lib.rsw_gauge_set.argtypes = [ctypes.c_char_p, ctypes.c_longlong]
out = sys.argv[2] if len(sys.argv) > 2 else "."

torch.cuda.init()
torch.zeros(1, device="cuda")  # the CUDA context, before the first step
lib.rsw_mark(b"context ready")
time.sleep(1.5)
held = None
for gib in (1, 3, 2):
    held = None
    torch.cuda.empty_cache()
    held = torch.empty(gib << 30, dtype=torch.uint8, device="cuda")
    held.fill_(1)
    torch.cuda.synchronize()
    lib.rsw_mark(f"holding {gib} GiB".encode())
    lib.rsw_gauge_set(b"gib_requested", gib)
    time.sleep(1.0)
    smi = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
        capture_output=True, text=True).stdout
    with open(os.path.join(out, f"smi-{gib}.txt"), "w") as f:
        f.write(f"# step {gib} GiB, pid {os.getpid()}, torch reserved {torch.cuda.memory_reserved()}\n")
        f.write(smi)
    time.sleep(1.5)
held = None
torch.cuda.empty_cache()
lib.rsw_mark(b"released")
time.sleep(1)
