#include "record/engine.h"
#include "source/kpeak.h"

int engine_open(struct record_opts *o, char *why, size_t n)
{
	engine_close(o);
	return kpeak_open(&o->kpeak, why, n);
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

void engine_close(struct record_opts *o)
{
	kpeak_close(o->kpeak);
	o->kpeak = NULL;
}
