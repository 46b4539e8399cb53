/* Every stored column of a run, a sample, a member of a set at a sample and a process
 * of a run: one table per row type (store/run.h says what a row of a table holds), and
 * each row the one description of its figure. The store's INSERT, UPDATE and SELECT
 * statements, their bindings and reads; export's columns, rows and --help; a run's
 * JSON fields; the gauges of /metrics and the column tables of docs/guide/storage.md
 * are all derived from these tables, so adding a column is a migration step
 * (schema.c) and one row here.
 *
 * A table's rows must agree with the schema the migrations produce: test_store checks
 * PRAGMA table_info of a fresh database against them. test_columns checks that every
 * row has its help line, and that no two outputs' names collide. */
#include "store/run.h"
#include "store/store_int.h"
#include "base/buf.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define FIELD(T, f, k) .kind = k, .off = offsetof(struct T, f), .size = sizeof(((struct T *)0)->f)
#define NULL_IF(rule, T, f, k) .null = rule, .guard_off = offsetof(struct T, f), .guard_kind = k
#define OPTIONAL(bit) \
	NULL_IF(COL_NULL_UNLESS_FLAG, sample, have, COL_U32), .flag = bit
#define I "INTEGER"
#define R "REAL"
#define T "TEXT"
#define B COL_AT_BEGIN
#define P COL_AT_PROGRESS

_Static_assert(sizeof(pid_t) == sizeof(int), "pid_t is read as COL_INT");
_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "sample.have is read as COL_U32");

/* The run's columns in the order of a run object's fields (ls --json, show --json:
 * render/json.c puts params, duration_s and mean_rss_bytes among them); the columns of
 * no output wherever they read best. The SQL statements do not depend on the order. */
