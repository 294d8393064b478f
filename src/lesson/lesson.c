/*
 * lesson.c - reading lesson scripts: lines, continuations, words, the
 * directive for each line, and messages that name file:line.
 *
 * Two passes.  The first joins each directive with its indented
 * continuation lines into one logical line and splits off the name; the
 * second hands the words (or the text) to the directive's parse function
 * in script order, so a directive can look back at what came before it
 * (an `answer` at its `ask`, a `goto label` at its `label`).
 */
#include "config.h"

#include "lesson.h"
#include "lesson_directive.h"
#include "lesson_parser.h"
#include "lesson_value.h"
#include "model/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Lessons are short: a longer file is more likely a wrong file. */
#define LESSON_MAX_BYTES (1 << 20)

/* A UTF-8 byte-order mark: some editors start a file with it. */
#define LESSON_BOM "\xef\xbb\xbf"

/* ---- the lesson ---- */

static void
free_cmd(struct lesson_cmd *c)
{
	int i;

	for (i = 0; i < c->nfills; i++)
		lesson_value_free(&c->fills[i].expect);
	free(c->fills);
	free(c->name);
	free(c->text);
	for (i = 0; i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	free(c->matrix);
	free(c->path);
	lesson_value_free(&c->expect);
}

void
lesson_free(struct lesson *l)
{
	int i, j;

	if (l == NULL)
		return;
	for (i = 0; i < l->ncmds; i++)
		free_cmd(&l->cmds[i]);
	free(l->cmds);
	for (i = 0; i < l->nquestions; i++) {
		free(l->questions[i].text);
		for (j = 0; j < l->questions[i].nchoices; j++)
			free(l->questions[i].choices[j]);
		free(l->questions[i].choices);
		free(l->questions[i].explanation);
		free(l->questions[i].number_text);
	}
	free(l->questions);
	for (i = 0; i < l->nkept; i++)
		free(l->kept[i].name);
	free(l->kept);
	for (i = 0; i < l->nbuilds_on; i++)
		free(l->builds_on[i]);
	free(l->builds_on);
	free(l->path);
	free(l->title);
	free(l);
}

/* Adds word [s, s + n) to c's words; 0 or -1 (no memory). */
static int
add_word(struct lesson_cmd *c, const char *s, size_t n)
{
	char **argv, *w;

	w = strndup(s, n);
	argv = realloc(c->argv, ((size_t)c->argc + 2) * sizeof *argv);
	if (w == NULL || argv == NULL) {
		free(w);
		if (argv != NULL)
			c->argv = argv;
		return -1;
	}
	c->argv = argv;
	c->argv[c->argc++] = w;
	c->argv[c->argc] = NULL;
	return 0;
}

/* Words are split at blanks; ';' (the row separator of inline matrices)
 * is a word of its own; a word that starts with '#' starts a comment. */
static int
split_words(struct lesson_cmd *c, const char *s)
{
	const char *w;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '#')
			return 0;
		if (*s == ';') {
			if (add_word(c, s, 1) != 0)
				return -1;
			s++;
			continue;
		}
		for (w = s; *s != '\0' && *s != ' ' && *s != '\t' && *s != ';'; s++)
			;
		if (add_word(c, w, (size_t)(s - w)) != 0)
			return -1;
	}
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Appends " more" to *text; 0 or -1 (no memory). */
static int
append(char **text, const char *more)
{
	size_t a = strlen(*text), b = strlen(more);
	char *t;

	t = realloc(*text, a + b + 2);
	if (t == NULL)
		return -1;
	if (a > 0 && b > 0)
		t[a++] = ' ';
	memcpy(t + a, more, b + 1);
	*text = t;
	return 0;
}

/* A logical line: a directive's first line and its continuations. */
struct logical {
	int line;
	char *text;
};

static void
free_logical(struct logical *lines, int n)
{
	while (n-- > 0)
		free(lines[n].text);
	free(lines);
}

/* First pass: text into logical lines.  Returns their number, or -1
 * with err set. */
