"""torch.cuda's memory functions, returning what FAKE holds (per device; None: the
current one, 0). calls counts the calls, so a test knows the thread has run."""
FAKE = {0: {"allocated": 0, "reserved": 0, "max": 0}}
calls = [0]


def is_available():
    return True


def _get(key, device):
    calls[0] += 1
    return FAKE[0 if device is None else int(device)][key]


def memory_allocated(device=None):
    return _get("allocated", device)


def memory_reserved(device=None):
    return _get("reserved", device)


def max_memory_allocated(device=None):
    return _get("max", device)