static const struct store_column run_cols[] = {
	{ "id", I, FIELD(run, id, COL_I64),
	  .help = "The run's id: what RUN names in the reading verbs." },
	{ "label", T, FIELD(run, label, COL_TEXT), .when = B,
	  .help = "The run's label (record --label), empty when none." },
	/* schema 13: a followed run's series is known after its first run's INSERT */
	{ "series", I, FIELD(run, series, COL_I64),
	  NULL_IF(COL_NULL_IF_NOT_POS, run, series, COL_I64), .when = B | P,
	  .help = "The id of the first run of the series a record --follow run belongs to, "
		  "NULL for a run not followed." },
	{ "host", T, FIELD(run, host, COL_TEXT), .when = B,
	  .help = "The host name of the machine recorded on." },
	{ "kernel", T, FIELD(run, kernel, COL_TEXT), .when = B,
	  .help = "Its kernel release." },
	{ "target", T, FIELD(run, target, COL_TEXT), .when = B,
	  .help = "The command line, each argument as a POSIX shell reads it back (control "
		  "characters as ?, at most 4 KiB, then ...), or the cgroup's path." },
	{ "mode", T, FIELD(run, mode, COL_TEXT), .when = B,
	  .help = "How the target was found: pid, name, command or cgroup." },
	/* schema 4 */
	{ "tree", I, FIELD(run, tree, COL_INT), .when = B, .out = OUT_NONE,
	  .help = "1 when the figures are totals over a set of processes (--tree, -g, a "
		  "launched COMMAND)." },
	{ "pid", I, FIELD(run, pid, COL_INT), .when = B | P,
	  .help = "The target's pid (a tree's root)." },
	{ "started_at", I, FIELD(run, started_at, COL_I64), .when = B | P, .unit = UNIT_TIME,
	  .out = OUT_TIME, .help = "When the recording began." },
	{ "ended_at", I, FIELD(run, ended_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, ended_at, COL_I64), .when = P, .unit = UNIT_TIME,
	  .out = OUT_TIME, .help = "When the recording ended, NULL while it goes on." },
	{ "last_at", I, FIELD(run, last_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, last_at, COL_I64), .when = P, .unit = UNIT_TIME,
	  .out = OUT_NONE,
	  .help = "The time of the last sample stored: where an interrupted run ends." },
	{ "interval_ns", I, FIELD(run, interval_ns, COL_I64), .when = B, .unit = UNIT_NS,
	  .json = "interval_s", .out = OUT_SECONDS_G, .help = "The sampling interval (record -i)." },
	/* schema 6 */
	{ "pss_interval_ns", I, FIELD(run, pss_interval_ns, COL_I64), .when = B,
	  .unit = UNIT_NS, .out = OUT_NONE,
	  .help = "How often PSS was read at most (record --pss), 0 when not asked." },
	{ "samples", I, FIELD(run, samples, COL_I64), .when = P, .unit = UNIT_COUNT,
	  .help = "The samples recorded (what retention keeps of them does not change it)." },
	/* store_run_begin writes "running" whatever the run says */
	{ "outcome", T, FIELD(run, outcome, COL_CHARS), .when = B | P,
	  .help = "How the run ended: exited, signaled, oom_killed or stopped; running until "
		  "its recorder finishes it, which a reader reports as interrupted once that "
		  "recorder is gone." },
	{ "exit_code", I, FIELD(run, exit_code, COL_INT),
	  NULL_IF(COL_NULL_IF_NEG, run, exit_code, COL_INT), .dflt = -1, .when = P,
	  .help = "The target's exit status, NULL when it did not exit." },
	{ "signal", I, FIELD(run, signal, COL_INT),
	  NULL_IF(COL_NULL_IF_NOT_POS, run, signal, COL_INT), .dflt = -1, .when = P,
	  .help = "The signal that ended the target, NULL when none did." },
	/* schema 8 */
	{ "oom_kills", I, FIELD(run, oom_kills, COL_I64), .when = P, .unit = UNIT_COUNT,
	  .help = "OOM kills of the target or any member during the run (each in the "
		  "oom_kill table)." },
	/* schema 3 */
	{ "oom_at", I, FIELD(run, oom_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, oom_at, COL_I64), .when = P, .unit = UNIT_TIME,
	  .out = OUT_NONE, .help = "When the target was OOM-killed, NULL when it was not." },
	{ "oom_anon_rss", I, FIELD(run, oom_anon_rss, COL_U64),
	  NULL_IF(COL_NULL_UNLESS_FLAG, run, oom_rss_known, COL_INT), .flag = 1, .when = P,
	  .unit = UNIT_BYTES, .out = OUT_NONE,
	  .help = "The victim's anon-rss at the kill as the kernel reported it, NULL when "
		  "not known." },
	{ "oom_memcg", T, FIELD(run, oom_memcg, COL_TEXT), .when = P, .out = OUT_NONE,
	  .help = "The memory cgroup whose limit the kill was for, empty for the whole host "
		  "or when not known." },
	{ "peak_rss", I, FIELD(run, peak_rss, COL_U64), .when = P, .unit = UNIT_BYTES,
	  .json = "peak_rss_bytes",
	  .help = "The run's peak: the largest VmRSS or VmHWM seen during the recording, "
		  "never a peak from before it." },
	{ "peak_rss_at", I, FIELD(run, peak_rss_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, peak_rss_at, COL_I64), .when = P, .unit = UNIT_TIME,
	  .out = OUT_TIME_US, .help = "When the peak was first seen; to the microsecond, "
	  "which is the kernel's own time where peak_source is page counts." },
	/* schema 8 */
	{ "peak_source", T, FIELD(run, peak_source, COL_TEXT), .when = P,
	  .out = OUT_TEXT_OR_NULL,
	  .help = "Where the peak came from: sample, VmHWM, exit record, wait4, OOM report or "
		  "page counts (the eBPF engine: every change of the kernel's counts)." },
	{ "hwm_before", I, FIELD(run, hwm_before, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, run, hwm_before, COL_I64), .dflt = -1, .when = P,
	  .unit = UNIT_BYTES, .json = "hwm_before_bytes",
	  .help = "An attached target's VmHWM at the first sample, not part of the peak; "
		  "NULL when launched or not known." },
	/* schema 15 */
	{ "cgroup_peak_before", I, FIELD(run, cgroup_peak_before, COL_U64),
	  NULL_IF(COL_NULL_IF_ZERO, run, cgroup_peak_before, COL_U64), .when = P,
	  .unit = UNIT_BYTES, .json = "cgroup_peak_before_bytes",
	  .help = "For -g, the cgroup's own peak at the start where that figure holds its "
		  "history (v1; v2 without a private reset), NULL otherwise." },
	/* schema 8 */
	{ "peak_process_rss", I, FIELD(run, peak_process_rss, COL_U64),
	  NULL_IF(COL_NULL_IF_NOT_POS, run, peak_process_pid, COL_INT), .when = P,
	  .unit = UNIT_BYTES, .json = "peak_process_rss_bytes",
	  .help = "The peak of the run's largest single process, NULL when none is known." },
	{ "peak_process_pid", I, FIELD(run, peak_process_pid, COL_INT),
	  NULL_IF(COL_NULL_IF_NOT_POS, run, peak_process_pid, COL_INT), .when = P,
	  .help = "That process's pid." },
	{ "peak_process_comm", T, FIELD(run, peak_process_comm, COL_TEXT), .when = P,
	  .out = OUT_TEXT_OR_NULL, .json_with = "peak_process_pid",
	  .help = "That process's name." },
	{ "exit_records", I, FIELD(run, exit_records, COL_INT), .when = P, .out = OUT_BOOL,
	  .help = "1 when the kernel's exit records were read: the peak of every process "
		  "that ended during the run is exact." },
	{ "sum_rss", R, FIELD(run, sum_rss, COL_F64), .when = P, .unit = UNIT_BYTES,
	  .out = OUT_NONE,
	  .help = "The samples' RSS summed, for the mean (sum_rss / samples)." },
	{ "last_rss", I, FIELD(run, last_rss, COL_U64), .when = P, .unit = UNIT_BYTES,
	  .json = "last_rss_bytes", .help = "The RSS of the last sample." },
	{ "peak_gpu", I, FIELD(run, peak_gpu, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, run, peak_gpu, COL_I64), .dflt = -1, .when = P,
	  .unit = UNIT_BYTES, .json = "peak_gpu_bytes",
	  .help = "The target's highest GPU memory sampled, NULL without a GPU." },
	{ "peak_gpu_at", I, FIELD(run, peak_gpu_at, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, run, peak_gpu, COL_I64), .when = P, .unit = UNIT_TIME,
	  .out = OUT_TIME_US, .help = "When it was reached: the read's time, or to the "
	  "microsecond where peak_gpu_source is allocations." },
	/* schema 17 */
	{ "peak_gpu_source", T, FIELD(run, peak_gpu_source, COL_TEXT), .when = P,
	  .out = OUT_TEXT_OR_NULL,
	  .help = "Where the GPU peak came from: NVML (a read of the driver), or allocations "
		  "(the GPU probes: the driver's allocations between two reads)." },
	/* schema 18 */
	{ "stacks", T, FIELD(run, stacks, COL_TEXT), .when = B, .out = OUT_TEXT_OR_NULL,
	  .json = "stacks_mode",
	  .help = "The mode of record --stacks (mmap: mapped blocks; faults: the faults "
		  "that raised a peak; malloc: the allocator's blocks), each by the call stack "
		  "that made it, NULL when the run has no stacks." },
	{ "stacks_peak_at", I, FIELD(run, stacks_peak_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, stacks_peak_at, COL_I64), .when = P, .unit = UNIT_TIME,
	  .out = OUT_TIME_US, .help = "The time of the stacks' snapshot at the peak: the "
	  "peak's own time, from the kernel's page counts." },
	/* schema 19 */
	{ "stacks_gpu_peak_at", I, FIELD(run, stacks_gpu_peak_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, stacks_gpu_peak_at, COL_I64), .when = P,
	  .unit = UNIT_TIME, .out = OUT_TIME_US, .help = "The time of the stacks' snapshot of "
	  "GPU memory: the peak of the device memory the CUDA driver handed out, from its "
	  "probes." },
	{ "mem_total", I, FIELD(run, mem_total, COL_U64), .when = B, .unit = UNIT_BYTES,
	  .json = "mem_total_bytes", .help = "The host's MemTotal." },
	/* schema 3 */
	{ "outcome_note", T, FIELD(run, outcome_note, COL_TEXT), .when = P,
	  .help = "What the evidence for the outcome lacked, in words (kernel log not "
		  "readable, ...), empty when nothing needs saying." },
	{ "cgroup", T, FIELD(run, cgroup, COL_TEXT), .when = B, .out = OUT_TEXT_OR_NULL,
	  .help = "The memory cgroup recorded (-g) or made (--memory-limit), empty when none." },
	{ "cgroup_limit", I, FIELD(run, cgroup_limit, COL_U64),
	  NULL_IF(COL_NULL_IF_ZERO, run, cgroup_limit, COL_U64), .when = B | P,
	  .unit = UNIT_BYTES, .json = "cgroup_limit_bytes",
	  .help = "That cgroup's memory limit, NULL when none or not known." },
	{ "peak_cgroup", I, FIELD(run, peak_cgroup, COL_U64),
	  NULL_IF(COL_NULL_IF_ZERO, run, peak_cgroup, COL_U64), .when = P,
	  .unit = UNIT_BYTES, .json = "peak_cgroup_bytes",
	  .help = "The cgroup's highest usage sampled, or its own charged peak where "
		  "peak_cgroup_exact says so, NULL when not sampled." },
	{ "peak_cgroup_at", I, FIELD(run, peak_cgroup_at, COL_I64),
	  NULL_IF(COL_NULL_IF_ZERO, run, peak_cgroup, COL_U64), .when = P, .unit = UNIT_TIME,
	  .out = OUT_NONE, .help = "When that peak was seen." },
	/* schema 8 */
	{ "peak_cgroup_exact", I, FIELD(run, peak_cgroup_exact, COL_INT), .when = P,
	  .out = OUT_BOOL, .json_with = "peak_cgroup",
	  .help = "1 when peak_cgroup is the cgroup's own charged peak over the run "
		  "(memory.peak or max_usage_in_bytes, reset at the start)." },
	/* schema 10 */
	{ "min_eta_ns", I, FIELD(run, min_eta_ns, COL_I64),
	  NULL_IF(COL_NULL_IF_EMPTY, run, min_eta_limit, COL_CHARS), .dflt = -1, .when = P,
	  .unit = UNIT_NS, .json = "min_eta_s", .out = OUT_SECONDS_1,
	  .help = "The smallest time to exhaustion projected while recording, NULL when "
		  "none was (docs/guide/models.md)." },
	{ "min_eta_at", I, FIELD(run, min_eta_at, COL_I64),
	  NULL_IF(COL_NULL_IF_EMPTY, run, min_eta_limit, COL_CHARS), .when = P,
	  .unit = UNIT_TIME, .out = OUT_TIME, .help = "When that projection was made." },
	{ "min_eta_limit", T, FIELD(run, min_eta_limit, COL_CHARS), .when = P,
	  .out = OUT_TEXT_OR_NULL,
	  .help = "The limit it was toward: cgroup or host; empty when none." },
	{ "recorder_pid", I, FIELD(run, recorder_pid, COL_INT), .when = B, .out = OUT_NONE,
	  .help = "The recorder's pid: a run still running whose recorder is gone was "
		  "interrupted." },
	{ "recorder_start", I, FIELD(run, recorder_start, COL_U64), .when = B,
	  .out = OUT_NONE,
	  .help = "The recorder's start time (its /proc/PID/stat starttime), against pid "
		  "reuse." },
	{ "boot_id", T, FIELD(run, boot_id, COL_TEXT), .when = B, .out = OUT_NONE,
	  .help = "The boot the run was recorded in: a recorder of another boot is gone." },
};

