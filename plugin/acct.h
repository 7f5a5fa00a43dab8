/*
 * acct.h — the job's accounting record in its AdminComment (acct.c): xmemd builds the record
 * from its ledger row at job end (daemon/server/accounting_record.h); slurmstepd, as root,
 * appends it as "xmem-acct: {...}" while the job still runs, so slurmctld hands it to
 * slurmdbd with the job's completion. docs/slurm.md, "Accounting".
 *
 * Contract: both return 0 or -1 (-1: the result would not fit; nothing is written).
 */
#ifndef XMEM_ACCT_H
#define XMEM_ACCT_H

#include <stddef.h>

#define XMEM_ACCT_TAG "xmem-acct: "

/* The AdminComment with record appended after "; " and the tag, and any earlier record (a
 * requeued job's first run, always the comment's last part) dropped with what follows. */
int xmem_acct_comment(const char *existing, const char *record, char *out, size_t outlen);

/* The packed share and the part of one GPU it is: "shard:3" of a node with 10 shards per GPU
 * is 0.3. -1 when per_gpu is 0 (unknown) or the count is above it. */
int xmem_acct_fraction(unsigned count, unsigned per_gpu, double *fraction);

#endif
