#include "render/html.h"
#include "base/fmt.h"
#include "base/util.h"
#include "render/flame.h"
#include "render/live.h"
#include "render/procs.h"
#include "render/stages.h"
#include "render/xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char css[] =
	":root{--fg:#1f2328;--muted:#656d76;--line:#d8dee4;--soft:#f6f8fa;--accent:#1d4e89;--bad:#b00020}"
	"*{box-sizing:border-box}"
	"body{margin:0;font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;"
	"color:var(--fg);background:#fff}"
	"main{max-width:1040px;margin:0 auto;padding:28px 24px 40px}"
	"h1{font-size:22px;margin:0 0 4px;font-weight:600}"
	"h2{font-size:16px;margin:32px 0 10px;font-weight:600}"
	".sub{color:var(--muted);margin:0 0 20px;overflow-wrap:anywhere}"
	"code{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);"
	"padding:1px 5px;border-radius:4px;overflow-wrap:anywhere}"
	".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px}"
	".card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:0;overflow-wrap:anywhere}"
	".card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}"
	".card .v{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums}"
	".card .n{color:var(--muted);font-size:12px}"
	".bad .v{color:var(--bad)}"
	".card.full{grid-column:1/-1}.card.full .v{font-size:16px}"
	"figure{margin:20px 0 0;position:relative;border:1px solid var(--line);border-radius:8px;padding:6px;overflow:hidden}"
	"figure svg{display:block;width:100%;height:auto}"
	"#tip{position:absolute;pointer-events:none;background:rgba(31,35,40,.92);color:#fff;font-size:12px;"
	"padding:4px 8px;border-radius:4px;white-space:nowrap;display:none;font-variant-numeric:tabular-nums}"
	"table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}"
	"th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}"
	"th{font-size:12px;color:var(--muted);font-weight:600;text-transform:uppercase;letter-spacing:.04em}"
	"td.r,th.r{text-align:right;white-space:nowrap}"
	".wide{overflow-x:auto}"
	"td.l{overflow-wrap:anywhere}"
	".up{color:var(--bad)}.down{color:#2a7a3b}"
	"dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:0}"
	"dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}"
	".none{color:var(--muted)}"
	".ex{color:var(--accent);font-weight:600}"
	".legend{color:var(--muted);font-size:12px;margin:6px 0 0}"
	"details>summary{cursor:pointer;color:var(--muted);padding:8px 10px}"
	"footer{margin-top:36px;color:var(--muted);font-size:12px}";

/* Hover read-out: maps the pointer to time through the plot geometry and shows the
 * nearest sample of the data block. Works offline; the page is complete without it. */
