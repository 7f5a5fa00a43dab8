/*
 * xmemd-load — drive xmemd through the real client library, for tests and `make bench-daemon`.
 *
 *   xmemd-load estimate SOCKET [opts] -- ARGV...   one estimate; prints key=value lines
 *   xmemd-load job-end SOCKET REQUEST[@UID] JOB EXIT ELAPSED OOM [ACCOUNT PARTITION MEASURED
 *        [ENFORCEMENT OOM_REQUEUED]]
 *        @UID: the uid the job ran as (job_uid), as slurmstepd sends it
 *   xmemd-load load SOCKET -n N -c C [-k K] [opts] -- ARGV...
 *        N estimates from C threads; request i appends "--variant=(i % K)" to ARGV when K > 0
 *        (K distinct cache keys); prints throughput, p50/p99 latency and counts by outcome.
 *        -r RATE: open loop — request i is due at start + i/RATE and its latency counts from
 *        then, so a slow answer delays no later measurement (no coordinated omission); C
 *        bounds the requests in flight. Without -r: closed loop, each thread sends its next
 *        request as soon as it has its answer.
 * opts: --cwd DIR (default: current directory) --gpu G --partition P --deadline MS
 *       --steps N (--iterations N: the older name)
 */
#define _GNU_SOURCE
#include "xmem_client.h"

#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct opts {
    const char *sock, *cwd, *gpu, *partition;
    int deadline, steps, n, c, k;
    double rate; /* requests/s offered; 0 = closed loop */
    char **argv;
    int argc;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {{"cwd", required_argument, NULL, 'w'},
                                       {"gpu", required_argument, NULL, 'g'},
                                       {"partition", required_argument, NULL, 'p'},
                                       {"deadline", required_argument, NULL, 'd'},
                                       {"steps", required_argument, NULL, 'i'},
                                       {"iterations", required_argument, NULL, 'i'},
                                       {NULL, 0, NULL, 0}};
    static char cwd[4096];
    int c;
    o->cwd = getcwd(cwd, sizeof(cwd));
    o->deadline = 60000;
    o->n = 1;
    o->c = 1;
    while ((c = getopt_long(argc, argv, "n:c:k:r:", lo, NULL)) != -1) {
        switch (c) {
        case 'w':
            o->cwd = optarg;
            break;
        case 'g':
            o->gpu = optarg;
            break;
        case 'p':
            o->partition = optarg;
            break;
        case 'd':
            o->deadline = atoi(optarg);
            break;
        case 'i':
            o->steps = atoi(optarg);
            break;
        case 'n':
            o->n = atoi(optarg);
            break;
        case 'c':
            o->c = atoi(optarg);
            break;
        case 'k':
            o->k = atoi(optarg);
            break;
        case 'r':
            o->rate = atof(optarg);
            break;
        default:
            return -1;
        }
    }
    o->argv = argv + optind;
    o->argc = argc - optind;
    if (o->argc < 1 || o->n < 1 || o->c < 1) {
        fprintf(stderr, "xmemd-load: need an entrypoint after --, and -n/-c >= 1\n");
        return -1;
    }
    return 0;
}

static int one(const struct opts *o, int variant, struct xmem_estimate_result *res, char *err,
               size_t errlen)
{
    const char *args[256];
    char extra[64];
    int n = 0;
    for (int i = 0; i < o->argc && n < 254; i++)
        args[n++] = o->argv[i];
    if (variant >= 0) {
        snprintf(extra, sizeof(extra), "--variant=%d", variant);
        args[n++] = extra;
    }
    args[n] = NULL;
    extern char **environ;
    struct xmem_estimate_request req = {.argv = args,
                                        .cwd = o->cwd,
                                        .env = (const char *const *)environ,
                                        .gpu = o->gpu,
                                        .partition = o->partition,
                                        .steps = o->steps};
    return xmem_client_estimate(o->sock, o->deadline, &req, res, err, errlen);
}

static int cmd_estimate(const struct opts *o)
{
    struct xmem_estimate_result r;
    char err[512] = "";
    int rc = one(o, -1, &r, err, sizeof(err));
    printf("rc=%d\noutcome=%d\nname=%s\ncached=%d\npeak=%llu\nlimit=%llu\ngpu_memory=%llu\n"
           "fits=%d\nid=%llu\ngpu=%s\ndecision_len=%zu\n",
           rc, r.outcome, r.outcome_name, r.cached, (unsigned long long)r.peak_bytes,
           (unsigned long long)r.limit_bytes, (unsigned long long)r.gpu_memory_bytes, r.fits,
           (unsigned long long)r.request_id, r.gpu, strlen(r.decision));
    printf("decision=%s\nmessage=%s\nerror=%s\n", r.decision, r.message, err);
    return rc == 0 ? 0 : 1;
}

