/* rsswatch gpus: the GPUs NVML sees, their memory, and the processes using it. */
#include "cli/cli.h"
#include "base/buf.h"
#include "base/fmt.h"
#include "base/util.h"
#include "source/nvml.h"
#include "source/proc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_gpus(int argc, char **argv);

#define MAX_PROCS 4096

static const char usage_text[] =
	"usage: rsswatch gpus [--json]\n"
	"\n"
	"Lists the GPUs the NVIDIA driver reports (index, name, memory used and total)\n"
	"and the processes holding memory on them (pid, command name, GPU, memory).\n"
	"Pids are host pids, as the driver reports them.\n"
	"\n"
	"      --json     print one JSON object with \"devices\" and \"processes\"\n"
	"      --db PATH  accepted for uniformity; not used\n"
	"  -h, --help     show this help\n"
	"\n"
	"Exits 1 when no NVIDIA driver is found.\n";

static void json_str(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			buf_putc(b, '\\');
			buf_putc(b, (char)*p);
		} else if (*p < 0x20 || *p == 0x7f) {
			buf_printf(b, "\\u%04x", *p);
		} else {
			buf_putc(b, (char)*p);
		}
	}
	buf_putc(b, '"');
}

static const char *kind_name(unsigned kind)
{
	if (kind == (GPU_PROC_COMPUTE | GPU_PROC_GRAPHICS))
		return "C+G";
	return kind & GPU_PROC_GRAPHICS ? "G" : "C";
}

/* The command name of a host pid, or NULL when it cannot be read here (gone, or not
 * visible from this PID namespace). */
static const char *comm_of(pid_t pid, struct proc_stat *st)
{
	return proc_read_stat(pid, st) == 0 ? st->comm : NULL;
}

static void print_json(const struct gpu_device *g, int ndev, const struct gpu_proc *p,
		       int nproc)
{
	struct buf b = { 0 };
	struct proc_stat st;
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
			const char *comm = comm_of(p[i].pid, &st);
			buf_printf(&b, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)p[i].pid);
			if (comm)
				json_str(&b, comm);
			else
				buf_puts(&b, "null");
			buf_printf(&b, ",\"device\":%u,\"type\":\"%s\",\"bytes\":", p[i].device,
				   kind_name(p[i].kind));
			if (p[i].known)
				buf_printf(&b, "%llu}", p[i].bytes);
			else
				buf_puts(&b, "null}");
		}
		buf_putc(&b, ']');
	}
	buf_puts(&b, "}\n");
	fputs(buf_str(&b), stdout);
	buf_release(&b);
}

static void print_text(const struct gpu_device *g, int ndev, const struct gpu_proc *p,
		       int nproc)
{
	char used[32], total[32];
	struct proc_stat st;
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
		const char *comm = comm_of(p[i].pid, &st);
		printf("%-8d %-16s %-4u %-4s %12s\n", (int)p[i].pid, comm ? comm : "?",
		       p[i].device, kind_name(p[i].kind),
		       p[i].known ? fmt_bytes(used, sizeof(used), p[i].bytes) : "n/a");
	}
	if (pidns_is_initial() == 0)
		puts("\nnote: rsswatch runs in a PID namespace of its own; the pids above are "
		     "host pids");
}

int cmd_gpus(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "db", required_argument, NULL, CLI_OPT_DB },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case CLI_OPT_DB:
			break;
		case CLI_OPT_HELP:
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("gpus", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("gpus", "unexpected argument '%s'", argv[optind]);

	struct nvml *n;
	char why[512];
	int r = nvml_open(&n, why, sizeof(why));
	if (r == -ENOENT || r == -ENXIO) {
		cli_error("no NVIDIA driver found (%s)", why);
		return EXIT_FAIL;
	}
	if (r < 0) {
		cli_error("cannot use the NVIDIA driver (%s)", why);
		return EXIT_FAIL;
	}
	struct gpu_device g[NVML_MAX_DEVICES];
	int ndev = nvml_read_devices(n, g, NVML_MAX_DEVICES);
	struct gpu_proc *p = xcalloc(MAX_PROCS, sizeof(*p));
	int nproc = nvml_list_processes(n, p, MAX_PROCS);
	if (nproc > MAX_PROCS)
		nproc = MAX_PROCS;
	if (json)
		print_json(g, ndev, p, nproc);
	else
		print_text(g, ndev, p, nproc);
	free(p);
	nvml_close(n);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}