static const char script[] =
	"(function(){"
	"var el=document.getElementById('rsw-data');if(!el)return;var d=JSON.parse(el.textContent);"
	"var fig=document.getElementById('chart'),svg=fig.querySelector('svg'),tip=document.getElementById('tip');"
	"var NS='http://www.w3.org/2000/svg',g=d.g;"
	"var ln=document.createElementNS(NS,'path');ln.setAttribute('stroke','#888');ln.setAttribute('stroke-width','1');"
	"var dot=document.createElementNS(NS,'circle');dot.setAttribute('r','4');dot.setAttribute('fill','#1d4e89');"
	"dot.setAttribute('stroke','#fff');dot.setAttribute('stroke-width','1.5');"
	"ln.style.display=dot.style.display='none';svg.appendChild(ln);svg.appendChild(dot);"
	"function B(v){var u=['B','KiB','MiB','GiB','TiB'],i=0;while(v>=1024&&i<4){v/=1024;i++;}"
	"return i?v.toFixed(1)+' '+u[i]:v+' B';}"
	"function T(ms){var s=ms/1000;if(s<60)return s.toFixed(s<10?2:1)+'s';var m=Math.floor(s/60);"
	"if(m<60)return m+'m'+('0'+Math.floor(s%60)).slice(-2)+'s';var h=Math.floor(m/60);"
	"return h+'h'+('0'+m%60).slice(-2)+'m'+('0'+Math.floor(s%60)).slice(-2)+'s';}"
	"function hide(){tip.style.display=ln.style.display=dot.style.display='none';}"
	"svg.addEventListener('mouseleave',hide);"
	"svg.addEventListener('mousemove',function(e){var p=svg.createSVGPoint();p.x=e.clientX;p.y=e.clientY;"
	"var q=p.matrixTransform(svg.getScreenCTM().inverse());"
	"if(q.x<g.x0||q.x>g.x1||!d.t.length){hide();return;}"
	"var t=g.t0+(q.x-g.x0)/(g.x1-g.x0)*(g.t1-g.t0),lo=0,hi=d.t.length-1;"
	"while(hi-lo>1){var m=(lo+hi)>>1;if(d.t[m]<=t)lo=m;else hi=m;}"
	"var i=Math.abs(d.t[hi]-t)<Math.abs(d.t[lo]-t)?hi:lo;"
	"var x=g.x0+(d.t[i]-g.t0)/(g.t1-g.t0)*(g.x1-g.x0),y=g.y1-d.v[i]/g.vmax*(g.y1-g.y0);"
	"ln.setAttribute('d','M'+x+' '+g.y0+'V'+g.y1);dot.setAttribute('cx',x);dot.setAttribute('cy',y);"
	"ln.style.display=dot.style.display='';"
	"tip.textContent='+'+T(d.t[i])+'  RSS '+B(d.v[i])+(d.h?'  HWM '+B(d.h[i]):'');"
	"tip.style.display='block';var r=fig.getBoundingClientRect(),s=svg.getBoundingClientRect(),k=s.width/g.w;"
	"var left=s.left-r.left+x*k+12;if(left+tip.offsetWidth>r.width-4)left=s.left-r.left+x*k-tip.offsetWidth-12;"
	"tip.style.left=left+'px';tip.style.top=(s.top-r.top+y*k-34)+'px';});"
	"})();";

/* A card of the summary; a value longer than a few words (an outcome naming a cgroup)
 * gets a row of its own, so it wraps there instead of making a tall narrow column. */
static void card(struct buf *b, const char *k, const char *v, const char *note, int bad)
{
	buf_printf(b, "<div class=\"card%s%s\"><div class=\"k\">%s</div><div class=\"v\">", bad ? " bad" : "",
		   utf8_chars(v) > 40 ? " full" : "", k);
	xml_text(b, v);
	buf_puts(b, "</div>");
	if (note && note[0]) {
		buf_puts(b, "<div class=\"n\">");
		xml_text(b, note);
		buf_puts(b, "</div>");
	}
	buf_puts(b, "</div>\n");
}

static void signed_bytes(struct buf *b, int64_t d)
{
	char v[32];
	if (d == 0) {
		buf_puts(b, "<span class=\"none\">0</span>");
		return;
	}
	fmt_bytes(v, sizeof(v), (uint64_t)(d < 0 ? -d : d));
	buf_printf(b, "<span class=\"%s\">%s%s</span>", d > 0 ? "up" : "down", d > 0 ? "+" : "\xe2\x88\x92", v);
}

static void dl_item(struct buf *b, const char *k, const char *v, int code)
{
	buf_printf(b, "<dt>%s</dt><dd>%s", k, code ? "<code>" : "");
	if (v && v[0])
		xml_text(b, v);
	else
		buf_puts(b, "<span class=\"none\">\xe2\x80\x94</span>");
	buf_printf(b, "%s</dd>\n", code ? "</code>" : "");
}

/* "+1.2s" into v (n bytes); "-" for an end that never came (-1). */
static const char *elapsed(char *v, size_t n, int64_t ns)
{
	char d[32];
	if (ns < 0)
		snprintf(v, n, "-");
	else
		snprintf(v, n, "+%s", fmt_duration(d, sizeof(d), ns));
	return v;
}

