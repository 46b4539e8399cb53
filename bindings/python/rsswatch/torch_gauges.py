"""PyTorch's CUDA memory as rsswatch gauges, published from a daemon thread.

    from rsswatch.torch_gauges import TorchGauges
    with TorchGauges(interval=0.1):
        train()

Every interval the thread sets three gauges from torch.cuda: the bytes the caching
allocator has handed out (memory_allocated), the bytes it holds from the driver
(memory_reserved) and the highest allocated so far (max_memory_allocated). The
recorder stores them beside its samples and the driver's view (NVML's figure per
process, which also counts the CUDA context and other libraries' memory): allocated
below reserved is the allocator's cache; reserved below the driver's figure is memory
torch does not manage. Each call to torch.cuda takes the device's lock, not the GIL
for long; at the default 0.1 s the thread costs nothing measurable.
"""
import threading

from . import _client

__all__ = ["TorchGauges", "GAUGES"]

# gauge name -> torch.cuda function; "_bytes" makes rsswatch show them as sizes
GAUGES = (
    ("torch_allocated_bytes", "memory_allocated"),
    ("torch_reserved_bytes", "memory_reserved"),
    ("torch_max_allocated_bytes", "max_memory_allocated"),
)


class TorchGauges:
    """Publishes torch.cuda's memory figures for device (None: the current one) every
    interval seconds, with names prefixed by prefix (a device's index is a good one
    where several are watched: "cuda1_"). start() and stop(), or a context manager;
    stop() publishes once more, so the last values are the final ones."""

    def __init__(self, interval=0.1, device=None, prefix=""):
        if not interval > 0:
            raise ValueError("interval must be above 0 seconds")
        import torch    # the caller's; a missing torch is the caller's ImportError
        self._cuda = torch.cuda
        self.interval = float(interval)
        self.device = device
        self._gauges = [(_client.gauge(prefix + name), getattr(torch.cuda, fn))
                        for name, fn in GAUGES]
        self._stop = threading.Event()
        self._thread = None

    def publish(self):
        """Sets the gauges now (the thread calls this every interval)."""
        for g, fn in self._gauges:
            g.set(int(fn(self.device) if self.device is not None else fn()))

    def _run(self):
        while True:
            self.publish()
            if self._stop.wait(self.interval):
                return

    def start(self):
        if self._thread is not None:
            raise RuntimeError("TorchGauges already started")
        if not self._cuda.is_available():
            raise RuntimeError("torch.cuda is not available: no CUDA device to watch")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="rsswatch-torch", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        t = self._thread
        if t is None:
            return
        self._stop.set()
        t.join()
        self._thread = None
        self.publish()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
