/* rsswatch gpus: the GPUs NVML sees, their memory, and the processes using it. */
#include "cli/cli.h"
#include "base/buf.h"
#include "base/fmt.h"
#include "base/util.h"
#include "record/gpus.h"
#include "render/json.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gpus_args {
	const char *db;		/* taken as every verb takes it; not used */
	enum output_format format;
};

#define AT(field, type) CLI_AT(struct gpus_args, field, type)
static const struct cli_opt gpus_opts[] = {
	{ "format", 'f', CLI_FORMAT, AT(format, enum output_format), .formats = CLI_TEXT_JSON,
	  .help = " (default: text)" },
	{ "json", 0, CLI_FLAG, AT(format, enum output_format), .set = FORMAT_JSON,
	  .help = "the same as --format json: one JSON object with \"devices\" and "
		  "\"processes\"" },
	CLI_DB_ROW_AS(struct gpus_args, "accepted for uniformity; not used"),
	CLI_OPTS_END,
};

const struct cli_cmd gpus_cli = {
	.verb = "gpus",
	.usage = "usage: rsswatch gpus [--format text|json] [--json]\n",
	.about = "Lists the GPUs the NVIDIA driver reports (index, name, memory used and total)\n"
		 "and the processes holding memory on them (pid, command name, GPU, memory).\n"
		 "Pids are host pids, as the driver reports them.\n",
	.opts = gpus_opts,
	.more = "Exits 1 when no NVIDIA driver is found.\n",
};

static const char *kind_name(unsigned kind)
{
	if (kind == (GPU_PROC_COMPUTE | GPU_PROC_GRAPHICS))
		return "C+G";
	return kind & GPU_PROC_GRAPHICS ? "G" : "C";
}

/* The command name of a process, or NULL when it cannot be read here. */
static const char *comm_of(const struct gpu_user *u)
{
	return u->has_comm ? u->comm : NULL;
}

static void print_json(const struct gpu_inventory *inv)
{
	const struct gpu_device *g = inv->dev;
	int ndev = inv->ndev, nproc = inv->nusers;
	struct buf b = { 0 };
	buf_puts(&b, "{\"devices\":[");
	for (int i = 0; i < ndev; i++) {
		buf_printf(&b, "%s{\"index\":%u,\"name\":", i ? "," : "", g[i].index);
		json_str(&b, g[i].name);
		buf_puts(&b, ",\"uuid\":");
		json_str(&b, g[i].uuid);
		buf_printf(&b, ",\"present\":%s,\"mig\":%s", g[i].present ? "true" : "false",
			   g[i].mig < 0 ? "null" : g[i].mig ? "true" : "false");
		if (g[i].err == 0)
			buf_printf(&b, ",\"used_bytes\":%llu,\"total_bytes\":%llu}", g[i].used,
				   g[i].total);
		else
			buf_puts(&b, ",\"used_bytes\":null,\"total_bytes\":null}");
	}
	buf_puts(&b, "],\"processes\":");
	if (nproc < 0) {
		buf_puts(&b, "null");
	} else {
		buf_putc(&b, '[');
		for (int i = 0; i < nproc; i++) {
			const struct gpu_proc *p = &inv->users[i].p;
			const char *comm = comm_of(&inv->users[i]);
			buf_printf(&b, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)p->pid);
			if (comm)
				json_str(&b, comm);
			else
				buf_puts(&b, "null");
			buf_printf(&b, ",\"device\":%u,\"type\":\"%s\",\"bytes\":", p->device,
				   kind_name(p->kind));
			if (p->known)
				buf_printf(&b, "%llu}", p->bytes);
			else
				buf_puts(&b, "null}");
		}
		buf_putc(&b, ']');
	}
	buf_puts(&b, "}\n");
	fputs(buf_str(&b), stdout);
	buf_release(&b);
}

static void print_text(const struct gpu_inventory *inv)
{
	const struct gpu_device *g = inv->dev;
	int ndev = inv->ndev, nproc = inv->nusers;
	char used[32], total[32];
	if (ndev == 0) {
		puts("no GPUs found");
		return;
	}
	printf("%-4s %-32s %12s %12s\n", "GPU", "NAME", "USED", "TOTAL");
	for (int i = 0; i < ndev; i++) {
		const char *name = g[i].name[0] ? g[i].name : "?";
		if (!g[i].present) {
			printf("%-4u %-32s %12s %12s\n", g[i].index, name, "lost", "-");
		} else if (g[i].err) {
			printf("%-4u %-32s %12s %12s  (%s)\n", g[i].index, name, "?", "?",
			       errstr(g[i].err));
		} else {
			printf("%-4u %-32s %12s %12s%s\n", g[i].index, name,
			       fmt_bytes(used, sizeof(used), g[i].used),
			       fmt_bytes(total, sizeof(total), g[i].total),
			       g[i].mig == 1 ? "  MIG" : "");
		}
	}
	putchar('\n');
	if (nproc < 0) {
		puts("this driver cannot list the processes using GPU memory");
		return;
	}
	if (nproc == 0) {
		puts("no processes are using GPU memory");
		return;
	}
	printf("%-8s %-16s %-4s %-4s %12s\n", "PID", "COMM", "GPU", "TYPE", "MEMORY");
	for (int i = 0; i < nproc; i++) {
		const struct gpu_proc *p = &inv->users[i].p;
		const char *comm = comm_of(&inv->users[i]);
		printf("%-8d %-16s %-4u %-4s %12s\n", (int)p->pid, comm ? comm : "?",
		       p->device, kind_name(p->kind),
		       p->known ? fmt_bytes(used, sizeof(used), p->bytes) : "n/a");
	}
	if (inv->own_pidns)
		puts("\nnote: rsswatch runs in a PID namespace of its own; the pids above are "
		     "host pids");
}

int cmd_gpus(int argc, char **argv)
{
	struct gpus_args a = { .format = FORMAT_TEXT };
	int ret = cli_parse(&gpus_cli, argc, argv, &a);
	if (ret)
		return ret == CLI_DONE ? EXIT_OK : ret;
	if (optind < argc)
		return cli_usage("gpus", "unexpected argument '%s'", argv[optind]);

	struct gpu_inventory inv;
	char why[512];
	int r = gpu_inventory_read(&inv, why, sizeof(why));
	if (r == -ENOENT || r == -ENXIO) {
		cli_error("no NVIDIA driver found (%s)", why);
		return EXIT_FAIL;
	}
	if (r < 0) {
		cli_error("cannot use the NVIDIA driver (%s)", why);
		return EXIT_FAIL;
	}
	if (a.format == FORMAT_JSON)
		print_json(&inv);
	else
		print_text(&inv);
	gpu_inventory_release(&inv);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}
