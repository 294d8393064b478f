/* lesson_path.c - finding and listing lessons (see lesson_path.h). */
#include "config.h"

#include "lesson_path.h"
#include "model/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LESSONS_DIR
#define LESSONS_DIR "/usr/local/share/flashstep/lessons"
#endif
#ifndef FLASHSTEP_BINDIR
#define FLASHSTEP_BINDIR "/usr/local/bin"
#endif

#define SUFFIX ".lesson"
#define MAX_FOLDERS 16

static char folder_env[4096];
static char folder_self[4096 + 1024 + 2];	/* exe folder + relative */

/* The components of an absolute path, up to max; returns their number. */
static int
split(const char *path, const char **start, size_t *len, int max)
{
	int n = 0;

	while (*path != '\0' && n < max) {
		while (*path == '/')
			path++;
		if (*path == '\0')
			break;
		start[n] = path;
		while (*path != '\0' && *path != '/')
			path++;
		len[n] = (size_t)(path - start[n]);
		n++;
	}
	return n;
}

/* The path that leads from folder `from` to `to` (both absolute), as
 * "../share/flashstep/lessons" from "/usr/local/bin". */
static void
relative(const char *from, const char *to, char *out, size_t outlen)
{
	const char *fs[64], *ts[64];
	size_t fl[64], tl[64], used = 0;
	int nf = split(from, fs, fl, 64), nt = split(to, ts, tl, 64), k = 0, i;

	while (k < nf && k < nt && fl[k] == tl[k] && memcmp(fs[k], ts[k], fl[k]) == 0)
		k++;
	out[0] = '\0';
	for (i = k; i < nf && used < outlen; i++)
		used += (size_t)snprintf(out + used, outlen - used, "../");
	for (i = k; i < nt && used < outlen; i++)
		used += (size_t)snprintf(out + used, outlen - used, "%s%.*s",
		    i > k ? "/" : "", (int)tl[i], ts[i]);
}

/*
 * The lessons that belong with this very binary: beside it as installed
 * (its folder, then the way from the configured bindir to the lessons
 * folder), so a moved or DESTDIR-staged install finds its own lessons
 * and never another's; or the source tree's, when the binary runs in
 * its build tree.  NULL when the binary cannot tell where it is.
 */
static const char *
own_folder(void)
{
	char exe[4096], rel[1024], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
#ifdef FLASHSTEP_BUILDDIR
	size_t b = strlen(FLASHSTEP_BUILDDIR);
#endif

	if (n <= 0 || exe[0] != '/')
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
#if defined(FLASHSTEP_BUILDDIR) && defined(LESSONS_SRCDIR)
	/* The build tree's programs live in its top folder or one below
	 * (src/flashstep, tests/check_lesson). */
	if (strncmp(exe, FLASHSTEP_BUILDDIR, b) == 0 &&
	    (exe[b] == '\0' || (exe[b] == '/' && strchr(exe + b + 1, '/') == NULL)))
		return LESSONS_SRCDIR;
#endif
	relative(FLASHSTEP_BINDIR, LESSONS_DIR, rel, sizeof rel);
	snprintf(folder_self, sizeof folder_self, "%s%s%s", *exe ? exe : "/",
	    *exe ? "/" : "", rel);
	return folder_self;
}

int
lesson_path_folders(const char **folders, int max)
{
	const char *env = getenv("FLASHSTEP_LESSONS"), *own;
	char *p, *next;
	int n = 0;

	/* The built-in folder always has the last place: a long
	 * FLASHSTEP_LESSONS that filled every place would hide the
	 * built-in lessons without a word, so it is refused instead. */
	if (max < 1)
		return -1;
	if (env != NULL && *env != '\0') {
		if (strlen(env) >= sizeof folder_env)
			return -1;
		snprintf(folder_env, sizeof folder_env, "%s", env);
		for (p = folder_env; p != NULL; p = next) {
			next = strchr(p, ':');
			if (next != NULL)
				*next++ = '\0';
			if (*p == '\0')
				continue;
			if (n == max - 1)
				return -1;
			folders[n++] = p;
		}
	}
	own = own_folder();
	folders[n++] = own != NULL ? own : LESSONS_DIR;
	return n;
}

