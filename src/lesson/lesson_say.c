/*
 * lesson_say.c - narration: `say` for everyone, `note` for the presenter
 * alone.  Both may quote the simulator with {...} (lesson_value.h): the
 * number shown is the one computed at that point, checked like expect.
 */
#include "config.h"

#include "lesson_directive.h"
#include "lesson_parser.h"
#include "lesson_run.h"
#include "lesson_value.h"

#include <stdlib.h>

static int
text_parse(struct lesson_parser *ps, struct lesson_cmd *c, char *err,
    size_t errlen)
{
	if (lesson_parser_need_text(c, "some text", err, errlen) != 0)
		return -1;
	return lesson_value_parse_fills(ps, c, err, errlen);
}

static int
show(struct lesson_run *run, const struct lesson_cmd *c,
    enum lesson_text_kind kind)
{
	char *text;
	int rc;

	if (c->nfills > 0 && lesson_run_ready(run, c) != 0)
		return LESSON_ERROR;
	rc = lesson_value_fill(run, c, &text);
	if (rc == LESSON_NEXT && run->sink != NULL && run->sink->text != NULL)
		run->sink->text(run->ctx, run, kind, text);
	free(text);
	return rc;
}

static int
say_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	return show(run, c, LESSON_SAY);
}

static int
note_exec(struct lesson_run *run, const struct lesson_cmd *c)
{
	return show(run, c, LESSON_NOTE);
}

const struct lesson_directive lesson_say_directives[] = {
	{ .name = "say", .usage = "say TEXT", .flags = LESSON_TEXT,
	  .parse = text_parse, .exec = say_exec },
	{ .name = "note", .usage = "note TEXT", .flags = LESSON_TEXT |
	  LESSON_SILENT, .parse = text_parse, .exec = note_exec },
	{ .name = NULL },
};
