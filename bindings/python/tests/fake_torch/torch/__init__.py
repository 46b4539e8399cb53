"""A stand-in for PyTorch in the tests of rsswatch.torch_gauges: only torch.cuda's
memory figures, which the test program sets through cuda.FAKE."""
from . import cuda  # noqa: F401