static void procs_rows(struct buf *b, const struct proc_summary *p, size_t n)
{
	char st[32], en[32], pk[32];
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "<tr><td class=\"r\">%d</td><td class=\"l\">", (int)p[i].pid);
		xml_text(b, p[i].comm);
		buf_printf(b, "</td><td class=\"r\">%s</td><td class=\"r\">%s</td><td class=\"r\">%s",
			   elapsed(st, sizeof(st), p[i].first_ns), elapsed(en, sizeof(en), p[i].end_ns),
			   fmt_bytes(pk, sizeof(pk), p[i].peak_rss));
		buf_puts(b, peak_is_exact(p[i].peak_source) ? "<span class=\"ex\">*</span>"
							     : "<span class=\"ex\">&#160;</span>");
		char cpu[32], c1[32], c2[32], rd[32], wr[32];
		buf_printf(b, "</td><td class=\"r\">%s</td><td class=\"r\">%s</td>"
			   "<td class=\"r\">%s</td>",
			   proc_cpu_words(cpu, sizeof(cpu), &p[i]),
			   proc_count_words(c1, sizeof(c1), p[i].majflt),
			   proc_count_words(c2, sizeof(c2), p[i].minflt));
		buf_printf(b, "<td class=\"r\">%s</td><td class=\"r\">%s</td><td>",
			   p[i].read_bytes < 0 ? "-" : fmt_bytes(rd, sizeof(rd), (uint64_t)p[i].read_bytes),
			   p[i].write_bytes < 0 ? "-" : fmt_bytes(wr, sizeof(wr), (uint64_t)p[i].write_bytes));
		struct buf e = { 0 };
		proc_ended_words(&e, &p[i]);
		xml_text(b, buf_str(&e));
		buf_release(&e);
		buf_puts(b, "</td></tr>\n");
	}
}

static const char procs_head[] =
	"<div class=\"wide\"><table>\n<thead><tr><th class=\"r\">PID</th><th>Command</th><th class=\"r\">Start</th>"
	"<th class=\"r\">End</th><th class=\"r\">Peak</th><th class=\"r\">CPU s</th>"
	"<th class=\"r\">Major faults</th><th class=\"r\">Minor faults</th><th class=\"r\">Read</th>"
	"<th class=\"r\">Written</th><th>Ended</th></tr></thead>\n<tbody>\n";

/* The processes of a set: the largest a row each, the rest folded under one line. */
static void procs_section(struct buf *b, const struct proc_summary *p, size_t n)
{
	size_t shown = n < HTML_TOP_PROCS ? n : HTML_TOP_PROCS;
	int exact = 0, context = 0;
	for (size_t i = 0; i < n; i++) {
		exact |= peak_is_exact(p[i].peak_source);
		context |= p[i].cpu_user_ns >= 0 || p[i].majflt >= 0 || p[i].read_bytes >= 0;
	}
	buf_printf(b, "<h2>Processes <span class=\"none\">(%zu, largest peak first)</span></h2>\n", n);
	buf_puts(b, procs_head);
	procs_rows(b, p, shown);
	buf_puts(b, "</tbody>\n</table></div>\n");
	if (shown < n) {
		struct buf t = { 0 };
		procs_rest_words(&t, p + shown, n - shown, " ");
		buf_puts(b, "<details><summary>");
		xml_text(b, buf_str(&t));
		buf_puts(b, "</summary>\n");
		buf_puts(b, procs_head);
		procs_rows(b, p + shown, n - shown);
		buf_puts(b, "</tbody>\n</table></div>\n</details>\n");
		buf_release(&t);
	}
	if (exact)
		buf_puts(b, "<p class=\"legend\"><span class=\"ex\">*</span> exact peak (exit record, "
			    "wait4 or OOM report); the others are sampled.</p>\n");
	if (context)
		buf_puts(b, "<p class=\"legend\">CPU s: user and system time over each process's life; "
		    "major faults waited for I/O; read and written: bytes to and from storage "
		    "(-: not known).</p>\n");
}