/* In export's order: the fixed figures, then those a run may lack, GPU last (the
 * per-GPU columns follow it). The help lines of the columns with a family of their
 * own in /metrics are its HELP. */
static const struct store_column sample_cols[] = {
	{ "elapsed_ns", I, FIELD(sample, elapsed_ns, COL_I64), .unit = UNIT_NS, .out = OUT_NONE,
	  .help = "Time since the run began (CLOCK_MONOTONIC), increasing within a run: "
		  "export writes it as time and elapsed_s." },
	{ "rss", I, FIELD(sample, mem.rss, COL_U64), .unit = UNIT_BYTES, .json = "rss_bytes",
	  .prom = "rsswatch_resident_bytes", .prom_type = PROM_GAUGE,
	  .help = "Resident memory (RSS) of the target, or the total over its set." },
	{ "hwm", I, FIELD(sample, mem.hwm, COL_U64), .unit = UNIT_BYTES, .json = "hwm_bytes",
	  .help = "The kernel's high-water mark of RSS (VmHWM; over a set, its members' "
		  "summed)." },
	{ "anon", I, FIELD(sample, mem.anon, COL_U64), .unit = UNIT_BYTES, .json = "anon_bytes",
	  .prom = "rsswatch_anon_bytes", .prom_type = PROM_GAUGE,
	  .help = "Resident anonymous memory." },
	{ "file", I, FIELD(sample, mem.file, COL_U64), .unit = UNIT_BYTES, .json = "file_bytes",
	  .prom = "rsswatch_file_bytes", .prom_type = PROM_GAUGE,
	  .help = "Resident file-backed memory." },
	{ "shmem", I, FIELD(sample, mem.shmem, COL_U64), .unit = UNIT_BYTES,
	  .json = "shmem_bytes", .prom = "rsswatch_shmem_bytes", .prom_type = PROM_GAUGE,
	  .help = "Resident shared memory (shmem, tmpfs)." },
	{ "swap", I, FIELD(sample, mem.swap, COL_U64), .unit = UNIT_BYTES, .json = "swap_bytes",
	  .prom = "rsswatch_swap_bytes", .prom_type = PROM_GAUGE,
	  .help = "Memory swapped out." },
	{ "threads", I, FIELD(sample, threads, COL_U32), .unit = UNIT_COUNT,
	  .help = "Threads of the target, or over its set." },
	{ "mem_available", I, FIELD(sample, mem_available, COL_U64), .unit = UNIT_BYTES,
	  .json = "mem_available_bytes",
	  .help = "The host's MemAvailable, read at most every 100 ms and carried between." },
	{ "pss", I, FIELD(sample, pss, COL_U64), OPTIONAL(SAMPLE_PSS), .unit = UNIT_BYTES,
	  .json = "pss_bytes",
	  .help = "PSS, the target's share of the pages it maps (--pss: on the samples where "
		  "smaps_rollup was read)." },
	{ "uss", I, FIELD(sample, uss, COL_U64), OPTIONAL(SAMPLE_PSS), .unit = UNIT_BYTES,
	  .json = "uss_bytes", .help = "USS, the pages only the target maps (--pss)." },
	/* schema 6 */
	{ "swap_pss", I, FIELD(sample, swap_pss, COL_U64), OPTIONAL(SAMPLE_PSS),
	  .unit = UNIT_BYTES, .json = "swap_pss_bytes",
	  .help = "The target's share of swapped-out pages (--pss; 0 where the kernel lacks "
		  "SwapPss)." },
	{ "pss_read_us", I, FIELD(sample, pss_read_us, COL_I64), OPTIONAL(SAMPLE_PSS),
	  .unit = UNIT_US,
	  .help = "How long reading smaps_rollup took (--pss; over a set, every member's "
		  "read)." },
	{ "cgroup", I, FIELD(sample, cgroup, COL_U64), OPTIONAL(SAMPLE_CGROUP),
	  .unit = UNIT_BYTES, .json = "cgroup_bytes",
	  .prom = "rsswatch_cgroup_usage_bytes", .prom_type = PROM_GAUGE,
	  .help = "Memory charged to the target's cgroup." },
	{ "cgroup_peak", I, FIELD(sample, cgroup_peak, COL_U64), OPTIONAL(SAMPLE_CGROUP_PEAK),
	  .unit = UNIT_BYTES, .json = "cgroup_peak_bytes",
	  .help = "The cgroup's peak over the interval before the sample where rsswatch made "
		  "the cgroup (and can reset its peak)." },
	/* schema 5 */
	{ "psi_some_avg10", R, FIELD(sample, psi_some_avg10, COL_F64), OPTIONAL(SAMPLE_PSI),
	  .unit = UNIT_PCT, .out = OUT_PCT,
	  .help = "The host's memory pressure: the share of the last ten seconds in which some "
		  "tasks stalled on memory (PSI avg10)." },
	{ "psi_full_avg10", R, FIELD(sample, psi_full_avg10, COL_F64), OPTIONAL(SAMPLE_PSI_FULL),
	  .unit = UNIT_PCT, .out = OUT_PCT,
	  .help = "The same for all tasks at once (PSI full avg10)." },
	{ "psi_some_total_us", I, FIELD(sample, psi_some_total_us, COL_U64), OPTIONAL(SAMPLE_PSI),
	  .unit = UNIT_US, .prom = "rsswatch_host_memory_pressure_seconds",
	  .prom_type = PROM_COUNTER, .prom_label = "kind=\"some\"",
	  .help = "The time some tasks of the host stalled on memory since boot (PSI total)." },
	{ "psi_full_total_us", I, FIELD(sample, psi_full_total_us, COL_U64),
	  OPTIONAL(SAMPLE_PSI_FULL), .unit = UNIT_US,
	  .prom = "rsswatch_host_memory_pressure_seconds", .prom_type = PROM_COUNTER,
	  .prom_label = "kind=\"full\"",
	  .help = "The time all of them stalled at once since boot." },
	{ "cg_psi_some_avg10", R, FIELD(sample, cg_psi_some_avg10, COL_F64),
	  OPTIONAL(SAMPLE_CG_PSI), .unit = UNIT_PCT, .json = "cgroup_psi_some_avg10",
	  .out = OUT_PCT,
	  .help = "The same pressure for the target's v2 cgroup (memory.pressure)." },
	{ "cg_psi_full_avg10", R, FIELD(sample, cg_psi_full_avg10, COL_F64),
	  OPTIONAL(SAMPLE_CG_PSI_FULL), .unit = UNIT_PCT, .json = "cgroup_psi_full_avg10",
	  .out = OUT_PCT, .help = "The cgroup's full avg10." },
	{ "cg_psi_some_total_us", I, FIELD(sample, cg_psi_some_total_us, COL_U64),
	  OPTIONAL(SAMPLE_CG_PSI), .unit = UNIT_US, .json = "cgroup_psi_some_total_us",
	  .prom = "rsswatch_cgroup_memory_pressure_seconds", .prom_type = PROM_COUNTER,
	  .prom_label = "kind=\"some\"",
	  .help = "The time some tasks of the cgroup stalled on memory since it was made." },
	{ "cg_psi_full_total_us", I, FIELD(sample, cg_psi_full_total_us, COL_U64),
	  OPTIONAL(SAMPLE_CG_PSI_FULL), .unit = UNIT_US, .json = "cgroup_psi_full_total_us",
	  .prom = "rsswatch_cgroup_memory_pressure_seconds", .prom_type = PROM_COUNTER,
	  .prom_label = "kind=\"full\"",
	  .help = "The time all of them stalled at once." },
	/* schema 11: the context, cumulative since each process started */
	{ "cpu_user_ns", I, FIELD(sample, cpu_user_ns, COL_U64), OPTIONAL(SAMPLE_CPU),
	  .unit = UNIT_NS, .json = "cpu_user_s", .out = OUT_SECONDS,
	  .prom = "rsswatch_cpu_seconds", .prom_type = PROM_COUNTER,
	  .prom_label = "mode=\"user\"",
	  .help = "CPU time in user mode since the process started (over a set, summed over "
		  "every process it had, those that ended included; re-read at most every "
		  "clock tick)." },
	{ "cpu_sys_ns", I, FIELD(sample, cpu_sys_ns, COL_U64), OPTIONAL(SAMPLE_CPU),
	  .unit = UNIT_NS, .json = "cpu_sys_s", .out = OUT_SECONDS,
	  .prom = "rsswatch_cpu_seconds", .prom_type = PROM_COUNTER,
	  .prom_label = "mode=\"system\"", .help = "CPU time in kernel mode, counted so too." },
	{ "minflt", I, FIELD(sample, minflt, COL_U64), OPTIONAL(SAMPLE_CPU), .unit = UNIT_COUNT,
	  .help = "Page faults that needed no I/O, counted so too." },
	{ "majflt", I, FIELD(sample, majflt, COL_U64), OPTIONAL(SAMPLE_CPU), .unit = UNIT_COUNT,
	  .help = "Page faults that needed I/O, counted so too." },
	{ "read_bytes", I, FIELD(sample, read_bytes, COL_U64), OPTIONAL(SAMPLE_IO),
	  .unit = UNIT_BYTES,
	  .help = "Bytes read from storage, counted so too, from /proc/PID/io (re-read every "
		  "second; NULL where it is not readable, as for other users' processes)." },
	{ "write_bytes", I, FIELD(sample, write_bytes, COL_U64), OPTIONAL(SAMPLE_IO),
	  .unit = UNIT_BYTES, .help = "Bytes written to storage, as read_bytes." },
	{ "gpu", I, FIELD(sample, gpu, COL_U64), OPTIONAL(SAMPLE_GPU), .unit = UNIT_BYTES,
	  .json = "gpu_bytes", .prom = "rsswatch_gpu_bytes", .prom_type = PROM_GAUGE,
	  .help = "GPU memory used by the target." },
};

