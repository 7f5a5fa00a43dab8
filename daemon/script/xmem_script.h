/*
 * xmem_script.h — reading a batch script and a Slurm command line the way Slurm and the shell
 * would: the entrypoint a job trains with, the preamble lines before it, the options of
 * sbatch/salloc/srun. Pure C, no SPANK and no I/O beyond /proc/self/cmdline: the SPANK plugin
 * uses it to build a request, and xmemd uses the same code on the script bytes it hashed, to
 * check that a request profiles what its batch script runs (docs/slurm.md, "What a decision
 * is bound to"). One definition for both, so they cannot disagree.
 *
 * Its files depend one way, in the order of the sections below: script_words.c on nothing,
 * slurm_cmdline.c and script_preamble.c on the words, script_entrypoint.c on the words, the
 * command line and the preamble, job_shape.c on the command line and the entrypoint's line.
 *
 * Every function returns 0 or -1 and, where it takes err, leaves a one-line message starting
 * with "xmem: " there on -1.
 */
#ifndef XMEM_SCRIPT_H
#define XMEM_SCRIPT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- words and lines (script_words.c) ---------------------------------------------------- */

/* Splits a shell-like command line into words (quotes, backslashes); stops at an unquoted
 * ; & | < > or #. Returns a malloc'd NULL-terminated argv, or NULL on error/empty. */
char **xmem_words_split(const char *line, int *n);
void xmem_argv_free(char **argv);
/* Appends a copy of w[0..len) to a malloc'd NULL-terminated argv of *n words; 0 or -1. */
int xmem_argv_push(char ***argv, int *n, const char *w, size_t len);
/* xmem_argv_push for a command's words: -1 past XMEM_MAX_ARGV of them. */
int xmem_command_word_push(char ***argv, int *n, const char *w, size_t len);
/* 1 when a word is a shell assignment, NAME=value. */
int xmem_word_is_assignment(const char *w);
/* Calls fn for each logical line (backslash-newline joined) with its first line number;
 * stops when fn returns non-zero and returns that (-1: out of memory). */
int xmem_script_each_line(const char *text, int (*fn)(const char *line, int lineno, void *arg),
                          void *arg);

/* ---- the submitting command line (slurm_cmdline.c) ----------------------------------------------
 */

enum xmem_command { XMEM_CMD_SBATCH, XMEM_CMD_SALLOC, XMEM_CMD_SRUN, XMEM_CMD_OTHER };

/* What xmem needs from a sbatch/salloc/srun command line. Pointers point into argv. */
struct xmem_cmdline {
    int command;           /* enum xmem_command */
    const char *xmem;      /* last --xmem value: "" for bare --xmem, NULL if absent */
    int xmem_given;        /* 1 if --xmem appears */
    const char *wrap;      /* sbatch --wrap */
    const char *chdir;     /* -D/--chdir */
    const char *partition; /* -p/--partition */
    const char *gres;      /* --gres (last) */
    const char *gpus;      /* -G/--gpus */
    const char *gpus_per_node;
    const char *gpus_per_task;
    const char *ntasks;            /* -n/--ntasks */
    const char *ntasks_per_node;   /* --ntasks-per-node */
    const char *nodes;             /* -N/--nodes */
    const char *export_env;        /* --export on the command line */
    const char *script_export_env; /* --export in an #SBATCH line */
    int first_operand;             /* index in argv of the script/command, or -1 */
};

int xmem_command_kind(const char *argv0);
/* Scans argv (argv[0] = the program) like the program's own option parser would. */
int xmem_cmdline_scan(int argc, char *const *argv, struct xmem_cmdline *c, char *err,
                      size_t errlen);
/* Applies the option lines of a batch script ("#SBATCH --gres=gpu:1") to c, for options the
 * command line did not set (the command line wins, as in sbatch). */
void xmem_cmdline_apply_script(struct xmem_cmdline *c, char **script_argv, int n);
/* Reads /proc/self/cmdline into a malloc'd NULL-terminated argv (free with xmem_argv_free). */
int xmem_cmdline_read_self(char ***argv, int *argc, char *err, size_t errlen);

/* ---- the job's GPUs, nodes and ranks (job_shape.c) ---------------------------------------- */

#define XMEM_SHAPE_MAX 100000 /* more GPUs, nodes or tasks than any site has: malformed */

/* A GPU request's shape: GPUs on each node, nodes, the GPU type ("" untyped), and whether
 * it already asks for a share (shard, mps). */
struct xmem_job_shape {
    long gpus_per_node;
    long nodes;
    int shared;
    char type[64];
};

/* The shape of a command line (#SBATCH lines applied): --gres=gpu:N, --gpus-per-node,
 * --gpus-per-task times the tasks per node (--ntasks-per-node, else -n over the nodes, else
 * one), --gpus over the nodes; -N's minimum. 0, or -1 when a count is malformed. */
