/* outfile.c - output files written whole or not at all (see outfile.h). */
#include "config.h"

#include "outfile.h"
#include "model/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Symbolic links followed before giving up, as the kernel's ELOOP. */
#define OUTFILE_MAX_LINKS 40

/* The signals after which no temporary may stay behind. */
static const int outfile_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
#define OUTFILE_NSIGNALS (int)(sizeof outfile_signals / sizeof outfile_signals[0])

/* The set whose temporaries exist (one at a time), for the handler. */
static struct outfile_set *volatile outfile_active;
static struct sigaction outfile_saved[OUTFILE_NSIGNALS];
static int outfile_handled[OUTFILE_NSIGNALS];

/*
 * The straight targets opened so far, kept open from the check before
 * the work to the write after it: a FIFO's reader that saw us close it
 * in between would take that for the end of its input and go, and the
 * write would then find no reader.  Closed once written (outfile_commit).
 */
static struct outfile_kept {
	dev_t dev;
	ino_t ino;
	int fd;			/* -1: a free slot */
} outfile_kept[OUTFILE_MAX * 4];
static int outfile_nkept;

/* Async-signal-safe: unlink, signal and raise only. */
static void
outfile_on_signal(int sig)
{
	struct outfile_set *set = outfile_active;
	int i;

	if (set != NULL)
		for (i = 0; i < set->n; i++)
			if (set->f[i].live)
				unlink(set->f[i].tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
outfile_block(sigset_t *old)
{
	sigset_t s;
	int i;

	sigemptyset(&s);
	for (i = 0; i < OUTFILE_NSIGNALS; i++)
		sigaddset(&s, outfile_signals[i]);
	sigprocmask(SIG_BLOCK, &s, old);
}

/* Catches the signals, except those the user chose to ignore (nohup). */
static void
outfile_catch(struct outfile_set *set)
{
	struct sigaction sa;
	int i;

	outfile_active = set;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = outfile_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < OUTFILE_NSIGNALS; i++) {
		outfile_handled[i] = 0;
		if (sigaction(outfile_signals[i], NULL, &outfile_saved[i]) != 0 ||
		    outfile_saved[i].sa_handler == SIG_IGN)
			continue;
		if (sigaction(outfile_signals[i], &sa, NULL) == 0)
			outfile_handled[i] = 1;
	}
}

static void
outfile_uncatch(void)
{
	int i;

	for (i = 0; i < OUTFILE_NSIGNALS; i++)
		if (outfile_handled[i])
			sigaction(outfile_signals[i], &outfile_saved[i], NULL);
	outfile_active = NULL;
}

void
outfile_init(struct outfile_set *set)
{
	memset(set, 0, sizeof *set);
}

const char *
outfile_shorten(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path), head, tail;

	if (n < len || len < 16)
		return path;
	/* The end names the file; the start says where it is. */
	head = (len - 4) / 4;
	tail = len - 4 - head;
	snprintf(buf, len, "%.*s...%s", (int)head, path, path + n - tail);
	return buf;
}

/* The folder part of path ("." for a bare name), malloc'd. */
static char *
outfile_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static const char *
outfile_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/*
 * Follows symbolic links from path to what they name; *st is what lstat
 * said of it, *found whether it exists.  A link's relative target is
 * relative to the link's folder.  Returns the malloc'd final path, or
 * NULL with err set.
 */
static char *
outfile_resolve(const char *path, const char *name, struct stat *st,
    int *found, char *err, size_t errlen)
{
	char *cur = strdup(path), *next, *dir, link[PATH_MAX];
	ssize_t n;
	int hops;

	for (hops = 0; cur != NULL; hops++) {
		if (lstat(cur, st) != 0) {
			if (errno == ENOENT || errno == ENOTDIR) {
				*found = 0;
				return cur;
			}
			util_error(err, errlen, "%s: %s", name, strerror(errno));
			free(cur);
			return NULL;
		}
		if (!S_ISLNK(st->st_mode)) {
			*found = 1;
			return cur;
		}
		if (hops == OUTFILE_MAX_LINKS) {
			util_error(err, errlen, "%s: %s", name, strerror(ELOOP));
			free(cur);
			return NULL;
		}
		n = readlink(cur, link, sizeof link - 1);
		if (n < 0) {
			util_error(err, errlen, "%s: %s", name, strerror(errno));
			free(cur);
			return NULL;
		}
		link[n] = '\0';
		if (link[0] == '/')
			next = strdup(link);
		else if ((dir = outfile_dirname(cur)) == NULL)
			next = NULL;
		else {
			next = malloc(strlen(dir) + strlen(link) + 2);
			if (next != NULL)
				sprintf(next, "%s/%s", dir, link);
			free(dir);
		}
		free(cur);
		cur = next;
	}
	util_error(err, errlen, "%s: out of memory", name);
	return NULL;
}

