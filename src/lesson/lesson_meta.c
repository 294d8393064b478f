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
#define META_DEPTH 64

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
 * Does the lesson in path lead back to home through its builds-on lines?
 * chain holds the names followed so far (depth of them) for the message.
 * Lessons that cannot be read or found end the search there: their own
 * run reports that.
 */
static int
leads_home(const char *path, const char *home, const char **chain, int depth,
    char *why, size_t whylen)
{
	char line[512], *name, *e, *next, err[256];
	size_t used;
	FILE *f;
	int found = 0, i;

	if (depth >= META_DEPTH)
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
			found = leads_home(next, home, chain, depth + 1, why, whylen);
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
	cycle = leads_home(path, home, chain, 1, why, sizeof why);
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