/* Why lesson_path_folders refused, in err; -1. */
static int
folders_refused(char *err, size_t errlen)
{
	return util_error(err, errlen, "FLASHSTEP_LESSONS names more than %d "
	    "folders or is longer than %zu bytes (the built-in lessons are "
	    "searched after them)", MAX_FOLDERS - 1, sizeof folder_env - 1);
}

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int
has_suffix(const char *name)
{
	size_t n = strlen(name), k = strlen(SUFFIX);

	return n > k && strcmp(name + n - k, SUFFIX) == 0;
}

char *
lesson_path_title(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], *s, *e, *title = NULL;

	if (f == NULL)
		return NULL;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "title", 5) != 0 || (line[5] != ' ' && line[5] != '\t'))
			continue;
		for (s = line + 5; *s == ' ' || *s == '\t'; s++)
			;
		e = s + strlen(s);
		while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
			*--e = '\0';
		title = strdup(s);
		break;
	}
	fclose(f);
	return title;
}

void
lesson_path_list_free(struct lesson_entry *list, int n)
{
	while (n-- > 0) {
		free(list[n].name);
		free(list[n].path);
		free(list[n].title);
	}
	free(list);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct lesson_entry *)a)->name,
	    ((const struct lesson_entry *)b)->name);
}

/* Adds the lessons of one folder that no earlier folder had. */
static int
list_folder(const char *folder, struct lesson_entry **list, int *n, int *cap)
{
	struct lesson_entry *grown, *e;
	struct dirent *de;
	DIR *d = opendir(folder);
	size_t len;
	int i, dup;

	if (d == NULL)
		return 0;	/* a folder that is not there holds no lessons */
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !has_suffix(de->d_name))
			continue;
		len = strlen(de->d_name) - strlen(SUFFIX);
		for (dup = 0, i = 0; i < *n && !dup; i++)
			dup = strlen((*list)[i].name) == len &&
			    strncmp((*list)[i].name, de->d_name, len) == 0;
		if (dup)
			continue;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 16;
			grown = realloc(*list, (size_t)*cap * sizeof **list);
			if (grown == NULL)
				goto nomem;
			*list = grown;
		}
		e = &(*list)[*n];
		memset(e, 0, sizeof *e);
		e->name = strndup(de->d_name, len);
		e->path = malloc(strlen(folder) + strlen(de->d_name) + 2);
		if (e->name == NULL || e->path == NULL) {
			free(e->name);
			free(e->path);
			goto nomem;
		}
		sprintf(e->path, "%s/%s", folder, de->d_name);
		if (!is_file(e->path)) {
			free(e->name);
			free(e->path);
			continue;
		}
		e->title = lesson_path_title(e->path);
		if (e->title == NULL)
			e->title = strdup("");
		if (e->title == NULL) {
			free(e->name);
			free(e->path);
			goto nomem;
		}
		(*n)++;
	}
	closedir(d);
	return 0;
nomem:
	closedir(d);
	return -1;
}

int
lesson_path_list(struct lesson_entry **out, int *n, char *err, size_t errlen)
{
	const char *folders[MAX_FOLDERS];
	struct lesson_entry *list = NULL;
	int nf, i, cap = 0;

	*out = NULL;
	*n = 0;
	nf = lesson_path_folders(folders, MAX_FOLDERS);
	if (nf < 0)
		return folders_refused(err, errlen);
	for (i = 0; i < nf; i++) {
		if (list_folder(folders[i], &list, n, &cap) != 0) {
			lesson_path_list_free(list, *n);
			*n = 0;
			return util_error(err, errlen, "listing lessons: out of memory");
		}
	}
	if (*n > 0)
		qsort(list, (size_t)*n, sizeof *list, by_name);
	*out = list;
	return 0;
}

/* At most the last 200 bytes of path, for a message that quotes it
 * before its reason: a long path must leave room for the reason in a
 * message of 512 bytes (the end names the file). */
