/* pipeline_json.c - a pipeline's events as a Chrome trace (pipeline_json.h). */
#include "config.h"

#include "app/pipeline_json.h"
#include "app/outfile.h"
#include "model/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *s;
	size_t len, cap;
	int oom;
};

static void buf_printf(struct buf *b, const char *fmt, ...) UTIL_PRINTF(2, 3);

static void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = 2 * b->cap + (size_t)n + 1;
			char *s = realloc(b->s, cap);

			if (s == NULL) {
				b->oom = 1;
				return;
			}
			b->s = s;
			b->cap = cap;
		}
	}
}

/* A string safe inside JSON quotes: printable ASCII, no quote or
 * backslash (others become '?'). */
static void
json_clean(char *dst, size_t len, const char *src)
{
	size_t x;

	for (x = 0; x + 1 < len && src[x] != '\0'; x++)
		dst[x] = src[x] >= 0x20 && src[x] < 0x7f && src[x] != '"' &&
		    src[x] != '\\' ? src[x] : '?';
	dst[len ? x : 0] = '\0';
}

int
pipeline_json_warps(const struct pipeline_json_meta *m)
{
	return m != NULL && strcmp(m->kernel, "fast") == 0;
}

const char *
pipeline_json_role_name(const struct pipeline_json_meta *m, int role,
    char *buf, size_t len)
{
	if (pipeline_json_warps(m)) {
		snprintf(buf, len, "warp %d", role);
		return buf;
	}
	return pipeline_role_name(role, buf, len);
}

/* The otherData's kernel key: none for the wgmma kernel (the files made
 * before there was another read the same). */
static void
json_kernel_key(struct buf *b, const struct pipeline_json_meta *m)
{
	if (m->kernel[0] != '\0' && strcmp(m->kernel, "wgmma") != 0)
		buf_printf(b, ", \"kernel\": \"%s\"", m->kernel);
}

int
pipeline_json_format(const struct pipeline_event *ev, size_t nev,
    const struct pipeline_json_meta *m, char **out, size_t *len, char *err,
    size_t errlen)
{
	struct buf b = { NULL, 0, 0, 0 };
	const double us = m->clock_ghz > 0 ? 1e3 * m->clock_ghz : 1e3;
	const struct pipeline_config *c = &m->cfg;
	char src[256], role[32];
	int ncta = 0, r;
	size_t x;

	b.cap = 4096 + nev * 256;
	if ((b.s = malloc(b.cap)) == NULL)
		return util_error(err, errlen, "out of memory (the trace's "
		    "%zu events)", nev);
	json_clean(src, sizeof src, m->source);
	buf_printf(&b, "{\"displayTimeUnit\": \"ns\",\n\"otherData\": "
	    "{\"source\": \"%s\", \"d\": %d, \"br\": %d, \"bc\": %d, "
	    "\"consumers\": %d, \"stages\": %d, \"pingpong\": %d, "
	    "\"overlap\": %d, \"tq\": %d, \"tk\": %d, \"causal\": %d, "
	    "\"ctas\": %d, \"clock_ghz\": %.6f", src, c->d, c->br, c->bc,
	    c->consumers, c->stages, c->pingpong, c->overlap, c->tq, c->tk,
	    c->causal, c->ctas, m->clock_ghz);
	json_kernel_key(&b, m);
	buf_printf(&b, "},\n\"traceEvents\": [\n");
	for (x = 0; x < nev; x++)
		if (ev[x].cta + 1 > ncta)
			ncta = ev[x].cta + 1;
	/* names for the processes and threads, so the viewers label rows */
	for (x = 0; x < (size_t)ncta; x++) {
		int i = -1;
		size_t y;

		for (y = 0; y < nev && i < 0; y++)
			if (ev[y].cta == (int)x)
				i = ev[y].i;
		if (m->have_sm && x < PIPELINE_JSON_MAX_SM)
			buf_printf(&b, "{\"name\": \"process_name\", \"ph\": "
			    "\"M\", \"pid\": %zu, \"tid\": 0, \"args\": "
			    "{\"name\": \"block %zu (row block %d, SM %d)\"}},\n",
			    x, x, i, m->sm[x]);
		else
			buf_printf(&b, "{\"name\": \"process_name\", \"ph\": "
			    "\"M\", \"pid\": %zu, \"tid\": 0, \"args\": "
			    "{\"name\": \"block %zu (row block %d)\"}},\n", x,
			    x, i);
		for (r = 0; r < PIPELINE_NROLES; r++) {
			if (pipeline_json_warps(m) ? r >= c->consumers :
			    r >= PIPELINE_CONSUMER + c->consumers &&
			    r < PIPELINE_TENSOR)
				continue;
			buf_printf(&b, "{\"name\": \"thread_name\", \"ph\": \"M\", "
			    "\"pid\": %zu, \"tid\": %d, \"args\": {\"name\": "
			    "\"%s\"}},\n", x, r,
			    pipeline_json_role_name(m, r, role, sizeof role));
			buf_printf(&b, "{\"name\": \"thread_sort_index\", "
			    "\"ph\": \"M\", \"pid\": %zu, \"tid\": %d, \"args\": "
			    "{\"sort_index\": %d}},\n", x, r, r);
		}
	}
	for (x = 0; x < nev; x++) {
		const struct pipeline_event *e = &ev[x];
		char name[64];

		if (e->j >= 0)
			snprintf(name, sizeof name, "%s (%d,%d)",
			    pipeline_kind_name(e->kind), e->i, e->j);
		else
			snprintf(name, sizeof name, "%s (%d)",
			    pipeline_kind_name(e->kind), e->i);
		buf_printf(&b, "{\"name\": \"%s\", \"ph\": \"X\", \"ts\": %.6f, "
		    "\"dur\": %.6f, \"pid\": %d, \"tid\": %d, \"args\": "
		    "{\"kind\": \"%s\", \"wg\": %d, \"i\": %d, \"j\": %d, "
		    "\"stage\": %d, \"round\": %d, \"begin_clk\": %.6f, "
		    "\"end_clk\": %.6f}}%s\n", name, e->begin / us,
		    (e->end - e->begin) / us, e->cta, e->role,
		    pipeline_kind_name(e->kind), e->wg, e->i, e->j, e->stage,
		    e->round, e->begin, e->end, x + 1 < nev ? "," : "");
	}
	/* the metadata lines end with commas: with no event, close on one */
	if (nev == 0)
		buf_printf(&b, "{\"name\": \"empty\", \"ph\": \"M\", \"pid\": 0, "
		    "\"tid\": 0, \"args\": {}}\n");
	buf_printf(&b, "]}\n");
	if (b.oom) {
		free(b.s);
		return util_error(err, errlen, "out of memory (the trace's "
		    "%zu events)", nev);
	}
	*out = b.s;
	*len = b.len;
	return 0;
}