struct shared {
    const struct opts *o;
    double t0;
    atomic_int next;
    double *lat;
    atomic_int by_rc[8];
    atomic_int by_outcome[64];
    atomic_int cached;
};

static void *worker(void *arg)
{
    struct shared *s = arg;
    for (;;) {
        int i = atomic_fetch_add(&s->next, 1);
        if (i >= s->o->n)
            return NULL;
        struct xmem_estimate_result r;
        char err[512];
        double t0 = now_s();
        if (s->o->rate > 0) {
            double due = s->t0 + i / s->o->rate;
            if (due > t0)
                usleep((useconds_t)((due - t0) * 1e6));
            t0 = due;
        }
        int rc = one(s->o, s->o->k > 0 ? i % s->o->k : -1, &r, err, sizeof(err));
        s->lat[i] = now_s() - t0;
        atomic_fetch_add(&s->by_rc[-rc < 8 && rc <= 0 ? -rc : 7], 1);
        if (r.outcome >= 0 && r.outcome < 64)
            atomic_fetch_add(&s->by_outcome[r.outcome], 1);
        if (r.cached)
            atomic_fetch_add(&s->cached, 1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmd_load(const struct opts *o)
{
    struct shared s = {.o = o};
    s.lat = calloc((size_t)o->n, sizeof(double));
    pthread_t *t = calloc((size_t)o->c, sizeof(pthread_t));
    double t0 = now_s();
    s.t0 = t0;
    for (int i = 0; i < o->c; i++)
        pthread_create(&t[i], NULL, worker, &s);
    for (int i = 0; i < o->c; i++)
        pthread_join(t[i], NULL);
    double secs = now_s() - t0;
    qsort(s.lat, (size_t)o->n, sizeof(double), cmp);
    printf("requests=%d\nclients=%d\nseconds=%.3f\nrps=%.0f\np50_ms=%.2f\np99_ms=%.2f\n"
           "max_ms=%.2f\ncached=%d\n",
           o->n, o->c, secs, o->n / secs, s.lat[o->n / 2] * 1000, s.lat[(int)(o->n * 0.99)] * 1000,
           s.lat[o->n - 1] * 1000, atomic_load(&s.cached));
    for (int i = 0; i < 8; i++)
        if (atomic_load(&s.by_rc[i]))
            printf("rc%d=%d\n", -i, atomic_load(&s.by_rc[i]));
    for (int i = 0; i < 64; i++)
        if (atomic_load(&s.by_outcome[i]))
            printf("outcome%d=%d\n", i, atomic_load(&s.by_outcome[i]));
    free(s.lat);
    free(t);
    return atomic_load(&s.by_rc[0]) == o->n ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    if (argc < 3) {
        fprintf(stderr, "usage: xmemd-load estimate|load|job-end SOCKET ...\n");
        return 2;
    }
    const char *cmd = argv[1];
    o.sock = argv[2];
    if (strcmp(cmd, "job-end") == 0) {
        /* job-end SOCKET REQUEST JOB EXIT ELAPSED OOM [ACCOUNT PARTITION MEASURED_BYTES
         * [ENFORCEMENT OOM_REQUEUED]], "-" for an absent optional field. */
        if (argc != 8 && argc != 11 && argc != 13)
            return 2;
        char err[512] = "";
        struct xmem_job_end job = {0};
        char *at = NULL;
        job.request_id = strtoull(argv[3], &at, 10);
        if (*at == '@') {
            job.has_job_uid = 1;
            job.job_uid = (uint32_t)strtoul(at + 1, NULL, 10);
        }
        job.job_id = (uint32_t)strtoul(argv[4], NULL, 10);
        job.exit_status = atoi(argv[5]);
        job.elapsed_seconds = strtoull(argv[6], NULL, 10);
        job.cuda_oom = atoi(argv[7]);
        if (argc == 13) {
            job.enforcement = strcmp(argv[11], "-") ? argv[11] : NULL;
            job.oom_requeued = atoi(argv[12]);
        }
        if (argc >= 11) {
            job.account = strcmp(argv[8], "-") ? argv[8] : NULL;
            job.partition = strcmp(argv[9], "-") ? argv[9] : NULL;
            job.has_measured_peak = strcmp(argv[10], "-") != 0;
            job.measured_peak_bytes = strtoull(argv[10], NULL, 10);
        }
        int rc = xmem_client_job_end(o.sock, 5000, &job, err, sizeof(err));
        printf("rc=%d\nerror=%s\n", rc, err);
        return rc == 0 ? 0 : 1;
    }
    if (parse(argc - 2, argv + 2, &o) != 0)
        return 2;
    if (strcmp(cmd, "estimate") == 0)
        return cmd_estimate(&o);
    if (strcmp(cmd, "load") == 0)
        return cmd_load(&o);
    fprintf(stderr, "xmemd-load: unknown command %s\n", cmd);
    return 2;
}
