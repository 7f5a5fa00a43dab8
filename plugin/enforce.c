/*
 * enforce.c — what holds a packed job to its GPU memory limit on its node, and how to apply
 * it (docs/enforcement.md). No SPANK here: remote_enforce.c calls these from slurmstepd, as
 * root, before any task execs, and the unit tests call them on a fake cgroup tree.
 *
 *   dmem        the job cgroup's dmem.max (MPS v3): one limit for every process of the job.
 *   mps-server  nvidia-cuda-mps-control's pinned-memory limits (legacy MPS): per client
 *               process, but the user cannot raise them.
 *   client      CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, set by remote.c in every case.
 *
 * Every path comes from /proc or from root's plugstack.conf, never from the job: the job's
 * environment only names the MPS pipe directory, whose control pipe must be root's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "defaults.h"
#include "enforce.h"
#include "run.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* ---- the job's cgroup ------------------------------------------------------------------- */

int xmem_cgroup_job_dir(const char *proc_cgroup, uint32_t job_id, const char *root, char *dir,
                        size_t len)
{
    char component[32];
    const char *line, *end, *p;
    size_t clen;

    clen = (size_t)snprintf(component, sizeof(component), "/job_%" PRIu32, job_id);
    /* cgroup v2 is the one line "0::/path"; v1 lines have a controller list before "::". */
    for (line = proc_cgroup; line != NULL && *line != '\0'; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        if (strncmp(line, "0::/", 4) != 0)
            continue;
        for (p = line + 3; (p = strstr(p, component)) != NULL && (end == NULL || p < end);
             p += clen) {
            if (p[clen] != '/' && p[clen] != '\n' && p[clen] != '\0')
                continue;
            if ((size_t)snprintf(dir, len, "%s%.*s", root, (int)(p + clen - (line + 3)),
                                 line + 3) >= len)
                return -1;
            return strstr(dir, "/../") == NULL ? 0 : -1;
        }
        return -1;
    }
    return -1;
}

int xmem_cgroup_pattern_dir(const char *pattern, uint32_t job_id, char *dir, size_t len)
{
    size_t used = 0;

    for (const char *p = pattern; *p != '\0'; p++) {
        int n = p[0] == '%' && p[1] == 'j' ? snprintf(dir + used, len - used, "%" PRIu32, job_id)
                                           : snprintf(dir + used, len - used, "%c", *p);
        if (n < 0 || (size_t)n >= len - used)
            return -1;
        used += (size_t)n;
        p += p[0] == '%' && p[1] == 'j';
    }
    return pattern[0] == '/' && used > 0 ? 0 : -1;
}

/* ---- dmem: MPS v3's per-cgroup device memory limit ----------------------------------------- */

/* A region name as the kernel prints it ("drm/0000:03:00.0/vram0"): no blanks, printable. */
static int region_name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= XMEM_DMEM_REGION_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~')
            return 0;
    return 1;
}

int xmem_dmem_capacity_parse(const char *text, struct xmem_dmem_regions *r)
{
    r->n = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n'), *space = strchr(line, ' ');
        size_t n;

        if (end == NULL)
            end = line + strlen(line);
        if (space == NULL || space > end)
            return -1;
        n = (size_t)(space - line);
        if (!region_name_ok(line, n) || r->n == XMEM_DMEM_MAX_REGIONS ||
            strspn(space + 1, "0123456789") != (size_t)(end - space - 1) || end == space + 1)
            return -1;
        memcpy(r->name[r->n], line, n);
        r->name[r->n++][n] = '\0';
        line = *end ? end + 1 : end;
    }
    return r->n > 0 ? 0 : -1;
}

int xmem_dmem_max_text(const struct xmem_dmem_regions *r, uint64_t bytes, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < r->n; i++) {
        int n = snprintf(buf + used, len - used, "%s %" PRIu64 "\n", r->name[i], bytes);
        if (n < 0 || (size_t)n >= len - used)
            return -1;
        used += (size_t)n;
    }
    return r->n > 0 ? 0 : -1;
}