static const char *
shown(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path);

	if (n < 200)
		return path;
	snprintf(buf, len, "...%s", path + n - 196);
	return buf;
}

/* Why path, which is not a regular file, is no lesson: stat alone, so a
 * device is never read. */
static void
not_a_lesson(const char *given, char *err, size_t errlen)
{
	char buf[204];
	const char *path = shown(given, buf, sizeof buf);
	struct stat st;

	if (stat(given, &st) != 0 && errno == ENOENT)
		util_error(err, errlen, "%s: no such lesson file", path);
	else if (stat(given, &st) != 0)	/* a folder we may not search, ... */
		util_error(err, errlen, "%s: %s", path, strerror(errno));
	else if (S_ISDIR(st.st_mode))
		util_error(err, errlen, "%s: a directory, not a lesson file", path);
	else
		util_error(err, errlen, "%s: not a regular file (a device, FIFO or "
		    "socket), not a lesson", path);
}

/* folder/name.lesson when it is a file (malloc'd), else NULL; *denied
 * set when the folder may not be searched (the lesson may be there). */
static char *
in_folder(const char *folder, const char *name, int *denied)
{
	char *path = malloc(strlen(folder) + strlen(name) + sizeof SUFFIX + 2);
	struct stat st;

	*denied = 0;
	if (path == NULL)
		return NULL;
	sprintf(path, "%s%s%s%s", folder, *folder && folder[strlen(folder) - 1]
	    != '/' ? "/" : "", name, SUFFIX);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return path;
	*denied = errno == EACCES;
	free(path);
	return NULL;
}

char *
lesson_path_find(const char *name, const char *near, char *err, size_t errlen)
{
	const char *folders[MAX_FOLDERS + 1];
	struct lesson_entry *list;
	const char *deny = NULL;
	char *path = NULL, searched[1024], first[1024], *slash;
	size_t len = strlen(name), used = 0;
	int nf = 0, i, n, hit = -1, hits = 0, denied;

	if (*name == '\0') {
		util_error(err, errlen, "a lesson name is empty");
		return NULL;
	}
	if (strchr(name, '/') != NULL || (has_suffix(name) && is_file(name))) {
		if (!is_file(name)) {
			not_a_lesson(name, err, errlen);
			return NULL;
		}
		return strdup(name);
	}
	if (near != NULL) {
		snprintf(first, sizeof first, "%s", near);
		slash = strrchr(first, '/');
		if (slash != NULL) {
			slash[1] = '\0';
			folders[nf++] = first;
		} else
			folders[nf++] = ".";
	}
	if ((n = lesson_path_folders(folders + nf, MAX_FOLDERS)) < 0) {
		folders_refused(err, errlen);
		return NULL;
	}
	nf += n;
	searched[0] = '\0';
	for (i = 0; i < nf; i++) {
		if ((path = in_folder(folders[i], name, &denied)) != NULL)
			return path;
		if (denied && deny == NULL)
			deny = folders[i];
		if (*folders[i] != '\0' && used < sizeof searched)
			used += (size_t)snprintf(searched + used, sizeof searched - used,
			    "%s%s", used ? ", " : "", folders[i]);
	}

	/* A unique prefix: "01" for "01-scalar". */
	if (lesson_path_list(&list, &n, err, errlen) != 0)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(list[i].name, name, len) == 0) {
			hits++;
			if (hit < 0)
				hit = i;
		}
	if (hits == 1)
		path = strdup(list[hit].path);
	else if (hits > 1)
		util_error(err, errlen, "lesson name '%s' is ambiguous: %s, %s%s",
		    name, list[hit].name, list[hit + 1].name, hits > 2 ? ", ..." : "");
	else if (deny != NULL)
		util_error(err, errlen, "no lesson named '%s' found: %s: %s (looked "
		    "in %s)", name, deny, strerror(EACCES), searched);
	else
		util_error(err, errlen, "no lesson named '%s' (looked in %s; "
		    "'flashstep lesson' lists them)", name, searched);
	lesson_path_list_free(list, n);
	return path;
}
