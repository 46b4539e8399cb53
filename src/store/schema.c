/* The schema: its history (store_migrations[], one step per version, never edited), the
 * checks that a file is an rsswatch database of a version this build can use, and the
 * migration of an older one. Opening the file (store.c) calls store_schema_check(); the
 * test that builds a database at every old version replays store_migrations[]. */
#include "store/store.h"
#include "store/store_int.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* Migrations: schema step i brings user_version from i to i + 1. Append, never edit. */
const char *const store_migrations[] = {
	/* 1: runs, samples, events, marks */
	"CREATE TABLE run ("
	"  id INTEGER PRIMARY KEY,"
	"  label TEXT NOT NULL DEFAULT '',"
	"  host TEXT NOT NULL DEFAULT '',"
	"  kernel TEXT NOT NULL DEFAULT '',"
	"  target TEXT NOT NULL DEFAULT '',"
	"  mode TEXT NOT NULL DEFAULT '',"
	"  pid INTEGER NOT NULL DEFAULT 0,"
	"  started_at INTEGER NOT NULL,"
	"  ended_at INTEGER,"
	"  last_at INTEGER,"
	"  interval_ns INTEGER NOT NULL,"
	"  samples INTEGER NOT NULL DEFAULT 0,"
	"  outcome TEXT NOT NULL,"
	"  exit_code INTEGER,"
	"  signal INTEGER,"
	"  peak_rss INTEGER NOT NULL DEFAULT 0,"
	"  peak_rss_at INTEGER,"
	"  peak_gpu INTEGER,"
	"  peak_gpu_at INTEGER,"
	"  sum_rss REAL NOT NULL DEFAULT 0,"
	"  last_rss INTEGER NOT NULL DEFAULT 0,"
	"  mem_total INTEGER NOT NULL DEFAULT 0,"
	"  recorder_pid INTEGER NOT NULL DEFAULT 0,"
	"  recorder_start INTEGER NOT NULL DEFAULT 0,"
	"  boot_id TEXT NOT NULL DEFAULT ''"
	");"
	"CREATE TABLE sample ("
	"  run_id INTEGER NOT NULL,"
	"  elapsed_ns INTEGER NOT NULL,"
	"  rss INTEGER NOT NULL, hwm INTEGER NOT NULL, anon INTEGER NOT NULL,"
	"  file INTEGER NOT NULL, shmem INTEGER NOT NULL, swap INTEGER NOT NULL,"
	"  threads INTEGER NOT NULL, mem_available INTEGER NOT NULL,"
	"  pss INTEGER, uss INTEGER, cgroup INTEGER, gpu INTEGER,"
	"  PRIMARY KEY (run_id, elapsed_ns)"
	") WITHOUT ROWID;"
	"CREATE TABLE event ("
	"  run_id INTEGER NOT NULL, t INTEGER NOT NULL, kind TEXT NOT NULL,"
	"  pid INTEGER NOT NULL DEFAULT 0, detail TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX event_run ON event (run_id, t);"
	"CREATE TABLE mark ("
	"  run_id INTEGER NOT NULL, t INTEGER NOT NULL, label TEXT NOT NULL);"
	"CREATE INDEX mark_run ON mark (run_id, t);",
	/* 2: application counters (stored when they change) and per-device GPU figures */
	"CREATE TABLE counter ("
	"  run_id INTEGER NOT NULL, elapsed_ns INTEGER NOT NULL, name TEXT NOT NULL,"
	"  value INTEGER NOT NULL, PRIMARY KEY (run_id, name, elapsed_ns)) WITHOUT ROWID;"
	"CREATE TABLE gpu ("
	"  run_id INTEGER NOT NULL, elapsed_ns INTEGER NOT NULL, device INTEGER NOT NULL,"
	"  target_bytes INTEGER, used_bytes INTEGER NOT NULL, total_bytes INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, elapsed_ns, device)) WITHOUT ROWID;",
	/* 3: why the target died (OOM evidence), the memory cgroup recorded or made, and
	 * the cgroup's peak per sample */
	"ALTER TABLE run ADD COLUMN oom_at INTEGER;"
	"ALTER TABLE run ADD COLUMN oom_anon_rss INTEGER;"
	"ALTER TABLE run ADD COLUMN oom_memcg TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE run ADD COLUMN outcome_note TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE run ADD COLUMN cgroup TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE run ADD COLUMN cgroup_limit INTEGER;"
	"ALTER TABLE run ADD COLUMN peak_cgroup INTEGER;"
	"ALTER TABLE run ADD COLUMN peak_cgroup_at INTEGER;"
	"ALTER TABLE sample ADD COLUMN cgroup_peak INTEGER;",
	/* 4: process sets (--tree, -g): one row per member per sample; the sample row
	 * holds the totals. run.tree marks a run over a tree of processes. */
	"CREATE TABLE proc_sample ("
	"  run_id INTEGER NOT NULL, elapsed_ns INTEGER NOT NULL, pid INTEGER NOT NULL,"
	"  ppid INTEGER NOT NULL, comm TEXT NOT NULL, rss INTEGER NOT NULL,"
	"  anon INTEGER NOT NULL, file INTEGER NOT NULL, shmem INTEGER NOT NULL,"
	"  swap INTEGER NOT NULL, PRIMARY KEY (run_id, elapsed_ns, pid)) WITHOUT ROWID;"
	"ALTER TABLE run ADD COLUMN tree INTEGER NOT NULL DEFAULT 0;",
	/* 5: memory pressure (PSI) per sample: the host's, and the v2 cgroup's where there
	 * is one; avg10 as REAL percent, totals in microseconds; NULL when absent */
	"ALTER TABLE sample ADD COLUMN psi_some_avg10 REAL;"
	"ALTER TABLE sample ADD COLUMN psi_full_avg10 REAL;"
	"ALTER TABLE sample ADD COLUMN psi_some_total_us INTEGER;"
	"ALTER TABLE sample ADD COLUMN psi_full_total_us INTEGER;"
	"ALTER TABLE sample ADD COLUMN cg_psi_some_avg10 REAL;"
	"ALTER TABLE sample ADD COLUMN cg_psi_full_avg10 REAL;"
	"ALTER TABLE sample ADD COLUMN cg_psi_some_total_us INTEGER;"
	"ALTER TABLE sample ADD COLUMN cg_psi_full_total_us INTEGER;",
	/* 6: --pss: SwapPss and the time each smaps_rollup read took, per sample (NULL
	 * where none was read); run.pss_interval_ns, 0 when PSS was not asked for */
	"ALTER TABLE sample ADD COLUMN swap_pss INTEGER;"
	"ALTER TABLE sample ADD COLUMN pss_read_us INTEGER;"
	"ALTER TABLE run ADD COLUMN pss_interval_ns INTEGER NOT NULL DEFAULT 0;",
	/* 7: a member's row is stored when its figures change, and a row with gone = 1 when
	 * it leaves the set; proc_at_sample gives every member's figures at every sample
	 * (its last row at or before it), as one row per member per sample did before */
	"ALTER TABLE proc_sample ADD COLUMN gone INTEGER NOT NULL DEFAULT 0;"
	"CREATE INDEX proc_sample_pid ON proc_sample (run_id, pid, elapsed_ns);"
	"CREATE VIEW proc_at_sample AS"
	" SELECT s.run_id AS run_id, s.elapsed_ns AS elapsed_ns, p.pid AS pid, p.ppid AS ppid,"
	"  p.comm AS comm, p.rss AS rss, p.anon AS anon, p.file AS file, p.shmem AS shmem,"
	"  p.swap AS swap"
	" FROM sample s JOIN proc_sample p ON p.run_id = s.run_id AND p.elapsed_ns ="
	"  (SELECT max(q.elapsed_ns) FROM proc_sample q"
	"   WHERE q.run_id = s.run_id AND q.pid = p.pid AND q.elapsed_ns <= s.elapsed_ns)"
	" WHERE p.gone = 0;",
	/* 8: the run's own peak and where it came from; the attached target's VmHWM before
	 * the recording (hwm_before, NULL when launched); OOM kills during the run, each in
	 * oom_kill with the kernel's figures; the largest single process; one row per
	 * process of the run in process (its exact peak where an exit record gave it) */
	"ALTER TABLE run ADD COLUMN hwm_before INTEGER;"
	"ALTER TABLE run ADD COLUMN oom_kills INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE run ADD COLUMN peak_source TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE run ADD COLUMN peak_process_rss INTEGER;"
	"ALTER TABLE run ADD COLUMN peak_process_pid INTEGER;"
	"ALTER TABLE run ADD COLUMN peak_process_comm TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE run ADD COLUMN exit_records INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE run ADD COLUMN peak_cgroup_exact INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE oom_kill ("
	"  run_id INTEGER NOT NULL, t INTEGER NOT NULL, pid INTEGER NOT NULL,"
	"  comm TEXT NOT NULL, anon_rss INTEGER, file_rss INTEGER, shmem_rss INTEGER,"
	"  total_vm INTEGER, memcg TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX oom_kill_run ON oom_kill (run_id, t);"
	"CREATE TABLE process ("
	"  run_id INTEGER NOT NULL, pid INTEGER NOT NULL, ppid INTEGER NOT NULL,"
	"  comm TEXT NOT NULL, first_ns INTEGER NOT NULL, end_ns INTEGER,"
	"  peak_rss INTEGER NOT NULL, peak_source TEXT NOT NULL, hwm_before INTEGER,"
	"  ended TEXT NOT NULL, exit_code INTEGER, signal INTEGER,"
	"  PRIMARY KEY (run_id, pid, first_ns)) WITHOUT ROWID;",
	/* 9: run parameters (record --param KEY=VALUE): the text as given, and num, the
	 * value as a number when the whole text is one (NULL otherwise) */
	"CREATE TABLE run_param ("
	"  run_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, num REAL,"
	"  PRIMARY KEY (run_id, key)) WITHOUT ROWID;"
	"CREATE INDEX run_param_key ON run_param (key, value);",
	/* 10: the smallest time to exhaustion projected while recording (NULL: none), when
	 * it was projected, and toward which limit ('cgroup' or 'host') */
	"ALTER TABLE run ADD COLUMN min_eta_ns INTEGER;"
	"ALTER TABLE run ADD COLUMN min_eta_at INTEGER;"
	"ALTER TABLE run ADD COLUMN min_eta_limit TEXT NOT NULL DEFAULT '';",
	/* 11: context with each sample, cumulative counters as read (NULL: not read):
	 * CPU time in user and kernel mode (ns), minor and major page faults, bytes read
	 * from and written to storage (/proc/PID/io; NULL where not permitted). Over a
	 * set, sums over its members, those that left included. */
	"ALTER TABLE sample ADD COLUMN cpu_user_ns INTEGER;"
	"ALTER TABLE sample ADD COLUMN cpu_sys_ns INTEGER;"
	"ALTER TABLE sample ADD COLUMN minflt INTEGER;"
	"ALTER TABLE sample ADD COLUMN majflt INTEGER;"
	"ALTER TABLE sample ADD COLUMN read_bytes INTEGER;"
	"ALTER TABLE sample ADD COLUMN write_bytes INTEGER;",
	/* 12: retention (gc, record --keep/--max-db): one row per run whose series it
	 * thinned: points, the most sample rows it keeps (1000, 100; 0: its series removed,
	 * its summary, marks and events kept); bucket_ns, the width of the buckets each
	 * kept as its maximum (0 with points 0); rows_before, its sample rows before the
	 * first thinning; t, when (CLOCK_REALTIME ns) */
	"CREATE TABLE run_gc ("
	"  run_id INTEGER PRIMARY KEY, points INTEGER NOT NULL, bucket_ns INTEGER NOT NULL,"
	"  rows_before INTEGER NOT NULL, t INTEGER NOT NULL);",
	/* 13: record --follow: the series of a followed service's runs (the id of its
	 * first run; NULL: not followed) */
	"ALTER TABLE run ADD COLUMN series INTEGER;"
	"CREATE INDEX run_series ON run (series, id);",
	/* 14: each process's own context totals over its life, at the end of the run (its
	 * exit records, else its last read): CPU time in user and kernel mode (ns), minor
	 * and major page faults, bytes read from and written to storage. NULL: not known
	 * (and for every process of a run recorded before this step). */
	"ALTER TABLE process ADD COLUMN cpu_user_ns INTEGER;"
	"ALTER TABLE process ADD COLUMN cpu_sys_ns INTEGER;"
	"ALTER TABLE process ADD COLUMN minflt INTEGER;"
	"ALTER TABLE process ADD COLUMN majflt INTEGER;"
	"ALTER TABLE process ADD COLUMN read_bytes INTEGER;"
	"ALTER TABLE process ADD COLUMN write_bytes INTEGER;",
	/* 15: a recorded cgroup's own peak when the recording began (-g on cgroup v1, or
	 * v2 without a private reset): the kernel's all-time figure, history rather than
	 * the run's. NULL: none, or the peak covers the run only. */
	"ALTER TABLE run ADD COLUMN cgroup_peak_before INTEGER;",
	/* 16: the peak of the stage each mark opens (up to the next mark, or the run's
	 * end) from the kernel's page counts, and when (CLOCK_REALTIME ns). NULL: not
	 * known (recorded without the engine, or before this step). */
	"ALTER TABLE mark ADD COLUMN stage_peak INTEGER;"
	"ALTER TABLE mark ADD COLUMN stage_peak_at INTEGER;",
	/* 17: where the GPU peak came from: NVML (a read of the driver) or allocations
	 * (the GPU probes, between reads). NULL: no GPU, or recorded before this step. */
	"ALTER TABLE run ADD COLUMN peak_gpu_source TEXT;",
	/* 18: live bytes by call stack (record --stacks): the mode recorded (NULL: none),
	 * when the snapshot at the peak was taken (CLOCK_REALTIME ns; NULL: none); each
	 * stack of a run (its frames, innermost first, one a line), and the bytes and
	 * blocks each held at the peak ('peak') and at the end ('end') */
	"ALTER TABLE run ADD COLUMN stacks TEXT;"
	"ALTER TABLE run ADD COLUMN stacks_peak_at INTEGER;"
	"CREATE TABLE stack ("
	"  run_id INTEGER NOT NULL, id INTEGER NOT NULL, frames TEXT NOT NULL,"
	"  PRIMARY KEY (run_id, id)) WITHOUT ROWID;"
	"CREATE TABLE stack_bytes ("
	"  run_id INTEGER NOT NULL, at TEXT NOT NULL, stack_id INTEGER NOT NULL,"
	"  bytes INTEGER NOT NULL, blocks INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, at, stack_id)) WITHOUT ROWID;",
	/* 19: the stacks' snapshot of the GPU memory the CUDA driver handed out, at its
	 * peak (stack_bytes.at 'gpu'), and when (CLOCK_REALTIME ns; NULL: none) */
	"ALTER TABLE run ADD COLUMN stacks_gpu_peak_at INTEGER;",
};
#define SCHEMA_VERSION ((int)ARRAY_SIZE(store_migrations))
const int store_schema_version = SCHEMA_VERSION;

