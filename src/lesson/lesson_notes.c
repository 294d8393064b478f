/* lesson_notes.c - the presenter's notes, elsewhere (lesson_notes.h). */
#include "config.h"

#include "lesson_notes.h"
#include "lesson_view.h"
#include "app/outfile.h"
#include "model/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define NOTES_WIDTH 72
/* The page's clock line, counted from 1: a terminal's is rewritten in
 * place (lesson_notes_tick). */
#define NOTES_CLOCK_LINE 4

struct lesson_notes {
	char *path;		/* as given: outfile follows a link each time */
	int fd;			/* a terminal or FIFO kept open; -1: a file */
	int tty;		/* clear the screen before each slide */
	int stopped;		/* a write failed: no more notes */
};

/*
 * Is the character device rdev the terminal this process runs on?  Its
 * standard streams' terminals, /dev/tty (which always means the
 * controlling terminal), and the controlling terminal the kernel names
 * (/proc/self/stat's tty_nr, where there is one).
 */
static int
own_terminal(dev_t rdev)
{
	struct stat st;
	unsigned long long nr;
	char buf[1024], *p;
	FILE *f;
	int fd, k;

	for (fd = 0; fd <= 2; fd++)
		if (isatty(fd) && fstat(fd, &st) == 0 && st.st_rdev == rdev)
			return 1;
	if (stat("/dev/tty", &st) == 0 && S_ISCHR(st.st_mode) &&
	    st.st_rdev == rdev)
		return 1;
	f = fopen("/proc/self/stat", "r");
	if (f == NULL)
		return 0;
	p = fgets(buf, sizeof buf, f);
	fclose(f);
	/* pid (comm) state ppid pgrp session tty_nr: comm may hold ") " */
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return 0;
	for (k = 0; k < 5 && p != NULL; k++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %llu", &nr) != 1 || nr == 0)
		return 0;
	/* tty_nr packs the device as the kernel's new_encode_dev does */
	return makedev((unsigned)((nr >> 8) & 0xfff), (unsigned)((nr & 0xff) |
	    ((nr >> 12) & 0xfff00))) == rdev;
}

struct lesson_notes *
lesson_notes_open(const char *path, char *err, size_t errlen)
{
	struct lesson_notes *nt;
	struct outfile_set set;
	struct stat st;
	int fl;

	nt = calloc(1, sizeof *nt);
	if (nt == NULL) {
		util_error(err, errlen, "--notes-to: out of memory");
		return NULL;
	}
	nt->fd = -1;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0) {
		util_error(err, errlen, "%s: a symbolic link to nothing (%s): name "
		    "the file itself", path, strerror(errno));
		goto fail;
	}
	if (stat(path, &st) != 0 && errno != ENOENT) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		util_error(err, errlen, "%s: a directory; --notes-to takes a terminal "
		    "(/dev/pts/N), a FIFO or a file", path);
		goto fail;
	}
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) {
		/* A file, new or replaced: written as every output is
		 * (outfile.h); checked now, so a file that cannot be
		 * written is refused before the lesson starts. */
		outfile_init(&set);
		if (outfile_add(&set, path, err, errlen) < 0)
			goto fail;
		outfile_abort(&set);
		nt->path = strdup(path);
		if (nt->path == NULL)
			goto nomem;
		return nt;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		util_error(err, errlen, "%s: not a terminal, a FIFO or a regular "
		    "file", path);
		goto fail;
	}
	if (S_ISCHR(st.st_mode) && own_terminal(st.st_rdev)) {
		util_error(err, errlen, "%s: the terminal this lesson runs on; the "
		    "notes would be drawn over the projected screen (give another "
		    "terminal: run tty there for its name)", path);
		goto fail;
	}
	/* A FIFO with no reader would block: say so instead. */
	nt->fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (nt->fd < 0) {
		if (errno == ENXIO)
			util_error(err, errlen, "%s: no one reads this FIFO yet (start "
			    "the reader first: cat %s)", path, path);
		else
			util_error(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISCHR(st.st_mode) && !isatty(nt->fd)) {
		util_error(err, errlen, "%s: a device that is not a terminal", path);
		goto fail;
	}
	fl = fcntl(nt->fd, F_GETFL);
	if (fl >= 0)
		fcntl(nt->fd, F_SETFL, fl & ~O_NONBLOCK);
	nt->tty = S_ISCHR(st.st_mode);
	nt->path = strdup(path);
	if (nt->path == NULL)
		goto nomem;
	return nt;
nomem:
	util_error(err, errlen, "--notes-to: out of memory");
fail:
	lesson_notes_close(nt);
	return NULL;
}

void
lesson_notes_close(struct lesson_notes *nt)
{
	if (nt == NULL)
		return;
	if (nt->fd >= 0)
		close(nt->fd);
	free(nt->path);
	free(nt);
}

int
lesson_notes_terminal(const struct lesson_notes *nt)
{
	return nt->tty;
}

int
lesson_notes_stopped(const struct lesson_notes *nt)
{
	return nt->stopped;
}

/* m:ss, or h:mm:ss past an hour. */
static const char *
clock_text(double s, char *buf, size_t len)
{
	long t = s > 0 ? (long)s : 0;

	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
	return buf;
}

/* The clock line: a terminal's runs on (tick), a file's is the time the
 * slide began. */