/* A member's row is written when its figures change (a member at a sample: its last
 * row at or before it, the view proc_at_sample). */
static const struct store_column proc_sample_cols[] = {
	{ "pid", I, FIELD(proc_figures, pid, COL_INT), .help = "The member's pid." },
	{ "ppid", I, FIELD(proc_figures, ppid, COL_INT), .help = "Its parent's pid." },
	{ "comm", T, FIELD(proc_figures, comm, COL_CHARS),
	  .help = "Its name, as /proc/PID/status gives it." },
	{ "rss", I, FIELD(proc_figures, mem.rss, COL_U64), .unit = UNIT_BYTES,
	  .json = "rss_bytes", .help = "Its resident memory (VmRSS)." },
	{ "anon", I, FIELD(proc_figures, mem.anon, COL_U64), .unit = UNIT_BYTES,
	  .json = "anon_bytes", .help = "Its resident anonymous memory." },
	{ "file", I, FIELD(proc_figures, mem.file, COL_U64), .unit = UNIT_BYTES,
	  .json = "file_bytes", .help = "Its resident file-backed memory." },
	{ "shmem", I, FIELD(proc_figures, mem.shmem, COL_U64), .unit = UNIT_BYTES,
	  .json = "shmem_bytes", .help = "Its resident shared memory." },
	{ "swap", I, FIELD(proc_figures, mem.swap, COL_U64), .unit = UNIT_BYTES,
	  .json = "swap_bytes", .help = "Its memory swapped out." },
	/* schema 7 */
	{ "gone", I, FIELD(proc_figures, gone, COL_INT), .out = OUT_NONE,
	  .help = "1 in the row saying that the member left the set (its figures 0)." },
};

