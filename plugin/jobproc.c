/*
 * jobproc.c — is a process (as NVML names it, by pid) part of this job? Yes when its cgroup
 * path holds "/job_<id>/" (proctrack/cgroup and task/cgroup sites: every step of the job,
 * srun steps included), or when it descends from this slurmstepd (sites without cgroups:
 * the step's own tasks and their children).
 */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "defaults.h"
#include "jobproc.h"

bool xmem_cgroup_has_job(const char *text, uint32_t job_id)
{
    char needle[32];
    size_t len;

    len = (size_t)snprintf(needle, sizeof(needle), "/job_%u", (unsigned)job_id);
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += len)
        if (p[len] == '/' || p[len] == '\n' || p[len] == '\0')
            return 1;
    return 0;
}

int xmem_stat_ppid(const char *text, pid_t *ppid)
{
    /* "pid (comm) state ppid ...": comm may hold spaces and ')', so parse after the last ')'. */
    const char *p = strrchr(text, ')');
    char state;
    int v;

    if (p == NULL || sscanf(p + 1, " %c %d", &state, &v) != 2)
        return -1;
    *ppid = (pid_t)v;
    return 0;
}

/* Reads /proc/<pid>/<name> into buf (NUL-terminated); -1 when the process is gone. */
static int read_proc(pid_t pid, const char *name, char *buf, size_t len)
{
    char path[64];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
    f = fopen(path, "re");
    if (f == NULL)
        return -1;
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 0;
}

static int descends_from(pid_t pid, pid_t ancestor)
{
    char stat[1024];

    for (int depth = 0; depth < XMEM_PLUGIN_MAX_PROC_DEPTH && pid > 1; depth++) {
        if (read_proc(pid, "stat", stat, sizeof(stat)) < 0 || xmem_stat_ppid(stat, &pid) < 0)
            return 0;
        if (pid == ancestor)
            return 1;
    }
    return 0;
}

bool xmem_pid_in_job(pid_t pid, uint32_t job_id, pid_t ancestor)
{
    char cgroup[4096];

    if (pid <= 1)
        return 0;
    if (read_proc(pid, "cgroup", cgroup, sizeof(cgroup)) == 0 &&
        xmem_cgroup_has_job(cgroup, job_id))
        return 1;
    return ancestor > 1 && descends_from(pid, ancestor);
}
