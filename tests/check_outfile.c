/* check_outfile.c - the output writer: all or none, and no temporary
 * left behind by an error or an interrupt. */
#include "config.h"

#include "testutil.h"
#include "app/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* A FIFO no one reads is refused when added, not waited for at the
 * write; one with a reader is kept open from the check to the write, so
 * the reader never sees an end between them, and closed once written. */
START_TEST(test_fifo_reader)
{
	struct outfile_set set;
	char err[256], buf[8];
	int r;

	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	outfile_init(&set);
	ck_assert_int_eq(outfile_add(&set, at("fifo"), err, sizeof err), -1);
	ck_assert_msg(strstr(err, "no one reads this FIFO yet") != NULL, "%s", err);
	r = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	ck_assert(r >= 0);
	/* The check before the work: added, then let go. */
	ck_assert_int_eq(outfile_add(&set, at("fifo"), err, sizeof err), 0);
	outfile_abort(&set);
	/* A writer is still there: no data yet, but no end either. */
	ck_assert_int_eq(read(r, buf, sizeof buf), -1);
	ck_assert_int_eq(errno, EAGAIN);
	/* The write after it. */
	ck_assert_int_eq(outfile_add(&set, at("fifo"), err, sizeof err), 0);
	ck_assert_int_eq(outfile_begin(&set, err, sizeof err), 0);
	ck_assert_int_eq(outfile_write(&set, 0, "hi", 2, err, sizeof err), 0);
	ck_assert_int_eq(outfile_commit(&set, err, sizeof err), 0);
	ck_assert_int_eq(read(r, buf, sizeof buf), 2);
	ck_assert(memcmp(buf, "hi", 2) == 0);
	ck_assert_int_eq(read(r, buf, sizeof buf), 0);	/* the end, now */
	close(r);
}
END_TEST

/* The standard output (and error), by any name, is refused: the report
 * goes there.  /dev/null is not. */
START_TEST(test_std_streams)
{
	struct outfile_set set;
	char err[256];
	int saved = dup(STDOUT_FILENO), fd;

	ck_assert(saved >= 0);
	put("o", "old");
	fd = open(at("o"), O_WRONLY);
	ck_assert(fd >= 0);
	ck_assert(dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
	close(fd);
	outfile_init(&set);
	ck_assert_int_eq(outfile_add(&set, at("o"), err, sizeof err), -1);
	ck_assert_msg(strstr(err, "is the standard output") != NULL, "%s", err);
	ck_assert_int_eq(outfile_add(&set, "/dev/stdout", err, sizeof err), -1);
	ck_assert_int_eq(outfile_add(&set, "/proc/self/fd/1", err, sizeof err),
	    -1);
	fd = open("/dev/null", O_WRONLY);
	ck_assert(fd >= 0);
	ck_assert(dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
	close(fd);
	ck_assert_int_eq(outfile_add(&set, "/dev/stdout", err, sizeof err), 0);
	outfile_abort(&set);
	ck_assert(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO);
	close(saved);
	ck_assert(holds("o", "old"));
}
END_TEST

/* A long path is cut in its middle in messages, so the reason after it
 * survives a 512-byte message. */
START_TEST(test_long_path)
{
	struct outfile_set set;
	char path[700], buf[OUTFILE_SHOWN], err[512];
	const char *s;
	size_t n;

	memset(path, 'a', sizeof path - 1);
	path[0] = '/';
	path[200] = path[400] = '/';
	path[sizeof path - 1] = '\0';
	memcpy(path + sizeof path - 7, "/x.npy", 6);
	s = outfile_shorten(path, buf, sizeof buf);
	n = strlen(s);
	ck_assert(n < sizeof buf);
	ck_assert(strstr(s, "...") != NULL);
	ck_assert(strncmp(s, path, 20) == 0);
	ck_assert_str_eq(s + n - 6, "/x.npy");
	ck_assert(outfile_shorten("short", buf, sizeof buf)[0] == 's');
	outfile_init(&set);
	ck_assert_int_eq(outfile_add(&set, path, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "No such file or directory") != NULL, "%s", err);
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
	tcase_add_test(tc, test_fifo_reader);
	tcase_add_test(tc, test_std_streams);
	tcase_add_test(tc, test_long_path);
	suite_add_tcase(s, tc);
	return s;
}
