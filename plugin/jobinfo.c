/*
 * jobinfo.c — what slurmctld knows of a job and slurmstepd's SPANK does not: the output
 * files (Slurm 22.05 has no SPANK item for them) and, as a check on the job environment, the
 * account and partition. Read from `scontrol show job ID` (22.05 expands %j, %x, %u... in
 * StdOut=/StdErr= itself, and prints each of them on a line of its own, so a path may hold
 * spaces).
 *
 * For the requeue after a CUDA OOM (requeue.c): the admin comment, the request per node, the
 * node, the priority and whether it is a batch job. xmem's records (job_submit.lua's packing
 * record, the requeue mark) are read from AdminComment, which only root and Slurm operators
 * can set; the Comment is the user's and never read (docs/enforcement.md "After an OOM").
 *
 * A field the user can write into (job name, comment, paths) could carry a forged
 * "Account=..." or a line "StdOut=...": a key seen more than once is ambiguous and ignored.
 * For AdminComment, the key anywhere else in the text (a comment holding "\n AdminComment=")
 * makes it ambiguous too: a forged record must never be the only one seen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobinfo.h"
#include "run.h"
#include "value.h"

/* Copies the value of the only line that starts (after blanks) with key; -1 if none or
 * several. */
static int line_value(const char *text, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key);
    int seen = 0;

    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *nl = strchr(line, '\n'), *p = line;
        size_t len = nl ? (size_t)(nl - line) : strlen(line);

        while (p < line + len && (*p == ' ' || *p == '\t'))
            p++;
        if ((size_t)(line + len - p) >= klen && strncmp(p, key, klen) == 0) {
            size_t vlen = (size_t)(line + len - p) - klen;
            if (vlen > 0 && p[klen + vlen - 1] == '\r')
                vlen--;
            if (++seen == 1)
                snprintf(out, outlen, "%.*s", (int)vlen, p + klen);
        }
        line = nl ? nl + 1 : NULL;
    }
    if (seen != 1)
        out[0] = '\0';
    return seen == 1 ? 0 : -1;
}

/* Copies the value of the only blank-separated token key=VALUE; "(null)" counts as none. */
static int token_value(const char *text, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key);
    int seen = 0;

    for (const char *p = text; (p = strstr(p, key)) != NULL; p += klen) {
        size_t vlen;
        if (p != text && p[-1] != ' ' && p[-1] != '\n' && p[-1] != '\t')
            continue;
        vlen = strcspn(p + klen, " \t\r\n");
        if (++seen == 1)
            snprintf(out, outlen, "%.*s", (int)vlen, p + klen);
    }
    if (seen != 1 || strcmp(out, "(null)") == 0)
        out[0] = '\0';
    return out[0] != '\0' ? 0 : -1;
}

/* The number in the only token key=N (xmem_decimal_parse, at most max); 0 when absent,
 * ambiguous or not a number. */
static uint64_t token_number(const char *text, const char *key, uint64_t max)
{
    char v[32];
    uint64_t n;

    if (token_value(text, key, v, sizeof(v)) < 0 || xmem_decimal_parse(v, max, &n) < 0)
        return 0;
    return n;
}

/* The AdminComment line, only when "AdminComment=" appears once in the whole text. */
static void admin_comment(const char *text, char *out, size_t outlen)
{
    const char *first = strstr(text, "AdminComment=");

    out[0] = '\0';
    if (first == NULL || strstr(first + 1, "AdminComment=") != NULL ||
        line_value(text, "AdminComment=", out, outlen) < 0)
        return;
    /* 22.05 ends the line with a blank ("AdminComment=x "); xmem's records need none. */
    for (size_t n = strlen(out); n > 0 && out[n - 1] == ' ';)
        out[--n] = '\0';
}

void xmem_job_info_parse(const char *text, struct xmem_job_info *info)
{
    memset(info, 0, sizeof(*info));
    line_value(text, "StdOut=", info->std_out, sizeof(info->std_out));
    line_value(text, "StdErr=", info->std_err, sizeof(info->std_err));
    token_value(text, "Account=", info->account, sizeof(info->account));
    token_value(text, "Partition=", info->partition, sizeof(info->partition));
    admin_comment(text, info->admin_comment, sizeof(info->admin_comment));
    line_value(text, "TresPerNode=", info->tres_per_node, sizeof(info->tres_per_node));
    token_value(text, "NodeList=", info->node_list, sizeof(info->node_list));
    info->priority = (uint32_t)token_number(text, "Priority=", UINT32_MAX);
    info->batch = token_number(text, "BatchFlag=", 1) == 1;
}

int xmem_job_info_query(const char *scontrol, uint32_t job_id, int deadline_ms,
                        struct xmem_job_info *info, char *err, size_t errlen)
{
    char id[16], out[16384];
    char *argv[] = {(char *)scontrol, "show", "job", id, NULL};

    memset(info, 0, sizeof(*info));
    snprintf(id, sizeof(id), "%u", (unsigned)job_id);
    if (xmem_run_capture(argv, deadline_ms, out, sizeof(out), err, errlen) < 0)
        return -1;
    xmem_job_info_parse(out, info);
    return 0;
}

int xmem_job_record_parse(const char *out, struct xmem_job_record *r)
{
    size_t len = strlen(out);

    const char *slash;
    char count[16];
    uint64_t restarts;

    memset(r, 0, sizeof(*r));
    /* Ends with its newline: a cut answer (longer than the capture) is no record. */
    if (len < 2 || out[--len] != '\n' || (out[0] != '0' && out[0] != '1') ||
        memchr(out, '\n', len) != NULL)
        return -1;
    r->batch = out[0] == '1';
    /* The restart count, then '/' (the field's suffix): digits only, the one number rule. */
    slash = memchr(out + 1, '/', len - 1);
    if (slash == NULL || (size_t)(slash - out - 1) >= sizeof(count))
        return -1;
    snprintf(count, sizeof(count), "%.*s", (int)(slash - out - 1), out + 1);
    if (xmem_decimal_parse(count, UINT32_MAX, &restarts) != 0)
        return -1;
    r->restarts = (uint32_t)restarts;
    len -= (size_t)(slash + 1 - out);
    if (len >= sizeof(r->admin_comment))
        return -1;
    snprintf(r->admin_comment, sizeof(r->admin_comment), "%.*s", (int)len, slash + 1);
    for (size_t n = strlen(r->admin_comment); n > 0 && r->admin_comment[n - 1] == ' ';)
        r->admin_comment[--n] = '\0';
    if (strcmp(r->admin_comment, "(null)") == 0)
        r->admin_comment[0] = '\0';
    return 0;
}

int xmem_job_record_query(const char *squeue, uint32_t job_id, int deadline_ms,
                          struct xmem_job_record *r, char *err, size_t errlen)
{
    char id[16], out[4096];
    char *argv[] = {(char *)squeue,
                    "--noheader",
                    "--states=all",
                    "--jobs",
                    id,
                    "--Format=batchflag:0,restartcnt:0/,admin_comment:0",
                    NULL};

    memset(r, 0, sizeof(*r));
    snprintf(id, sizeof(id), "%u", (unsigned)job_id);
    if (xmem_run_capture(argv, deadline_ms, out, sizeof(out), err, errlen) < 0)
        return -1;
    if (xmem_job_record_parse(out, r) < 0) {
        snprintf(err, errlen, "%s does not give job %s's record in one line", squeue, id);
        return -1;
    }
    return 0;
}
