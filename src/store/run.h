/* The persisted data model: what a run and a sample are. The recorder fills these and
 * the store writes them; the readers (ls, show, export, ...) get them back from the
 * store. Nothing here does I/O. */
#ifndef RSW_STORE_RUN_H
#define RSW_STORE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/memfig.h"

/* Optional figures of a sample: set in sample.have when measured. */
enum {
	SAMPLE_PSS = 1 << 0,	/* pss, uss, swap_pss, pss_read_us (read this sample) */
	SAMPLE_CGROUP = 1 << 1,	/* cgroup */
	SAMPLE_GPU = 1 << 2,	/* gpu */
	SAMPLE_CGROUP_PEAK = 1 << 3,	/* cgroup_peak */
	SAMPLE_PSI = 1 << 4,		/* psi_some_* (the host's memory pressure) */
	SAMPLE_PSI_FULL = 1 << 5,	/* psi_full_* */
	SAMPLE_CG_PSI = 1 << 6,		/* cg_psi_some_* (the v2 cgroup's memory.pressure) */
	SAMPLE_CG_PSI_FULL = 1 << 7,	/* cg_psi_full_* */
	SAMPLE_CPU = 1 << 8,		/* cpu_user_ns, cpu_sys_ns, minflt, majflt */
	SAMPLE_IO = 1 << 9,		/* read_bytes, write_bytes */
};

/* One observation of the target (or, with a tree or cgroup, the total over its set of
 * processes). Sizes in bytes. elapsed_ns is on CLOCK_MONOTONIC from the run's start and
 * strictly increases within a run; the wall-clock time is run.started_at + elapsed_ns. */
struct sample {
	int64_t elapsed_ns;
	struct mem_figures mem;
	uint32_t threads;
	uint64_t mem_available;
	unsigned have;
	uint64_t pss, uss, cgroup, gpu;
	uint64_t cgroup_peak;	/* the cgroup's peak over this interval where rsswatch could
				   reset it (a cgroup it made), else since the cgroup began */
	uint64_t cgroup_limit;	/* not stored per sample: CG_UNLIMITED (UINT64_MAX) for none */
	/* Memory pressure (PSI, schema 5): avg10 in percent, totals in microseconds of
	 * stall since boot (host) or since the cgroup was made. Read at most once a
	 * second; samples in between carry the last reading. */
	double psi_some_avg10, psi_full_avg10;
	uint64_t psi_some_total_us, psi_full_total_us;
	double cg_psi_some_avg10, cg_psi_full_avg10;
	uint64_t cg_psi_some_total_us, cg_psi_full_total_us;
	/* --pss (schema 6): set (SAMPLE_PSS) only on the samples where smaps_rollup was
	 * read; swap_pss is 0 where the kernel lacks SwapPss; pss_read_us is how long the
	 * read took (over a set: all members' reads together). */
	uint64_t swap_pss;
	int64_t pss_read_us;
	/* Context (schema 10): cumulative counters as read, from the process's start (a
	 * set: the sum over its members, see record/procset.h). CPU time in user and
	 * kernel mode (ns; the kernel counts in clock ticks), page faults that did not
	 * (minflt) and did (majflt) need I/O, and bytes read from and written to storage
	 * (/proc/PID/io; not readable for other users' processes). They are re-read at
	 * most every clock tick (stat) and every second (io): samples in between carry
	 * the last reading. */
	uint64_t cpu_user_ns, cpu_sys_ns, minflt, majflt;
	uint64_t read_bytes, write_bytes;
};

/* One GPU at one sample: the memory the target (or its tree) uses on it, when known,
 * and the device's used and total memory. */
struct gpu_figures {
	unsigned device;
	int target_known;
	uint64_t target_bytes;
	uint64_t used_bytes;
	uint64_t total_bytes;
};

/* One member of a process set (--tree, -g) at one sample. Bytes; mem.hwm is not
 * stored (proc_sample has no column for it) and is 0 in a row written or read. */
struct proc_figures {
	pid_t pid, ppid;
	char comm[64];
	struct mem_figures mem;
	int gone;		/* a row saying the member left the set (figures 0) */
};

/* The RSS of samples s[0..n) (in time order) at elapsed time t: that of the last sample
 * at or before t, else of the first; 0 when n is 0. */
