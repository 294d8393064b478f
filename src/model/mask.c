/* mask.c - the host's copy of mask_rule.h's tables (see mask.h). */
#include "config.h"

#include "mask.h"
#include "util.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static const struct mask_entry_row entries[MASK_ENTRIES] = {
#define MASK_ENTRY_ROW(id, name, kind, opt, does, skips, bwd)		\
	[id] = { id, name, kind, opt, does, skips, bwd },
	MASK_TABLE(MASK_ENTRY_ROW)
#undef MASK_ENTRY_ROW
};

struct mask_bug_row {
	const char *name;
	int needs;
	const char *breaks;
};

static const struct mask_bug_row bugs[MASK_BUGS] = {
#define MASK_BUG_ROW(id, name, needs, breaks) [id] = { name, needs, breaks },
	MASK_BUG_TABLE(MASK_BUG_ROW)
#undef MASK_BUG_ROW
};

const struct mask_entry_row *
mask_entry_row(enum mask_entry e)
{
	assert((int)e >= 0 && (int)e < MASK_ENTRIES);
	return &entries[e];
}

const char *
mask_bug_name(enum mask_bug b)
{
	assert((int)b >= 0 && (int)b < MASK_BUGS);
	return bugs[b].name;
}

const char *
mask_bug_breaks(enum mask_bug b)
{
	assert((int)b >= 0 && (int)b < MASK_BUGS);
	return bugs[b].breaks;
}

int
mask_bug_needs(enum mask_bug b)
{
	assert((int)b >= 0 && (int)b < MASK_BUGS);
	return bugs[b].needs;
}

int
mask_bug_parse(const char *name, enum mask_bug *out)
{
	int b;

	for (b = 0; b < MASK_BUGS; b++)
		if (strcmp(name, bugs[b].name) == 0) {
			*out = (enum mask_bug)b;
			return 0;
		}
	return -1;
}

int
mask_bug_check(enum mask_bug b, struct mask_rule m, char *err, size_t errlen)
{
	switch (bugs[b].needs) {
	case MASK_SOFTCAP:
		if (!mask_rule_has(m, MASK_SOFTCAP))
			return util_error(err, errlen, "--mask-bug %s needs --softcap "
			    "(there is no cap to take the max before)", bugs[b].name);
		break;
	case MASK_WINDOW:
		if (!m.window || m.left < 0)
			return util_error(err, errlen, "--mask-bug %s needs a window "
			    "with a left edge (--window L,R with L >= 0)",
			    bugs[b].name);
		break;
	}
	return 0;
}

/* Appends piece to buf (len bytes, at used), cut to fit. */
static void
put(char *buf, size_t len, size_t *at, const char *piece)
{
	size_t n = strlen(piece);

	if (*at + n >= len)
		n = len - 1 - *at;
	memcpy(buf + *at, piece, n);
	*at += n;
	buf[*at] = '\0';
}

const char *
mask_describe(struct mask_rule m, int alibi_on, char *buf, size_t len)
{
	char piece[96];
	size_t at = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (mask_rule_has(m, MASK_CAUSAL))
		put(buf, len, &at, "causal");
	else if (mask_rule_has(m, MASK_WINDOW)) {
		snprintf(piece, sizeof piece, "window (%d, %d)", m.left, m.right);
		put(buf, len, &at, piece);
	}
	if (mask_rule_has(m, MASK_SOFTCAP)) {
		snprintf(piece, sizeof piece, "%ssoftcap %g", at > 0 ? ", " : "",
		    (double)m.softcap);
		put(buf, len, &at, piece);
	}
	if (alibi_on)
		put(buf, len, &at, at > 0 ? ", alibi" : "alibi");
	if (mask_rule_has(m, MASK_DROPOUT)) {
		snprintf(piece, sizeof piece, "%sdropout %g (seed %llu, offset %u)",
		    at > 0 ? ", " : "", (double)m.dropout,
		    (unsigned long long)m.seed_lo |
		    (unsigned long long)m.seed_hi << 32, (unsigned)m.drop_offset);
		put(buf, len, &at, piece);
	}
	if (at == 0)
		put(buf, len, &at, "none");
	return buf;
}
