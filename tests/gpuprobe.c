/* gpuprobe.c - can the GPU suites run their kernels?  (gpuprobe.h) */
#include "config.h"

#include "gpuprobe.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* gpu_available() in a child of its own: the status, and why in err.
 * A child that dies says so and counts as a GPU that is there but
 * broken (GPU_BAD_DRIVER), never as a missing one. */
static enum gpu_status
gpuprobe_status(char *err, size_t errlen)
{
	enum gpu_status s;
	ssize_t got;
	size_t at = 0;
	pid_t pid;
	int fd[2], status;

	if (!gpu_built())
		return gpu_available(NULL, 0, err, errlen);
	fflush(NULL);
	if (pipe(fd) != 0) {
		snprintf(err, errlen, "the GPU probe: pipe failed");
		return GPU_BAD_DRIVER;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "the GPU probe: fork failed");
		return GPU_BAD_DRIVER;
	}
	if (pid == 0) {
		close(fd[0]);
		s = gpu_available(NULL, 0, err, errlen);
		if (s != GPU_READY && write(fd[1], err, strlen(err)) < 0)
			_exit(100);
		_exit((int)s);
	}
	close(fd[1]);
	while (at + 1 < errlen &&
	    (got = read(fd[0], err + at, errlen - 1 - at)) > 0)
		at += (size_t)got;
	err[at] = '\0';
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) > GPU_NO_DEVICE) {
		snprintf(err, errlen, "the GPU probe died (wait status %d)",
		    status);
		return GPU_BAD_DRIVER;
	}
	return (enum gpu_status)WEXITSTATUS(status);
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