static int
join_lines(const char *path, const char *text, struct logical **out,
    char *err, size_t errlen)
{
	struct logical *lines = NULL, *grown;
	const char *p = text, *nl;
	char *raw = NULL, *s;
	int n = 0, cap = 0, lineno = 0, open = 0;

	*out = NULL;
	while (*p != '\0') {
		lineno++;
		nl = strchr(p, '\n');
		raw = strndup(p, nl != NULL ? (size_t)(nl - p) : strlen(p));
		if (raw == NULL)
			goto nomem;
		p = nl != NULL ? nl + 1 : p + strlen(p);
		s = trim(raw);
		if (*s == '\0') {
			open = 0;	/* a blank line ends a continuation */
			free(raw);
			continue;
		}
		if (*s == '#') {
			free(raw);
			continue;
		}
		if (raw[0] == ' ' || raw[0] == '\t') {
			if (!open) {
				util_error(err, errlen, "%s:%d: an indented line "
				    "continues the directive above it, but there is "
				    "none (a blank line or the start of the file)",
				    path, lineno);
				goto fail;
			}
			if (append(&lines[n - 1].text, s) != 0)
				goto nomem;
			free(raw);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(lines, (size_t)cap * sizeof *lines);
			if (grown == NULL)
				goto nomem;
			lines = grown;
		}
		lines[n].line = lineno;
		lines[n].text = strdup(s);
		if (lines[n].text == NULL)
			goto nomem;
		n++;
		open = 1;
		free(raw);
	}
	*out = lines;
	return n;

nomem:
	util_error(err, errlen, "%s: out of memory", path);
fail:
	free(raw);
	free_logical(lines, n);
	return -1;
}

static int
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

/* s with bytes outside printable ASCII written \xHH, cut to fit. */
static void
escape(const char *s, char *buf, size_t len)
{
	size_t used = 0;

	for (; *s != '\0' && used + 5 < len; s++) {
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
			used += (size_t)snprintf(buf + used, len - used, "\\x%02x",
			    (unsigned char)*s);
		else
			buf[used++] = *s;
	}
	buf[used] = '\0';
}

/* The name of a C0 control, for messages. */
static const char *
control_name(unsigned c)
{
	static const char *const names[32] = {
		"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "TAB",
		"LF", "VT", "FF", "CR", "SO", "SI", "DLE", "DC1", "DC2", "DC3",
		"DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS",
		"RS", "US",
	};

	return c < 32 ? names[c] : "DEL";
}

size_t
lesson_bad_bytes(const char *s, size_t n, char *what, size_t whatlen)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned cp;
	size_t len, k;

	if (n == 0)
		return 0;
	/* C0 controls (a tab is a blank) and DEL: ESC starts the
	 * terminal's escape sequences, BEL rings it, CR overwrites. */
	if ((p[0] < 0x20 && p[0] != '\t') || p[0] == 0x7f) {
		snprintf(what, whatlen, "the control character %s (\\x%02x)",
		    control_name(p[0]), p[0]);
		return 1;
	}
	if (p[0] < 0x80)
		return 0;
	/* UTF-8: the lead byte says how long the sequence is. */
	len = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ?
	    3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	for (k = 1; len > 0 && k < len; k++)
		if (k >= n || (p[k] & 0xc0) != 0x80)
			len = 0;
	if (len == 0) {
		snprintf(what, whatlen, "the byte \\x%02x, which is not UTF-8",
		    p[0]);
		return 1;
	}
	cp = len == 2 ? (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu) :
	    len == 3 ? (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu) :
	    (p[0] & 0x07u) << 18 | (p[1] & 0x3fu) << 12 | (p[2] & 0x3fu) << 6 |
	    (p[3] & 0x3fu);
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 ||
	    cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) {
		snprintf(what, whatlen, "the byte \\x%02x, which is not UTF-8 "
		    "here", p[0]);
		return len;
	}
	/* C1 controls: a terminal may read U+009B as an escape sequence's
	 * start, as it reads ESC [. */
	if (cp >= 0x80 && cp <= 0x9f) {
		snprintf(what, whatlen, "the control character U+%04X (\\x%02x"
		    "\\x%02x)", cp, p[0], p[1]);
		return len;
	}
	return 0;
}