static void kills_section(struct buf *b, const struct run *run, const struct oom_kill *k, size_t n)
{
	char v[32];
	buf_puts(b, "<h2>OOM kills</h2>\n<div class=\"wide\"><table>\n<thead><tr><th>Time</th><th class=\"r\">PID</th>"
		    "<th>Command</th><th class=\"r\">anon-rss</th><th class=\"r\">file-rss</th>"
		    "<th class=\"r\">shmem-rss</th><th class=\"r\">total-vm</th><th>Memory cgroup</th>"
		    "</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "<tr><td>%s</td><td class=\"r\">%d</td><td class=\"l\">",
			   elapsed(v, sizeof(v), k[i].t - run->started_at), (int)k[i].pid);
		xml_text(b, k[i].comm);
		buf_printf(b, "</td><td class=\"r\">%s</td>", fmt_bytes(v, sizeof(v), k[i].anon_rss));
		buf_printf(b, "<td class=\"r\">%s</td>", fmt_bytes(v, sizeof(v), k[i].file_rss));
		buf_printf(b, "<td class=\"r\">%s</td>", fmt_bytes(v, sizeof(v), k[i].shmem_rss));
		buf_printf(b, "<td class=\"r\">%s</td><td class=\"l\">", fmt_bytes(v, sizeof(v), k[i].total_vm));
		if (k[i].memcg[0])
			xml_text(b, k[i].memcg);
		else
			buf_puts(b, "<span class=\"none\">\xe2\x80\x94</span>");
		buf_puts(b, "</td></tr>\n");
	}
	buf_puts(b, "</tbody>\n</table></div>\n");
}

/* The document's head, the title and the line under it. */
static void report_head(struct buf *b, const struct run *run)
{
	char v[64];
	buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n");
	buf_printf(b, "<title>rsswatch run %lld", (long long)run->id);
	if (run->label[0]) {
		buf_puts(b, " \xe2\x80\x94 ");
		xml_text(b, run->label);
	}
	buf_printf(b, "</title>\n<style>%s%s</style>\n</head>\n<body>\n<main>\n", css,
		   RUN_HAS_STACKS(run) ? flame_css : "");

	buf_printf(b, "<h1>Run %lld", (long long)run->id);
	if (run->label[0]) {
		buf_puts(b, " \xc2\xb7 ");
		xml_text(b, run->label);
	}
	buf_puts(b, "</h1>\n<p class=\"sub\"><code>");
	xml_text(b, run->target);
	buf_puts(b, "</code>");
	if (run->host[0]) {
		buf_puts(b, " on ");
		xml_text(b, run->host);
	}
	buf_printf(b, ", started %s</p>\n", fmt_datetime(v, sizeof(v), run->started_at));
}

/* The cards of a run with samples: its peak (where it came from, and the highest
 * sample when the peak is above it), the peak before the recording, a set's largest
 * process, the mean, the last figure and the GPU's peak. */
static void peak_cards(struct buf *b, const struct chart_run *r)
{
	const struct run *run = r->run;
	char v[64], w[64], x[64];
	struct buf t = { 0 };
	uint64_t max_sampled = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->s[i].mem.rss > max_sampled)
			max_sampled = r->s[i].mem.rss;
	/* The kernel's charged figure first: a set's summed RSS counts a shared page once
	 * per process, and is not what the limit is checked against. */
	if (run->peak_cgroup) {
		buf_printf(&t, "memory the kernel charged to the run's cgroup (shared pages once; %s)",
			   run->peak_cgroup_exact ? "its own peak" : "the highest usage sampled");
		if (run->cgroup_limit)
			buf_printf(&t, ", %.0f%% of its %s limit",
				   100.0 * (double)run->peak_cgroup / (double)run->cgroup_limit,
				   fmt_bytes(x, sizeof(x), run->cgroup_limit));
		card(b, "Cgroup peak", fmt_bytes(v, sizeof(v), run->peak_cgroup), buf_str(&t),
		     run->cgroup_limit && run->peak_cgroup >= run->cgroup_limit);
		buf_reset(&t);
	}
	int summed = run_is_set(run);
	if (summed)
		buf_puts(&t, "each process's RSS added up: pages they share count once per process; ");
	fmt_bytes(v, sizeof(v), run->peak_rss);
	buf_printf(&t, "at +%s", fmt_duration(w, sizeof(w), run->peak_rss_at - run->started_at));
	const char *from = run_peak_from(run, max_sampled);
	if (from)
		buf_printf(&t, ", %s", from);
	if (max_sampled && run->peak_rss > max_sampled)
		buf_printf(&t, "; highest sample %s", fmt_bytes(x, sizeof(x), max_sampled));
	card(b, summed ? "Peak RSS, summed" : "Peak RSS", v, buf_str(&t), 0);
	if (run->hwm_before >= 0)
		card(b, "Before recording", fmt_bytes(v, sizeof(v), (uint64_t)run->hwm_before),
		     run_blind_below_hwm(run)
		     ? "VmHWM when attached; not part of this run. Peaks between samples below it "
		       "cannot be seen (--reset-peak makes them visible; it also lowers the "
		       "target's own ru_maxrss)"
		     : "VmHWM when attached; not part of this run", 0);
	if (run_is_set(run) && run->peak_process_pid > 0) {
		buf_reset(&t);
		buf_printf(&t, "%s (pid %d)", run->peak_process_comm ? run->peak_process_comm : "",
			   (int)run->peak_process_pid);
		card(b, "Largest process", fmt_bytes(v, sizeof(v), run->peak_process_rss), buf_str(&t), 0);
	}
	card(b, "Mean", fmt_bytes(v, sizeof(v), (uint64_t)run_mean_rss(run)), NULL, 0);
	card(b, "Last", fmt_bytes(v, sizeof(v), run->last_rss), NULL, 0);
	if (run->peak_gpu >= 0)
		card(b, "GPU peak", fmt_bytes(v, sizeof(v), (uint64_t)run->peak_gpu), NULL, 0);
	buf_release(&t);
}

