"""PyTorch's device memory by call stack (record --stacks on the GPU machine): a model's
weights from load_weights, then activations from run_batch, each a tensor of known size,
so that what the caching allocator reserved from the driver, and which native frames
asked for it, can be read against torch's own figures (printed at the end)."""
import time

import torch

MIB = 1 << 20


def load_weights():
    return [torch.empty(512 * MIB, dtype=torch.uint8, device="cuda") for _ in range(3)]


def run_batch(n):
    return [torch.ones(128 * MIB, dtype=torch.uint8, device="cuda") for _ in range(n)]


def main():
    torch.cuda.init()
    w = load_weights()
    a = run_batch(4)
    torch.cuda.synchronize()
    time.sleep(0.3)
    print("torch: reserved %d MiB, allocated %d MiB at the peak"
          % (torch.cuda.memory_reserved() // MIB, torch.cuda.memory_allocated() // MIB))
    del a
    torch.cuda.empty_cache()
    time.sleep(0.3)
    del w


if __name__ == "__main__":
    main()
