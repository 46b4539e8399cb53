"""Reading rsswatch's run database: runs(), samples(), marks() and counters().

The file is opened read-only (a "file:...?mode=ro" URI), found as the recorder finds it
(db argument, else $RSSWATCH_DB, else $XDG_STATE_HOME/rsswatch/rsswatch.db for an
absolute XDG_STATE_HOME, else ~/.local/state/rsswatch/rsswatch.db), and its schema
version (PRAGMA user_version) checked: a file newer than this package knows is refused
rather than misread. Fields have the names and units of rsswatch's own JSON
(ls --json, show --json, export --format jsonl): sizes in bytes (*_bytes), durations in
seconds (*_s), moments as timezone-aware UTC datetimes (to the microsecond; *_ns
fields keep the stored nanoseconds where a time index is built from them).
"""
import datetime
import os
import sqlite3
import urllib.parse

__all__ = ["StoreError", "SCHEMA_VERSION", "default_db", "runs", "samples", "marks", "counters"]

# The newest schema (PRAGMA user_version) this package reads: src/store/schema.c's
# store_migrations[] has this many steps. t90 fails when the C side has more.
SCHEMA_VERSION = 19
APPLICATION_ID = 0x52535731     # "RSW1"


class StoreError(Exception):
    """The database cannot be read: missing, not rsswatch's, too new, or no such run."""


def default_db():
    """The database path the recorder uses when given no --db."""
    env = os.environ.get("RSSWATCH_DB")
    if env:
        return env
    xdg = os.environ.get("XDG_STATE_HOME", "")
    if xdg.startswith("/"):     # a relative one is ignored, as the XDG spec says
        return os.path.join(xdg, "rsswatch", "rsswatch.db")
    home = os.environ.get("HOME") or "."
    return home + "/.local/state/rsswatch/rsswatch.db"


def _open(db):
    path = os.fspath(db) if db is not None else default_db()
    if not os.path.exists(path):
        raise StoreError("%s: no runs recorded yet (no database at %s)" % (path, path))
    uri = "file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(path))
    try:
        con = sqlite3.connect(uri, uri=True)
        con.execute("PRAGMA busy_timeout = 5000")
        version = con.execute("PRAGMA user_version").fetchone()[0]
        appid = con.execute("PRAGMA application_id").fetchone()[0]
        tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise StoreError("%s: cannot read the database: %s" % (path, e)) from None
    if tables > 0 and appid != APPLICATION_ID:
        con.close()
        raise StoreError("%s: not an rsswatch database" % path)
    if version > SCHEMA_VERSION:
        con.close()
        raise StoreError("%s: database schema version %d is newer than this rsswatch "
                         "package knows (%d); upgrade the package" % (path, version, SCHEMA_VERSION))
    if version < 0:
        con.close()
        raise StoreError("%s: database is corrupt: its schema version is %d" % (path, version))
    if tables == 0:
        con.close()
        raise StoreError("%s: no runs recorded yet" % path)
    con.row_factory = sqlite3.Row
    return con