/* Whether an outcome is shown as bad: killed, interrupted, or a failing exit status. */
static int outcome_bad(const struct run *run)
{
	return strcmp(run->outcome, OUTCOME_OOM_KILLED) == 0 || strcmp(run->outcome, OUTCOME_SIGNALED) == 0 ||
	       strcmp(run->outcome, OUTCOME_INTERRUPTED) == 0 ||
	       (strcmp(run->outcome, OUTCOME_EXITED) == 0 && run->exit_code != 0);
}

/* The summary cards: the peak's (with samples), the duration, the outcome and the OOM
 * kills of others (kills: their words, empty when none). */
static void summary_cards(struct buf *b, const struct chart_run *r, const struct html_procs *hp,
			  const struct buf *kills)
{
	const struct run *run = r->run;
	int64_t end = run->ended_at ? run->ended_at : run->last_at ? run->last_at : run->started_at;
	char v[64], w[64];
	struct buf t = { 0 };
	buf_puts(b, "<section class=\"cards\">\n");
	if (run->samples || r->n)
		peak_cards(b, r);
	buf_printf(&t, "%lld sample%s every %s", (long long)run->samples, run->samples == 1 ? "" : "s",
		   fmt_duration(w, sizeof(w), run->interval_ns));
	card(b, "Duration", fmt_duration(v, sizeof(v), end - run->started_at), buf_str(&t), 0);
	buf_reset(&t);
	outcome_words(&t, run);
	card(b, "Outcome", buf_str(&t), NULL, outcome_bad(run));
	if (kills->len) {
		snprintf(v, sizeof(v), "%zu", oom_kills_other(run, hp->kills, hp->nkills));
		card(b, "OOM kills", v, buf_str(kills), 1);
	}
	buf_puts(b, "</section>\n");
	if (run_is_set(run) && !run->exit_records && run->samples)
		buf_puts(b, "<p class=\"legend\">Peaks of processes that ended between samples are "
			    "sampled only (not exact).</p>\n");
	buf_release(&t);
}

/* The samples the hover read-out uses: RSS at the chart's downsampled times, in
 * milliseconds on the axis relative to its start (small numbers), with the geometry
 * g of the chart drawn with co. */
static void chart_data(struct buf *b, const struct chart_run *r, const struct chart_opts *co,
		       const struct chart_geom *g)
{
	const struct run *run = r->run;
	size_t cols = (size_t)(g->x1 - g->x0);
	size_t *idx = xmalloc((2 * cols + 2) * sizeof(*idx));
	int64_t t0 = co->time == CHART_WALL ? g->t0 - run->started_at : g->t0 + r->shift_ns;
	size_t k = chart_downsample(r->s, r->n, t0, t0 + (g->t1 - g->t0), cols, sample_rss, idx);
	int64_t base = co->time == CHART_WALL ? run->started_at : 0;
	buf_printf(b, "<script type=\"application/json\" id=\"rsw-data\">{\"g\":{\"x0\":%.1f,\"x1\":%.1f,"
		      "\"y0\":%.1f,\"y1\":%.1f,\"t0\":0,\"t1\":%.3f,\"vmax\":%.0f,\"w\":%d},\"t\":[",
		   g->x0, g->x1, g->y0, g->y1, (double)(g->t1 - g->t0) / 1e6, g->vmax, g->width);
	for (size_t i = 0; i < k; i++)
		buf_printf(b, "%s%.0f", i ? "," : "",
			   (double)(base + r->s[idx[i]].elapsed_ns - r->shift_ns - g->t0) / 1e6);
	buf_puts(b, "],\"v\":[");
	for (size_t i = 0; i < k; i++)
		buf_printf(b, "%s%llu", i ? "," : "", (unsigned long long)r->s[idx[i]].mem.rss);
	buf_puts(b, "]}</script>\n");
	free(idx);
}

