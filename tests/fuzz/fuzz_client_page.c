/* libFuzzer target over the reader of the client library's shared page
 * (src/source/client.c): the page belongs to the application, so every byte of it is
 * the fuzzer's, and so is its size at every moment. Input: one byte of flags (bit 0:
 * make the header's fixed fields valid, so that inputs reach the tables), 128 bytes of
 * header, then edits of 11 bytes each (1 byte op, 2 bytes offset scaled to the page,
 * 8 bytes data) made to the file between reads, as a hostile owner would make them
 * while the recorder reads: writes anywhere, truncations, regrowth. The parsers are
 * also fed the raw input, and client_maps_line_parse its lines. Build and run: make
 * fuzz. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/client.h"
#include "lib/page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_mark(void *ctx, long long ns, const char *label)
{
	size_t *n = ctx;
	(void)ns;
	*n += strlen(label);	/* reads the label to its end: it must be terminated */
}

/* The parsers alone, on the input as it is. */
static void parsers(const uint8_t *data, size_t size)
{
	struct client_header h;
	struct client_counter c[RSW_PAGE_COUNTERS];
	char label[RSW_PAGE_LABEL_SIZE];
	int64_t ns;

	client_header_parse(data, size, &h);
	client_counters_parse(data, data + size / 2, size / 2, c, RSW_PAGE_COUNTERS);
	for (size_t off = 0; off + sizeof(struct rsw_page_mark) <= size; off += 64)
		client_mark_parse(data + off, size - off, off / 64, &ns, label);
	/* the input as lines of a memory map, for a pid its first bytes name */
	struct client_map_page mp;
	pid_t pid = size >= 2 ? (pid_t)(data[0] | data[1] << 8) : 1;
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t end = nl ? (size_t)(nl - data) : size;
		if (client_maps_line_parse((const char *)data + at, end - at, pid, &mp) == 1 &&
		    strlen(mp.name) >= sizeof(mp.name))
			abort();
		at = end + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t page = sizeof(struct rsw_page);
	const size_t hsz = sizeof(struct rsw_page_header);
	struct client_counter c[RSW_PAGE_COUNTERS];
	struct client_page *p = NULL;
	size_t n = 0;

	parsers(data, size);
	if (size < 1)
		return 0;
	int fd = memfd_create("fuzz-page", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	struct rsw_page *img = calloc(1, page);
	if (!img || fchmod(fd, 0600) < 0)
		goto out;
	size_t body = size - 1 < hsz ? size - 1 : hsz;
	memcpy(&img->hdr, data + 1, body);
	if (data[0] & 1) {
		img->hdr.magic = RSW_PAGE_MAGIC;
		img->hdr.version = RSW_PAGE_VERSION;
		img->hdr.size = (uint32_t)page;
		img->hdr.pid = (int32_t)getpid();
		img->hdr.n_counters = RSW_PAGE_COUNTERS;
		img->hdr.ring_slots = RSW_PAGE_RING_SLOTS;
		img->hdr.name_size = RSW_PAGE_NAME_SIZE;
		img->hdr.label_size = RSW_PAGE_LABEL_SIZE;
		img->hdr.created_boot_ns = 1000000000;	/* after the start given below */
		img->hdr.start_ticks = 1;
	}
	if (write(fd, img, page) != (ssize_t)page)
		goto out;
	struct client_ident who = { getpid(), 1, 0 };
	if (client_page_open_fd(fd, getpid(), geteuid(), &who, &p) != 0)
		goto out;
	client_page_drain_marks(p, on_mark, &n);
	client_page_counters(p, c, RSW_PAGE_COUNTERS);
	for (size_t i = 1 + body; i + 11 <= size; i += 11) {
		size_t off = (size_t)(data[i + 1] | data[i + 2] << 8) * page / 65536;
		switch (data[i] % 5) {
		case 0:		/* overwrite 8 bytes */
		case 1:
			if (pwrite(fd, data + i + 3, 8, (off_t)off) < 0)
				break;
			break;
		case 2:		/* truncate */
			if (ftruncate(fd, (off_t)off) < 0)
				break;
			break;
		case 3:		/* back to full size (the lost bytes read as zeros) */
			if (ftruncate(fd, (off_t)page) < 0)
				break;
			break;
		default:	/* read, as the recorder does at each sample */
			client_page_drain_marks(p, on_mark, &n);
			client_page_counters(p, c, RSW_PAGE_COUNTERS);
			break;
		}
	}
	client_page_drain_marks(p, on_mark, &n);
	client_page_counters(p, c, RSW_PAGE_COUNTERS);
	client_page_close(p);
	fd = -1;	/* closed with the page */
out:
	free(img);
	if (fd >= 0)
		close(fd);
	return 0;
}