int
pipeline_json_write(const char *path, const struct pipeline_event *ev,
    size_t nev, const struct pipeline_json_meta *meta, char *err,
    size_t errlen)
{
	struct outfile_set set;
	char *text = NULL;
	size_t len = 0;
	int i;

	outfile_init(&set);
	if ((i = outfile_add(&set, path, err, errlen)) < 0)
		return -1;
	if (pipeline_json_format(ev, nev, meta, &text, &len, err,
	    errlen) != 0) {
		outfile_abort(&set);
		return -1;
	}
	if (outfile_begin(&set, err, errlen) != 0) {
		free(text);
		return -1;
	}
	if (outfile_write(&set, i, text, len, err, errlen) != 0) {
		outfile_abort(&set);
		free(text);
		return -1;
	}
	free(text);
	return outfile_commit(&set, err, errlen);
}

static int
json_kind(const char *name)
{
	int k;

	for (k = 0; k < PIPELINE_NKINDS; k++)
		if (strcmp(name, pipeline_kind_name(k)) == 0)
			return k;
	return -1;
}

/* One line of traceEvents: an "X" event into e (1), metadata (0), or
 * not ours (-1). */
static int
json_event_line(const char *line, struct pipeline_event *e)
{
	const char *p;
	char kind[32];
	int n = 0;

	if (strstr(line, "\"ph\": \"M\"") != NULL)
		return 0;
	if (strstr(line, "\"ph\": \"X\"") == NULL ||
	    (p = strstr(line, "\"pid\": ")) == NULL ||
	    sscanf(p, "\"pid\": %d, \"tid\": %d, \"args\": {\"kind\": "
	    "\"%31[^\"]\", \"wg\": %d, \"i\": %d, \"j\": %d, \"stage\": %d, "
	    "\"round\": %d, \"begin_clk\": %lf, \"end_clk\": %lf}}%n", &e->cta,
	    &e->role, kind, &e->wg, &e->i, &e->j, &e->stage, &e->round,
	    &e->begin, &e->end, &n) != 10 || n == 0)
		return -1;
	if ((e->kind = json_kind(kind)) < 0 || e->role < 0 ||
	    e->role >= PIPELINE_NROLES || e->cta < 0 || !(e->end >= e->begin))
		return -1;
	return 1;
}