int xmem_job_shape_of(const struct xmem_cmdline *c, struct xmem_job_shape *s);
/* The canonical text a decision is bound to: "gpu:1", "gpu:a100:1", "gpu:2", and
 * "gpu:1:nodes:2" past one node. 0, or -1 when buf is too small. */
int xmem_job_shape_text(const struct xmem_job_shape *s, char *buf, size_t len);
/* Reads the canonical text back (xmemd, from a request's gres). 0, or -1 when it is not. */
int xmem_job_shape_parse(const char *text, struct xmem_job_shape *s);
/* The tasks the srun in front of a batch script's entrypoint asks for (-n N, or
 * --ntasks-per-node N times -N), found on the line that runs entry; 0 when there is no srun
 * or it names no count. */
long xmem_script_srun_tasks(const char *text, char *const *entry);
/* The job's ranks: srun_tasks (xmem_script_srun_tasks) when it names them, times torchrun's
 * --nproc-per-node when srun starts torchrun; else one per GPU: torchrun's --nproc-per-node
 * N in the entrypoint when it names a number, else the GPUs per node, times the nodes; at
 * least 1. */
long xmem_world_size(const struct xmem_job_shape *s, char *const *entry, long srun_tasks);

/* ---- entrypoints (script_entrypoint.c)
 * ----------------------------------------------------------- */

enum xmem_entry_source {
    XMEM_ENTRY_NONE = 0,
    XMEM_ENTRY_DIRECTIVE = 1, /* an #XMEM line */
    XMEM_ENTRY_SCANNED = 2,   /* the first python/torchrun line */
    XMEM_ENTRY_COMMAND = 3,   /* srun/salloc command line */
};

/* Finds the training entrypoint in a script's text: an '#XMEM cmd' line, else the first
 * line that runs python/torchrun (also behind srun, exec, env or VAR=value). On success
 * *argv is malloc'd and *line is the 1-based line number. */
int xmem_entrypoint_find(const char *text, char ***argv, int *line, int *source);
/* The entrypoint of a command: strips srun (and its options), exec, env, VAR=value. */
char **xmem_entrypoint_from_argv(char *const *argv, int n);
/* The line of the first command (not comment) that runs argv, behind srun, exec, env or
 * assignments, word for word; with argv NULL, the first that runs python or torchrun. 0 if
 * none. Where the job starts training when an #XMEM line names the entrypoint. */
int xmem_entrypoint_training_line(const char *text, char *const *argv);
/* Collects the words of every "#SBATCH ..." line in a script (malloc'd argv). */
char **xmem_script_sbatch_options(const char *text, int *n);

/* ---- the batch script's preamble (script_preamble.c)
 * ----------------------------------------------- */

/* A line of a batch script: 1-based number and text (backslash-newlines joined). */
struct xmem_line {
    int line;
    char *text;
};

/* The lines before the entrypoint, split in the ones that set the job's environment (run
 * by xmemd before the profile) and the ones that do work (not run; named to the user).
 * Blank and comment lines are in neither. */
struct xmem_preamble {
    struct xmem_line *kept;
    int nkept;
    struct xmem_line *skipped;
    int nskipped;
};

/* 1 when a line only sets up the environment: module, source/., conda/mamba activate,
 * export/unset, cd, set, assignments, ... (docs/slurm.md lists them). */
int xmem_preamble_line_sets_env(const char *line);
/* Classifies the lines of text before end_line (1-based; the entrypoint's line). Lines
 * inside a multi-line if/for/while/case/{ } block are skipped with it. Assignments that
 * start the end_line itself ("OMP_NUM_THREADS=4 python train.py") are kept as an export at
 * that line. 0, or -1 when out of memory. */
int xmem_preamble_classify(const char *text, int end_line, struct xmem_preamble *p);
void xmem_preamble_free(struct xmem_preamble *p);

/* ---- what a batch script trains with (script_entrypoint.c) ------------------------------- */

/* The entrypoint of a batch script and the preamble before it, as a request carries them. */
struct xmem_script_job {
    char **entry; /* the entrypoint command (malloc'd argv) */
    int line;     /* its 1-based line */
    int source;   /* enum xmem_entry_source */
    struct xmem_preamble pre;
};

/* Finds the entrypoint (xmem_entrypoint_find) and classifies the lines before the job starts
 * training: before the entrypoint's line; for an #XMEM line (which may sit at the top),
 * before the line that runs the command it names, else before the first line that runs
 * python, or the directive, whichever comes later. 0; -1 when the script names no
 * entrypoint (job->entry NULL) or memory ran out. Free with xmem_script_job_free. */
int xmem_script_job_find(const char *text, struct xmem_script_job *job);
void xmem_script_job_free(struct xmem_script_job *job);

/* The batch script sbatch --wrap=COMMAND submits, byte for byte (sbatch 22.05, _script_wrap):
 * "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" COMMAND "\n". malloc'd, or
 * NULL when out of memory. */
char *xmem_wrap_script(const char *command);

#ifdef __cplusplus
}
#endif
#endif
