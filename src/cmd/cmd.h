/*
 * cmd.h - the commands.  Each takes main()'s argc and argv with argv[0]
 * the command's name, and returns the exit status:
 *   0  done        1  a check failed (compare, lesson --check)
 *   2  bad usage or bad input
 *   3  built without CUDA support           (the GPU commands)
 *   4  no usable CUDA driver: none installed, or too old
 *   5  no CUDA device
 */
#ifndef FLASHSTEP_CMD_H
#define FLASHSTEP_CMD_H

#define CMD_OK		0
#define CMD_FAILED	1
#define CMD_USAGE	2
#define CMD_NO_CUDA	3
#define CMD_NO_DRIVER	4
#define CMD_NO_DEVICE	5

#include "app/options.h"

int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_lesson(int argc, char **argv);
int cmd_gpu(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_pipeline(int argc, char **argv);

/* `bench --roofline`: the kernels on the roofline (cmd_roofline.c). */
int cmd_roofline(int argc, char **argv);

/* `bench --gpu`: the GPU half of the benchmark (cmd_bench_gpu.c). */
int cmd_bench_gpu(int argc, char **argv);

/* `bench --steps`: the time per step as the problem grows
 * (cmd_bench_steps.c). */
int cmd_bench_steps(int argc, char **argv);
/* bench --fp8: FP8's error in the simulator (cmd_bench_fp8.c). */
int cmd_bench_fp8(int argc, char **argv);

/*
 * Parses a command's options into o (usage and --help printed from the
 * same tables; errors as "flashstep NAME: ..."): -1 to go on, or the
 * exit status to return now.  o is the caller's to free either way.
 */
int cmd_parse(const char *name, const char *usage, int argc, char **argv,
    unsigned groups, const struct options_entry *entries, void *ctx,
    struct options *o);

#endif