/* The chart without its title, and the data its hover read-out uses. */
static void chart_section(struct buf *b, const struct chart_run *r, const struct chart_opts *o)
{
	struct chart_opts co = *o;
	struct chart_geom g;
	co.title = NULL;
	buf_puts(b, "<figure id=\"chart\">\n");
	svg_chart(b, r, 1, &co, &g);
	buf_puts(b, "<div id=\"tip\"></div>\n</figure>\n");
	if (r->n)
		chart_data(b, r, &co, &g);
}

/* The run's peak as a row among the marks, at its time (show's "^" row): the stage it
 * fell in is the one between the marks around it. */
static void peak_row(struct buf *b, const struct run *run, int stage_peaks)
{
	char t[32], v[32];
	buf_printf(b, "<tr class=\"peak\"><td>%s</td><td class=\"l\"><b>the run's peak</b>",
		   fmt_offset(t, sizeof(t), run->peak_rss_at - run->started_at));
	if (!stages_peak_time_exact(run) && run->peak_source && run->peak_source[0]) {
		buf_puts(b, ", reached by then (");
		xml_text(b, run->peak_source);
		buf_puts(b, ")");
	}
	buf_printf(b, "</td><td class=\"r\"><b>%s</b></td><td></td>%s</tr>\n",
		   fmt_bytes(v, sizeof(v), run->peak_rss), stage_peaks ? "<td></td><td></td>" : "");
}

/* Marks with RSS at each and the change since the previous one (the first: since the
 * first sample); with the engine, the peak of the stage each opens and when; the run's
 * peak among them, where it fell. */
static void marks_section(struct buf *b, const struct chart_run *r)
{
	const struct run *run = r->run;
	char v[64], w[64];
	int stage_peaks = 0;
	for (size_t i = 0; i < r->nmarks; i++)
		stage_peaks |= r->marks[i].stage_peak_known;
	buf_puts(b, "<h2>Marks</h2>\n");
	if (r->nmarks) {
		buf_printf(b, "<table>\n<thead><tr><th>Time</th><th>Mark</th><th class=\"r\">RSS</th>"
			   "<th class=\"r\">Change</th>%s</tr></thead>\n<tbody>\n",
			   stage_peaks ? "<th class=\"r\" title=\"the highest total from this mark to the "
					 "next, from the kernel's page counts\">Stage peak</th>"
					 "<th class=\"r\">at</th>" : "");
		struct stages sg;
		stages_init(&sg, run, r->marks, r->nmarks);
		for (size_t i = 0; i < r->n; i++)
			stages_add(&sg, &r->s[i]);
		stages_end(&sg);
		int peak_said = !run->peak_rss || !run->peak_rss_at;
		for (size_t i = 0; i < sg.n; i++) {
			const struct stage *at = &sg.s[i];
			if (!peak_said && run->peak_rss_at - run->started_at < at->elapsed_ns) {
				peak_row(b, run, stage_peaks);
				peak_said = 1;
			}
			buf_printf(b, "<tr><td>%s</td><td class=\"l\">",
				   fmt_offset(v, sizeof(v), at->elapsed_ns));
			xml_text(b, r->marks[i].label);
			buf_printf(b, "</td><td class=\"r\">%s</td><td class=\"r\">",
				   fmt_bytes(w, sizeof(w), at->rss));
			signed_bytes(b, at->change);
			const struct mark *m = &r->marks[i];
			if (stage_peaks && m->stage_peak_known)
				buf_printf(b, "</td><td class=\"r\">%s</td><td class=\"r\">%s",
					   fmt_bytes(w, sizeof(w), m->stage_peak),
					   fmt_offset(v, sizeof(v), m->stage_peak_at - run->started_at));
			else if (stage_peaks)
				buf_puts(b, "</td><td class=\"r\">-</td><td class=\"r\">");
			buf_puts(b, "</td></tr>\n");
		}
		if (!peak_said)
			peak_row(b, run, stage_peaks);
		stages_release(&sg);
		buf_puts(b, "</tbody>\n</table>\n");
	} else {
		buf_puts(b, "<p class=\"none\">No marks. Add them with <code>rsswatch mark</code> or "
			    "<code>rsw_mark()</code> from the application.</p>\n");
	}
}

