/*
 * lesson_path.h - where lessons are found, by name.
 *
 * The folders, in order:
 *   1. $FLASHSTEP_LESSONS (one folder, or several separated by ':')
 *   2. the binary's own: run from its build tree, the source tree's
 *      lessons/; installed, the lessons folder of the prefix it is
 *      installed in, found from where the binary is (so an install
 *      moved elsewhere, or staged with DESTDIR, finds its own and no
 *      other); where the binary cannot tell, $(pkgdatadir)/lessons
 * A NAME is a file when it holds a '/' or names an existing file ending
 * in ".lesson"; otherwise NAME.lesson in the first folder that has it,
 * or the one lesson whose name starts with NAME ("01" for "01-scalar").
 */
#ifndef FLASHSTEP_LESSON_PATH_H
#define FLASHSTEP_LESSON_PATH_H

#include <stddef.h>

struct lesson_entry {
	char *name;		/* file name without ".lesson" */
	char *path;
	char *title;		/* its title line, or "" */
};

/* The folders to search, in order (at most max; the strings live until
 * the next call), the built-in one always last.  Returns their number,
 * or -1 when $FLASHSTEP_LESSONS would leave it no place (max - 1
 * folders or more, or 4096 bytes or more). */
int lesson_path_folders(const char **folders, int max);

/*
 * The file of lesson name.  The folder of the file near (may be NULL) is
 * searched before the others: a lesson's `builds-on` finds its siblings.
 * Returns a malloc'd path, or NULL with err set ("no lesson named ..."
 * with the folders searched, or the candidates of an ambiguous prefix).
 */
char *lesson_path_find(const char *name, const char *near, char *err,
    size_t errlen);

/*
 * Every lesson in the folders, sorted by name; a name found in an earlier
 * folder hides the same name in a later one.  Returns 0 and sets *out
 * and *n (free with lesson_path_list_free), or -1 with err set.
 */
int lesson_path_list(struct lesson_entry **out, int *n, char *err,
    size_t errlen);
void lesson_path_list_free(struct lesson_entry *list, int n);

/* The text of the `title` line of the lesson in path (malloc'd), or NULL
 * when the file cannot be read or has none. */
char *lesson_path_title(const char *path);

#endif
