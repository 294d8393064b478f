/* lesson_notes.c - the presenter's notes, elsewhere (lesson_notes.h). */
#include "config.h"

#include "lesson_notes.h"
#include "lesson_view.h"
#include "model/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOTES_WIDTH 72

struct lesson_notes {
	char *path;		/* where notes go: the link's target, resolved */
	int fd;			/* a terminal or FIFO kept open; -1: a file */
	int tty;		/* clear the screen before each slide */
	mode_t mode;		/* a file's mode, kept across replacements */
};

struct lesson_notes *
lesson_notes_open(const char *path, char *err, size_t errlen)
{
	struct lesson_notes *nt;
	struct stat st;
	char *real = NULL;
	int fl;

	nt = calloc(1, sizeof *nt);
	if (nt == NULL) {
		util_error(err, errlen, "--notes-to: out of memory");
		return NULL;
	}
	nt->fd = -1;
	nt->mode = 0644;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0) {
		util_error(err, errlen, "%s: a symbolic link to nothing (%s): name "
		    "the file itself", path, strerror(errno));
		goto fail;
	}
	if (stat(path, &st) != 0) {
		if (errno != ENOENT) {
			util_error(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		/* Nothing there (or a link to nothing): a new file. */
		nt->path = strdup(path);
		if (nt->path == NULL)
			goto nomem;
		return nt;
	}
	if (S_ISDIR(st.st_mode)) {
		util_error(err, errlen, "%s: a directory; --notes-to takes a terminal "
		    "(/dev/pts/N), a FIFO or a file", path);
		goto fail;
	}
	if (S_ISREG(st.st_mode)) {
		/* Replace what the path means, never the link that names it. */
		real = realpath(path, NULL);
		if (real == NULL) {
			util_error(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		nt->path = real;
		nt->mode = st.st_mode & 07777;
		return nt;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		util_error(err, errlen, "%s: not a terminal, a FIFO or a regular "
		    "file", path);
		goto fail;
	}
	/* A FIFO with no reader would block: say so instead. */
	nt->fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK);
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

/* The slide's notes as text, in a malloc'd buffer. */
static char *
compose(const struct lesson_notes *nt, const char *title, int slide,
    int slides, const char *const *notes, int n, size_t *len)
{
	struct lesson_lines ls = { 0 };
	char *text = NULL;
	FILE *f;
	int i, k;

	f = open_memstream(&text, len);
	if (f == NULL)
		return NULL;
	if (nt->tty)
		fputs("\033[H\033[2J", f);	/* a fresh screen per slide */
	else if (nt->fd >= 0)
		fputs("\n", f);
	fprintf(f, "%s\nslide %d of %d: speaker notes\n\n", title, slide, slides);
	for (i = 0; i < n; i++) {
		lesson_lines_wrap(&ls, notes[i], NOTES_WIDTH, "", "");
		for (k = 0; k < ls.n; k++)
			fprintf(f, "%s\n", ls.line[k]);
		fputc('\n', f);
		lesson_lines_clear(&ls);
	}
	if (n == 0)
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
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A new file beside the old one, renamed over it: a reader sees the old
 * slide's notes or the new one's, never half. */
static int
replace_file(const struct lesson_notes *nt, const char *text, size_t len,
    char *err, size_t errlen)
{
	char *tmp;
	int fd;

	tmp = malloc(strlen(nt->path) + 16);
	if (tmp == NULL)
		return util_error(err, errlen, "--notes-to: out of memory");
	sprintf(tmp, "%s.tmpXXXXXX", nt->path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		util_error(err, errlen, "%s: cannot write beside it: %s", nt->path,
		    strerror(errno));
		free(tmp);
		return -1;
	}
	if (fchmod(fd, nt->mode) != 0 || write_all(fd, text, len) != 0 ||
	    close(fd) != 0) {
		util_error(err, errlen, "%s: %s", nt->path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (rename(tmp, nt->path) != 0) {
		util_error(err, errlen, "%s: cannot rename into place: %s", nt->path,
		    strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int
lesson_notes_show(struct lesson_notes *nt, const char *title, int slide,
    int slides, const char *const *notes, int n, char *err, size_t errlen)
{
	char *text;
	size_t len = 0;
	int rc;

	text = compose(nt, title, slide, slides, notes, n, &len);
	if (text == NULL)
		return util_error(err, errlen, "--notes-to: out of memory");
	if (nt->fd >= 0) {
		rc = write_all(nt->fd, text, len);
		if (rc != 0)
			util_error(err, errlen, "%s: %s", nt->path, strerror(errno));
	} else
		rc = replace_file(nt, text, len, err, errlen);
	free(text);
	return rc;
}