uint64_t samples_rss_at(const struct sample *s, size_t n, int64_t elapsed_ns);

/* A run parameter (record --param KEY=VALUE, schema 9). key is 1..RUN_PARAM_KEY_MAX
 * bytes of [A-Za-z0-9_.-]; value is 1..RUN_PARAM_VALUE_MAX bytes of UTF-8 without
 * control characters (owned). is_num is set when the whole value is a finite decimal
 * number (num holds it): such parameters can be fitted against by `rsswatch model`. */
#define RUN_PARAM_KEY_MAX 63
#define RUN_PARAM_VALUE_MAX 255
struct run_param {
	char key[RUN_PARAM_KEY_MAX + 1];
	char *value;
	int is_num;
	double num;
};

/* Parses one "KEY=VALUE" argument into out (value owned: free it with free()). On a
 * bad argument returns -EINVAL and writes a one-line reason (without the argument
 * itself) into err; out is then untouched. */
int run_param_parse(const char *arg, struct run_param *out, char *err, size_t errlen);

/* A RUN argument, parsed: "last", a run id, or runs of a series (record --follow):
 * "sID" is series ID's last run, "sID:N" its last N runs (fewer when it has fewer).
 * No '~' (model tells a formula from a RUN by it) and no ',' (compare's groups). */
struct run_ref {
	int series;		/* 1: id is a series id */
	int64_t id;		/* the run or the series; 0 with !series: "last" */
	uint64_t count;		/* :N: this many runs (1 unless given) */
};
/* Parses a whole RUN argument into out: 0, or -EINVAL (ids and counts are decimal,
 * at least 1; nothing else may follow). Pure. */
int run_ref_parse(const char *s, struct run_ref *out);
/* Whether s (the whole string) is a finite decimal number, as run_param_parse decides
 * is_num: digits with an optional sign, fraction and exponent; no hex, inf or nan. */
int run_param_number(const char *s, double *out);
/* The parameter called key among p[0..n), or NULL. */
const struct run_param *run_param_find(const struct run_param *p, size_t n, const char *key);
/* Whether parameter p matches the wanted VALUE: the same text, or both numbers and
 * equal (so pw=12 matches a run recorded with pw=12.0). */
int run_param_matches(const struct run_param *p, const struct run_param *want);
void run_params_free(struct run_param *p, size_t n);

/* Outcomes, as stored and as printed by --json (man/rsswatch.1). */
#define OUTCOME_RUNNING "running"
#define OUTCOME_EXITED "exited"
#define OUTCOME_SIGNALED "signaled"
#define OUTCOME_OOM_KILLED "oom_killed"
#define OUTCOME_STOPPED "stopped"
#define OUTCOME_INTERRUPTED "interrupted"

/* A recording. Strings are owned (run_release frees them) and never NULL once loaded
 * from the store ("" when absent). Times are CLOCK_REALTIME nanoseconds; 0 = none.
 * exit_code and signal are -1 when they do not apply. peak_rss is the largest of VmRSS
 * and VmHWM seen, so a spike unmapped between two samples still counts. */
struct run {
	int64_t id;
	char *label;
	char *host;
	char *kernel;
	char *target;		/* the command line, or the cgroup path */
	char *mode;		/* "pid", "name", "command" or "cgroup" */
	pid_t pid;
	int64_t started_at;
	int64_t ended_at;
	int64_t last_at;	/* time of the last sample stored */
	int64_t interval_ns;
	int64_t samples;
	char outcome[16];
	int exit_code;
	int signal;
	uint64_t peak_rss;
	int64_t peak_rss_at;
	int64_t peak_gpu;	/* -1 when no GPU was sampled */
	int64_t peak_gpu_at;
	char *peak_gpu_source;	/* GPU_FROM_*; NULL when no GPU was sampled (or before
				   schema 17) */
	char *stacks;		/* record --stacks: its mode (STACKS_MODE_*); NULL without */
	int64_t stacks_peak_at;	/* when the stacks' snapshot at the peak was taken
				   (CLOCK_REALTIME ns); 0: none */
	int64_t stacks_gpu_peak_at;	/* when the snapshot of GPU memory was taken
					 * (the driver's probes' peak; 0: none) */
	double sum_rss;		/* for the mean: sum_rss / samples */
	uint64_t last_rss;
	uint64_t mem_total;
	pid_t recorder_pid;
	uint64_t recorder_start;	/* its /proc/PID/stat starttime, against PID reuse */
	char *boot_id;

