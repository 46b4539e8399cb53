/* Assembling one sample of the target from its sources, through files kept open
 * between samples. This is the hot path of the recorder: two preads and two parses
 * per sample, no allocation, no open(). */
#ifndef RSW_RECORD_SAMPLER_H
#define RSW_RECORD_SAMPLER_H

#include <sys/types.h>

#include "base/rfile.h"
#include "source/proc.h"
#include "store/model.h"

struct sampler {
	struct proc_reader proc;	/* /proc/PID/status */
	struct rfile meminfo;		/* /proc/meminfo */
};

/* Opens the target's files. Returns 0, -ESRCH when the process is gone, or -errno. */
int sampler_open(struct sampler *s, pid_t pid);
/* Fills out (all but elapsed_ns). Returns 0, -ESRCH when the target is gone (reaped or a
 * zombie), or another -errno. */
int sampler_read(struct sampler *s, struct sample *out);
void sampler_close(struct sampler *s);

#endif
