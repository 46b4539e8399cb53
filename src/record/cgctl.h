/* Control of memory cgroups, the recorder's one home for it: making a child cgroup
 * (limited for --memory-limit), moving a process into it, moving what is left out of
 * it, removing it, undoing what making it did to its parent, and cleaning up after
 * recorders that were killed. Reading and parsing cgroup files is source/cgroup.h's.
 *
 * struct run_cgroup is the memory cgroup of one recording: one rsswatch made for a
 * launched command, the one an attached process is in, or one named with -g. The
 * mounts are read once, when it is set up. Notes (processes moved) go to the sink;
 * failures are returned, never printed. */
#ifndef RSW_RECORD_CGCTL_H
#define RSW_RECORD_CGCTL_H

#include <stdint.h>

#include "record/recorder.h"
#include "source/cgroup.h"

/* Makes parent->dir/name with the memory limit (bytes; CG_UNLIMITED for none).
 * v1: mkdir and memory.limit_in_bytes.
 * v2: the parent must list memory in cgroup.controllers. If memory is not yet enabled
 * in the parent's cgroup.subtree_control and the parent holds processes (v2 forbids
 * controllers below a cgroup with processes of its own), every process of the parent
 * is first moved into a leaf child named "rsswatch-leaf" (until cgctl_leaf_undo()), then
 * +memory is enabled, then the child is made with memory.max and, where the file
 * exists, memory.swap.max = 0, so that going over the limit ends in an OOM kill
 * rather than in swapping.
 * With CG_CREATE_AS_IS in flags nothing of the parent is changed: on v2, unless
 * memory is already enabled for its children, -EOPNOTSUPP.
 * out->dir is the new cgroup. Returns 0, -EEXIST when the child exists already,
 * -EOPNOTSUPP when memory cannot be enabled for children of parent, or -errno (EACCES
 * and EPERM without the right to manage cgroups). A child made before a later step
 * failed is removed again. */
enum { CG_CREATE_AS_IS = 1u << 0 };
int cgctl_child_create(const struct cg_loc *parent, const char *name, uint64_t limit,
		       unsigned flags, struct cg_loc *out);
/* Moves pid (0: the caller) into the cgroup by writing it to cgroup.procs. */
int cgctl_attach(const struct cg_loc *cg, pid_t pid);
/* Moves every process left in the cgroup dir (a child of parent) out of it: into
 * parent, or on v2, where parent may hold no processes while memory is enabled for its
 * children, into parent's "rsswatch-leaf" (made if needed). where (PATH_MAX bytes) gets
 * the directory they went to. Returns how many were moved. */
size_t cgctl_evacuate(const struct cg_loc *parent, const char *dir, char *where);
/* v2: undoes what cgctl_child_create() did to parent when it made "rsswatch-leaf", once
 * that leaf is parent's only child: memory is disabled for parent's children again,
 * the leaf's processes go back to parent and the leaf is removed. Nothing is done
 * while any other child exists (another recorder's, or one made by someone else).
 * Returns 0 when parent is as it was, or -errno (-EBUSY: other children). */
int cgctl_leaf_undo(const struct cg_loc *parent);
/* Removes an empty cgroup. An exiting process can keep it busy for a moment after
 * waitpid() returned, so EBUSY is retried for up to timeout_ms. Returns 0, -ENOENT
 * when it is gone already, -EBUSY when processes remain, or -errno. */
int cgctl_child_destroy(const struct cg_loc *cg, int timeout_ms);


struct run_cgroup {
	struct cg_mount mount;	/* /proc/self/mountinfo, read by run_cgroup_init */
	int have_mount;
	struct cg_loc parent;	/* where loc was made (made only) */
	struct cg_loc loc;
	int made;		/* rsswatch created loc: run_cgroup_release removes it */
	int open;		/* reader is open */
	struct cg_reader reader;
	char path[PATH_MAX];	/* loc's path in the hierarchy, as the kernel log names it */
	const struct recorder_sink *sink;
};

/* Reads the mounts; sink (or NULL) gets the notes. */
void run_cgroup_init(struct run_cgroup *c, const struct recorder_sink *sink);

/* The step of run_cgroup_make that failed. */
enum run_cgroup_step {
	RUN_CGROUP_FIND,	/* rsswatch's own memory cgroup (-ENOENT: no controller) */
	RUN_CGROUP_CREATE,	/* the child (see cgctl_child_create) */
	RUN_CGROUP_READ,	/* opening its files (the child is removed again) */
};

/* Makes the cgroup of a launched command, beside rsswatch's own (on v2 beside the
 * leaf an earlier run made), first removing those of recorders that were killed
 * (their processes are moved out: a note each). limit: bytes, or 0 for an unlimited
 * cgroup made only where that changes no other cgroup (CG_CREATE_AS_IS). A name
 * taken by a killed recorder whose pid is ours now is skipped, not reused. Returns 0
 * (its reader open), or -errno and *step. */
int run_cgroup_make(struct run_cgroup *c, uint64_t limit, enum run_cgroup_step *step);

/* The cgroup an attached process is in, for its OOM kill count: c->open says whether
 * there is one worth watching (not the root, which counts every kill on the host). */
void run_cgroup_watch(struct run_cgroup *c, pid_t pid);

/* -g ARG: a directory of a memory cgroup, or a path in the memory hierarchy (v1
 * first: a hybrid host's v2 mount has no memory). Opens its reader. 0, or -ENOENT (no
 * such cgroup), -EINVAL (a ".." component: refused, not resolved) or -EXDEV (not on a
 * cgroup or cgroup2 file system, checked with statfs except under RSSWATCH_SYSROOT,
 * whose fixture trees are plain directories). */
int run_cgroup_open_named(struct run_cgroup *c, const char *arg);

/* Closes the reader and removes a cgroup rsswatch made; processes the command left
 * in it (daemons it started) are moved to the parent first (a note) and keep running
 * without the limit. On v2 the parent is then put back as it was (cgctl_leaf_undo).
 * Returns 0, or -errno when the cgroup could not be removed. */
int run_cgroup_release(struct run_cgroup *c);

/* For target_launch's child (record/target.h): joins the cgroup loc (a struct
 * cg_loc). */
int run_cgroup_join(void *loc);

#endif