	/* Why it died, where the kernel says (schema 3). oom_at is the time of the OOM
	 * kill (0: none recorded); oom_memcg the memory cgroup whose limit was hit ("":
	 * the whole host, or not known); oom_anon_rss the victim's anon-rss at the kill
	 * when oom_rss_known. outcome_note says in words what the evidence was when it was
	 * partial ("kernel log not readable", ...); "" when nothing needs saying. */
	int64_t oom_at;
	uint64_t oom_anon_rss;
	int oom_rss_known;
	char *oom_memcg;
	char *outcome_note;
	/* The memory cgroup recorded (-g) or made (--memory-limit), "" when none; its
	 * limit (0: none or not known) and the highest usage or peak sampled (0: not
	 * sampled). */
	char *cgroup;
	uint64_t cgroup_limit;
	uint64_t peak_cgroup;
	int64_t peak_cgroup_at;
	/* The figures are totals over a set of processes: the target and its descendants
	 * (--tree; schema 4), or a cgroup's members (mode "cgroup"). */
	int tree;
	/* --pss: PSS/USS were read at most this often (schema 6); 0: not asked. */
	int64_t pss_interval_ns;

	/* The run's own peak (schema 8). peak_rss holds only what happened during the
	 * recording: an attached target's VmHWM counts once it rises above hwm_before,
	 * its value at the first sample (-1: launched, or not known). peak_source says
	 * where peak_rss came from (PEAK_FROM_*). Over a set, peak_rss is never below the
	 * largest member's exact peak. */
	int64_t hwm_before;
	/* --reset-peak reset the attached target's VmHWM at the start, so peaks between
	 * samples below hwm_before are seen. Not a column: a "peak_reset" event
	 * (store_get_run sets it from that). */
	int hwm_reset;
	char *peak_source;
	/* OOM kills of the target or any member during the run (each in store_oom_kills). */
	int64_t oom_kills;
	/* The largest single process of the run by its peak (pid 0: none known). */
	uint64_t peak_process_rss;
	pid_t peak_process_pid;
	char *peak_process_comm;
	/* The kernel's exit records (taskstats) were read: the peak of every process that
	 * ended during the run is exact. 0: those peaks are sampled (or from wait4). */
	int exit_records;
	/* peak_cgroup is the cgroup's own charged peak over the run (memory.peak or
	 * max_usage_in_bytes, reset at the start); 0: the highest usage sampled. */
	int peak_cgroup_exact;
	/* The cgroup's own peak when the recording began, where that file holds its whole
	 * history (schema 15): it covers more than the run. 0: none, or the peak file
	 * covers the run only (a cgroup made for it, or a private reset). */
	uint64_t cgroup_peak_before;
	/* Its parameters (schema 9), sorted by key; owned (run_release frees them).
	 * The store never writes these from a run's progress: store_put_params does. */
	struct run_param *params;
	size_t nparams;
	/* The smallest time to exhaustion projected while recording (schema 10;
	 * record/eta.h), when min_eta_limit is not "": toward which limit ("cgroup" or
	 * "host"); min_eta_at is when it was made (realtime). Without one, min_eta_limit is
	 * "" and min_eta_ns -1 (0 in a zeroed run: the limit decides). */
	int64_t min_eta_ns;
	int64_t min_eta_at;
	char min_eta_limit[8];
	/* record --follow: the runs of one followed service, one per instance, share a
	 * series, whose id is the id of its first run (0: not followed; NULL stored). */
	int64_t series;
};

/* Where a peak came from, as stored and as said in every output. */
/* Where a run's GPU peak came from: a read of the driver (NVML), or the GPU probes
 * between two reads (the driver's allocations, at the time the probes saw them). */
#define GPU_FROM_READ "NVML"
#define GPU_FROM_PROBES "allocations"
/* run.stacks: the mode of record --stacks (read back as "" or NULL for a run without) */
#define STACKS_MODE_MMAP "mmap"
#define STACKS_MODE_FAULTS "faults"
#define STACKS_MODE_MALLOC "malloc"
#define RUN_HAS_STACKS(r) ((r)->stacks && (r)->stacks[0])

