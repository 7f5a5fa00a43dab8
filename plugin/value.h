/*
 * value.h — the --xmem option value, sizes and numbers (value.c).
 *
 * Contract: the parsers return 0 or -1; xmem_value_parse leaves a one-line message starting
 * with "xmem: " in err on -1. No predicates here.
 */
#ifndef XMEM_VALUE_H
#define XMEM_VALUE_H

#include <stddef.h>
#include <stdint.h>

enum xmem_mode {
    XMEM_MODE_UNSET = -1, /* no --xmem given */
    XMEM_MODE_OFF = 0,
    XMEM_MODE_AUTO = 1,   /* profile the entrypoint, rewrite the request */
    XMEM_MODE_CHECK = 2,  /* profile and report, change nothing */
    XMEM_MODE_BUDGET = 3, /* a declared size, no profile */
};

struct xmem_value {
    int mode;              /* enum xmem_mode */
    uint64_t budget_bytes; /* XMEM_MODE_BUDGET only */
};

/* Parses an --xmem argument; NULL (bare --xmem) means auto. */
int xmem_value_parse(const char *arg, struct xmem_value *v, char *err, size_t errlen);
const char *xmem_mode_name(int mode);

/* Parses "12G", "12288M", "512MiB", "1.5G", "40960" (MiB when no unit) into bytes. */
int xmem_size_parse(const char *s, uint64_t *bytes);
/* The one way xmem reads a number from a record or the job's environment (docs/enforcement.md
 * "Numbers"): 1 to XMEM_DECIMAL_MAX_DIGITS plain decimal digits, nothing else (no sign,
 * blank, exponent, hex, fraction, unit), and at most max. 0 and the value, else -1.
 * etc/xmem_lib.lua's decimal() is the same rule. */
#define XMEM_DECIMAL_MAX_DIGITS 15
int xmem_decimal_parse(const char *s, uint64_t max, uint64_t *out);
/* Bytes in whole MiB, rounded up: the figure job_submit.lua writes for the same bytes into the
 * packing record (its mb()), so a limit reads the same number on every line a user sees. */
uint64_t xmem_mib_ceil(uint64_t bytes);

#endif
