/* gpuprobe.c - can the GPU suites run their kernels?  (gpuprobe.h) */
#include "config.h"

#include "gpuprobe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * fn(arg) in a child of its own: its answer (0 .. 99), with the child's
 * err copied into err; -1 with a reason in err when the child could not
 * be run or died.
 */
static int
gpuprobe_child(int (*fn)(const void *arg, char *err, size_t errlen),
    const void *arg, char *err, size_t errlen)
{
	ssize_t got;
	size_t at = 0;
	pid_t pid;
	int fd[2], status, answer;

	fflush(NULL);
	if (pipe(fd) != 0) {
		snprintf(err, errlen, "the GPU probe: pipe failed");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "the GPU probe: fork failed");
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		err[0] = '\0';
		answer = fn(arg, err, errlen);
		if (write(fd[1], err, strlen(err)) < 0)
			_exit(100);
		_exit(answer);
	}
	close(fd[1]);
	while (at + 1 < errlen &&
	    (got = read(fd[0], err + at, errlen - 1 - at)) > 0)
		at += (size_t)got;
	err[at] = '\0';
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) > 99) {
		snprintf(err, errlen, "the GPU probe died (wait status %d)",
		    status);
		return -1;
	}
	return WEXITSTATUS(status);
}

static int
gpuprobe_available(const void *arg, char *err, size_t errlen)
{
	(void)arg;
	return (int)gpu_available(NULL, 0, err, errlen);
}

/* gpu_available() in a child.  A child that dies says so and counts as a
 * GPU that is there but broken (GPU_BAD_DRIVER), never as a missing one. */
static enum gpu_status
gpuprobe_status(char *err, size_t errlen)
{
	int s;

	if (!gpu_built())
		return gpu_available(NULL, 0, err, errlen);
	s = gpuprobe_child(gpuprobe_available, NULL, err, errlen);
	return s < 0 || s > GPU_NO_DEVICE ? GPU_BAD_DRIVER : (enum gpu_status)s;
}

void
gpuprobe_require_device(void)
{
	char err[512];
	enum gpu_status s = gpuprobe_status(err, sizeof err);

	if (s == GPU_READY)
		return;
	if (gpu_may_skip(s)) {
		printf("SKIP: no kernel can run here: %s\n", err);
		exit(77);
	}
	printf("FAIL: no kernel can run: %s%s\n", err, gpu_required() ?
	    " (FLASHSTEP_REQUIRE_GPU is set: the GPU tests must run their "
	    "kernels)" : " (a CUDA driver is there but cannot be used: only missing "
	    "hardware is a reason to skip)");
	exit(1);
}

/* 0 when the build has k's code and the device is the one it is for,
 * 1 when not (err says why), 2 when the device could not be asked. */
static int
gpuprobe_kernel(const void *arg, char *err, size_t errlen)
{
	const struct gpu_kernel *k = arg;
	int cc;

	if (k->launch == NULL) {
		snprintf(err, errlen, "kernel %s is not in this build (its "
		    "nvcc cannot target sm_%da)", k->name, k->cc);
		return 1;
	}
	if (gpu_compute_capability(&cc, NULL, 0, err, errlen) != 0)
		return 2;
	return gpu_kernel_on_device(k, err, errlen) == 0 ? 0 : 1;
}

void
gpuprobe_require_kernel(const struct gpu_kernel *k)
{
	char err[512];
	int s;

	gpuprobe_require_device();
	s = gpuprobe_child(gpuprobe_kernel, k, err, sizeof err);
	if (s == 0)
		return;
	if (s == 1 && !gpu_required()) {
		printf("SKIP: %s\n", err);
		exit(77);
	}
	printf("FAIL: kernel %s cannot run: %s%s\n", k->name, err,
	    gpu_required() ? " (FLASHSTEP_REQUIRE_GPU is set)" : "");
	exit(1);
}
