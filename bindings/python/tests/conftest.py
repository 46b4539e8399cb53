"""Shared fixtures: the rsswatch binary of $BUILD (the repository's build/ by default),
a private database and shared-page directory per test, and record(), which runs a real
recorder around a Python program that imports this source tree's package."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
TOP = os.path.dirname(os.path.dirname(PKG))
sys.path.insert(0, PKG)


def build_dir():
    b = os.environ.get("BUILD", "build")
    return b if os.path.isabs(b) else os.path.join(TOP, b)


def rsw_path():
    path = os.path.join(build_dir(), "rsswatch")
    if not os.access(path, os.X_OK):
        pytest.fail("%s is not built (make)" % path)
    return path


@pytest.fixture
def rsw():
    return rsw_path()


def make_env(d):
    """The environment of a recorded program and of the rsswatch verbs: a private
    database and shared-page directory under d, this tree's package and library."""
    e = dict(os.environ)
    (d / "db").mkdir(mode=0o700)
    (d / "shm").mkdir(mode=0o700)
    e["RSSWATCH_DB"] = str(d / "db" / "rsswatch.db")
    e["RSSWATCH_SHM_DIR"] = str(d / "shm")
    e["RSSWATCH_LIB"] = os.path.join(build_dir(), "librsswatch.so")
    e["PYTHONPATH"] = PKG
    e.pop("XDG_STATE_HOME", None)
    return e


@pytest.fixture
def env(tmp_path):
    return make_env(tmp_path)


class Recorder:
    def __init__(self, rsw, env):
        self.rsw = rsw
        self.env = env
        self.db = env["RSSWATCH_DB"]

    def record(self, *argv, interval="20ms", timeout=120):
        """Records argv (a Python program's arguments) to the end; the completed process."""
        cmd = [self.rsw, "record", "-q", "-i", interval, "--", "/usr/bin/python3"] + list(argv)
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)

    def verb(self, *args):
        p = subprocess.run([self.rsw] + list(args), env=self.env, capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0, "rsswatch %s: %s" % (" ".join(args), p.stderr)
        return p.stdout

    def json(self, *args):
        return json.loads(self.verb(*args))

    def jsonl(self, *args):
        return [json.loads(line) for line in self.verb(*args).splitlines()]


@pytest.fixture
def recorder(rsw, env):
    return Recorder(rsw, env)


def workload(name):
    return os.path.join(HERE, name)