char *
lesson_escape_text(const char *s)
{
	size_t n = strlen(s), used = 0, bad, k;
	char what[80], *out = malloc(4 * n + 1);

	if (out == NULL)
		return NULL;
	while (*s != '\0') {
		bad = lesson_bad_bytes(s, n, what, sizeof what);
		if (bad == 0) {
			/* a whole character: its continuation bytes with it */
			do {
				out[used++] = *s++;
				n--;
			} while ((*s & 0xc0) == 0x80);
			continue;
		}
		for (k = 0; k < bad; k++)
			used += (size_t)sprintf(out + used, "\\x%02x",
			    (unsigned char)s[k]);
		s += bad;
		n -= bad;
	}
	out[used] = '\0';
	return out;
}

/*
 * The whole text must be printable UTF-8 (a tab is a blank, a line may
 * end in CR LF): a control character in a title or a narration would
 * reach the student's terminal as it is, and ESC there starts a
 * sequence that can clear the screen or retitle the window.  Returns 0,
 * or -1 with "path:line: ..." in err.
 */
static int
check_bytes(const char *path, const char *text, char *err, size_t errlen)
{
	const char *p = text;
	char what[80];
	size_t n = strlen(text), bad;
	int line = 1, col = 1;

	for (; *p != '\0'; p++, col++) {
		if (*p == '\n') {
			line++;
			col = 0;
			continue;
		}
		if (*p == '\r' && (p[1] == '\n' || p[1] == '\0'))
			continue;	/* a CR LF line end */
		bad = lesson_bad_bytes(p, n - (size_t)(p - text), what, sizeof what);
		if (bad > 0)
			return util_error(err, errlen, "%s:%d: column %d holds %s; "
			    "lesson text is printable UTF-8 (tabs allowed)", path,
			    line, col, what);
		/* Step over a whole UTF-8 sequence: one column. */
		while ((p[1] & 0xc0) == 0x80)
			p++;
	}
	return 0;
}

/* Second pass, one logical line: find the directive, keep its name and
 * its text or words. */
static int
make_cmd(const char *path, const struct logical *ln, struct lesson_cmd *c,
    char *err, size_t errlen)
{
	const char *s = ln->text, *rest, *hint;
	char *name, shown[160];

	memset(c, 0, sizeof *c);
	c->line = ln->line;
	for (rest = s; *rest != '\0' && *rest != ' ' && *rest != '\t'; rest++)
		;
	name = strndup(s, (size_t)(rest - s));
	if (name == NULL)
		return util_error(err, errlen, "%s: out of memory", path);
	c->name = name;
	c->dir = lesson_directive_find(name, &c->option);
	if (c->dir == NULL && strncmp(name, LESSON_BOM, 3) == 0)
		return util_error(err, errlen, "%s:%d: a UTF-8 byte-order mark "
		    "(U+FEFF, invisible) stands before '%s': delete it", path,
		    ln->line, name + 3);
	if (c->dir == NULL && !printable(name)) {
		escape(name, shown, sizeof shown);
		return util_error(err, errlen, "%s:%d: unknown directive '%s' (it "
		    "holds bytes that are not printable ASCII, shown as \\x..)",
		    path, ln->line, shown);
	}
	if (c->dir == NULL) {
		hint = lesson_directive_suggest(name);
		if (hint != NULL)
			return util_error(err, errlen, "%s:%d: unknown directive "
			    "'%s' (did you mean '%s'?)", path, ln->line, name, hint);
		return util_error(err, errlen, "%s:%d: unknown directive '%s' "
		    "(see flashstep-lesson(5))", path, ln->line, name);
	}
	if (c->dir->flags & LESSON_TEXT) {
		while (*rest == ' ' || *rest == '\t')
			rest++;
		c->text = strdup(rest);
		if (c->text == NULL)
			return util_error(err, errlen, "%s: out of memory", path);
	} else if (split_words(c, rest) != 0)
		return util_error(err, errlen, "%s: out of memory", path);
	return 0;
}

