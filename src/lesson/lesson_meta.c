/*
 * lesson_meta.c - the directives about the lesson itself: its title and
 * the lessons it builds on, which must exist and must not lead back to
 * it (a course is read in order: a lesson that builds on itself, or on a
 * lesson that builds on it, has no place in that order).
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_parser.h"
#include "lesson_path.h"
#include "lesson_run.h"
#include "model/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* How deep a chain of builds-on is followed: a course, not a graph. */
#define META_DEPTH 256

static int
title_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = ps->l;
	int i;

	if (lesson_parser_need_text(c, "the lesson's title", err, errlen) != 0)
		return -1;
	if (l->title != NULL) {
		for (i = 0; strcmp(l->cmds[i].dir->name, "title") != 0; i++)
			;
		return util_error(err, errlen, "a second title (the first is at "
		    "line %d)", l->cmds[i].line);
	}
	l->title = lesson_parser_strdup(c->text, err, errlen);
	return l->title == NULL ? -1 : 0;
}

static int
builds_on_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	struct lesson *l = ps->l;
	char **grown;

	if (c->argc != 1)
		return util_error(err, errlen, "builds-on takes one lesson name "
		    "(builds-on 01-scalar)");
	grown = realloc(l->builds_on, ((size_t)l->nbuilds_on + 1) * sizeof *grown);
	if (grown == NULL)
		return util_error(err, errlen, "out of memory");
	l->builds_on = grown;
	l->builds_on[l->nbuilds_on] = lesson_parser_strdup(c->argv[0], err,
	    errlen);
	if (l->builds_on[l->nbuilds_on] == NULL)
		return -1;
	l->nbuilds_on++;
	return 0;
}

static int
same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	    sa.st_ino == sb.st_ino;
}

/*
 * The lessons the search has read, by device and inode: one that did not
 * lead home once cannot lead home by another way, so each lesson is read
 * once.  Without this, a course where each lesson builds on every one
 * before it has a path for every subset of them (2^n).
 */
struct meta_seen {
	struct meta_node { dev_t dev; ino_t ino; int used; } *node;
	size_t n, cap;		/* cap: a power of two, or 0 */
};

static size_t
meta_slot(const struct meta_seen *seen, dev_t dev, ino_t ino)
{
	size_t mask = seen->cap - 1;
	size_t k = (size_t)(((unsigned long long)ino * 0x9e3779b97f4a7c15ull) ^
	    (unsigned long long)dev) & mask;

	while (seen->node[k].used && (seen->node[k].dev != dev ||
	    seen->node[k].ino != ino))
		k = (k + 1) & mask;
	return k;
}

/* Is the lesson at path already seen?  If not, marks it: 1 seen, 0 new,
 * -1 it cannot be read or no memory (then it is left alone). */
static int
meta_seen_mark(struct meta_seen *seen, const char *path)
{
	struct meta_seen grown;
	struct stat st;
	size_t i, k;

	if (stat(path, &st) != 0)
		return -1;
	if (2 * (seen->n + 1) > seen->cap) {
		grown.cap = seen->cap ? 2 * seen->cap : 64;
		grown.n = seen->n;
		grown.node = calloc(grown.cap, sizeof *grown.node);
		if (grown.node == NULL)
			return -1;
		for (i = 0; i < seen->cap; i++)
			if (seen->node[i].used)
				grown.node[meta_slot(&grown, seen->node[i].dev,
				    seen->node[i].ino)] = seen->node[i];
		free(seen->node);
		*seen = grown;
	}
	k = meta_slot(seen, st.st_dev, st.st_ino);
	if (seen->node[k].used)
		return 1;
	seen->node[k].dev = st.st_dev;
	seen->node[k].ino = st.st_ino;
	seen->node[k].used = 1;
	seen->n++;
	return 0;
}

/*
 * Does the lesson in path lead back to home through its builds-on lines?
 * chain holds the names followed so far (depth of them) for the message.
 * Lessons that cannot be read or found end the search there: their own
 * run reports that.  A depth-first search that reads each lesson once
 * (seen): linear in the lessons and their builds-on lines.
 */
static int
leads_home(const char *path, const char *home, const char **chain, int depth,
    struct meta_seen *seen, char *why, size_t whylen)
{
	char line[512], *name, *e, *next, err[256];
	size_t used;
	FILE *f;
	int found = 0, i, mark;

	if (depth >= META_DEPTH)
		return 0;
	mark = meta_seen_mark(seen, path);
	if (mark != 0)
		return 0;
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "builds-on", 9) != 0 ||
		    (line[9] != ' ' && line[9] != '\t'))
			continue;
		for (name = line + 9; *name == ' ' || *name == '\t'; name++)
			;
		for (e = name; *e != '\0' && *e != ' ' && *e != '\t' && *e != '\n' &&
		    *e != '\r' && *e != '#'; e++)
			;
		*e = '\0';
		next = lesson_path_find(name, path, err, sizeof err);
		if (next == NULL)
			continue;
		chain[depth] = name;
		if (same_file(next, home)) {
			used = (size_t)snprintf(why, whylen, "%s", chain[0]);
			for (i = 1; i <= depth && used < whylen; i++)
				used += (size_t)snprintf(why + used, whylen - used, " builds "
				    "on %s", chain[i]);
			if (used < whylen)
				snprintf(why + used, whylen - used, ", which is this lesson");
			found = 1;
		} else
			found = leads_home(next, home, chain, depth + 1, seen, why,
			    whylen);
		free(next);
	}
	fclose(f);
	return found;
}

/* The lesson named must exist, and must not lead back to this one. */
static int
builds_on_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	const char *chain[META_DEPTH + 1];
	const char *home = run->lesson->path;
	struct meta_seen seen = { 0 };
	char msg[400], why[400], *path;
	int cycle;

	path = lesson_path_find(c->argv[0], home, msg, sizeof msg);
	if (path == NULL)
		return lesson_run_error(run, c, "builds-on: %s", msg);
	if (same_file(path, home)) {
		free(path);
		return lesson_run_error(run, c, "builds-on %s names this lesson "
		    "itself: a lesson builds on the lessons before it", c->argv[0]);
	}
	chain[0] = c->argv[0];
	/* home is not marked: reaching it is the cycle, not a lesson seen. */
	cycle = leads_home(path, home, chain, 1, &seen, why, sizeof why);
	free(seen.node);
	free(path);
	if (cycle)
		return lesson_run_error(run, c, "builds-on: a cycle: %s, so no "
		    "lesson of it comes first", why);
	return LESSON_NEXT;
}

const struct lesson_directive lesson_meta_directives[] = {
	{ .name = "title", .usage = "title TEXT", .flags = LESSON_TEXT |
	  LESSON_SILENT, .parse = title_parse },
	{ .name = "builds-on", .usage = "builds-on LESSON",
	  .flags = LESSON_SILENT, .parse = builds_on_parse,
	  .exec = builds_on_exec },
	{ .name = NULL },
};