/* One stack of a run (record --stacks) and what it held at a moment: its frames,
 * innermost first, one a line. */
struct stored_stack {
	int64_t id;
	int64_t bytes;
	uint64_t blocks;
	char *frames;
};

/* The moments a run's stacks are stored at: the peak of its memory, the end, and the
 * peak of the GPU memory the driver handed out (stack_bytes.at: 'peak', 'end', 'gpu'). */
enum stack_moment { STACKS_AT_PEAK, STACKS_AT_END, STACKS_AT_GPU_PEAK, STACK_MOMENTS };

#define PEAK_FROM_SAMPLE "sample"	/* a sampled RSS (or a set's sampled total) */
#define PEAK_FROM_HWM "VmHWM"		/* the kernel's high-water mark, read at a sample */
#define PEAK_FROM_EXIT "exit record"	/* taskstats hiwater_rss when the process ended */
#define PEAK_FROM_WAIT "wait4"		/* ru_maxrss of the launched command and its reaped
					   descendants */
#define PEAK_FROM_OOM "OOM report"	/* the kernel's figures at an OOM kill */
#define PEAK_FROM_PAGES "page counts"	/* the eBPF engine: the highest of the kernel's
					   resident page counts, at every change, with
					   the kernel's time (source/kpeak.h) */

/* A peak from PEAK_FROM_EXIT, PEAK_FROM_WAIT, PEAK_FROM_OOM or PEAK_FROM_PAGES: the
 * kernel's own figure for the whole life of the process (since it was tracked), not a
 * sampled one. */
int peak_is_exact(const char *peak_source);
/* Whether spikes of the run between samples, below an attached target's earlier VmHWM,
 * went unseen: VmHWM stayed at the old peak, no --reset-peak, and the peak is not the
 * eBPF engine's (which sees every change). */
int run_blind_below_hwm(const struct run *r);
/* Whether an exact figure (bytes, from source) equal to a peak from a sample confirms
 * that peak: its source becomes the exact one, its figure and time stay. A peak from
 * VmHWM keeps its word (it says when the run first saw it). */
int peak_confirms(uint64_t peak, const char *peak_source, uint64_t bytes, const char *source);

/* How a process of a run ended (process.ended). */
#define PROC_RUNNING "running"		/* still alive when the recording ended */
#define PROC_EXITED "exited"
#define PROC_SIGNALED "signaled"
#define PROC_OOM_KILLED "oom_killed"
#define PROC_GONE "gone"		/* ended; how is not known (no exit record) */
#define PROC_LEFT "left"		/* moved out of the set's cgroup, alive: what it did
					   after is not the run's */

/* One process of a run: the target, or a member of its set. Times are elapsed ns from
 * the run's start (end_ns -1: alive at the end). peak_rss is exact when peak_source is
 * PEAK_FROM_EXIT, PEAK_FROM_WAIT or PEAK_FROM_OOM; hwm_before is the VmHWM it had when
 * first seen, for a process that existed before the recording (-1 otherwise), and is
 * not part of peak_rss. exit_code and signal are -1 when they do not apply.
 *
 * Its context totals, the process's own (not its children's), over its whole life
 * (before the recording too): CPU time in user and kernel mode (ns), minor and major
 * page faults, bytes it caused to be read from and written to storage. Each is -1
 * where not known (stored as NULL): io without permission, a process no read and no
 * exit record reached, a run recorded before they were kept. For a process that ended
 * they come from its exit records where those came, else from its last read. */
struct proc_summary {
	pid_t pid, ppid;
	char comm[64];
	int64_t first_ns, end_ns;
	uint64_t peak_rss;
	char peak_source[16];
	int64_t hwm_before;
	char ended[16];
	int exit_code, signal;
	int64_t cpu_user_ns, cpu_sys_ns, minflt, majflt, read_bytes, write_bytes;
};

/* An OOM kill during a run, with the kernel's figures (bytes; 0 when the line lacked
 * them). t is CLOCK_REALTIME ns. */