/* The application's counters and gauges: the highest and the last value of each. */
static void counters_section(struct buf *b, const struct chart_run *r)
{
	char v[64], w[64];
	if (!r->ncounters)
		return;
	buf_puts(b, "<h2>Counters and gauges</h2>\n<div class=\"wide\"><table>\n<thead><tr><th>Name</th>"
		    "<th class=\"r\">Max</th><th class=\"r\">Last</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->ncounters; i++) {
		const struct counter_series *cs = &r->counters[i];
		long long mx = 0;
		for (size_t j = 0; j < cs->n; j++)
			if (j == 0 || cs->v[j] > mx)
				mx = cs->v[j];
		buf_puts(b, "<tr><td class=\"l\">");
		xml_text(b, cs->name);
		buf_printf(b, "</td><td class=\"r\">%s</td>", counter_value_text(v, sizeof(v), cs->name, mx));
		buf_printf(b, "<td class=\"r\">%s</td></tr>\n",
			   counter_value_text(w, sizeof(w), cs->name, cs->n ? cs->v[cs->n - 1] : 0));
	}
	buf_puts(b, "</tbody>\n</table></div>\n");
}

/* The fits of RSS against each counter, as the model verb writes them. */
static void counter_models_section(struct buf *b, const char *models)
{
	if (!models || !*models)
		return;
	buf_puts(b, "<h2>Memory against the counters</h2>\n<p class=\"none\">RSS fitted "
		    "over the run's samples against each counter or gauge alone (least "
		    "squares, 95% intervals, the best lag of 0..20 samples: "
		    "<code>rsswatch model RUN 'rss ~ counter.NAME'</code>).</p>\n"
		    "<div class=\"wide\"><pre>");
	xml_text(b, models);
	buf_puts(b, "</pre></div>\n");
}

/* The same chart with a set's members stacked in place of anon/file/shmem, without the
 * panels under it (they are in the chart above). */
static void by_process_section(struct buf *b, const struct chart_run *r, const struct chart_opts *o,
			       const struct proc_stack *stack)
{
	if (!stack || !stack->nt || !stack->nlayers)
		return;
	struct chart_run sr = *r;
	struct chart_opts so = *o;
	sr.stack = stack;
	sr.counters = NULL;
	sr.ncounters = 0;
	so.title = NULL;
	so.no_context = 1;
	buf_puts(b, "<h2>Memory by process</h2>\n<figure class=\"by-process\">\n");
	svg_chart(b, &sr, 1, &so, NULL);
	buf_puts(b, "</figure>\n");
}

/* The rows of the events of r that are (procs) or are not a set's process events. */
static void event_rows(struct buf *b, const struct chart_run *r, int procs)
{
	char v[64];
	buf_puts(b, "<table>\n<thead><tr><th>Time</th><th>Event</th><th>PID</th><th>Detail</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->nevents; i++) {
		const struct event *e = &r->events[i];
		if (event_is_process(e) != procs)
			continue;
		buf_printf(b, "<tr><td>+%s</td><td>", fmt_duration(v, sizeof(v), e->t - r->run->started_at));
		xml_text(b, e->kind);
		buf_puts(b, "</td><td>");
		if (e->pid > 0)
			buf_printf(b, "%d", (int)e->pid);
		buf_puts(b, "</td><td class=\"l\">");
		xml_text(b, e->detail);
		buf_puts(b, "</td></tr>\n");
	}
	buf_puts(b, "</tbody>\n</table>\n");
}

