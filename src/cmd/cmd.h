/*
 * cmd.h - the commands.  Each takes main()'s argc and argv with argv[0]
 * the command's name, and returns the exit status:
 *   0  done        1  a check failed (compare, lesson --check)
 *   2  bad usage, bad input, or a missing capability (no GPU)
 */
#ifndef FLASHSTEP_CMD_H
#define FLASHSTEP_CMD_H

#define CMD_OK		0
#define CMD_FAILED	1
#define CMD_USAGE	2

int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_lesson(int argc, char **argv);
int cmd_gpu(int argc, char **argv);
int cmd_compare(int argc, char **argv);

/* `bench --gpu`: the GPU half of the benchmark (cmd_gpu.c). */
int cmd_bench_gpu(int argc, char **argv);

#endif