struct oom_kill {
	int64_t t;
	pid_t pid;
	char comm[64];
	uint64_t anon_rss, file_rss, shmem_rss, total_vm;
	char memcg[256];
};

void run_release(struct run *r);
/* A run about to begin: outcome "running", every figure not known yet (exit code,
 * signal, GPU peak, VmHWM before, time to exhaustion: -1); the rest untouched. */
void run_set_unknown(struct run *r);
double run_mean_rss(const struct run *r);

/* An event of a run (exit, OOM kill, warning, ...) and a stage mark, t in realtime ns. */
struct event {
	int64_t t;
	char kind[24];
	pid_t pid;		/* 0 when none */
	char *detail;
};
/* A set's process start or exit (proc_start, proc_exit): many in a run of a build,
 * so every view lists them apart from the other events. */
int event_is_process(const struct event *e);

struct mark {
	int64_t t;
	char *label;
	int64_t id;		/* its row's id */
	/* The peak of the stage it opens (up to the next mark, or the end), from the
	 * kernel's page counts, and when (realtime ns); stage_peak_known 0: none (no
	 * engine, a run recorded before it, or history not kept; docs/PEAKS.md). */
	uint64_t stage_peak;
	int64_t stage_peak_at;
	int stage_peak_known;
};

/* --- the stored columns ---
 *
 * Each row type the store keeps field by field (a run, a sample, a member of a set at a
 * sample, a process of a run) has ONE table of its columns (src/store/columns.c), and
 * a row of it is the one description of a figure: the SQL name and type, the C field
 * (offset and kind), when the column is NULL, and how every output names and shows it
 * (its help line, unit, JSON name and format, Prometheus family). The store derives its
 * INSERT and UPDATE statements, their bindings, its SELECT lists and its reads from
 * these tables; `export` its header, rows and --help; `ls --json` and `show --json` a
 * run's fields; /metrics the gauges of a sample; docs/guide/storage.md its column
 * tables (scripts/gen-storage-doc.sh; test_columns fails when they are out of date).
 * Adding a column: a migration step (schema.c) and a row here. A table's order is the
 * order of export's columns (samples) and of a run object's fields (runs). */
enum col_kind {
	COL_I64,	/* int64_t */
	COL_U64,	/* uint64_t, stored as its int64_t bits */
	COL_U32,	/* uint32_t or unsigned */
	COL_INT,	/* int or pid_t */
	COL_F64,	/* double */
	COL_TEXT,	/* char *, owned once loaded; NULL is written as "" */
	COL_CHARS,	/* char[size] */
};

/* When a column is NULL. The test reads the guard field, which is the column's own or
 * another of the row (peak_gpu_at is NULL when peak_gpu is). A NULL column loads as
 * dflt; with COL_NULL_UNLESS_FLAG a value loaded sets flag in the guard field. */
enum col_null {
	COL_NEVER_NULL,
	COL_NULL_IF_ZERO,	/* guard == 0 */
	COL_NULL_IF_NEG,	/* guard < 0 */
	COL_NULL_IF_NOT_POS,	/* guard <= 0 */
	COL_NULL_IF_EMPTY,	/* guard (COL_TEXT or COL_CHARS) is "" */
	COL_NULL_UNLESS_FLAG,	/* guard (a set of bits) lacks flag */
};

/* How the outputs write a column's value: JSON (a run's fields), JSON lines, CSV and
 * every row format of export. A value its NULL rule (or json_with) says is not there
 * is null, or empty in CSV. */
enum col_out {
	OUT_VALUE,		/* the integer, or the text as a string */
	OUT_NONE,		/* in no output (the store's own, or written apart) */
	OUT_PCT,		/* a double, two decimals */
	OUT_SECONDS,		/* nanoseconds as seconds, three decimals (truncated) */
	OUT_SECONDS_G,		/* nanoseconds as seconds, %.6g */
	OUT_SECONDS_1,		/* nanoseconds as seconds, one decimal */
	OUT_TIME,		/* realtime ns as ISO 8601 UTC; 0 is null */
	OUT_TIME_US,		/* the same to the microsecond (the kernel's time of a peak) */
	OUT_TEXT_OR_NULL,	/* the text, or null when it is "" */
	OUT_BOOL,		/* true or false (false where not there) */
};

