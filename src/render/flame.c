/* The flame graph of the live bytes at the peak: stacks merged from the root, an SVG
 * icicle, and the report's section around it. */
#include "render/flame.h"
#include "base/fmt.h"
#include "base/util.h"
#include "render/callstacks.h"
#include "render/svg.h"
#include "render/xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW 17			/* a row's height: a box of 16 and a gap */
#define BOX 16
#define CHAR_W 6.4		/* a generous mean width of a character at 11px */
#define LABEL_PAD 3		/* space left of a label, and kept free right of it */

/* One stack, root first, as pointers into its own copy of the frames. */
struct path {
	char **name;
	char **place;		/* NULL where the frame has no "(file:line)" */
	unsigned char *alloc;
	unsigned n;
	int64_t bytes;
};

/* Cuts one frame line (NUL-terminated, modified in place) into its name and its place:
 * the name ends where " (" begins, as the folded export cuts it (callstacks.c), and the
 * place is what the parentheses hold. */
static void cut_frame(char *line, char **name, char **place)
{
	char *p = strstr(line, " (");
	*name = line;
	*place = NULL;
	if (!p)
		return;
	*p = 0;
	p += 2;
	size_t len = strlen(p);
	if (len && p[len - 1] == ')')
		p[len - 1] = 0;
	*place = p;
}

/* s's frames as a path in *p, its text copied into *text (the caller keeps it). */
static void path_of(const struct stored_stack *s, struct path *p, char **text, size_t *cut)
{
	const char *frames = s->frames ? s->frames : "";
	char *copy = xstrdup(frames);
	size_t lines = 0;
	for (char *c = copy; *c; lines++) {
		c += strcspn(c, "\n");
		if (*c)
			c++;
	}
	char leaf[512];
	callstacks_leaf(frames, leaf, sizeof(leaf));
	/* innermost first, as stored; reversed below */
	char **name = xcalloc(lines ? lines : 1, sizeof(*name));
	char **place = xcalloc(lines ? lines : 1, sizeof(*place));
	unsigned char *alloc = xcalloc(lines ? lines : 1, 1);
	size_t k = 0;
	for (char *c = copy; *c && k < lines; k++) {
		char *line = c;
		c += strcspn(c, "\n");
		if (*c)
			*c++ = 0;
		cut_frame(line, &name[k], &place[k]);
	}
	/* the frames inside the leaf (innermost, before it) are the allocator's */
	size_t leaf_at = 0;
	while (leaf_at < k && strcmp(name[leaf_at], leaf) != 0)
		leaf_at++;
	if (leaf_at == k)
		leaf_at = 0;
	for (size_t i = 0; i < leaf_at; i++)
		alloc[i] = 1;
	for (size_t i = 0, j = k; i < j--; i++) {
		char *t = name[i];
		name[i] = name[j];
		name[j] = t;
		t = place[i];
		place[i] = place[j];
		place[j] = t;
		unsigned char a = alloc[i];
		alloc[i] = alloc[j];
		alloc[j] = a;
	}
	if (k > FLAME_MAX_DEPTH) {
		*cut += k - FLAME_MAX_DEPTH;
		k = FLAME_MAX_DEPTH;
	}
	p->name = name;
	p->place = place;
	p->alloc = alloc;
	p->n = (unsigned)k;
	p->bytes = s->bytes;
	*text = copy;
}

/* Root-first order, a path before the paths it is a prefix of: paths that share their
 * first frames are then next to each other, and the shared frames can be merged by
 * comparing each path with the one before it. */
static int path_cmp(const void *pa, const void *pb)
{
	const struct path *a = pa, *b = pb;
	for (unsigned i = 0; i < a->n && i < b->n; i++) {
		int c = strcmp(a->name[i], b->name[i]);
		if (c)
			return c;
	}
	return a->n < b->n ? -1 : a->n > b->n;
}

