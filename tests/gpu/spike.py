"""A short GPU memory spike between two one-second samples, for checking that rsswatch
keeps the highest GPU figure read between samples.

Holds a CUDA context, then, 0.4 s after a whole second since this process started
(rsswatch samples a command it launches at whole seconds from about then), allocates
and writes 6 GiB, holds it 150 ms, frees it (empty_cache); one such spike for each
hold given; then idles 2 s. While holding (50 ms or longer) it asks NVML itself
(libnvidia-ml.so.1 through ctypes: the figure rsswatch reads) for this process's GPU
memory and the device's used memory, and prints them with PyTorch's reserved bytes
and the CLOCK_REALTIME ns just before the allocation and after the free, as one line
"spike: ..." per spike.

    rsswatch record -i 1s -- python3 tests/gpu/spike.py [GIB] [HOLD_S[,HOLD_S...]]
    python3 tests/gpu/spike.py --smi      # hold 2 s and ask nvidia-smi too
"""
import ctypes
import os
import subprocess
import sys
import time

import torch

smi = "--smi" in sys.argv
args = [a for a in sys.argv[1:] if a != "--smi"]
gib = float(args[0]) if args else 6.0
holds = ([float(h) for h in args[1].split(",")] if len(args) > 1
         else [2.0 if smi else 0.15])


class ProcInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]


class Memory(ctypes.Structure):   # nvmlMemory_v2_t: used without the driver's reserve
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
dev = ctypes.c_void_p()
assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0


def nvml_view():
    """(this process's usedGpuMemory on device 0, the device's used memory), bytes."""
    infos = (ProcInfo * 64)()
    n = ctypes.c_uint(64)
    mine = None
    if nv.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(n), infos) == 0:
        for i in range(n.value):
            if infos[i].pid == os.getpid():
                mine = infos[i].used
    mem = Memory()
    mem.version = ctypes.sizeof(Memory) | 2 << 24
    used = mem.used if nv.nvmlDeviceGetMemoryInfo_v2(dev, ctypes.byref(mem)) == 0 else None
    return mine, used


def since_start():
    """Seconds since this process was started (fork time, as /proc/self/stat says)."""
    with open("/proc/self/stat") as f:
        start = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    return time.clock_gettime(time.CLOCK_BOOTTIME) - start


def spike(hold):
    """One spike of gib GiB held hold seconds, placed 0.4 s after a whole second."""
    ctx = nvml_view()
    t = since_start()
    at = int(t) + 0.4
    while at < t + 0.2:
        at += 1.0
    time.sleep(at - t)
    torch.cuda.reset_peak_memory_stats()
    t_alloc = since_start()
    real0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
    x = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda")
    x.fill_(1)
    torch.cuda.synchronize()
    t_held = since_start()
    during = nvml_view() if hold >= 0.05 else (None, None)
    reserved = torch.cuda.memory_reserved()
    smi_out = ""
    if smi:
        smi_out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
            capture_output=True, text=True).stdout.strip().replace("\n", "; ")
    time.sleep(max(0.0, hold - (since_start() - t_held)))
    late = nvml_view() if hold >= 0.05 else (None, None)
    t_free = since_start()
    del x
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    real1 = time.clock_gettime_ns(time.CLOCK_REALTIME)
    after = nvml_view()
    print(f"spike: pid {os.getpid()} hold_s {hold} context_nvml_bytes {ctx[0]} "
          f"alloc_at {t_alloc:.3f}s held_at {t_held:.3f}s freed_at {t_free:.3f}s "
          f"(since process start) nvml_proc_bytes {during[0]} (end of hold {late[0]}) "
          f"nvml_device_used {during[1]} torch_reserved {reserved} "
          f"torch_max_reserved {torch.cuda.max_memory_reserved()} after_free_nvml {after[0]} "
          f"realtime_ns {real0} {real1}"
          + (f" nvidia-smi: {smi_out}" if smi else ""), flush=True)


torch.cuda.init()
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
for h in holds:
    spike(h)
time.sleep(2.0)