static struct lesson *
parse(const char *path, const char *text, char *err, size_t errlen)
{
	struct lesson_parser ps;
	struct logical *lines = NULL;
	struct lesson *l;
	char msg[400], *slash;
	int n, i;

	memset(&ps, 0, sizeof ps);
	ps.open_q = -1;
	l = calloc(1, sizeof *l);
	if (l == NULL) {
		util_error(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	l->path = strdup(path);
	ps.folder = strdup(path);
	if (l->path == NULL || ps.folder == NULL)
		goto nomem;
	slash = strrchr(ps.folder, '/');
	if (slash != NULL)
		slash[1] = '\0';
	else
		ps.folder[0] = '\0';
	ps.l = l;

	/* A byte-order mark at the start is the editor's, not the script's. */
	if (strncmp(text, LESSON_BOM, 3) == 0)
		text += 3;
	if (check_bytes(path, text, err, errlen) != 0)
		goto fail;
	n = join_lines(path, text, &lines, err, errlen);
	if (n < 0)
		goto fail;
	l->cmds = calloc((size_t)n + 1, sizeof *l->cmds);
	if (l->cmds == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		ps.idx = i;
		l->ncmds = i + 1;
		if (make_cmd(path, &lines[i], &l->cmds[i], err, errlen) != 0)
			goto fail;
		if (l->cmds[i].dir->parse != NULL &&
		    l->cmds[i].dir->parse(&ps, &l->cmds[i], msg, sizeof msg) != 0) {
			util_error(err, errlen, "%s:%d: %s", path, lines[i].line, msg);
			goto fail;
		}
	}
	if (ps.open_q >= 0) {
		util_error(err, errlen, "%s:%d: this question has no answer (an "
		    "'answer' line follows its 'ask' and 'choice' lines)", path,
		    l->questions[ps.open_q].line);
		goto fail;
	}
	if (l->title == NULL) {
		util_error(err, errlen, "%s:1: the lesson has no title (add a "
		    "line 'title ...')", path);
		goto fail;
	}
	free_logical(lines, n);
	free(ps.folder);
	lesson_parser_free(&ps);
	return l;

nomem:
	util_error(err, errlen, "%s: out of memory", path);
fail:
	if (lines != NULL)
		free_logical(lines, n);
	free(ps.folder);
	lesson_parser_free(&ps);
	lesson_free(l);
	return NULL;
}

struct lesson *
lesson_parse_string(const char *path, const char *text, char *err,
    size_t errlen)
{
	return parse(path, text, err, errlen);
}

struct lesson *
lesson_parse_file(const char *path, char *err, size_t errlen)
{
	struct lesson *l = NULL;
	struct stat st;
	char *text = NULL;
	ssize_t got;
	size_t n = 0;
	int fd;

	/* O_NONBLOCK: a FIFO named by mistake must not hang the open. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		goto done;
	}
	if (S_ISDIR(st.st_mode)) {
		util_error(err, errlen, "%s: a directory, not a lesson file", path);
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		util_error(err, errlen, "%s: not a regular file (a device, FIFO or "
		    "socket), not a lesson", path);
		goto done;
	}
	if (st.st_size > LESSON_MAX_BYTES) {
		util_error(err, errlen, "%s: larger than %d bytes: not a lesson",
		    path, LESSON_MAX_BYTES);
		goto done;
	}
	text = malloc(LESSON_MAX_BYTES + 1);
	if (text == NULL) {
		util_error(err, errlen, "%s: out of memory", path);
		goto done;
	}
	/* The file may still grow while it is read: never past the limit. */
	while (n <= LESSON_MAX_BYTES &&
	    (got = read(fd, text + n, LESSON_MAX_BYTES + 1 - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			util_error(err, errlen, "%s: %s", path, strerror(errno));
			goto done;
		}
		n += (size_t)got;
	}
	if (n > LESSON_MAX_BYTES) {
		util_error(err, errlen, "%s: larger than %d bytes: not a lesson",
		    path, LESSON_MAX_BYTES);
		goto done;
	}
	text[n] = '\0';
	if (strlen(text) != n) {
		util_error(err, errlen, "%s: holds a NUL byte: not a lesson", path);
		goto done;
	}
	l = parse(path, text, err, errlen);
done:
	free(text);
	close(fd);
	return l;
}