static size_t node_add(struct flame *f, const char *name, const char *place, unsigned depth,
		       int64_t offset, int alloc)
{
	f->nodes = xgrow(f->nodes, f->n, &f->cap, sizeof(*f->nodes));
	struct flame_node *nd = &f->nodes[f->n];
	nd->name = name;
	nd->place = place;
	nd->bytes = 0;
	nd->offset = offset;
	nd->depth = depth;
	nd->alloc = alloc;
	if (depth > f->depth)
		f->depth = depth;
	return f->n++;
}

static int same_place(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

void flame_build(struct flame *f, const struct stored_stack *v, size_t n)
{
	memset(f, 0, sizeof(*f));
	struct path *paths = xcalloc(n ? n : 1, sizeof(*paths));
	f->text = xcalloc(n ? n : 1, sizeof(*f->text));
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].bytes <= 0)
			continue;
		path_of(&v[i], &paths[np], &f->text[f->ntext++], &f->cut);
		np++;
	}
	qsort(paths, np, sizeof(*paths), path_cmp);

	/* open[d]: the node at depth d of the path before; open[0] the root */
	size_t open[FLAME_MAX_DEPTH + 1];
	open[0] = node_add(f, "all", NULL, 0, 0, 0);
	const struct path *prev = NULL;
	for (size_t i = 0; i < np; i++) {
		const struct path *p = &paths[i];
		unsigned k = 0;
		while (prev && k < p->n && k < prev->n && strcmp(p->name[k], prev->name[k]) == 0)
			k++;
		for (unsigned d = 0; d < k; d++) {
			struct flame_node *nd = &f->nodes[open[d + 1]];
			if (!same_place(nd->place, p->place[d]))
				nd->place = NULL;
			nd->alloc &= p->alloc[d];
		}
		for (unsigned d = k; d < p->n; d++) {
			const struct flame_node *up = &f->nodes[open[d]];
			int64_t at = up->offset + up->bytes;	/* right of its callees so far */
			open[d + 1] = node_add(f, p->name[d], p->place[d], d + 1, at, p->alloc[d]);
		}
		for (unsigned d = 0; d <= p->n; d++)
			f->nodes[open[d]].bytes += p->bytes;
		prev = p;
	}
	f->total = f->nodes[0].bytes;
	for (size_t i = 0; i < np; i++) {
		free(paths[i].name);
		free(paths[i].place);
		free(paths[i].alloc);
	}
	free(paths);
}

void flame_release(struct flame *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ntext; i++)
		free(f->text[i]);
	free(f->text);
	free(f->nodes);
	memset(f, 0, sizeof(*f));
}

/* A colour of the name's own, so that a function has the same one in every row: warm
 * for the program's frames, grey for the allocator's, a pale blue-grey for the root. */
static void colour(char *out, size_t n, const struct flame_node *nd)
{
	if (nd->depth == 0) {
		snprintf(out, n, "#d5dbe3");
		return;
	}
	uint32_t h = 2166136261u;
	for (const unsigned char *c = (const unsigned char *)nd->name; *c; c++)
		h = (h ^ *c) * 16777619u;
	if (nd->alloc) {
		unsigned g = 190 + (h % 30);
		snprintf(out, n, "#%02x%02x%02x", g, g, g + 6 > 255 ? 255 : g + 6);
		return;
	}
	snprintf(out, n, "#%02x%02x%02x", 215 + (h % 40), 90 + ((h >> 8) % 120), 40 + ((h >> 16) % 50));
}

static double share_of(int64_t bytes, double base)
{
	return base > 0 ? 100.0 * (double)bytes / base : 0;
}

