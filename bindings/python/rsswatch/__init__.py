"""rsswatch from Python: stage marks, counters and gauges for a running recorder
(rsswatch record), and the recorded runs read back from its database.

    import rsswatch
    with rsswatch.stage("load"):
        data = load()
    batches = rsswatch.counter("batches")      # look up once, then add from any thread
    batches.add(1)
    rsswatch.gauge("queue_depth").set(12)

    rsswatch.runs()              # every run (a DataFrame with pandas, else dicts)
    rsswatch.samples("last")     # the latest run's samples, as rsswatch export gives
    rsswatch.marks(3)            # run 3's marks, as rsswatch show --json gives

The client calls need librsswatch.so.1 (RSSWATCH_LIB names it where the loader does
not find it); the readers need only the database. README.md says more.
"""
from ._client import LibraryError, mark, counter, gauge, stage, enabled, library_path, Counter, Gauge
from ._store import StoreError, SCHEMA_VERSION, default_db, runs, samples, marks, counters

__version__ = "0.1.0"

__all__ = ["LibraryError", "mark", "counter", "gauge", "stage", "enabled", "library_path",
           "Counter", "Gauge", "StoreError", "SCHEMA_VERSION", "default_db", "runs",
           "samples", "marks", "counters"]
