/* The eBPF peak engine for a recording (source/kpeak.h): the CLI asks here, as it does
 * for the GPUs (record/gpus.h), and says what it was told. */
#ifndef RSW_RECORD_ENGINE_H
#define RSW_RECORD_ENGINE_H

#include <stddef.h>

#include "record/recorder.h"

/* Loads the engine for a session's runs: o->kpeak, once (it takes 30-60 ms, which a
 * target may not outlive). Returns 0, or -errno with a one-line reason
 * in why (o->kpeak stays NULL: the run's peaks come from samples, VmHWM and the exit
 * records, as without it). */
int engine_open(struct record_opts *o, char *why, size_t n);
/* Whether the open engine hears the OOM killer's choices (oom:mark_victim with the
 * arguments of Linux 6.8 and later): else OOM kills come from the kernel log alone. */
int engine_sees_victims(const struct record_opts *o);
/* A run begins: the engine forgets the last one's processes and figures. */
void engine_new_run(struct record_opts *o);
/* A command about to be launched: the engine tracks the next child this process forks,
 * from its exec, and with a tree every process it forks from then on (a shell's first
 * children may start before the recorder's loop does). */
void engine_adopt_launch(struct record_opts *o, int tree);
/* record --stacks[=MODE]: the stacks program on the open engine's processes, and the
 * unwinder of its stacks (source/kstacks.h, source/unwind.h). 0, or -errno with why
 * in words. */
enum engine_stacks { ENGINE_STACKS_MMAP = 1, ENGINE_STACKS_FAULTS, ENGINE_STACKS_MALLOC };
int engine_open_stacks(struct record_opts *o, enum engine_stacks mode, char *why, size_t n);
/* The malloc mode: the allocator's probes for the process pid (source/kstacks.h
 * kstacks_probe); 0 in the other modes or without stacks, or -errno with why. */
int engine_probe(struct record_opts *o, pid_t pid, char *why, size_t n);
/* Unloads it (at the end of the session). Accepts a closed one. */
void engine_close(struct record_opts *o);

#endif