size_t flame_svg(struct buf *b, const struct flame *f, uint64_t base, const char *key)
{
	const double w_all = FLAME_WIDTH;
	const double total = f->total > 0 ? (double)f->total : 1;
	const double of = base ? (double)base : total;
	const char *of_words = base ? "the peak" : "the stacks";
	size_t folded = 0;
	unsigned rows = 1;
	for (size_t i = 0; i < f->n; i++)
		if ((double)f->nodes[i].bytes / total * w_all >= 1 && f->nodes[i].depth + 1 > rows)
			rows = f->nodes[i].depth + 1;
	int height = (int)rows * ROW;
	buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s-svg\" class=\"rsw-flame\" "
		      "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"" SVG_FONT
		      "\" font-size=\"11\" fill=\"#1f2328\" data-base=\"%.0f\" data-of=\"%s\">\n",
		   key, FLAME_WIDTH, height, FLAME_WIDTH, height, of, of_words);
	for (size_t i = 0; i < f->n; i++) {
		const struct flame_node *nd = &f->nodes[i];
		double w = (double)nd->bytes / total * w_all;
		if (w < 1) {
			folded++;
			continue;
		}
		double x = (double)nd->offset / total * w_all;
		int y = (int)nd->depth * ROW;
		char fill[16], by[32];
		colour(fill, sizeof(fill), nd);
		fmt_bytes(by, sizeof(by), (uint64_t)nd->bytes);
		if (nd->depth == 0) {
			buf_puts(b, "<g class=\"root\"><title>every stack");
		} else {
			buf_puts(b, "<g data-n=\"");
			xml_text(b, nd->name);
			buf_printf(b, "\" data-o=\"%lld\" data-b=\"%lld\"><title>", (long long)nd->offset,
				   (long long)nd->bytes);
			xml_text(b, nd->name);
			if (nd->place) {
				buf_puts(b, " (");
				xml_text(b, nd->place);
				buf_putc(b, ')');
			}
		}
		buf_printf(b, "\n%s, %.1f%% of %s</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
			      "height=\"%d\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\"/>",
			   by, share_of(nd->bytes, of), of_words, x, y, w, BOX, fill);
		double room = (w - 2 * LABEL_PAD) / CHAR_W;
		if (room >= 3) {
			buf_printf(b, "<text x=\"%.2f\" y=\"%d\">", x + LABEL_PAD, y + 12);
			if (nd->depth == 0) {
				buf_printf(b, "all stacks: %s", by);
			} else {
				xml_text_trunc(b, nd->name, (size_t)room);
			}
			buf_puts(b, "</text>");
		}
		buf_puts(b, "</g>\n");
	}
	buf_puts(b, "</svg>\n");
	return folded;
}

const char flame_css[] =
	".flame-find{margin:6px 0 0;color:var(--muted)}"
	".flame-find input{font:inherit;padding:3px 8px;margin-left:6px;border:1px solid var(--line);"
	"border-radius:6px;width:260px}"
	".rsw-flame text{pointer-events:none}"
	".rsw-flame g:hover rect{stroke:#1f2328;stroke-width:1}"
	".rsw-flame g.hit rect{fill:#c026d3}";

/* The search: marks the boxes whose name holds the text (any case) and sums their bytes,
 * a box inside another marked one counted once (its bytes are its caller's already).
 * Only drawn boxes are searched. */
const char flame_script[] =
	"(function(){"
	"function B(v){var u=['B','KiB','MiB','GiB','TiB'],i=0;while(v>=1024&&i<4){v/=1024;i++;}"
	"return i?v.toFixed(1)+' '+u[i]:v+' B';}"
	"['" FLAME_HOST "','" FLAME_GPU "'].forEach(function(k){"
	"var s=document.getElementById(k+'-svg'),box=document.getElementById(k+'-find');"
	"if(!s||!box)return;box.hidden=false;"
	"var q=document.getElementById(k+'-q'),m=document.getElementById(k+'-m'),"
	"gs=s.querySelectorAll('g[data-n]'),base=+s.getAttribute('data-base');"
	"function find(){var t=q.value.toLowerCase(),hit=[];"
	"for(var i=0;i<gs.length;i++){var g=gs[i],on=t!==''&&g.getAttribute('data-n').toLowerCase().indexOf(t)>=0;"
	"g.classList.toggle('hit',on);if(on)hit.push([+g.getAttribute('data-o'),+g.getAttribute('data-b')]);}"
	"hit.sort(function(a,b){return a[0]-b[0]||b[1]-a[1];});"
	"var sum=0,end=-1;for(var j=0;j<hit.length;j++)if(hit[j][0]>=end){sum+=hit[j][1];end=hit[j][0]+hit[j][1];}"
	"m.textContent=t===''?'':hit.length?hit.length+' frame'+(hit.length>1?'s':'')+' match: '+B(sum)+', '"
	"+(base>0?(100*sum/base).toFixed(1):'0')+'% of '+s.getAttribute('data-of'):'no frame matches';}"
	"q.addEventListener('input',find);find();"
	"});})();";