/* Written when the run ends. The outputs name these columns as show --json's
 * "processes" does (render/json.c writes them itself: test_columns holds the two
 * together). */
static const struct store_column process_cols[] = {
	{ "pid", I, FIELD(proc_summary, pid, COL_INT), .help = "The process's pid." },
	{ "ppid", I, FIELD(proc_summary, ppid, COL_INT),
	  .help = "Its parent's pid when it was first seen." },
	{ "comm", T, FIELD(proc_summary, comm, COL_CHARS),
	  .help = "Its name when last seen (it changes at exec)." },
	{ "first_ns", I, FIELD(proc_summary, first_ns, COL_I64), .unit = UNIT_NS,
	  .json = "started_s", .out = OUT_SECONDS,
	  .help = "When it was first seen, from the run's start." },
	{ "end_ns", I, FIELD(proc_summary, end_ns, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, proc_summary, end_ns, COL_I64), .dflt = -1, .unit = UNIT_NS,
	  .json = "ended_s", .out = OUT_SECONDS,
	  .help = "When it ended, from the run's start; NULL when alive at the end." },
	{ "peak_rss", I, FIELD(proc_summary, peak_rss, COL_U64), .unit = UNIT_BYTES,
	  .json = "peak_rss_bytes",
	  .help = "Its own peak, exact when it comes from an exit record, wait4 or an OOM "
		  "report." },
	{ "peak_source", T, FIELD(proc_summary, peak_source, COL_CHARS),
	  .out = OUT_TEXT_OR_NULL, .help = "Where that peak came from (as the run's)." },
	{ "hwm_before", I, FIELD(proc_summary, hwm_before, COL_I64),
	  NULL_IF(COL_NULL_IF_NEG, proc_summary, hwm_before, COL_I64), .dflt = -1,
	  .unit = UNIT_BYTES, .json = "hwm_before_bytes",
	  .help = "Its VmHWM when first seen, for a process older than the recording (NULL "
		  "otherwise): not part of its peak." },
	{ "ended", T, FIELD(proc_summary, ended, COL_CHARS), .out = OUT_TEXT_OR_NULL,
	  .help = "How it ended: running (alive at the end), exited, signaled, oom_killed, "
		  "gone (how is not known) or left (moved out of the cgroup, alive)." },
	{ "exit_code", I, FIELD(proc_summary, exit_code, COL_INT),
	  NULL_IF(COL_NULL_IF_NEG, proc_summary, exit_code, COL_INT), .dflt = -1,
	  .help = "Its exit status, NULL when it did not exit." },
	{ "signal", I, FIELD(proc_summary, signal, COL_INT),
	  NULL_IF(COL_NULL_IF_NOT_POS, proc_summary, signal, COL_INT), .dflt = -1,
	  .help = "The signal that ended it, NULL when none did." },
	/* schema 14: its own context totals over its whole life, from its exit records
	 * where they came, else from its last read; NULL where not known */
#define CONTEXT(f) { #f, I, FIELD(proc_summary, f, COL_I64), \
		     NULL_IF(COL_NULL_IF_NEG, proc_summary, f, COL_I64), .dflt = -1
	CONTEXT(cpu_user_ns), .unit = UNIT_NS, .json = "cpu_user_s", .out = OUT_SECONDS,
	  .help = "Its own CPU time in user mode over its whole life, NULL where not known." },
	CONTEXT(cpu_sys_ns), .unit = UNIT_NS, .json = "cpu_sys_s", .out = OUT_SECONDS,
	  .help = "Its CPU time in kernel mode." },
	CONTEXT(minflt), .unit = UNIT_COUNT, .help = "Its page faults that needed no I/O." },
	CONTEXT(majflt), .unit = UNIT_COUNT, .help = "Its page faults that needed I/O." },
	CONTEXT(read_bytes), .unit = UNIT_BYTES,
	  .help = "The bytes it caused to be read from storage." },
	CONTEXT(write_bytes), .unit = UNIT_BYTES,
	  .help = "The bytes it caused to be written to storage." },