/* What kind of thing st is, for a refusal. */
static const char *
outfile_kind(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (S_ISBLK(st->st_mode))
		return "a block device";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	return "not a regular file";
}

/* The folder that will hold target's temporary: there, writable. */
static int
outfile_check_dir(const char *path, const char *target, struct stat *dst,
    char *err, size_t errlen)
{
	char *dir = outfile_dirname(target);
	char shown[OUTFILE_SHOWN / 2];
	const char *d;
	int rc = 0;

	if (dir == NULL)
		return util_error(err, errlen, "%s: out of memory", path);
	d = outfile_shorten(dir, shown, sizeof shown);
	if (stat(dir, dst) != 0)
		rc = util_error(err, errlen, "%s: %s: %s", path, d, strerror(errno));
	else if (!S_ISDIR(dst->st_mode))
		rc = util_error(err, errlen, "%s: %s is not a directory", path, d);
	else if (access(dir, W_OK | X_OK) != 0)
		rc = util_error(err, errlen, "%s: cannot write in %s: %s", path, d,
		    strerror(errno));
	free(dir);
	return rc;
}

/* With dev and ino, what tells outputs apart: a new file is its folder
 * and its name there, anything else the node itself. */
static const char *
outfile_new_name(const struct outfile *f)
{
	return f->exists || f->straight ? "" : outfile_basename(f->target);
}

/* The kept descriptor of the node st names, or -1. */
static int
outfile_kept_fd(const struct stat *st)
{
	int i;

	for (i = 0; i < outfile_nkept; i++)
		if (outfile_kept[i].fd >= 0 && outfile_kept[i].dev == st->st_dev &&
		    outfile_kept[i].ino == st->st_ino)
			return outfile_kept[i].fd;
	return -1;
}

/* Closes fd and forgets it, if it is a kept one. */
static void
outfile_unkeep(int fd)
{
	int i;

	for (i = 0; i < outfile_nkept; i++)
		if (outfile_kept[i].fd == fd) {
			close(fd);
			outfile_kept[i].fd = -1;
		}
	while (outfile_nkept > 0 && outfile_kept[outfile_nkept - 1].fd < 0)
		outfile_nkept--;
}

/*
 * Opens a FIFO or character device for writing, without waiting: a FIFO
 * that no one reads yet is refused now, before any work, instead of
 * hanging after it.  The descriptor is kept (see outfile_kept).  Returns
 * it, or -1 with err set.
 */
static int
outfile_open_straight(const char *path, const char *target,
    const struct stat *st, char *err, size_t errlen)
{
	int fd = outfile_kept_fd(st), fl, slot;

	if (fd >= 0)
		return fd;
	for (slot = 0; slot < outfile_nkept && outfile_kept[slot].fd >= 0; slot++)
		;
	if (slot == (int)(sizeof outfile_kept / sizeof outfile_kept[0]))
		return util_error(err, errlen, "%s: too many output files", path);
	fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENXIO && S_ISFIFO(st->st_mode))
			return util_error(err, errlen, "%s: no one reads this FIFO "
			    "yet (start its reader first)", path);
		return util_error(err, errlen, "%s: %s", path, strerror(errno));
	}
	/* Blocking from here: a slow reader slows the write, never cuts it. */
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		util_error(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	outfile_kept[slot].dev = st->st_dev;
	outfile_kept[slot].ino = st->st_ino;
	outfile_kept[slot].fd = fd;
	if (slot == outfile_nkept)
		outfile_nkept++;
	return fd;
}

/*
 * Is st the standard output or the standard error?  Each command's
 * report goes to the one and its messages to the other, so an output
 * there (/dev/stdout, /dev/fd/1, /proc/self/fd/2, or the file that
 * `> o.npy` opened, by any name) would be a .npy with text in it, or
 * text lost inside a replaced .npy.  /dev/null takes both harmlessly.
 * Returns the name of the stream, or NULL.
 */
static const char *
outfile_std_stream(const struct stat *st)
{
	static const int fds[2] = { STDOUT_FILENO, STDERR_FILENO };
	static const char *const names[2] = {
		"the standard output, where the report goes",
		"the standard error, where the messages go",
	};
	struct stat s, null;
	int i;

	if (stat("/dev/null", &null) == 0 && st->st_dev == null.st_dev &&
	    st->st_ino == null.st_ino)
		return NULL;
	for (i = 0; i < 2; i++)
		if (fstat(fds[i], &s) == 0 && s.st_dev == st->st_dev &&
		    s.st_ino == st->st_ino)
			return names[i];
	return NULL;
}