/* What a graph is of: the host's memory at the run's peak, or the device memory from
 * the CUDA driver at its own. */
struct flame_kind {
	const char *key, *heading, *none, *verb, *moment, *export;
};

static const struct flame_kind host_kind = {
	FLAME_HOST, "What held the memory at the peak", "No stack held mapped memory at the peak.",
	"mapped", "at the peak", "--stacks" };
static const struct flame_kind gpu_kind = {
	FLAME_GPU, "Who asked the CUDA driver for the GPU's memory at its peak", NULL,
	"allocated", "at the GPU's peak", "--stacks=gpu" };

void flame_section(struct buf *b, const struct run *r, const struct stored_stack *v, size_t n,
		   enum stack_moment m)
{
	const struct flame_kind *k = m == STACKS_AT_GPU_PEAK ? &gpu_kind : &host_kind;
	if (!RUN_HAS_STACKS(r) || (m == STACKS_AT_GPU_PEAK && !n))
		return;
	uint64_t base = callstacks_peak_of(r, m);
	int64_t at = m == STACKS_AT_GPU_PEAK ? r->stacks_gpu_peak_at : r->stacks_peak_at;
	buf_printf(b, "<h2>%s</h2>\n", k->heading);
	struct flame f;
	flame_build(&f, v, n);
	if (f.total <= 0) {
		buf_printf(b, "<p class=\"none\">%s</p>\n", k->none ? k->none : "No stack held any.");
		flame_release(&f);
		return;
	}
	char by[32], off[32];
	size_t stacks = 0;
	for (size_t i = 0; i < n; i++)
		stacks += v[i].bytes > 0;
	fmt_bytes(by, sizeof(by), (uint64_t)f.total);
	buf_printf(b, "<p class=\"legend\">%s %s by %zu stack%s %s (%s", by, k->verb, stacks,
		   stacks == 1 ? "" : "s", k->moment,
		   fmt_offset(off, sizeof(off), at - r->started_at));
	if (base)
		buf_printf(b, ", %.1f%% of the peak", share_of(f.total, (double)base));
	buf_printf(b, "). Each box is a function, as wide as the bytes %s by the calls under "
		      "it: the outermost frame at the top, its callees below; grey boxes are the "
		      "allocator's. Hover a box for its figures. The same stacks as folded lines: "
		      "<code>rsswatch export %s</code>.</p>\n"
		      "<div id=\"%s-find\" class=\"flame-find\" hidden><label>Find a function"
		      "<input id=\"%s-q\" type=\"search\" autocomplete=\"off\" spellcheck=\"false\">"
		      "</label> <span id=\"%s-m\"></span></div>\n"
		      "<figure id=\"%s\" class=\"flame\">\n", k->verb, k->export, k->key, k->key,
		   k->key, k->key);
	size_t folded = flame_svg(b, &f, base, k->key);
	buf_puts(b, "</figure>\n");
	if (folded)
		buf_printf(b, "<p class=\"legend\">%zu frame%s narrower than a pixel not drawn "
			      "(their bytes are in their callers' boxes; the search does not see "
			      "them).</p>\n", folded, folded == 1 ? "" : "s");
	if (f.cut)
		buf_printf(b, "<p class=\"legend\">%zu frame%s deeper than %d left out: their bytes "
			      "are in the box above them.</p>\n", f.cut, f.cut == 1 ? "" : "s",
			   FLAME_MAX_DEPTH);
	flame_release(&f);
}
