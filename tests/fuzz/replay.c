/* A small driver for a libFuzzer target, so that every harness runs in make check with
 * the ordinary compiler (and under ASan and UBSan with SANITIZE=1), where clang's
 * libFuzzer is not there. It feeds the target every file under the seed folders, then
 * random mutations of them for a number of seconds; a crash, a sanitizer report or a
 * hang (alarm) ends the process, which the test runner counts as a failure. It prints
 * TAP. The mutations are a few of libFuzzer's, without its coverage feedback: this is a
 * smoke run of the harnesses, and `make fuzz` is the long, guided one.
 *
 *   replay SECONDS DIR...        RSSWATCH_FUZZ_SEED=N replays one run's inputs again */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LEN 4096
#define MAX_SEEDS 4096

struct seed {
	uint8_t *data;
	size_t len;
};

static struct seed seeds[MAX_SEEDS];
static size_t nseeds;

static void add_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || nseeds == MAX_SEEDS) {
		if (fd >= 0)
			close(fd);
		return;
	}
	uint8_t *buf = malloc(MAX_LEN);
	ssize_t n = buf ? read(fd, buf, MAX_LEN) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		return;
	}
	seeds[nseeds].data = buf;
	seeds[nseeds].len = (size_t)n;
	nseeds++;
}

static void add_tree(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d || depth > 8) {
		if (d)
			closedir(d);
		return;
	}
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			add_tree(path, depth + 1);
		else if (S_ISREG(st.st_mode))
			add_file(path);
	}
	closedir(d);
}

/* xorshift64*: reproducible from the seed printed at the start. */
static uint64_t rng;
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}
static size_t below(size_t n) { return n ? (size_t)(next() % n) : 0; }

/* Bytes that parsers of text and of kernel records care about. */
static const uint8_t special[] = { 0, 0xff, 0x7f, 0x80, '\n', ' ', '\t', ':', '-', '+',
	'0', '9', 'k', 'B', '=', '.', '/', '%' };

static size_t mutate(uint8_t *buf, size_t len)
{
	int edits = 1 + (int)below(8);
	for (int k = 0; k < edits; k++) {
		size_t at = below(len + 1);
		switch (below(8)) {
		case 0:		/* flip a bit */
			if (len)
				buf[below(len)] ^= (uint8_t)(1u << below(8));
			break;
		case 1:		/* a random byte */
			if (len)
				buf[below(len)] = (uint8_t)next();
			break;
		case 2:		/* a special byte */
			if (len)
				buf[below(len)] = special[below(sizeof(special))];
			break;
		case 3:		/* insert a byte */
			if (len < MAX_LEN) {
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = below(2) ? (uint8_t)next() : special[below(sizeof(special))];
				len++;
			}
			break;
		case 4:		/* delete a run of bytes */
			if (at < len) {
				size_t n = 1 + below(len - at < 16 ? len - at : 16);
				memmove(buf + at, buf + at + n, len - at - n);
				len -= n;
			}
			break;
		case 5:		/* cut the end */
			len = at;
			break;
		case 6: {	/* copy a chunk of itself elsewhere */
			if (!len)
				break;
			size_t from = below(len), n = 1 + below(len - from < 64 ? len - from : 64);
			size_t to = below(len);
			if (to + n > len)
				n = len - to;
			memmove(buf + to, buf + from, n);
			break;
		}
		default: {	/* splice in a piece of another seed */
			const struct seed *s = &seeds[below(nseeds)];
			if (!s->len)
				break;
			size_t from = below(s->len), n = 1 + below(s->len - from);
			if (at + n > MAX_LEN)
				n = MAX_LEN - at;
			if (at + n > len)
				len = at + n;
			memcpy(buf + at, s->data + from, n);
			break;
		}
		}
	}
	return len;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s SECONDS DIR...\n", argv[0]);
		return 2;
	}
	double secs = atof(argv[1]);
	for (int i = 2; i < argc; i++)
		add_tree(argv[i], 0);
	if (!nseeds) {
		printf("not ok 1 - no seed files under the folders given\n");
		return 1;
	}
	const char *env = getenv("RSSWATCH_FUZZ_SEED");
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	rng = env ? strtoull(env, NULL, 10) : (uint64_t)now.tv_nsec ^ (uint64_t)getpid() << 32;
	if (!rng)
		rng = 1;
	printf("# RSSWATCH_FUZZ_SEED=%llu\n", (unsigned long long)rng);
	fflush(stdout);
	alarm((unsigned)secs + 60);	/* a hang is a failure too */

	/* the seeds as they are, and each with every first byte that picks a parser */
	for (size_t i = 0; i < nseeds; i++) {
		uint8_t buf[MAX_LEN + 1];
		LLVMFuzzerTestOneInput(seeds[i].data, seeds[i].len);
		size_t n = seeds[i].len < MAX_LEN ? seeds[i].len : MAX_LEN;
		memcpy(buf + 1, seeds[i].data, n);
		for (unsigned b = 0; b < 16; b++) {
			buf[0] = (uint8_t)b;
			LLVMFuzzerTestOneInput(buf, n + 1);
		}
	}
	printf("ok 1 - %zu seed files, each as it is and behind 16 selector bytes\n", nseeds);
	fflush(stdout);

	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long long runs = 0;
	double spent = 0;
	uint8_t *buf = malloc(MAX_LEN);
	if (!buf)
		return 1;
	while (spent < secs) {
		for (int k = 0; k < 256; k++, runs++) {
			const struct seed *s = &seeds[below(nseeds)];
			memcpy(buf, s->data, s->len);
			size_t len = mutate(buf, s->len);
			/* a private copy of exactly len bytes: ASan sees any read past its end */
			uint8_t *in = malloc(len ? len : 1);
			if (!in)
				return 1;
			memcpy(in, buf, len);
			LLVMFuzzerTestOneInput(in, len);
			free(in);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		spent = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
	}
	free(buf);
	printf("ok 2 - %llu mutated inputs in %.1f s: no crash, no sanitizer report, no hang\n",
	       runs, spent);
	return 0;
}
