/* The verb table: every verb, in the order `rsswatch --help` lists them. Apart from
 * main.c so that test_opts, which links every verb but main(), can hold each verb's
 * option table to the rules of cli/opts.h. */
#include "cli/cli.h"

#include <stddef.h>

const struct verb verbs[] = {
	{ "record", cmd_record, "record the memory of a process over time", &record_cli },
	{ "ls", cmd_ls, "list recorded runs, newest first", &ls_cli },
	{ "show", cmd_show, "summary and chart of one run", &show_cli },
	{ "export", cmd_export, "write a run's samples as CSV or JSON lines", &export_cli },
	{ "mark", cmd_mark, "add a stage mark to a running recording", &mark_cli },
	{ "rm", cmd_rm, "delete runs", &rm_cli },
	{ "gc", cmd_gc, "keep the database bounded: thin old runs, keeping their peaks", &gc_cli },
	{ "gpus", cmd_gpus, "list GPUs and the processes using their memory", &gpus_cli },
	{ "plot", cmd_plot, "draw runs as an SVG chart", &plot_cli },
	{ "report", cmd_report, "write one run as a self-contained HTML page", &report_cli },
	{ "compare", cmd_compare, "compare runs or groups of runs side by side", &compare_cli },
	{ "model", cmd_model, "fit memory against run parameters or counters; will it fit?", &model_cli },
	{ "agent", cmd_agent, "watch several targets at once, across restarts, for Prometheus", &agent_cli },
	/* hidden (cli.h, verb_hidden): the shell completions' question (dist/completion/) */
	{ "__complete", cmd_complete, "candidates for a shell's completion", &complete_cli },
	{ NULL, NULL, NULL, NULL },
};