int
outfile_add(struct outfile_set *set, const char *given, char *err, size_t errlen)
{
	struct outfile f;
	/* given is the path; path, what messages call it (shortened, so
	 * that a long one leaves room for the reason). */
	char shown[OUTFILE_SHOWN];
	const char *path = outfile_shorten(given, shown, sizeof shown);
	struct stat st, dst, real;
	const char *stream;
	mode_t mask;
	int found, i;

	if (set->n == OUTFILE_MAX)
		return util_error(err, errlen, "%s: too many output files", path);
	memset(&f, 0, sizeof f);
	f.fd = -1;
	if (*given == '\0')
		return util_error(err, errlen, "an output file name is empty");
	f.target = outfile_resolve(given, path, &st, &found, err, errlen);
	if (f.target == NULL)
		return -1;
	/* A link in /proc (/dev/stdout, /dev/fd/N, /proc/self/fd/N) names
	 * what a descriptor holds, and that may have no path to follow: a
	 * pipe ("pipe:[N]"), a socket, a file since deleted.  What stat
	 * reaches through the name is then what the name means. */
	if (stat(given, &real) == 0 && (!found || real.st_dev != st.st_dev ||
	    real.st_ino != st.st_ino)) {
		if (S_ISREG(real.st_mode)) {
			util_error(err, errlen, "%s: names an open file that has no "
			    "path of its own (deleted?); it cannot be replaced whole",
			    path);
			goto fail;
		}
		free(f.target);
		if ((f.target = strdup(given)) == NULL)
			return util_error(err, errlen, "%s: out of memory", path);
		st = real;
		found = 1;
	}
	if (found && (stream = outfile_std_stream(&st)) != NULL) {
		util_error(err, errlen, "%s: is %s; give the output a file of its "
		    "own", path, stream);
		goto fail;
	}
	if (found && S_ISDIR(st.st_mode)) {
		util_error(err, errlen, "%s: is a directory", path);
		goto fail;
	}
	if (*outfile_basename(f.target) == '\0') {
		util_error(err, errlen, "%s: names a folder, not a file", path);
		goto fail;
	}
	if (found && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		f.straight = 1;
		f.dev = st.st_dev;
		f.ino = st.st_ino;
	} else if (found && !S_ISREG(st.st_mode)) {
		util_error(err, errlen, "%s: is %s; outputs are regular files, "
		    "FIFOs or character devices", path, outfile_kind(&st));
		goto fail;
	} else {
		if (outfile_check_dir(path, f.target, &dst, err, errlen) != 0)
			goto fail;
		if (found) {
			/* A file we may not write is not ours to replace, even
			 * where its folder would let us. */
			if (access(f.target, W_OK) != 0) {
				util_error(err, errlen, "%s: %s", path, strerror(errno));
				goto fail;
			}
			f.exists = 1;
			f.mode = st.st_mode & 07777;
			f.uid = st.st_uid;
			f.gid = st.st_gid;
			f.dev = st.st_dev;
			f.ino = st.st_ino;
		} else {
			mask = umask(0);
			umask(mask);
			f.mode = 0666 & ~mask;
			f.dev = dst.st_dev;
			f.ino = dst.st_ino;
		}
	}
	for (i = 0; i < set->n; i++)
		if (set->f[i].dev == f.dev && set->f[i].ino == f.ino &&
		    strcmp(outfile_new_name(&set->f[i]), outfile_new_name(&f)) == 0) {
			util_error(err, errlen, "%s and %s are the same file; give "
			    "each output its own", set->f[i].path, path);
			goto fail;
		}
	if (f.straight &&
	    (f.fd = outfile_open_straight(path, f.target, &st, err, errlen)) < 0)
		goto fail;
	f.path = strdup(path);
	if (f.path == NULL) {
		util_error(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	set->f[set->n] = f;
	return set->n++;

fail:
	free(f.target);
	return -1;
}

/* Releases everything; the temporaries must be gone or renamed. */
static void
outfile_release(struct outfile_set *set)
{
	int i;

	for (i = 0; i < set->n; i++) {
		/* A straight target stays open for the next set (kept). */
		if (set->f[i].fd >= 0 && !set->f[i].straight)
			close(set->f[i].fd);
		free(set->f[i].path);
		free(set->f[i].target);
		free(set->f[i].tmp);
	}
	if (set->begun && outfile_active == set)
		outfile_uncatch();
	outfile_init(set);
}

void
outfile_abort(struct outfile_set *set)
{
	sigset_t old;
	int i;

	outfile_block(&old);
	for (i = 0; i < set->n; i++)
		if (set->f[i].live) {
			unlink(set->f[i].tmp);
			set->f[i].live = 0;
		}
	outfile_release(set);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* A temporary beside f's target: created with the signals blocked, so
 * it exists only while `live` says so. */
static int
outfile_make_tmp(struct outfile *f, char *err, size_t errlen)
{
	static const char name[] = "/.flashstep-XXXXXX";
	char *dir = outfile_dirname(f->target);

	if (dir == NULL)
		return util_error(err, errlen, "%s: out of memory", f->path);
	f->tmp = malloc(strlen(dir) + sizeof name);
	if (f->tmp == NULL) {
		free(dir);
		return util_error(err, errlen, "%s: out of memory", f->path);
	}
	sprintf(f->tmp, "%s%s", dir, name);
	free(dir);
	f->fd = mkstemp(f->tmp);
	if (f->fd < 0)
		return util_error(err, errlen, "%s: cannot create a temporary file "
		    "beside it: %s", f->path, strerror(errno));
	f->live = 1;
	/* The owner first: chown may clear set-id bits that fchmod sets.
	 * Owner and group are kept where we may set them (as root). */
	if (f->exists && (f->uid != geteuid() || f->gid != getegid()) &&
	    fchown(f->fd, f->uid, f->gid) != 0 && errno != EPERM)
		return util_error(err, errlen, "%s: %s", f->path, strerror(errno));
	if (fchmod(f->fd, f->mode) != 0)
		return util_error(err, errlen, "%s: %s", f->path, strerror(errno));
	return 0;
}

int
outfile_begin(struct outfile_set *set, char *err, size_t errlen)
{
	sigset_t old;
	int i, rc = 0;

	if (outfile_active != NULL && outfile_active != set) {
		outfile_abort(set);
		return util_error(err, errlen, "another set of outputs is open");
	}
	outfile_block(&old);
	set->begun = 1;
	outfile_catch(set);
	for (i = 0; i < set->n && rc == 0; i++)
		if (!set->f[i].straight)
			rc = outfile_make_tmp(&set->f[i], err, errlen);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		outfile_abort(set);
	return rc;
}

int
outfile_write(struct outfile_set *set, int i, const void *buf, size_t len,
    char *err, size_t errlen)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(set->f[i].fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return util_error(err, errlen, "%s: write failed: %s",
			    set->f[i].path, strerror(n < 0 ? errno : EIO));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
outfile_commit(struct outfile_set *set, char *err, size_t errlen)
{
	struct stat st;
	sigset_t old;
	char done[256];
	int i, fd, rc = 0;

	/* Every byte on disk before any target changes. */
	for (i = 0; i < set->n && rc == 0; i++) {
		struct outfile *f = &set->f[i];
		if (!f->straight && fsync(f->fd) != 0)
			rc = util_error(err, errlen, "%s: write failed: %s", f->path,
			    strerror(errno));
		fd = f->fd;
		f->fd = -1;
		if (f->straight)	/* written: its reader may see the end now */
			outfile_unkeep(fd);
		else if (close(fd) != 0 && rc == 0)
			rc = util_error(err, errlen, "%s: write failed: %s", f->path,
			    strerror(errno));
	}
	if (rc != 0) {
		outfile_abort(set);
		return -1;
	}
	/* What was checked may have changed since: the rename replaces
	 * nothing but a regular file (or nothing). */
	for (i = 0; i < set->n; i++) {
		struct outfile *f = &set->f[i];
		if (f->straight || lstat(f->target, &st) != 0 || S_ISREG(st.st_mode))
			continue;
		util_error(err, errlen, "%s: is no longer a regular file; not "
		    "replaced", f->path);
		outfile_abort(set);
		return -1;
	}
	done[0] = '\0';
	outfile_block(&old);
	for (i = 0; i < set->n; i++) {
		struct outfile *f = &set->f[i];
		if (f->straight)
			continue;
		if (rename(f->tmp, f->target) != 0) {
			rc = util_error(err, errlen, "%s: cannot rename into place: "
			    "%s%s%s", f->path, strerror(errno), *done ?
			    "; already replaced: " : "", done);
			break;
		}
		f->live = 0;
		snprintf(done + strlen(done), sizeof done - strlen(done), "%s%s",
		    *done ? ", " : "", f->path);
	}
	if (rc != 0)
		outfile_abort(set);
	else
		outfile_release(set);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
