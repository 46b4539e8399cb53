# gen DB K N: fills a run database with K runs of N samples each, for retention tests
# and benchmarks (tests/t/t72-retention.sh, bench/gc-cost.sh), fast: rows made by SQL,
# not by recording. The database must hold run 1, a real recording with --no-tree
# --no-cgroup; each new run is a copy of its row, so that it reads like a real run.
# Run 1 + i (i = 1..K) has N samples every 10 ms, started K+2-i days before run 1, a
# spike of 100 MiB + i MiB near its middle (its peak, the highest sample), a mark and an
# exit event, and totals as a recorder writes them.
gen() {
	sqlite3 "$1" <<SQL
PRAGMA cache_size = -65536;
BEGIN;
CREATE TEMP TABLE k(i INTEGER);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $2)
  INSERT INTO k SELECT i FROM c;
CREATE TEMP TABLE n(j INTEGER);
WITH RECURSIVE c(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM c WHERE j < $3)
  INSERT INTO n SELECT j FROM c;
CREATE TEMP TABLE r AS SELECT * FROM run, k WHERE run.id = 1;
UPDATE r SET id = 1 + i, started_at = started_at - ($2 + 2 - i) * 86400 * 1000000000,
  interval_ns = 10000000, samples = $3, outcome = 'exited', exit_code = 0, signal = NULL,
  peak_rss = 104857600 + i * 1048576, peak_source = 'VmRSS', label = 'copy ' || i;
UPDATE r SET ended_at = started_at + $3 * 10000000, last_at = started_at + $3 * 10000000,
  peak_rss_at = started_at + ($3 / 2 + i * 37) * 10000000;
ALTER TABLE r DROP COLUMN i;
INSERT INTO run SELECT * FROM r;
INSERT INTO sample (run_id, elapsed_ns, rss, hwm, anon, file, shmem, swap, threads,
  mem_available, cpu_user_ns, cpu_sys_ns, minflt, majflt)
SELECT 1 + i, j * 10000000,
  CASE WHEN j = $3 / 2 + i * 37 THEN 104857600 + i * 1048576
       ELSE 8388608 + ((j * 7919) % 1000) * 32768 END,
  CASE WHEN j >= $3 / 2 + i * 37 THEN 104857600 + i * 1048576 ELSE 41943040 END,
  4194304 + ((j * 7919) % 1000) * 32768, 4194304, 0, 0, 1 + j % 3,
  10737418240 - ((j * 7919) % 1000) * 32768, j * 1000000, j * 100000, j * 10, 0
FROM k, n;
UPDATE run SET sum_rss = (SELECT sum(rss) FROM sample WHERE run_id = run.id),
  last_rss = (SELECT rss FROM sample WHERE run_id = run.id ORDER BY elapsed_ns DESC LIMIT 1)
  WHERE id > 1;
INSERT INTO mark (run_id, t, label) SELECT id, started_at + 5 * 1000000000, 'stage ' || id FROM run WHERE id > 1;
INSERT INTO event (run_id, t, kind, pid, detail)
  SELECT id, ended_at, 'exit', pid, 'exited with 0' FROM run WHERE id > 1;
COMMIT;
SQL
}

