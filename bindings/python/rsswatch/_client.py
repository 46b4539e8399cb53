"""Marks, counters and gauges for a running rsswatch recorder, over librsswatch's C API.

Every call goes straight to the C library (include/rsswatch.h): lock-free, thread-safe,
no system call after setup. The library is loaded, and set up (rsw_init), on the first
use of anything here; where that fails, the first use raises LibraryError with one
line saying why, and every later use raises the same error at once. With
RSSWATCH_OPTIONAL=1 in the environment the failure is said once on standard error
instead and every call does nothing: for code that ships instrumented to machines
that may lack the library.
"""
import ctypes
import ctypes.util
import errno
import functools
import os
import sys
import threading

__all__ = ["LibraryError", "mark", "counter", "gauge", "stage", "library_path", "enabled"]

NAME_MAX = 47
COUNTERS_MAX = 64
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-")


class LibraryError(OSError):
    """librsswatch could not be found, loaded or set up (the message says which)."""


def _candidates():
    """Where the library is looked for, in order, as (path, where it came from)."""
    env = os.environ.get("RSSWATCH_LIB")
    if env:
        yield env, "RSSWATCH_LIB"
        return
    # Run from the source tree (bindings/python/rsswatch/): the tree's build.
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    if os.path.isfile(os.path.join(top, "include", "rsswatch.h")):
        build = os.environ.get("BUILD", "build")
        yield os.path.join(top, build, "librsswatch.so"), "the source tree"
    found = ctypes.util.find_library("rsswatch")
    if found:
        yield found, "the loader's search"
    yield "librsswatch.so.1", "the loader's search"


class _Lib:
    """The loaded library with its functions typed, or the reason there is none."""

    def __init__(self):
        self.error = None
        self.path = None
        self.dll = None
        tried = []
        for path, where in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path)
                continue
            try:
                # PyDLL keeps the GIL over the call: every function is a few
                # atomic instructions, cheaper than releasing and taking it back.
                self.dll = ctypes.PyDLL(path)
                self.path = path
                break
            except OSError as e:
                tried.append(path)
                if where == "RSSWATCH_LIB":
                    self.error = "cannot load librsswatch from RSSWATCH_LIB=%s: %s" % (
                        path, _one_line(e))
                    return
        if self.dll is None:
            self.error = ("librsswatch.so.1 not found (tried %s): install rsswatch's "
                          "library or set RSSWATCH_LIB to its path" % ", ".join(tried))
            return
        d = self.dll
        ll, cp, vp = ctypes.c_longlong, ctypes.c_char_p, ctypes.c_void_p
        for name, args, res in (
            ("rsw_init", [], ctypes.c_int),
            ("rsw_mark", [cp], ctypes.c_int),
            ("rsw_counter_add", [cp, ll], ctypes.c_int),
            ("rsw_gauge_set", [cp, ll], ctypes.c_int),
            ("rsw_counter", [cp], vp),
            ("rsw_gauge", [cp], vp),
            ("rsw_counter_add_h", [vp, ll], ctypes.c_int),
            ("rsw_gauge_set_h", [vp, ll], ctypes.c_int),
        ):
            try:
                f = getattr(d, name)
            except AttributeError:
                self.error = "%s has no %s: not rsswatch's library" % (self.path, name)
                self.dll = None
                return
            f.argtypes = args
            f.restype = res
        rc = d.rsw_init()
        if rc < 0:
            self.error = "cannot set up librsswatch's shared page: %s" % os.strerror(-rc)
            self.dll = None


def _one_line(e):
    return str(e).splitlines()[0] if str(e) else type(e).__name__


_lock = threading.RLock()   # _metric() holds it while a new object loads the library
_lib = None
_dll = None     # _lib.dll once loaded and set up: the calls' fast path
_said = False
# Bumped in a child made by fork(): a handle from the parent updates a copy no recorder
# sees there (rsswatch.h), so every object looks its name up again.
_generation = [0]


def _after_fork():
    _generation[0] += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _load():
    """The library's functions, or None in optional mode; raises LibraryError."""
    global _lib, _dll, _said
    lib = _lib
    if lib is None:
        with _lock:
            if _lib is None:
                _lib = _Lib()
            lib = _lib
    if lib.dll is not None:
        _dll = lib.dll
        return lib.dll
    if os.environ.get("RSSWATCH_OPTIONAL", "") not in ("", "0"):
        if not _said:
            _said = True
            sys.stderr.write("rsswatch: %s; marks and counters are not recorded\n" % lib.error)
        return None
    raise LibraryError(lib.error)


def enabled():
    """True when the library is loaded and set up; False in optional mode without it.
    Raises LibraryError (outside optional mode) as the first call would."""
    return _load() is not None


def library_path():
    """The path the library was loaded from (None where it was not)."""
    _load()
    return _lib.path


