/* render/xml.c: escaping for SVG and HTML; control bytes and invalid UTF-8 never pass. */
#include "testutil.h"

#include <string.h>

#include "base/util.h"
#include "render/xml.h"

static void test_xml_escape(void **state)
{
	(void)state;
	struct buf b = { 0 };
	xml_text(&b, "<script>alert(1)</script>");
	assert_string_equal(buf_str(&b), "&lt;script&gt;alert(1)&lt;/script&gt;");
	buf_reset(&b);
	xml_text(&b, "a & b \"c\" 'd'");
	assert_string_equal(buf_str(&b), "a &amp; b &quot;c&quot; &#39;d&#39;");
	buf_reset(&b);
	/* control bytes and invalid UTF-8 become U+FFFD; valid UTF-8, tab and newline stay */
	xml_text(&b, "x\x01y\xff\xc0\xafz \xc3\xa9\xe2\x82\xac\t\n");
	assert_string_equal(buf_str(&b), "x\xef\xbf\xbdy\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz \xc3\xa9\xe2\x82\xac\t\n");
	buf_reset(&b);
	xml_text(&b, NULL);
	assert_int_equal(b.len, 0);
	/* truncation counts characters and cuts at a boundary, ellipsis included */
	xml_text_trunc(&b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9<>", 4);
	assert_string_equal(buf_str(&b), "\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	buf_reset(&b);
	xml_text_trunc(&b, "a<b", 3);
	assert_string_equal(buf_str(&b), "a&lt;b");
	assert_int_equal(utf8_chars("\xc3\xa9t\xe2\x82\xac\xff"), 4);
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
