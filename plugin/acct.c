/*
 * acct.c — the accounting record's place in the AdminComment (acct.h).
 */
#include <stdio.h>
#include <string.h>

#include "acct.h"

int xmem_acct_comment(const char *existing, const char *record, char *out, size_t outlen)
{
    const char *tag = strstr(existing, XMEM_ACCT_TAG);
    size_t keep = strlen(existing);
    int w;

    /* An earlier record is the comment's last part: a requeue mark is written before the
     * record at the same job end, and a rerun is never requeued again (requeue.h). */
    if (tag != NULL) {
        keep = (size_t)(tag - existing);
        while (keep > 0 && (existing[keep - 1] == ' ' || existing[keep - 1] == ';'))
            keep--;
    }
    w = snprintf(out, outlen, "%.*s%s%s%s", (int)keep, existing, keep > 0 ? "; " : "",
                 XMEM_ACCT_TAG, record);
    return w < 0 || (size_t)w >= outlen ? -1 : 0;
}

int xmem_acct_fraction(unsigned count, unsigned per_gpu, double *fraction)
{
    if (per_gpu == 0 || count == 0 || count > per_gpu)
        return -1;
    *fraction = (double)count / per_gpu;
    return 0;
}