def _utc(ns):
    """A CLOCK_REALTIME ns as an aware datetime, to the microsecond (truncated)."""
    if ns is None:
        return None
    s, rest = divmod(int(ns), 1000000000)
    return (datetime.datetime.fromtimestamp(s, datetime.timezone.utc)
            + datetime.timedelta(microseconds=rest // 1000))


def _secs(ns):
    return None if ns is None else ns / 1e9


def _text_or_null(v):
    return v if v else None


def _bool(v):
    return None if v is None else bool(v)


# The run's fields in ls --json's order: (output name, column, conversion). Columns of
# no output there (tree, last_at, recorder_pid, ...) are left out; params, duration_s
# and mean_rss_bytes are made as show does.
_RUN = [
    ("id", "id", None), ("label", "label", None), ("params", None, "params"),
    ("series", "series", None), ("host", "host", None), ("kernel", "kernel", None),
    ("target", "target", None), ("mode", "mode", None), ("pid", "pid", None),
    ("started_at", "started_at", _utc), ("ended_at", "ended_at", _utc),
    ("duration_s", None, "duration"), ("interval_s", "interval_ns", _secs),
    ("samples", "samples", None), ("outcome", "outcome", "outcome"),
    ("exit_code", "exit_code", None), ("signal", "signal", None),
    ("oom_kills", "oom_kills", None), ("peak_rss_bytes", "peak_rss", None),
    ("peak_rss_at", "peak_rss_at", _utc), ("peak_source", "peak_source", _text_or_null),
    ("hwm_before_bytes", "hwm_before", None),
    ("cgroup_peak_before_bytes", "cgroup_peak_before", None),
    ("peak_process_rss_bytes", "peak_process_rss", None),
    ("peak_process_pid", "peak_process_pid", None),
    ("peak_process_comm", "peak_process_comm", "with:peak_process_pid"),
    ("exit_records", "exit_records", _bool), ("mean_rss_bytes", None, "mean"),
    ("last_rss_bytes", "last_rss", None), ("peak_gpu_bytes", "peak_gpu", None),
    ("peak_gpu_at", "peak_gpu_at", _utc), ("peak_gpu_source", "peak_gpu_source", _text_or_null),
    ("stacks_mode", "stacks", _text_or_null), ("stacks_peak_at", "stacks_peak_at", _utc),
    ("stacks_gpu_peak_at", "stacks_gpu_peak_at", _utc),
    ("mem_total_bytes", "mem_total", None), ("outcome_note", "outcome_note", None),
    ("cgroup", "cgroup", _text_or_null), ("cgroup_limit_bytes", "cgroup_limit", None),
    ("peak_cgroup_bytes", "peak_cgroup", None),
    ("peak_cgroup_exact", "peak_cgroup_exact", "with:peak_cgroup"),
    ("min_eta_s", "min_eta_ns", _secs), ("min_eta_at", "min_eta_at", _utc),
    ("min_eta_limit", "min_eta_limit", _text_or_null),
]

# The sample's figures in export's order: (output name, column, in seconds from ns).
_SAMPLE = [
    ("rss_bytes", "rss"), ("hwm_bytes", "hwm"), ("anon_bytes", "anon"),
    ("file_bytes", "file"), ("shmem_bytes", "shmem"), ("swap_bytes", "swap"),
    ("threads", "threads"), ("mem_available_bytes", "mem_available"),
    ("pss_bytes", "pss"), ("uss_bytes", "uss"), ("swap_pss_bytes", "swap_pss"),
    ("pss_read_us", "pss_read_us"), ("cgroup_bytes", "cgroup"),
    ("cgroup_peak_bytes", "cgroup_peak"), ("psi_some_avg10", "psi_some_avg10"),
    ("psi_full_avg10", "psi_full_avg10"), ("psi_some_total_us", "psi_some_total_us"),
    ("psi_full_total_us", "psi_full_total_us"),
    ("cgroup_psi_some_avg10", "cg_psi_some_avg10"),
    ("cgroup_psi_full_avg10", "cg_psi_full_avg10"),
    ("cgroup_psi_some_total_us", "cg_psi_some_total_us"),
    ("cgroup_psi_full_total_us", "cg_psi_full_total_us"),
    ("cpu_user_s", "cpu_user_ns"), ("cpu_sys_s", "cpu_sys_ns"), ("minflt", "minflt"),
    ("majflt", "majflt"), ("read_bytes", "read_bytes"), ("write_bytes", "write_bytes"),
    ("gpu_bytes", "gpu"),
]


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


def _starttime(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except (OSError, ValueError):
        return None
    fields = s[s.rindex(")") + 2:].split()     # the name may hold spaces and ")"
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])      # field 22, after pid and comm


def _outcome(row, boot):
    """"interrupted" for a run still "running" whose recorder is gone, as rsswatch says."""
    if row["outcome"] != "running":
        return row["outcome"]
    keys = row.keys()
    pid = row["recorder_pid"] if "recorder_pid" in keys else 0
    if (boot is not None and row["boot_id"] == boot and pid > 0
            and _starttime(pid) == row["recorder_start"]):
        return "running"
    return "interrupted"


def _params(con, run_id):
    try:
        rows = con.execute("SELECT key, value, num FROM run_param WHERE run_id = ? "
                           "ORDER BY key", (run_id,)).fetchall()
    except sqlite3.OperationalError:    # schema before 9
        return {}
    return {k: (n if n is not None else v) for k, v, n in rows}


def _run_dict(con, row, boot):
    keys = set(row.keys())
    get = lambda c: row[c] if c in keys else None
    out = {}
    for name, col, conv in _RUN:
        if conv == "params":
            out[name] = _params(con, row["id"])
        elif conv == "duration":
            end = get("ended_at") or get("last_at") or row["started_at"]
            out[name] = (end - row["started_at"]) / 1e9
        elif conv == "mean":
            n = get("samples") or 0
            out[name] = (get("sum_rss") or 0.0) / n if n else 0.0
        elif conv == "outcome":
            out[name] = _outcome(row, boot)
        elif isinstance(conv, str) and conv.startswith("with:"):
            v = get(col)
            out[name] = None if get(conv[5:]) is None else (
                bool(v) if name == "peak_cgroup_exact" else v)
        else:
            v = get(col)
            out[name] = conv(v) if conv and v is not None else v
    out["started_at_ns"] = row["started_at"]
    return out


def _want_frame(as_frame):
    if as_frame is False:
        return None
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise
        return None
    return pandas


def _frame(pd, rows, index_ns, index_name, columns):
    df = pd.DataFrame(rows, columns=columns)
    df.index = pd.DatetimeIndex(pd.to_datetime(index_ns, unit="ns", utc=True), name=index_name)
    return df


def runs(db=None, as_frame=None):
    """Every run, oldest first: a dict per run with ls --json's fields (started_at a
    UTC datetime, started_at_ns its nanoseconds). With pandas installed (and as_frame
    not False), a DataFrame indexed by the start time instead."""
    con = _open(db)
    try:
        boot = _boot_id()
        out = [_run_dict(con, r, boot) for r in con.execute("SELECT * FROM run ORDER BY id")]
    finally:
        con.close()
    pd = _want_frame(as_frame)
    if pd is None:
        return out
    cols = [n for n, _, _ in _RUN] + ["started_at_ns"]
    return _frame(pd, out, [r["started_at_ns"] for r in out], "started_at", cols)


def _run_row(con, run):
    """The run row for run: an id, a dict or row with an "id", or None / "last"."""
    if run is None or run == "last":
        row = con.execute("SELECT * FROM run ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            raise StoreError("no runs recorded yet")
        return row
    if isinstance(run, dict) or hasattr(run, "keys"):
        run = run["id"]
    try:
        rid = int(run)
    except (TypeError, ValueError):
        raise StoreError("%r names no run: give its id (an int), a run from runs(), or "
                         "\"last\"" % (run,)) from None
    row = con.execute("SELECT * FROM run WHERE id = ?", (rid,)).fetchone()
    if row is None:
        raise StoreError("no run %d" % rid)
    return row


def _side(con, sql, rid):
    try:
        return con.execute(sql, (rid,)).fetchall()
    except sqlite3.OperationalError:    # the table is newer than the file
        return []


def samples(run=None, db=None, as_frame=None):
    """The samples of run (an id, a run from runs(), or "last"/None: the latest), as
    export gives them: per sample its time (UTC datetime; t_ns the nanoseconds),
    elapsed_s, elapsed_ns, every figure (None where not measured), each GPU's
    gpuN_bytes and each counter or gauge as counter.NAME, its latest value at that
    time (None before its first). A DataFrame indexed by time with pandas."""
    con = _open(db)
    try:
        run = _run_row(con, run)
        rid, start = run["id"], run["started_at"]
        rows = con.execute("SELECT * FROM sample WHERE run_id = ? ORDER BY elapsed_ns",
                           (rid,)).fetchall()
        side = [("counter." + n, t, v) for t, n, v in _side(
            con, "SELECT elapsed_ns, name, value FROM counter WHERE run_id = ? "
            "ORDER BY elapsed_ns, name", rid)]
        side += [("gpu%d_bytes" % d, t, v) for t, d, v in _side(
            con, "SELECT elapsed_ns, device, target_bytes FROM gpu WHERE run_id = ? "
            "ORDER BY elapsed_ns, device", rid)]
    finally:
        con.close()
    side.sort(key=lambda x: x[1])
    gpus = sorted({n for n, _, _ in side if n.startswith("gpu")},
                  key=lambda n: int(n[3:-6]))
    ctrs = sorted({n for n, _, _ in side if n.startswith("counter.")})
    out, cur, k = [], {}, 0
    keys = set(rows[0].keys()) if rows else set()
    for i, r in enumerate(rows):
        e = r["elapsed_ns"]
        last = i == len(rows) - 1   # the last row holds every value stored (as export)
        while k < len(side) and (last or side[k][1] <= e):
            cur[side[k][0]] = side[k][2]
            k += 1
        d = {"time": _utc(start + e), "t_ns": start + e, "elapsed_s": e / 1e9, "elapsed_ns": e}
        for name, col in _SAMPLE:
            v = r[col] if col in keys else None
            d[name] = v / 1e9 if v is not None and col.endswith("_ns") else v
        for n in gpus + ctrs:
            d[n] = cur.get(n)
        out.append(d)
    pd = _want_frame(as_frame)
    if pd is None:
        return out
    cols = ["t_ns", "elapsed_s", "elapsed_ns"] + [n for n, _ in _SAMPLE] + gpus + ctrs
    return _frame(pd, out, [d["t_ns"] for d in out], "time", cols)


def marks(run=None, db=None, as_frame=None):
    """The marks of run in time order, as show --json gives them: time (UTC datetime;
    t_ns the nanoseconds), elapsed_s from the run's start, label, and the peak of the
    stage the mark opens (stage_peak_bytes, stage_peak_time; None where not known)."""
    con = _open(db)
    try:
        run = _run_row(con, run)
        start = run["started_at"]
        try:
            rows = con.execute("SELECT t, label, stage_peak, stage_peak_at FROM mark "
                               "WHERE run_id = ? ORDER BY t, rowid", (run["id"],)).fetchall()
        except sqlite3.OperationalError:    # schema before 16
            rows = [(t, lb, None, None) for t, lb in con.execute(
                "SELECT t, label FROM mark WHERE run_id = ? ORDER BY t, rowid", (run["id"],))]
    finally:
        con.close()
    out = [{"time": _utc(t), "t_ns": t, "elapsed_s": (t - start) / 1e9, "label": lb,
            "stage_peak_bytes": p, "stage_peak_time": _utc(pt)} for t, lb, p, pt in rows]
    pd = _want_frame(as_frame)
    if pd is None:
        return out
    cols = ["t_ns", "elapsed_s", "label", "stage_peak_bytes", "stage_peak_time"]
    return _frame(pd, out, [d["t_ns"] for d in out], "time", cols)


def counters(run=None, db=None, as_frame=None):
    """The stored changes of run's counters and gauges: time, t_ns, elapsed_s, name,
    value (a value holds until the name's next row)."""
    con = _open(db)
    try:
        run = _run_row(con, run)
        start = run["started_at"]
        rows = _side(con, "SELECT elapsed_ns, name, value FROM counter WHERE run_id = ? "
                     "ORDER BY elapsed_ns, name", run["id"])
    finally:
        con.close()
    out = [{"time": _utc(start + e), "t_ns": start + e, "elapsed_s": e / 1e9, "name": n,
            "value": v} for e, n, v in rows]
    pd = _want_frame(as_frame)
    if pd is None:
        return out
    return _frame(pd, out, [d["t_ns"] for d in out], "time", ["t_ns", "elapsed_s", "name", "value"])