static int pragma_int(sqlite3 *db, const char *sql, int *out)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Brings the schema up to date; on failure writes SQLite's reason into err (before
 * the ROLLBACK, which clears it). */
static int migrate(sqlite3 *db, int from, char *err, size_t errlen)
{
	char sql[96];
	if (exec_sql(db, "BEGIN IMMEDIATE") < 0) {
		snprintf(err, errlen, "cannot set up the database: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	/* Another process may have migrated while we waited for the lock. */
	int now = from;
	if (pragma_int(db, "PRAGMA user_version", &now) != SQLITE_OK)
		goto fail;
	if (now < 0 || now > SCHEMA_VERSION) {	/* changed since store_schema_check looked */
		snprintf(err, errlen, "database schema version %d is not one this rsswatch can "
			 "upgrade", now);
		exec_sql(db, "ROLLBACK");
		return -EIO;
	}
	for (int v = now; v < SCHEMA_VERSION; v++)
		if (exec_sql(db, store_migrations[v]) < 0)
			goto fail;
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", STORE_APPLICATION_ID);
	if (exec_sql(db, sql) < 0)
		goto fail;
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", SCHEMA_VERSION);
	if (exec_sql(db, sql) < 0 || exec_sql(db, "COMMIT") < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot set up the database: %s", sqlite3_errmsg(db));
	exec_sql(db, "ROLLBACK");
	return -EIO;
}

/* Checks that db is an rsswatch database of a schema we can use, migrating an older or
 * empty one when writing. */
int store_schema_check(sqlite3 *db, unsigned flags, char *err, size_t errlen)
{
	int version = 0, appid = 0, tables = 0;
	int rc;
	if ((rc = pragma_int(db, "PRAGMA user_version", &version)) != SQLITE_OK ||
	    (rc = pragma_int(db, "PRAGMA application_id", &appid)) != SQLITE_OK ||
	    (rc = pragma_int(db, "SELECT count(*) FROM sqlite_master", &tables)) != SQLITE_OK) {
		if ((rc & 0xff) == SQLITE_NOTADB) {
			snprintf(err, errlen, "not an rsswatch database");
			return -EILSEQ;
		}
		snprintf(err, errlen, "cannot read the database: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	if (tables > 0 && appid != STORE_APPLICATION_ID) {
		snprintf(err, errlen, "not an rsswatch database");
		return -EILSEQ;
	}
	/* user_version indexes store_migrations[]: anything outside 0..SCHEMA_VERSION
	 * is refused before it is used. Nothing rsswatch writes is negative. */
	if (version < 0) {
		snprintf(err, errlen, "database is corrupt: its schema version (PRAGMA "
			 "user_version) is %d, below 0", version);
		return -EILSEQ;
	}
	if (version > SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "database schema version %d is newer than this rsswatch knows (%d); "
			 "upgrade rsswatch", version, SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (version < SCHEMA_VERSION) {
		if (flags & STORE_READONLY) {
			if (tables == 0) {
				snprintf(err, errlen, "no runs recorded yet");
				return -ENOENT;
			}
			snprintf(err, errlen, "database needs an upgrade; open it once for writing");
			return -ESTALE;
		}
		if (migrate(db, version, err, errlen) < 0)
			return -EIO;
	}
	return 0;
}

/* Whether the database at path may need its schema made or upgraded: it is empty, or the
 * user_version in its header (4 bytes, big-endian, at offset 60) is older than ours.
 * A header whose last commit is still in the WAL may read older: a needless check,
 * never a missed one. */
int store_schema_may_need_migration(const char *path)
{
	unsigned char v[4];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, v, sizeof(v), 60) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(v))
		return 1;
	uint32_t version = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3];
	return version < (uint32_t)SCHEMA_VERSION;
}
