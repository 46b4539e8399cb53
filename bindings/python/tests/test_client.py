"""The client calls without a recorder: names checked as the C library checks them,
the library's absence said in one line (or, with RSSWATCH_OPTIONAL=1, once on stderr and
every call a no-op). Each case runs in a fresh interpreter: the library is loaded once
per process."""
import os
import subprocess
import textwrap

import pytest

from conftest import TOP


def py(env, code):
    return subprocess.run(["/usr/bin/python3", "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=60)


def test_calls_work_without_a_recorder(env):
    p = py(env, """
        import rsswatch
        assert rsswatch.enabled()
        rsswatch.mark("alone")
        c = rsswatch.counter("n")
        assert c is rsswatch.counter("n")
        c.add(1); c.add(-5); c.add()
        rsswatch.gauge("g_bytes").set(-3)
        with rsswatch.stage("s"):
            pass
        print(rsswatch.library_path())
    """)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == env["RSSWATCH_LIB"]


def test_names_are_checked(env):
    p = py(env, """
        import errno, rsswatch
        for bad in ("", "has space", "x" * 48, "é"):
            try:
                rsswatch.counter(bad)
            except ValueError as e:
                print("bad:", e)
        rsswatch.counter("x" * 47).add(1)
        rsswatch.counter("c1")
        try:
            rsswatch.gauge("c1")
        except ValueError as e:
            print("kind:", e)
        try:
            rsswatch.mark("")
        except ValueError as e:
            print("mark:", e)
        try:
            rsswatch.counter(3)
        except TypeError as e:
            print("type:", e)
        try:
            for i in range(70):
                rsswatch.gauge("g%d" % i)
        except OSError as e:
            print("full:", e.errno == errno.ENOSPC, e.strerror)
    """)
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert sum(line.startswith("bad: ") for line in out) == 4
    assert "kind: 'c1' is already a counter: a name is a counter or a gauge" in out
    assert "mark: a mark needs a non-empty label" in out
    assert any(line.startswith("type: ") for line in out)
    assert any(line.startswith("full: True cannot make gauge") and "64" in line for line in out)


def test_missing_library_raises_one_line(env):
    env["RSSWATCH_LIB"] = "/nonexistent/librsswatch.so.1"
    p = py(env, """
        import rsswatch
        rsswatch.runs                     # importing needs no library
        errs = []
        for call in (lambda: rsswatch.mark("x"), lambda: rsswatch.counter("c"),
                     lambda: rsswatch.gauge("g")):
            try:
                call()
            except rsswatch.LibraryError as e:
                errs.append(str(e))
        assert len(errs) == 3 and len(set(errs)) == 1, errs
        print(errs[0])
    """)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("\n") == 1
    assert p.stdout.startswith("librsswatch.so.1 not found (tried /nonexistent/librsswatch.so.1)")


def test_a_library_that_is_not_rsswatch(env):
    env["RSSWATCH_LIB"] = "libm.so.6"
    p = py(env, "import rsswatch\nrsswatch.mark('x')\n")
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1] == \
        "rsswatch._client.LibraryError: libm.so.6 has no rsw_init: not rsswatch's library"


def test_optional_mode_says_so_once(env):
    env["RSSWATCH_LIB"] = "/nonexistent/librsswatch.so.1"
    env["RSSWATCH_OPTIONAL"] = "1"
    p = py(env, """
        import rsswatch
        assert not rsswatch.enabled()
        for i in range(3):
            rsswatch.mark("x")
            rsswatch.counter("c").add(1)
            rsswatch.gauge("g").set(2)
            with rsswatch.stage("s"):
                pass
    """)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("rsswatch: librsswatch.so.1 not found")
    assert lines[0].endswith("; marks and counters are not recorded")


def test_the_page_follows_the_process(env):
    # the page is made at the first call and named by pid; removed at exit
    shm = env["RSSWATCH_SHM_DIR"]
    p = py(env, """
        import os, rsswatch
        rsswatch.mark("x")
        print(os.getpid(), sorted(os.listdir(os.environ["RSSWATCH_SHM_DIR"])))
    """)
    assert p.returncode == 0, p.stderr
    pid, names = p.stdout.split(" ", 1)
    assert names.strip() == "['rsswatch.%s']" % pid
    assert os.listdir(shm) == []


def test_stage_as_decorator_keeps_the_function(env):
    import rsswatch

    @rsswatch.stage("decorated")
    def f(a, b=2):
        """doc"""
        return a + b
    assert f.__name__ == "f" and f.__doc__ == "doc"
    with pytest.raises(ValueError):
        rsswatch.stage("")


def test_the_trees_build_is_found_without_rsswatch_lib(env):
    del env["RSSWATCH_LIB"]
    env["BUILD"] = os.environ.get("BUILD", "build")
    p = py(env, "import rsswatch\nprint(rsswatch.library_path())\n")
    assert p.returncode == 0, p.stderr
    b = env["BUILD"] if os.path.isabs(env["BUILD"]) else os.path.join(TOP, env["BUILD"])
    assert p.stdout.strip() == os.path.join(b, "librsswatch.so")