static void
clock_line(const struct lesson_notes *nt, double lesson_s, double slide_s,
    double prev_s, char *buf, size_t len)
{
	char a[32], b[32];

	if (nt->tty)
		snprintf(buf, len, "time: %s in the lesson, %s on this slide",
		    clock_text(lesson_s, a, sizeof a), clock_text(slide_s, b,
		    sizeof b));
	else if (prev_s >= 0)
		snprintf(buf, len, "time: %s in the lesson when this slide began "
		    "(the slide before took %s)", clock_text(lesson_s, a, sizeof a),
		    clock_text(prev_s, b, sizeof b));
	else
		snprintf(buf, len, "time: %s in the lesson when this slide began",
		    clock_text(lesson_s, a, sizeof a));
}

/* The slide's page as text, in a malloc'd buffer. */
static char *
compose(const struct lesson_notes *nt, const struct lesson_notes_page *pg,
    size_t *len)
{
	struct lesson_lines ls = { 0 };
	char *text = NULL, clock[160];
	FILE *f;
	int i, k;

	f = open_memstream(&text, len);
	if (f == NULL)
		return NULL;
	if (nt->tty)
		fputs("\033[H\033[2J", f);	/* a fresh screen per slide */
	else if (nt->fd >= 0)
		fputs("\n", f);
	/* Four lines, the clock the fourth (NOTES_CLOCK_LINE). */
	fprintf(f, "%s\nslide %d of %d: speaker notes\n", pg->title, pg->slide,
	    pg->slides);
	if (pg->next != NULL)
		fprintf(f, "next: %s\n", pg->next);
	else
		fputs("next: nothing, this is the last slide\n", f);
	clock_line(nt, pg->lesson_s, pg->slide_s, pg->prev_s, clock,
	    sizeof clock);
	fprintf(f, "%s\n\n", clock);
	for (i = 0; i < pg->n; i++) {
		lesson_lines_wrap(&ls, pg->notes[i], NOTES_WIDTH, "", "");
		for (k = 0; k < ls.n; k++)
			fprintf(f, "%s\n", ls.line[k]);
		fputc('\n', f);
		lesson_lines_clear(&ls);
	}
	if (pg->n == 0)
		fputs("(no notes for this slide)\n", f);
	lesson_lines_free(&ls);
	if (fclose(f) != 0 || ls.oom) {
		free(text);
		return NULL;
	}
	return text;
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The file replaced whole, as outfile.h writes every output.  The
 * signals outfile catches are held meanwhile: its handler removes the
 * temporary and dies of the signal, which would leave the lesson's
 * terminal raw; held, they reach the runner's own handlers afterwards.
 */
static int
replace_file(const struct lesson_notes *nt, const char *text, size_t len,
    char *err, size_t errlen)
{
	struct outfile_set set;
	sigset_t hold, old;
	int rc = -1;

	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigaddset(&hold, SIGQUIT);
	sigaddset(&hold, SIGPIPE);
	sigprocmask(SIG_BLOCK, &hold, &old);
	outfile_init(&set);
	if (outfile_add(&set, nt->path, err, errlen) >= 0 &&
	    outfile_begin(&set, err, errlen) == 0) {
		if (outfile_write(&set, 0, text, len, err, errlen) != 0)
			outfile_abort(&set);
		else
			rc = outfile_commit(&set, err, errlen);
	} else
		outfile_abort(&set);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* A write failed: the notes stop, and err says so this once. */
static int
stop(struct lesson_notes *nt, int e, char *err, size_t errlen)
{
	nt->stopped = 1;
	if (e == EPIPE)
		util_error(err, errlen, "%s: notes reader gone; the lesson goes on "
		    "without notes", nt->path);
	else
		util_error(err, errlen, "%s: %s; the lesson goes on without notes",
		    nt->path, strerror(e));
	return 1;
}

int
lesson_notes_show(struct lesson_notes *nt, const struct lesson_notes_page *pg,
    char *err, size_t errlen)
{
	char *text, why[400];
	size_t len = 0;
	int rc = 0;

	if (nt->stopped)
		return 0;
	text = compose(nt, pg, &len);
	if (text == NULL)
		return util_error(err, errlen, "--notes-to: out of memory");
	if (nt->fd >= 0) {
		if (write_all(nt->fd, text, len) != 0)
			rc = stop(nt, errno, err, errlen);
	} else if (replace_file(nt, text, len, why, sizeof why) != 0) {
		/* outfile's message names the path and the reason */
		nt->stopped = 1;
		util_error(err, errlen, "%s; the lesson goes on without notes", why);
		rc = 1;
	}
	free(text);
	return rc;
}

int
lesson_notes_tick(struct lesson_notes *nt, double lesson_s, double slide_s,
    char *err, size_t errlen)
{
	char clock[160], text[256];
	int n;

	if (nt->stopped || !nt->tty)
		return 0;
	clock_line(nt, lesson_s, slide_s, -1, clock, sizeof clock);
	/* save the cursor, the clock line anew, the cursor back */
	n = snprintf(text, sizeof text, "\0337\033[%d;1H\033[2K%s\0338",
	    NOTES_CLOCK_LINE, clock);
	if (write_all(nt->fd, text, (size_t)n) != 0)
		return stop(nt, errno, err, errlen);
	return 0;
}
