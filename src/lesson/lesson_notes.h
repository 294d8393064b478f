/*
 * lesson_notes.h - the presenter's notes, away from the projected
 * screen: each slide's notes go to a second terminal (/dev/pts/3), a
 * FIFO someone reads, or a file the instructor watches.  Beside them:
 * the next slide's first words, and the time since the lesson began and
 * on this slide (a terminal's clock line is kept current, by
 * lesson_notes_tick; a FIFO or a file gets the time at the slide's
 * start and how long the slide before took).
 *
 * What PATH may name, and what happens to it:
 *   a terminal or a FIFO   written to, a screen per slide (a FIFO must
 *                          have its reader already); the terminal the
 *                          lesson itself runs on is refused (the notes
 *                          would be drawn over the projected screen)
 *   a regular file, or     replaced whole at each slide (outfile.h: a
 *   nothing yet            new file beside it, renamed over it), so a
 *                          reader never sees half a slide; a new file
 *                          gets 0666 less the umask, a replaced one keeps
 *                          its mode (and owner, where that may be set)
 *   a symbolic link        the same, for what the link points to; the
 *                          link itself stays
 *   anything else          refused (a directory, a socket, a disk)
 *
 * A lecture goes on when the notes cannot: the first write that fails
 * (the FIFO's reader went away, the disk is full) stops the notes, and
 * that one call says why; every later call does nothing.  The caller
 * must ignore SIGPIPE for a FIFO's reader going away to be a failed
 * write and not the end of the process.
 */
#ifndef FLASHSTEP_LESSON_NOTES_H
#define FLASHSTEP_LESSON_NOTES_H

#include <stddef.h>

struct lesson_notes;

/* One slide's page of notes. */
struct lesson_notes_page {
	const char *title;	/* the lesson's */
	int slide, slides;	/* this slide, from 1, of slides */
	const char *next;	/* the next slide's first words; NULL: this
				 * is the last slide */
	const char *const *notes;	/* n of them, possibly none */
	int n;
	double lesson_s;	/* seconds since the lesson began */
	double slide_s;		/* seconds on this slide so far */
	double prev_s;		/* seconds the slide before took; < 0: none */
};

/* Opens PATH for notes.  Returns NULL with err set ("PATH: a directory
 * ..."); nothing at PATH is changed before the first slide's notes. */
struct lesson_notes *lesson_notes_open(const char *path, char *err,
    size_t errlen);

/* Shows one slide's page.  Returns 0; or 1 when this write failed and
 * the notes stop here, with err saying why ("PATH: notes reader gone");
 * or -1 with err set when out of memory.  After a 1, returns 0 and
 * writes nothing. */
int lesson_notes_show(struct lesson_notes *nt,
    const struct lesson_notes_page *pg, char *err, size_t errlen);

/* On a terminal, rewrites the page's clock line with the times now (the
 * rest of the page stays); elsewhere does nothing.  Returns as
 * lesson_notes_show. */
int lesson_notes_tick(struct lesson_notes *nt, double lesson_s,
    double slide_s, char *err, size_t errlen);

/* Do the notes go to a terminal (not a FIFO or a file)? */
int lesson_notes_terminal(const struct lesson_notes *nt);

/* Have the notes stopped (a write failed)? */
int lesson_notes_stopped(const struct lesson_notes *nt);

void lesson_notes_close(struct lesson_notes *nt);

#endif