bool xmem_dmem_max_shows(const char *text, const struct xmem_dmem_regions *r, uint64_t bytes)
{
    char want[XMEM_DMEM_REGION_LEN + 32];

    for (int i = 0; i < r->n; i++) {
        const char *p;
        size_t n = (size_t)snprintf(want, sizeof(want), "%s %" PRIu64, r->name[i], bytes);
        int found = 0;

        for (p = text; (p = strstr(p, want)) != NULL && !found; p += n)
            found = (p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0');
        if (!found)
            return 0;
    }
    return 1;
}

/* Opens dir/name without following a final symlink; only a regular file or a cgroupfs file. */
static int open_checked(const char *dir, const char *name, int flags, char *path, size_t len)
{
    struct stat st;
    struct statfs fs;
    int fd;

    if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len)
        return -1;
    fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        (fstatfs(fd, &fs) == 0 && fs.f_type != CGROUP2_SUPER_MAGIC && st.st_uid != 0)) {
        close(fd); /* outside cgroupfs only root's files (a test's fake tree) */
        errno = EPERM;
        return -1;
    }
    return fd;
}

static ssize_t read_file(const char *dir, const char *name, char *buf, size_t len)
{
    char path[XMEM_PLUGIN_MAX_CGROUP_PATH + 32];
    int fd = open_checked(dir, name, O_RDONLY, path, sizeof(path));
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

bool xmem_dmem_available(const char *root, const char *job_dir, struct xmem_dmem_regions *r)
{
    char text[4096], path[XMEM_PLUGIN_MAX_CGROUP_PATH + 32];
    int fd;

    if (read_file(root, "dmem.capacity", text, sizeof(text)) <= 0 ||
        xmem_dmem_capacity_parse(text, r) < 0)
        return 0;
    fd = open_checked(job_dir, "dmem.max", O_RDONLY, path, sizeof(path));
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

int xmem_dmem_apply(const char *job_dir, const struct xmem_dmem_regions *r, uint64_t bytes,
                    char *err, size_t errlen)
{
    char text[XMEM_DMEM_MAX_REGIONS * (XMEM_DMEM_REGION_LEN + 24)], back[sizeof(text)];
    char path[XMEM_PLUGIN_MAX_CGROUP_PATH + 32];
    size_t len;
    int fd;

    if (xmem_dmem_max_text(r, bytes, text, sizeof(text)) < 0) {
        snprintf(err, errlen, "xmem: %s/dmem.max: too many regions to write", job_dir);
        return -1;
    }
    fd = open_checked(job_dir, "dmem.max", O_WRONLY | O_TRUNC, path, sizeof(path));
    len = strlen(text);
    /* One write: the kernel takes one region per line of a single write. */
    if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
        snprintf(err, errlen, "xmem: %s: cannot write the limit: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    if (read_file(job_dir, "dmem.max", back, sizeof(back)) < 0 ||
        !xmem_dmem_max_shows(back, r, bytes)) {
        snprintf(err, errlen, "xmem: %s: the limit %" PRIu64 " did not hold (reads back '%.80s')",
                 path, bytes, back);
        return -1;
    }
    return 0;
}

/* ---- mps-server: legacy MPS's pinned-memory limits ------------------------------------------ */

bool xmem_program_found(const char *program)
{
    char path[4096];
    const char *dirs = getenv("PATH");

    if (strchr(program, '/') != NULL)
        return access(program, X_OK) == 0;
    for (const char *d = dirs ? dirs : "/usr/bin:/bin"; *d != '\0';) {
        size_t n = strcspn(d, ":");
        if (n > 0 &&
            (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)n, d, program) < sizeof(path) &&
            access(path, X_OK) == 0)
            return 1;
        d += n + (d[n] == ':');
    }
    return 0;
}

bool xmem_mps_pipe_ok(const char *pipe_dir)
{
    char path[4096];
    struct stat st;

    if (pipe_dir[0] != '/' ||
        (size_t)snprintf(path, sizeof(path), "%s/control", pipe_dir) >= sizeof(path))
        return 0;
    /* Root's daemon (a prolog starts it): a pipe the job's user made could fake the answers. */
    return lstat(path, &st) == 0 && (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)) &&
           st.st_uid == 0;
}

bool xmem_gpu_list_ok(const char *gpus)
{
    return gpus[0] != '\0' && strspn(gpus, "0123456789,") == strlen(gpus) && gpus[0] != ',' &&
           gpus[strlen(gpus) - 1] != ',' && strstr(gpus, ",,") == NULL;
}

int xmem_mps_server_pids(const char *text, pid_t *pids, int max)
{
    int n = 0;

    for (const char *p = text; *p != '\0' && n < max;) {
        char *end;
        long v = strtol(p, &end, 10);

        if (end != p && v > 1 && (*end == '\n' || *end == '\0' || *end == ' '))
            pids[n++] = (pid_t)v;
        p = strchr(p, '\n');
        if (p == NULL)
            break;
        p++;
    }
    return n;
}

