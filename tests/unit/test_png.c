/* render/png.c: SVG to PNG where librsvg is present. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "base/util.h"
#include "render/png.h"

/* PNG through librsvg where the build has it: the image is the SVG's size times the
 * scale; a document that is not SVG is refused. Without librsvg, -ENOTSUP. */
static void test_png(void **state)
{
	(void)state;
	static const char svg[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"80\">"
				  "<rect width=\"120\" height=\"80\" fill=\"#1d4e89\"/></svg>";
	struct buf b = { 0 };
	if (!png_available()) {
		assert_int_equal(svg_to_png(svg, strlen(svg), 2, &b), -ENOTSUP);
		assert_int_equal(b.len, 0);
		return;
	}
	assert_int_equal(svg_to_png(svg, strlen(svg), 2, &b), 0);
	assert_true(b.len > 24);
	const unsigned char *p = (const unsigned char *)b.p;
	assert_memory_equal(p, "\x89PNG\r\n\x1a\n", 8);
	/* IHDR: width and height, big-endian, at bytes 16 and 20 */
	assert_int_equal((p[16] << 24) | (p[17] << 16) | (p[18] << 8) | p[19], 240);
	assert_int_equal((p[20] << 24) | (p[21] << 16) | (p[22] << 8) | p[23], 160);
	size_t len = b.len;
	assert_int_equal(svg_to_png("not svg at all", 14, 2, &b), -EINVAL);
	assert_int_equal(b.len, len);
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_png),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