/* What a column's number counts, as the docs and --help say. */
enum col_unit {
	UNIT_NONE,		/* text, an id, a flag */
	UNIT_BYTES,
	UNIT_NS,		/* a duration, or time since the run began */
	UNIT_US,		/* a duration in microseconds */
	UNIT_TIME,		/* a moment: CLOCK_REALTIME ns since the epoch */
	UNIT_PCT,		/* percent */
	UNIT_COUNT,		/* a number of things: samples, faults, threads, kills */
};

/* A column's Prometheus family (metrics/prom.c): a gauge or counter. Without
 * prom_label it is a family of its own, written from the table (a sample's value as
 * stored, where it is not NULL); with one, the column is that labelled series of a
 * family that prom.c writes itself (in seconds, say), and test_prom holds the two
 * together. */
enum col_prom {
	PROM_NONE,
	PROM_GAUGE,
	PROM_COUNTER,		/* named without _total here: prom.c adds it */
};

/* Which statement writes a run's column (a run is inserted when its recording begins
 * and updated as it goes); 0: none (the key, loaded only). */
enum {
	COL_AT_BEGIN = 1 << 0,
	COL_AT_PROGRESS = 1 << 1,
};

struct store_column {
	const char *name;		/* in SQL */
	const char *sql_type;		/* INTEGER, REAL or TEXT, as the migrations made it */
	enum col_kind kind;
	size_t off, size;		/* the field in the row's struct */
	enum col_null null;
	size_t guard_off;		/* the field the NULL rule tests */
	enum col_kind guard_kind;
	unsigned flag;			/* COL_NULL_UNLESS_FLAG: the bit(s) */
	int64_t dflt;			/* a NULL column loads as this (integer kinds) */
	unsigned when;			/* COL_AT_* (runs only) */
	/* How every output describes and shows it. */
	const char *help;		/* one sentence: storage.md, export --help, /metrics */
	enum col_unit unit;
	const char *json;		/* its name in JSON, JSON lines and CSV; NULL: name */
	enum col_out out;
	const char *json_with;		/* a run's JSON: null (false) also where this
					   other column is NULL; NULL: none */
	const char *prom;		/* its /metrics family; NULL: not there */
	enum col_prom prom_type;
	const char *prom_label;		/* its series in a family prom.c writes, or NULL */
};

/* One stored table: its SQL name, the key columns the store binds itself (run_id, and
 * for proc_sample elapsed_ns, which is not part of the row's struct; all INTEGER), and
 * the columns of the row's struct in the order of export's columns (samples) or of a
 * run object's fields (runs). */
struct store_table {
	const char *name;
	const char *keys[3];		/* NULL-terminated */
	const struct store_column *cols;
	size_t ncols;
};

/* A series thinned by retention (gc, record --keep/--max-db; the run_gc table): at most
 * points sample rows kept (0: the series removed, the summary, marks and events kept),
 * each bucket of bucket_ns at its maximum, of rows_before recorded; at (ns since the
 * epoch) when it was last done. */
struct run_thinning {
	int64_t points, bucket_ns, rows_before, at;
};

extern const struct store_table store_run_table;	/* struct run (params apart) */
extern const struct store_table store_sample_table;	/* struct sample */
extern const struct store_table store_proc_sample_table;	/* struct proc_figures */
extern const struct store_table store_process_table;	/* struct proc_summary */

/* A column's value in row, read by its kind (integers of every kind as int64_t bits,
 * a double as its integer part). */
int64_t store_column_i64(const struct store_column *c, const void *row);
double store_column_f64(const struct store_column *c, const void *row);
/* A text column's value ("" for a NULL COL_TEXT); NULL for other kinds. */
const char *store_column_text(const struct store_column *c, const void *row);
/* Whether the column of row is stored as NULL (its NULL rule). */
int store_column_null(const struct store_column *c, const void *row);
/* The column's name in every output (json, else its SQL name). */
const char *store_column_json(const struct store_column *c);
/* The column of t called name in SQL, or NULL. */
const struct store_column *store_table_column(const struct store_table *t, const char *name);
/* Frees row's COL_TEXT fields (and sets them to NULL). */
void store_row_free_text(const struct store_table *t, void *row);

#endif
