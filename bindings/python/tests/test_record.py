"""A real recorder around a Python program that marks, counts from several threads and
gauges; the run read back with runs(), samples() and marks() is what rsswatch's own
show --json, ls --json and export say."""
import datetime
import sqlite3

import pytest

import rsswatch
from conftest import Recorder, make_env, rsw_path, workload

THREADS, ADDS = 8, 20000
MARKS = ["start", "threads", "threads done", "gauging", "gauged", "boom", "boom failed", "end"]


def iso_ms(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def iso_us(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    recorder = Recorder(rsw_path(), make_env(tmp_path_factory.mktemp("rec")))
    p = recorder.record(workload("workload.py"), str(THREADS), str(ADDS))
    assert p.returncode == 0, "the recorded workload failed: %s" % p.stderr
    return recorder


def test_counter_from_threads_is_exact(run):
    last = {}
    for c in rsswatch.counters(db=run.db, as_frame=False):
        last[c["name"]] = c["value"]
    assert last["items"] == THREADS * ADDS
    assert last["chunk_bytes"] == 0
    assert last["queue_depth"] == 4
    assert last["held_bytes"] == 1 << 40


def test_marks_match_show_json(run):
    show = run.json("show", "--json")
    got = rsswatch.marks(db=run.db, as_frame=False)
    assert [m["label"] for m in got] == MARKS
    assert len(got) == len(show["marks"])
    for mine, theirs in zip(got, show["marks"]):
        assert mine["label"] == theirs["label"]
        assert iso_ms(mine["time"]) == theirs["time"]
        assert "%.3f" % mine["elapsed_s"] == "%.3f" % theirs["elapsed_s"]
        assert mine["stage_peak_bytes"] == theirs["stage_peak_bytes"]
        if theirs["stage_peak_time"] is None:
            assert mine["stage_peak_time"] is None
        else:
            assert iso_us(mine["stage_peak_time"]) == theirs["stage_peak_time"]
    times = [m["t_ns"] for m in got]
    assert times == sorted(times)
    assert 0 <= got[0]["elapsed_s"] <= show["duration_s"]


def test_the_recorders_schema_is_the_packages(run):
    con = sqlite3.connect("file:%s?mode=ro" % run.db, uri=True)
    v = con.execute("PRAGMA user_version").fetchone()[0]
    con.close()
    assert v == rsswatch.SCHEMA_VERSION, (
        "the recorder writes schema %d, the package knows %d: update rsswatch/_store.py "
        "(SCHEMA_VERSION, and _RUN/_SAMPLE for new columns)" % (v, rsswatch.SCHEMA_VERSION))


def test_runs_match_ls_json(run):
    ls = run.json("ls", "--json")
    got = rsswatch.runs(db=run.db, as_frame=False)
    assert [r["id"] for r in got] == [r["id"] for r in ls]
    for mine, theirs in zip(got, ls):
        assert set(theirs) <= set(mine), "fields ls --json has that runs() lacks"
        for k, v in theirs.items():
            m = mine[k]
            if isinstance(m, datetime.datetime):
                fmt = iso_us if len(v) == len("2026-01-01T00:00:00.000000Z") else iso_ms
                assert fmt(m) == v, k
            elif isinstance(m, float) and not isinstance(v, bool):
                assert m == pytest.approx(v, abs=0.0015, rel=1e-6), k
            else:
                assert m == v, k
    assert got[-1]["outcome"] == "exited" and got[-1]["exit_code"] == 0


def test_samples_match_export(run):
    exp = run.jsonl("export", "--format", "jsonl")
    got = rsswatch.samples(db=run.db, as_frame=False)
    assert len(got) == len(exp) > 0
    for mine, theirs in zip(got, exp):
        assert iso_ms(mine["time"]) == theirs["time"]
        assert "%.3f" % mine["elapsed_s"] == theirs["elapsed_s"] or \
            mine["elapsed_s"] == pytest.approx(theirs["elapsed_s"], abs=0.0005)
        for k, v in theirs.items():
            if k in ("time", "elapsed_s"):
                continue
            assert k in mine, "export's column %s is not in samples()" % k
            if isinstance(v, float):
                assert mine[k] == pytest.approx(v, abs=0.0015), k
            else:
                assert mine[k] == v, k
    assert exp[-1]["counter.items"] == THREADS * ADDS


def test_frames_have_a_time_index(run):
    pd = pytest.importorskip("pandas")
    s = rsswatch.samples(db=run.db)
    assert isinstance(s, pd.DataFrame)
    assert isinstance(s.index, pd.DatetimeIndex) and str(s.index.tz) == "UTC"
    assert s.index.is_monotonic_increasing
    assert int(s.index[0].value) == int(s["t_ns"].iloc[0])
    assert s["counter.items"].dropna().iloc[-1] == THREADS * ADDS
    m = rsswatch.marks(db=run.db)
    assert list(m["label"]) == MARKS
    assert m.index.name == "time"
    r = rsswatch.runs(db=run.db)
    assert list(r["id"]) == [1] and r.index.name == "started_at"
    assert isinstance(rsswatch.samples(db=run.db, as_frame=False), list)


def test_run_by_id_and_by_row(run):
    r = rsswatch.runs(db=run.db, as_frame=False)[0]
    assert rsswatch.marks(r, db=run.db, as_frame=False) == \
        rsswatch.marks(r["id"], db=run.db, as_frame=False)
    with pytest.raises(rsswatch.StoreError, match="no run 99"):
        rsswatch.samples(99, db=run.db)