def _check_name(name):
    if not isinstance(name, str):
        raise TypeError("a counter or gauge name is a str, not %s" % type(name).__name__)
    b = name.encode("utf-8")
    if not b or not set(name) <= _NAME_CHARS:
        raise ValueError("bad counter or gauge name %r: use 1 to %d of [A-Za-z0-9_.:-]"
                         % (name, NAME_MAX))
    if len(b) > NAME_MAX:
        raise ValueError("counter or gauge name %r is over %d bytes" % (name, NAME_MAX))
    return b


def _lookup_error(kind, name, rc):
    if rc == -errno.EEXIST:
        other = "gauge" if kind == "counter" else "counter"
        return ValueError("%r is already a %s: a name is a counter or a gauge" % (name, other))
    if rc == -errno.ENOSPC:
        return OSError(errno.ENOSPC, "cannot make %s %r: all %d counters and gauges are in use"
                       % (kind, name, COUNTERS_MAX))
    return OSError(-rc, "cannot make %s %r: %s" % (kind, name, os.strerror(-rc)))


def mark(label):
    """Records a stage mark now (the library takes the CLOCK_REALTIME time). The first
    95 bytes of label are kept. Raises ValueError for an empty label."""
    lib = _dll or _load()
    if lib is None:
        return
    if not label:
        raise ValueError("a mark needs a non-empty label")
    # -ENOBUFS (lost in a lapped ring, very rare) is counted as lost by the recorder
    lib.rsw_mark(label.encode("utf-8"))


class _Metric:
    """A counter or gauge by name: looked up once, then updated through its handle."""
    __slots__ = ("name", "_b", "_h", "_gen", "_fn")
    _kind = ""

    def __init__(self, name):
        self.name = name
        self._b = _check_name(name)
        self._gen = -1
        self._h = None
        self._fn = None
        self._bind()

    def _bind(self):
        lib = _load()
        self._gen = _generation[0]
        if lib is None:
            self._fn = _noop
            self._h = None
            return
        look = lib.rsw_counter if self._kind == "counter" else lib.rsw_gauge
        by_name = lib.rsw_counter_add if self._kind == "counter" else lib.rsw_gauge_set
        for _ in range(100):
            h = look(self._b)
            if h:
                self._h = ctypes.c_void_p(h)
                self._fn = lib.rsw_counter_add_h if self._kind == "counter" else lib.rsw_gauge_set_h
                return
            # The lookup gives no reason. The by-name call fails the same way, changing
            # nothing, and says why; -EAGAIN (another thread was making a name) and a
            # success (that thread has finished: the gauge is now 0) mean look again.
            rc = by_name(self._b, 0)
            if rc not in (0, -errno.EAGAIN):
                raise _lookup_error(self._kind, self.name, rc)
        raise OSError(errno.EAGAIN, "cannot make %s %r: other threads kept making names"
                      % (self._kind, self.name))

    def __repr__(self):
        return "rsswatch.%s(%r)" % (self._kind, self.name)


def _noop(h, v):
    return 0


class Counter(_Metric):
    """A counter: add(n) adds n (any sign; 64-bit values that wrap)."""
    __slots__ = ()
    _kind = "counter"

    def add(self, n=1):
        if self._gen != _generation[0]:
            self._bind()
        self._fn(self._h, n)


class Gauge(_Metric):
    """A gauge: set(v) sets it to the integer v."""
    __slots__ = ()
    _kind = "gauge"

    def set(self, v):
        if self._gen != _generation[0]:
            self._bind()
        self._fn(self._h, v)


_metrics = {}


def _metric(cls, name):
    m = _metrics.get((cls, name))
    if m is None:
        with _lock:
            m = _metrics.get((cls, name))
            if m is None:
                m = cls(name)
                _metrics[(cls, name)] = m
    return m


def counter(name):
    """The counter name (made at 0 on first use), the same object for the same name.
    Names of 1 to 47 bytes of [A-Za-z0-9_.:-]; one ending in _bytes is shown as a size,
    in _seconds as a duration. Raises ValueError for a bad name or one that is a gauge,
    OSError when all 64 names are in use, LibraryError without the library."""
    return _metric(Counter, name)


def gauge(name):
    """The gauge name, as counter() is for counters."""
    return _metric(Gauge, name)


class stage:
    """A stage of the program: a mark with label as it begins and one as it ends.

        with rsswatch.stage("load"):       # marks "load", then "load done"
            ...
        @rsswatch.stage("train")           # the same around every call
        def train(): ...

    end: the label of the closing mark (default label + " done"; None: no closing mark,
    the stage lasts until the next mark). A stage left by an exception closes with
    label + " failed" instead. The marks' times bound the stage in rsswatch show's
    marks table (its RSS and peak)."""

    def __init__(self, label, end=""):
        if not label:
            raise ValueError("a stage needs a non-empty label")
        self.label = label
        self.end = label + " done" if end == "" else end

    def __enter__(self):
        mark(self.label)
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            mark(self.label + " failed")
        elif self.end:
            mark(self.end)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def staged(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return staged