/* The run's events; a set's process starts and exits (hundreds in a build) folded
 * apart, under a line that counts them. */
static void events_section(struct buf *b, const struct chart_run *r)
{
	size_t nproc = 0;
	for (size_t i = 0; i < r->nevents; i++)
		nproc += event_is_process(&r->events[i]);
	buf_puts(b, "<h2>Events</h2>\n");
	if (r->nevents == nproc)
		buf_printf(b, "<p class=\"none\">No %sevents.</p>\n", nproc ? "other " : "");
	else
		event_rows(b, r, 0);
	if (nproc) {
		buf_printf(b, "<details><summary>%zu process start/exit event%s</summary>\n", nproc,
			   nproc == 1 ? "" : "s");
		event_rows(b, r, 1);
		buf_puts(b, "</details>\n");
	}
}

/* The run's facts as a list; the outcome with the OOM kills of others (kills). */
static void run_section(struct buf *b, const struct run *run, const struct buf *kills)
{
	char v[64];
	struct buf t = { 0 };
	buf_puts(b, "<h2>Run</h2>\n<dl>\n");
	snprintf(v, sizeof(v), "%lld", (long long)run->id);
	dl_item(b, "id", v, 0);
	dl_item(b, "label", run->label, 0);
	dl_item(b, "command", run->target, 1);
	snprintf(v, sizeof(v), "%d", (int)run->pid);
	dl_item(b, "pid", v, 0);
	dl_item(b, "attached by", run->mode, 0);
	dl_item(b, "host", run->host, 0);
	dl_item(b, "kernel", run->kernel, 0);
	if (run->mem_total)
		dl_item(b, "memory", fmt_bytes(v, sizeof(v), run->mem_total), 0);
	dl_item(b, "started", fmt_iso8601(v, sizeof(v), run->started_at), 0);
	dl_item(b, "ended", run->ended_at ? fmt_iso8601(v, sizeof(v), run->ended_at) : "", 0);
	dl_item(b, "interval", fmt_duration(v, sizeof(v), run->interval_ns), 0);
	snprintf(v, sizeof(v), "%lld", (long long)run->samples);
	dl_item(b, "samples", v, 0);
	outcome_words(&t, run);
	if (kills->len)
		buf_printf(&t, "; %s", buf_str(kills));
	dl_item(b, "outcome", buf_str(&t), 0);
	buf_puts(b, "</dl>\n");
	buf_release(&t);
}

void html_report(struct buf *b, const struct chart_run *r, const struct chart_opts *o,
		 const struct html_procs *hp, const char *generator)
{
	static const struct html_procs none;
	if (!hp)
		hp = &none;
	struct buf kills = { 0 };
	oom_kills_words(&kills, r->run, hp->kills, hp->nkills);

	report_head(b, r->run);
	summary_cards(b, r, hp, &kills);
	chart_section(b, r, o);
	marks_section(b, r);
	counters_section(b, r);
	counter_models_section(b, hp->counter_models);
	by_process_section(b, r, o, hp->stack);
	flame_section(b, r->run, hp->stacks, hp->nstacks, STACKS_AT_PEAK);
	flame_section(b, r->run, hp->gpu_stacks, hp->ngpu_stacks, STACKS_AT_GPU_PEAK);
	if (hp->nprocs > 1)
		procs_section(b, hp->procs, hp->nprocs);
	if (hp->nkills)
		kills_section(b, r->run, hp->kills, hp->nkills);
	events_section(b, r);
	run_section(b, r->run, &kills);
	buf_release(&kills);

	buf_puts(b, "<footer>");
	if (generator) {
		buf_puts(b, "Recorded and drawn by ");
		xml_text(b, generator);
		buf_puts(b, ". ");
	}
	buf_puts(b, "Hover over the chart to read RSS at a point in time");
	if (RUN_HAS_STACKS(r->run) && hp->nstacks)
		buf_puts(b, ", and over a box of the flame graph for its bytes");
	buf_puts(b, ".</footer>\n</main>\n");
	if (r->n)
		buf_printf(b, "<script>%s</script>\n", script);
	if (RUN_HAS_STACKS(r->run))
		buf_printf(b, "<script>%s</script>\n", flame_script);
	buf_puts(b, "</body>\n</html>\n");
}
