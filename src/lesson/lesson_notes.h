/*
 * lesson_notes.h - the presenter's notes, away from the projected
 * screen: each slide's notes go to a second terminal (/dev/pts/3), a
 * FIFO someone reads, or a file the instructor watches.
 *
 * What PATH may name, and what happens to it:
 *   a terminal or a FIFO   written to, a screen per slide (a FIFO must
 *                          have its reader already)
 *   a regular file, or     replaced whole at each slide by a new file
 *   nothing yet            renamed over it (its mode kept), so a reader
 *                          never sees half a slide
 *   a symbolic link        the same, for what the link points to; the
 *                          link itself stays
 *   anything else          refused (a directory, a socket, a disk)
 */
#ifndef FLASHSTEP_LESSON_NOTES_H
#define FLASHSTEP_LESSON_NOTES_H

#include <stddef.h>

struct lesson_notes;

/* Opens PATH for notes.  Returns NULL with err set ("PATH: a directory
 * ..."); nothing at PATH is changed before the first slide's notes. */
struct lesson_notes *lesson_notes_open(const char *path, char *err,
    size_t errlen);

/* Shows the notes of one slide (n of them, possibly none) under a
 * heading.  Returns 0, or -1 with err set (the terminal went away, the
 * disk is full). */
int lesson_notes_show(struct lesson_notes *nt, const char *title, int slide,
    int slides, const char *const *notes, int n, char *err, size_t errlen);

void lesson_notes_close(struct lesson_notes *nt);

#endif
