#include "record/engine.h"
#include "source/kpeak.h"
#include "source/kstacks.h"
#include "source/unwind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int engine_open(struct record_opts *o, char *why, size_t n)
{
	engine_close(o);
	return kpeak_open(&o->kpeak, why, n);
}

int engine_sees_victims(const struct record_opts *o)
{
	return o->kpeak && kpeak_sees_victims(o->kpeak);
}

void engine_new_run(struct record_opts *o)
{
	if (o->kpeak)
		kpeak_reset(o->kpeak);
}

void engine_adopt_launch(struct record_opts *o, int tree)
{
	if (!o->kpeak)
		return;
	kpeak_adopt_next_child(o->kpeak);
	if (tree)
		kpeak_follow_forks(o->kpeak, 1);
}

int engine_open_stacks(struct record_opts *o, enum engine_stacks mode, char *why, size_t n)
{
	int e = unwinder_new(&o->unwinder);
	if (e < 0) {
		snprintf(why, n, e == -ENOSYS ? "this rsswatch was built without libdw (the "
			 "stacks' unwinder)" : "cannot start the stacks' unwinder: %s", strerror(-e));
		return e;
	}
	e = kstacks_open(&o->kstacks, o->kpeak,
			 mode == ENGINE_STACKS_FAULTS ? KSTACKS_FAULTS :
			 mode == ENGINE_STACKS_MALLOC ? KSTACKS_MALLOC : KSTACKS_MMAP, why, n);
	if (e < 0) {
		unwinder_free(o->unwinder);
		o->unwinder = NULL;
	}
	return e;
}

int engine_probe(struct record_opts *o, pid_t pid, char *why, size_t n)
{
	if (!o->kstacks)
		return 0;
	int e = kstacks_probe(o->kstacks, pid, why, n);
	return e < 0 ? e : 0;
}

void engine_close(struct record_opts *o)
{
	kstacks_close(o->kstacks);
	o->kstacks = NULL;
	unwinder_free(o->unwinder);
	o->unwinder = NULL;
	kpeak_close(o->kpeak);
	o->kpeak = NULL;
}
