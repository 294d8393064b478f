/* gpuprobe.c - is there a GPU for the GPU suites?  (gpuprobe.h) */
#include "config.h"

#include "gpuprobe.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

void
gpuprobe_require_device(void)
{
	char err[512];
	pid_t pid;
	int status;

	if (!gpu_built()) {
		printf("SKIP: built without CUDA support\n");
		exit(77);
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		if (gpu_available(NULL, 0, err, sizeof err) == 0)
			_exit(0);
		printf("SKIP: %s\n", err);
		fflush(stdout);
		_exit(1);
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		exit(1);
	}
	/* Only the child's own "no device" answer skips; a crash fails. */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
		exit(77);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("the GPU probe died (status %d)\n", status);
		exit(1);
	}
}