#undef CONTEXT
};

const struct store_table store_run_table = { "run", { NULL }, run_cols, ARRAY_SIZE(run_cols) };
const struct store_table store_sample_table = { "sample", { "run_id", NULL }, sample_cols,
						ARRAY_SIZE(sample_cols) };
const struct store_table store_proc_sample_table = { "proc_sample", { "run_id", "elapsed_ns", NULL },
						     proc_sample_cols, ARRAY_SIZE(proc_sample_cols) };
const struct store_table store_process_table = { "process", { "run_id", NULL }, process_cols,
						 ARRAY_SIZE(process_cols) };

/* --- reading and writing fields by their kind --- */

static int64_t get_i64(const void *row, size_t off, enum col_kind k)
{
	const char *p = (const char *)row + off;
	int64_t i64;
	uint64_t u64;
	uint32_t u32;
	int i;
	double d;
	switch (k) {
	case COL_I64: memcpy(&i64, p, sizeof(i64)); return i64;
	case COL_U64: memcpy(&u64, p, sizeof(u64)); return (int64_t)u64;
	case COL_U32: memcpy(&u32, p, sizeof(u32)); return u32;
	case COL_INT: memcpy(&i, p, sizeof(i)); return i;
	case COL_F64: memcpy(&d, p, sizeof(d)); return (int64_t)d;
	case COL_TEXT: case COL_CHARS: break;
	}
	return 0;
}

