/*
 * outfile.h - output files written whole or not at all, several as one.
 *
 * Every command that writes a file (run and trace --output/--lse, the
 * GPU bench's --save, and any later writer) goes through a set:
 *
 *   outfile_add(set, path)       check one path, before any work
 *      |                         (and again when the bytes are ready)
 *   outfile_begin(set)           a temporary file beside each regular target
 *      |
 *   outfile_write(set, i, ...)   the bytes of output i, as often as needed
 *      |
 *   outfile_commit(set)          fsync each temporary, then rename each over
 *                                its target; or
 *   outfile_abort(set)           remove the temporaries (also done on
 *                                SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE)
 *
 * What a path may name:
 *   - nothing yet: a new file, mode 0666 less the umask;
 *   - a regular file we may write: replaced whole, keeping its mode (and
 *     its owner and group when we are allowed to set them); another hard
 *     link to it keeps the old contents;
 *   - a symbolic link: followed; its target is written by these rules and
 *     the link stays a link;
 *   - a FIFO or a character device (/dev/null, a terminal): written
 *     straight, as a shell's `>` would (such a target gets its bytes as
 *     they are written, so the all-or-nothing promise is the regular
 *     files'); opened by outfile_add without waiting, so that a FIFO no
 *     one reads yet is refused before any work instead of hanging after
 *     it, and kept open until written (a reader that saw it closed
 *     between the check and the write would take that for the end);
 *   - a name in /proc (/dev/stdout, /dev/fd/N, /proc/self/fd/N) means
 *     what it reaches: a pipe behind it is written straight, a file by
 *     the path the link gives; one with no path (deleted) is refused;
 *   - the standard output or the standard error, by any name (the
 *     report and the messages go there), is refused; /dev/null is not;
 *   - anything else (a folder, a block device, a socket) is refused.
 * Two outputs may not name the same file (compared by device and inode,
 * so a link or "./" does not hide it).
 *
 * All or none: nothing is renamed until every output of the set is
 * written and flushed to disk, so a failure (a full disk, /dev/full, an
 * interrupt) leaves every target as it was.  The renames run with those
 * signals blocked; between the first rename and the last, only SIGKILL,
 * a crash or a rename that fails (reported, naming what was replaced)
 * can leave the first outputs new beside older later ones.
 */
#ifndef FLASHSTEP_OUTFILE_H
#define FLASHSTEP_OUTFILE_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#define OUTFILE_MAX 8

struct outfile {
	char *path;		/* as the user gave it, for messages */
	char *target;		/* after following symbolic links */
	int straight;		/* a FIFO or character device: no temporary */
	int exists;		/* a regular file is there to replace */
	mode_t mode;		/* the mode to give the new file */
	uid_t uid;		/* and its owner, when it replaces one */
	gid_t gid;
	dev_t dev;		/* the target, or its folder when new: */
	ino_t ino;		/* what tells two outputs apart */
	int fd;
	char *tmp;		/* the temporary file, while it exists */
	volatile sig_atomic_t live;	/* tmp exists: remove it on a signal */
};

struct outfile_set {
	int n;
	int begun;
	struct outfile f[OUTFILE_MAX];
};

void outfile_init(struct outfile_set *set);

/* How long a path messages quote: a longer one is cut in its middle, so
 * that the reason after it fits a message of 512 bytes. */
#define OUTFILE_SHOWN 200

/* path, or (when it is len bytes or longer) its start and end joined by
 * "..." in buf.  For messages that quote a path before their reason. */
const char *outfile_shorten(const char *path, char *buf, size_t len);

/* Checks path as the rules above say and adds it.  Returns its index,
 * or -1 with "path: what is wrong" in err (the set is unchanged). */
int outfile_add(struct outfile_set *set, const char *path, char *err,
    size_t errlen);

/* Creates the temporaries (the straight targets are open already).  Returns 0, or -1 with err set after removing
 * whatever it made (the set is then released as by outfile_abort). */
int outfile_begin(struct outfile_set *set, char *err, size_t errlen);

/* Appends len bytes to output i.  Returns 0, or -1 with err set (the
 * caller then calls outfile_abort). */
int outfile_write(struct outfile_set *set, int i, const void *buf, size_t len,
    char *err, size_t errlen);

/* Flushes, closes and renames every output into place.  Returns 0, or
 * -1 with err set; the set is released either way. */
int outfile_commit(struct outfile_set *set, char *err, size_t errlen);

/* Removes the temporaries, closes everything and releases the set.
 * Harmless on a set that is already released. */
void outfile_abort(struct outfile_set *set);

#endif
