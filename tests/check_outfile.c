/* check_outfile.c - the output writer: all or none, and no temporary
 * left behind by an error or an interrupt. */
#include "config.h"

#include "testutil.h"
#include "app/outfile.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static void
setup(void)
{
	strcpy(dir, "/tmp/check_outfile.XXXXXX");
	ck_assert(mkdtemp(dir) != NULL);
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert(system(cmd) == 0);
}

/* Names in dir (dot files too), how many and whether one is a temporary. */
static int
entries(int *temps)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	ck_assert(d != NULL);
	*temps = 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		*temps += strncmp(e->d_name, ".flashstep-", 11) == 0;
	}
	closedir(d);
	return n;
}

static const char *
at(const char *name)
{
	static char paths[4][128];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

static void
put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	ck_assert(f != NULL);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static int
holds(const char *name, const char *text)
{
	char buf[64] = { 0 };
	FILE *f = fopen(at(name), "r");

	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof buf, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	return strcmp(buf, text) == 0;
}

START_TEST(test_all_written_then_renamed)
{
	struct outfile_set set;
	char err[256];
	int a, b, temps;

	put("a", "old a");
	outfile_init(&set);
	ck_assert_int_eq(a = outfile_add(&set, at("a"), err, sizeof err), 0);
	ck_assert_int_eq(b = outfile_add(&set, at("b"), err, sizeof err), 1);
	ck_assert_int_eq(outfile_begin(&set, err, sizeof err), 0);
	ck_assert_int_eq(outfile_write(&set, a, "new a", 5, err, sizeof err), 0);
	ck_assert_int_eq(outfile_write(&set, b, "new b", 5, err, sizeof err), 0);
	/* Before the commit: both temporaries, the old a, no b. */
	ck_assert_int_eq(entries(&temps), 3);
	ck_assert_int_eq(temps, 2);
	ck_assert(holds("a", "old a"));
	ck_assert_int_eq(outfile_commit(&set, err, sizeof err), 0);
	ck_assert(holds("a", "new a") && holds("b", "new b"));
	ck_assert_int_eq(entries(&temps), 2);
	ck_assert_int_eq(temps, 0);
}
END_TEST

START_TEST(test_abort_changes_nothing)
{
	struct outfile_set set;
	char err[256];
	int temps;

	put("a", "old a");
	outfile_init(&set);
	ck_assert_int_eq(outfile_add(&set, at("a"), err, sizeof err), 0);
	ck_assert_int_eq(outfile_add(&set, at("b"), err, sizeof err), 1);
	ck_assert_int_eq(outfile_begin(&set, err, sizeof err), 0);
	ck_assert_int_eq(outfile_write(&set, 0, "new a", 5, err, sizeof err), 0);
	outfile_abort(&set);
	outfile_abort(&set);	/* harmless twice */
	ck_assert(holds("a", "old a"));
	ck_assert_int_eq(entries(&temps), 1);
	ck_assert_int_eq(temps, 0);
}
END_TEST

/* Ctrl-C (and the other signals) in the middle of writing: the
 * temporaries go, the targets stay, and the process dies of the signal. */
START_TEST(test_signal_removes_temporaries)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	struct outfile_set set;
	char err[256];
	int i, status, temps;
	pid_t pid;

	put("a", "old a");
	for (i = 0; i < (int)(sizeof sigs / sizeof sigs[0]); i++) {
		pid = fork();
		ck_assert(pid >= 0);
		if (pid == 0) {
			signal(sigs[i], SIG_DFL);
			outfile_init(&set);
			if (outfile_add(&set, at("a"), err, sizeof err) != 0 ||
			    outfile_add(&set, at("b"), err, sizeof err) != 1 ||
			    outfile_begin(&set, err, sizeof err) != 0 ||
			    outfile_write(&set, 0, "new a", 5, err, sizeof err) != 0)
				_exit(3);
			raise(sigs[i]);
			_exit(4);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i],
		    "signal %d: status %#x", sigs[i], status);
		ck_assert(holds("a", "old a"));
		ck_assert_int_eq(entries(&temps), 1);
		ck_assert_int_eq(temps, 0);
	}
}
END_TEST

/* A signal the user ignores (nohup) stays ignored. */
START_TEST(test_ignored_signal_stays_ignored)
{
	struct outfile_set set;
	struct sigaction sa;
	char err[256];

	signal(SIGHUP, SIG_IGN);
	outfile_init(&set);
	ck_assert_int_eq(outfile_add(&set, at("a"), err, sizeof err), 0);
	ck_assert_int_eq(outfile_begin(&set, err, sizeof err), 0);
	ck_assert_int_eq(sigaction(SIGHUP, NULL, &sa), 0);
	ck_assert(sa.sa_handler == SIG_IGN);
	ck_assert_int_eq(outfile_commit(&set, err, sizeof err), 0);
	signal(SIGHUP, SIG_DFL);
}
END_TEST

/* A target that turns into something else before the commit is not
 * replaced; nothing is. */
START_TEST(test_target_changed_before_commit)
{
	struct outfile_set set;
	char err[256];
	int temps;

	put("a", "old a");
	outfile_init(&set);
	ck_assert_int_eq(outfile_add(&set, at("a"), err, sizeof err), 0);
	ck_assert_int_eq(outfile_add(&set, at("b"), err, sizeof err), 1);
	ck_assert_int_eq(outfile_begin(&set, err, sizeof err), 0);
	ck_assert_int_eq(mkfifo(at("b"), 0644), 0);
	ck_assert_int_eq(outfile_commit(&set, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "no longer a regular file") != NULL, "%s", err);
	ck_assert(holds("a", "old a"));
	ck_assert_int_eq(entries(&temps), 2);
	ck_assert_int_eq(temps, 0);
}
END_TEST

START_TEST(test_refusals)
{
	struct outfile_set set;
	char err[256];
	int i;

	outfile_init(&set);
	ck_assert_int_eq(outfile_add(&set, "", err, sizeof err), -1);
	ck_assert_int_eq(outfile_add(&set, dir, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "is a directory") != NULL, "%s", err);
	ck_assert_int_eq(outfile_add(&set, "/nonexistent/x", err, sizeof err), -1);
	ck_assert_msg(strstr(err, "No such file") != NULL, "%s", err);
	/* A loop of links. */
	ck_assert_int_eq(symlink("l2", at("l1")), 0);
	ck_assert_int_eq(symlink("l1", at("l2")), 0);
	ck_assert_int_eq(outfile_add(&set, at("l1"), err, sizeof err), -1);
	ck_assert_msg(strstr(err, "symbolic links") != NULL, "%s", err);
	for (i = 0; i < OUTFILE_MAX; i++) {
		char name[8];
		snprintf(name, sizeof name, "f%d", i);
		ck_assert_int_eq(outfile_add(&set, at(name), err, sizeof err), i);
	}
	ck_assert_int_eq(outfile_add(&set, at("one-more"), err, sizeof err), -1);
	outfile_abort(&set);
	ck_assert_int_eq(set.n, 0);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("outfile");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_all_written_then_renamed);
	tcase_add_test(tc, test_abort_changes_nothing);
	tcase_add_test(tc, test_signal_removes_temporaries);
	tcase_add_test(tc, test_ignored_signal_stays_ignored);
	tcase_add_test(tc, test_target_changed_before_commit);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return s;
}