static void set_i64(void *row, size_t off, enum col_kind k, int64_t v)
{
	char *p = (char *)row + off;
	uint64_t u64 = (uint64_t)v;
	uint32_t u32 = (uint32_t)v;
	int i = (int)v;
	double d = (double)v;
	switch (k) {
	case COL_I64: memcpy(p, &v, sizeof(v)); break;
	case COL_U64: memcpy(p, &u64, sizeof(u64)); break;
	case COL_U32: memcpy(p, &u32, sizeof(u32)); break;
	case COL_INT: memcpy(p, &i, sizeof(i)); break;
	case COL_F64: memcpy(p, &d, sizeof(d)); break;
	case COL_TEXT: case COL_CHARS: break;
	}
}

static const char *get_text(const void *row, size_t off, enum col_kind k)
{
	const char *p = (const char *)row + off;
	if (k == COL_CHARS)
		return p;
	if (k == COL_TEXT) {
		const char *s;
		memcpy(&s, p, sizeof(s));
		return s ? s : "";
	}
	return NULL;
}

int64_t store_column_i64(const struct store_column *c, const void *row)
{
	return get_i64(row, c->off, c->kind);
}

double store_column_f64(const struct store_column *c, const void *row)
{
	double d;
	if (c->kind != COL_F64)
		return (double)get_i64(row, c->off, c->kind);
	memcpy(&d, (const char *)row + c->off, sizeof(d));
	return d;
}

const char *store_column_json(const struct store_column *c)
{
	return c->json ? c->json : c->name;
}

const struct store_column *store_table_column(const struct store_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return &t->cols[i];
	return NULL;
}

const char *store_column_text(const struct store_column *c, const void *row)
{
	return get_text(row, c->off, c->kind);
}