int xmem_status_uid(const char *status, uid_t *uid)
{
    const char *p = strstr(status, "\nUid:");
    unsigned long real;

    if (p == NULL || sscanf(p + 5, " %lu", &real) != 1)
        return -1;
    *uid = (uid_t)real;
    return 0;
}

int xmem_mps_commands(const char *gpus, uint64_t mb, const pid_t *servers, int nservers, char *out,
                      size_t len)
{
    size_t used = 0;
    char dev[16];

    out[0] = '\0';
    if (!xmem_gpu_list_ok(gpus))
        return -1;
    for (const char *g = gpus; *g != '\0'; g += strlen(dev) + (g[strlen(dev)] == ',')) {
        snprintf(dev, sizeof(dev), "%.*s", (int)strcspn(g, ","), g);
        used += (size_t)snprintf(out + used, len > used ? len - used : 0,
                                 "set_default_device_pinned_mem_limit %s %" PRIu64 "M\n", dev, mb);
        for (int i = 0; i < nservers; i++)
            used += (size_t)snprintf(out + used, len > used ? len - used : 0,
                                     "set_device_pinned_mem_limit %d %s %" PRIu64 "M\n",
                                     (int)servers[i], dev, mb);
    }
    return used < len ? 0 : -1;
}

/* The MPS servers running as uid (a server serves one user at a time). */
static int servers_of(const char *list, uid_t uid, pid_t *pids, int max)
{
    pid_t all[XMEM_PLUGIN_MAX_MPS_SERVERS];
    int n = xmem_mps_server_pids(list, all, XMEM_PLUGIN_MAX_MPS_SERVERS), kept = 0;

    for (int i = 0; i < n && kept < max; i++) {
        char path[64], status[4096];
        FILE *f;
        size_t got;
        uid_t owner;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)all[i]);
        f = fopen(path, "re");
        if (f == NULL)
            continue;
        got = fread(status, 1, sizeof(status) - 1, f);
        fclose(f);
        status[got] = '\0';
        if (xmem_status_uid(status, &owner) == 0 && owner == uid)
            pids[kept++] = all[i];
    }
    return kept;
}

int xmem_mps_apply(const char *control, const char *pipe_dir, const char *gpus, uint64_t mb,
                   uid_t uid, char *err, size_t errlen)
{
    char env_pipe[4200], commands[8192], out[4096];
    char *argv[] = {(char *)control, NULL};
    char *envp[] = {env_pipe, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    pid_t servers[XMEM_PLUGIN_MAX_MPS_SERVERS];
    int n;

    snprintf(env_pipe, sizeof(env_pipe), "CUDA_MPS_PIPE_DIRECTORY=%s", pipe_dir);
    if (xmem_run_feed(argv, envp, "get_server_list\n", XMEM_PLUGIN_MPS_CONTROL_TIMEOUT_MS, out,
                      sizeof(out), err, errlen) < 0)
        return -1;
    n = servers_of(out, uid, servers, XMEM_PLUGIN_MAX_MPS_SERVERS);
    if (xmem_mps_commands(gpus, mb, servers, n, commands, sizeof(commands)) < 0) {
        snprintf(err, errlen, "xmem: cannot name the job's GPUs to MPS: '%s' (a list of indices)",
                 gpus);
        return -1;
    }
    return xmem_run_feed(argv, envp, commands, XMEM_PLUGIN_MPS_CONTROL_TIMEOUT_MS, out, sizeof(out),
                         err, errlen);
}

int xmem_pinned_limit_mb(const char *text, uint64_t *mb)
{
    unsigned long long v;
    char *end;

    text = strchr(text, '=');
    if (text == NULL || text[1] < '0' || text[1] > '9')
        return -1;
    v = strtoull(text + 1, &end, 10);
    if (*end == 'G')
        v <<= 10;
    else if (*end != 'M')
        return -1;
    if (v == 0 || (end[1] != '\0' && end[1] != ','))
        return -1;
    *mb = v;
    return 0;
}

/* ---- which level ---------------------------------------------------------------------------- */

int xmem_enforce_best(int cap, unsigned available)
{
    for (int level = cap; level > XMEM_ENFORCE_NONE; level--)
        if (available & (1u << level))
            return level;
    return XMEM_ENFORCE_NONE;
}

bool xmem_enforce_meets(int applied, const char *required)
{
    int level = xmem_enforcement_parse(required);

    if (required == NULL || required[0] == '\0')
        return 1;
    return level >= 0 && applied >= level; /* an unknown name is met by none */
}
