"""The readers' handling of the database file: found as the recorder finds it, opened
read-only, its schema version checked."""
import os
import sqlite3
import subprocess

import pytest

import rsswatch
from rsswatch import _store


def make_db(path, version, appid=0x52535731):
    con = sqlite3.connect(str(path))
    con.execute("CREATE TABLE run (id INTEGER PRIMARY KEY, started_at INTEGER NOT NULL)")
    con.execute("PRAGMA application_id = %d" % appid)
    con.execute("PRAGMA user_version = %d" % version)
    con.commit()
    con.close()


def test_a_newer_schema_is_refused(tmp_path):
    db = tmp_path / "new.db"
    make_db(db, rsswatch.SCHEMA_VERSION + 1)
    with pytest.raises(rsswatch.StoreError) as e:
        rsswatch.runs(db=db)
    assert str(e.value) == ("%s: database schema version %d is newer than this rsswatch "
                            "package knows (%d); upgrade the package"
                            % (db, rsswatch.SCHEMA_VERSION + 1, rsswatch.SCHEMA_VERSION))


def test_a_negative_schema_is_corrupt(tmp_path):
    db = tmp_path / "neg.db"
    make_db(db, -1)
    with pytest.raises(rsswatch.StoreError, match="is corrupt"):
        rsswatch.runs(db=db)


def test_not_an_rsswatch_database(tmp_path):
    db = tmp_path / "other.db"
    make_db(db, 1, appid=7)
    with pytest.raises(rsswatch.StoreError, match="not an rsswatch database$"):
        rsswatch.samples(1, db=db)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(rsswatch.StoreError, match="cannot read the database"):
        rsswatch.runs(db=junk)


def test_missing_database(tmp_path):
    db = tmp_path / "none.db"
    with pytest.raises(rsswatch.StoreError, match="no runs recorded yet"):
        rsswatch.runs(db=db)
    assert not db.exists()      # a reader makes nothing


def test_opened_read_only(tmp_path, monkeypatch):
    db = tmp_path / "ro.db"
    make_db(db, rsswatch.SCHEMA_VERSION)
    seen = []
    real = sqlite3.connect

    def spy(database, *a, **k):
        seen.append((database, k.get("uri")))
        return real(database, *a, **k)
    monkeypatch.setattr(_store.sqlite3, "connect", spy)
    before = db.read_bytes()
    assert rsswatch.runs(db=db, as_frame=False) == []
    assert seen == [("file:%s?mode=ro" % db, True)]
    assert db.read_bytes() == before
    # and a write through such a connection fails
    con = real("file:%s?mode=ro" % db, uri=True)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        con.execute("DELETE FROM run")
    con.close()


@pytest.mark.parametrize("case", ["env", "xdg", "relative xdg", "home"])
def test_default_db_is_the_recorders(case, rsw, tmp_path):
    e = {k: v for k, v in os.environ.items()
         if k not in ("RSSWATCH_DB", "XDG_STATE_HOME", "HOME")}
    if case == "env":
        e["RSSWATCH_DB"] = str(tmp_path / "env.db")
        e["XDG_STATE_HOME"] = str(tmp_path / "xdg")
    elif case == "xdg":
        e["XDG_STATE_HOME"] = str(tmp_path / "xdg")
    elif case == "relative xdg":
        e["XDG_STATE_HOME"] = "rel"
    e["HOME"] = str(tmp_path / "home")
    p = subprocess.run([rsw, "show"], env=e, capture_output=True, text=True, cwd=str(tmp_path))
    # "rsswatch: PATH: no runs recorded yet (no database at PATH)"
    theirs = p.stderr.split(": ")[1]
    mine = subprocess.run(["/usr/bin/python3", "-c", "import rsswatch; print(rsswatch.default_db())"],
                          env=dict(e, PYTHONPATH=os.path.dirname(os.path.dirname(_store.__file__))),
                          capture_output=True, text=True).stdout.strip()
    assert mine == theirs


def test_frames_can_be_refused(tmp_path):
    db = tmp_path / "empty.db"
    make_db(db, rsswatch.SCHEMA_VERSION)
    assert rsswatch.runs(db=db, as_frame=False) == []