int store_column_null(const struct store_column *c, const void *row)
{
	switch (c->null) {
	case COL_NEVER_NULL: return 0;
	case COL_NULL_IF_ZERO: return get_i64(row, c->guard_off, c->guard_kind) == 0;
	case COL_NULL_IF_NEG: return get_i64(row, c->guard_off, c->guard_kind) < 0;
	case COL_NULL_IF_NOT_POS: return get_i64(row, c->guard_off, c->guard_kind) <= 0;
	case COL_NULL_IF_EMPTY: return get_text(row, c->guard_off, c->guard_kind)[0] == '\0';
	case COL_NULL_UNLESS_FLAG:
		return !((uint64_t)get_i64(row, c->guard_off, c->guard_kind) & c->flag);
	}
	return 0;
}

/* --- SQL --- */

static int wanted(const struct store_column *c, unsigned when)
{
	return when == 0 || (c->when & when);
}

void columns_list(struct buf *b, const struct store_table *t, const char *prefix)
{
	for (size_t i = 0; i < t->ncols; i++)
		buf_printf(b, "%s%s%s", i ? ", " : "", prefix, t->cols[i].name);
}

char *columns_insert_sql(const struct store_table *t, const char *verb, unsigned when)
{
	struct buf b = { 0 };
	size_t n = 0;
	buf_printf(&b, "%s INTO %s (", verb, t->name);
	for (size_t k = 0; t->keys[k]; k++, n++)
		buf_printf(&b, "%s%s", n ? ", " : "", t->keys[k]);
	for (size_t i = 0; i < t->ncols; i++)
		if (wanted(&t->cols[i], when))
			buf_printf(&b, "%s%s", n++ ? ", " : "", t->cols[i].name);
	buf_puts(&b, ") VALUES (");
	for (size_t i = 0; i < n; i++)
		buf_puts(&b, i ? ",?" : "?");
	buf_putc(&b, ')');
	return b.p;
}

char *columns_update_sql(const struct store_table *t, unsigned when, const char *key)
{
	struct buf b = { 0 };
	size_t n = 0;
	buf_printf(&b, "UPDATE %s SET ", t->name);
	for (size_t i = 0; i < t->ncols; i++)
		if (wanted(&t->cols[i], when))
			buf_printf(&b, "%s%s = ?", n++ ? ", " : "", t->cols[i].name);
	buf_printf(&b, " WHERE %s = ?", key);
	return b.p;
}

int columns_bind(sqlite3_stmt *s, int first, const struct store_table *t, unsigned when,
		 const void *row)
{
	int i = first;
	for (size_t k = 0; k < t->ncols; k++) {
		const struct store_column *c = &t->cols[k];
		if (!wanted(c, when))
			continue;
		if (store_column_null(c, row))
			sqlite3_bind_null(s, i);
		else if (c->kind == COL_TEXT || c->kind == COL_CHARS)
			sqlite3_bind_text(s, i, get_text(row, c->off, c->kind), -1, SQLITE_STATIC);
		else if (c->kind == COL_F64)
			sqlite3_bind_double(s, i, store_column_f64(c, row));
		else
			sqlite3_bind_int64(s, i, get_i64(row, c->off, c->kind));
		i++;
	}
	return i;
}

void columns_load(sqlite3_stmt *s, int first, const struct store_table *t, void *row)
{
	for (size_t k = 0; k < t->ncols; k++) {
		const struct store_column *c = &t->cols[k];
		int i = first + (int)k;
		char *p = (char *)row + c->off;
		if (c->kind == COL_TEXT) {
			const unsigned char *v = sqlite3_column_text(s, i);
			char *dup = xstrdup(v ? (const char *)v : "");
			memcpy(p, &dup, sizeof(dup));
			continue;
		}
		if (c->kind == COL_CHARS) {
			const unsigned char *v = sqlite3_column_text(s, i);
			strlcpy_rsw(p, v ? (const char *)v : "", c->size);
			continue;
		}
		if (sqlite3_column_type(s, i) == SQLITE_NULL) {
			set_i64(row, c->off, c->kind, c->dflt);
			continue;
		}
		if (c->kind == COL_F64) {
			double d = sqlite3_column_double(s, i);
			memcpy(p, &d, sizeof(d));
		} else {
			set_i64(row, c->off, c->kind, sqlite3_column_int64(s, i));
		}
		if (c->null == COL_NULL_UNLESS_FLAG)
			set_i64(row, c->guard_off, c->guard_kind,
				(int64_t)((uint64_t)get_i64(row, c->guard_off, c->guard_kind) | c->flag));
	}
}

void store_row_free_text(const struct store_table *t, void *row)
{
	for (size_t k = 0; k < t->ncols; k++) {
		if (t->cols[k].kind != COL_TEXT)
			continue;
		char *p = (char *)row + t->cols[k].off, *s;
		memcpy(&s, p, sizeof(s));
		free(s);
		s = NULL;
		memcpy(p, &s, sizeof(s));
	}
}