int
pipeline_json_read(const char *path, struct pipeline_event **out,
    size_t *nout, struct pipeline_json_meta *m, char *err, size_t errlen)
{
	struct pipeline_event *ev = NULL, e;
	size_t nev = 0, cap = 0;
	char line[1024];
	FILE *f;
	long ln = 0;
	int have_meta = 0, in_events = 0, closed = 0, r;
	struct pipeline_config *c = &m->cfg;
	const char *p;

	*out = NULL;
	*nout = 0;
	memset(m, 0, sizeof *m);
	if ((f = fopen(path, "r")) == NULL)
		return util_error(err, errlen, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof line, f) != NULL) {
		ln++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			util_error(err, errlen, "%s:%ld: line too long for a "
			    "pipeline trace", path, ln);
			goto fail;
		}
		if (!have_meta && strncmp(line, "\"otherData\": ", 13) == 0) {
			if (sscanf(line, "\"otherData\": {\"source\": "
			    "\"%255[^\"]\", \"d\": %d, \"br\": %d, \"bc\": %d, "
			    "\"consumers\": %d, \"stages\": %d, \"pingpong\": "
			    "%d, \"overlap\": %d, \"tq\": %d, \"tk\": %d, "
			    "\"causal\": %d, \"ctas\": %d, \"clock_ghz\": %lf}",
			    m->source, &c->d, &c->br, &c->bc, &c->consumers,
			    &c->stages, &c->pingpong, &c->overlap, &c->tq,
			    &c->tk, &c->causal, &c->ctas, &m->clock_ghz) != 13 ||
			    c->consumers < 1 ||
			    c->consumers > PIPELINE_MAX_CONSUMERS ||
			    c->stages < 1 || c->stages > PIPELINE_MAX_STAGES) {
				util_error(err, errlen, "%s:%ld: not the "
				    "otherData of a flashstep pipeline trace",
				    path, ln);
				goto fail;
			}
			if ((p = strstr(line, "\"kernel\": \"")) != NULL &&
			    (sscanf(p, "\"kernel\": \"%15[^\"]\"", m->kernel) != 1 ||
			    (strcmp(m->kernel, "fast") != 0 &&
			    strcmp(m->kernel, "wgmma") != 0))) {
				util_error(err, errlen, "%s:%ld: a trace of a "
				    "kernel this flashstep does not know",
				    path, ln);
				goto fail;
			}
			have_meta = 1;
			continue;
		}
		if (in_events && strstr(line, "\"process_name\"") != NULL &&
		    (p = strstr(line, ", SM ")) != NULL) {
			int pid, sm;

			if (sscanf(line, "{\"name\": \"process_name\", \"ph\": "
			    "\"M\", \"pid\": %d", &pid) == 1 &&
			    sscanf(p, ", SM %d)", &sm) == 1 && pid >= 0 &&
			    pid < PIPELINE_JSON_MAX_SM && sm >= 0) {
				m->sm[pid] = sm;
				m->have_sm = 1;
			}
		}
		if (strncmp(line, "\"traceEvents\": [", 16) == 0) {
			in_events = 1;
			continue;
		}
		if (in_events && strncmp(line, "]}", 2) == 0) {
			closed = 1;
			break;
		}
		if (!in_events)
			continue;
		if ((r = json_event_line(line, &e)) < 0) {
			util_error(err, errlen, "%s:%ld: not an event of a "
			    "flashstep pipeline trace", path, ln);
			goto fail;
		}
		if (r == 0)
			continue;
		if (nev == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct pipeline_event *n = realloc(ev, nc * sizeof *n);

			if (n == NULL) {
				util_error(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			ev = n;
			cap = nc;
		}
		ev[nev++] = e;
	}
	if (ferror(f)) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!have_meta || !closed) {
		util_error(err, errlen, "%s: not a flashstep pipeline trace "
		    "(%s)", path, have_meta ? "it ends before its last event" :
		    "no otherData line");
		goto fail;
	}
	fclose(f);
	*out = ev;
	*nout = nev;
	return 0;
fail:
	fclose(f);
	free(ev);
	return -1;
}
