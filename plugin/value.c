/*
 * value.c — the value of --xmem: off, auto (bare --xmem), check, or a declared size.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "defaults.h"
#include "value.h"

static const struct {
    const char *name;
    int mode;
} modes[] = {
    {"auto", XMEM_MODE_AUTO}, {"on", XMEM_MODE_AUTO}, {"check", XMEM_MODE_CHECK},
    {"off", XMEM_MODE_OFF},   {"no", XMEM_MODE_OFF},
};

const char *xmem_mode_name(int mode)
{
    switch (mode) {
    case XMEM_MODE_OFF:
        return "off";
    case XMEM_MODE_AUTO:
        return "auto";
    case XMEM_MODE_CHECK:
        return "check";
    case XMEM_MODE_BUDGET:
        return "budget";
    default:
        return "unset";
    }
}

int xmem_size_parse(const char *s, uint64_t *bytes)
{
    char *end;
    double v, mult = 1024.0 * 1024.0; /* a bare number is MiB, as in Slurm's --mem */

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || v <= 0)
        return -1;
    if (*end != '\0') {
        switch (toupper((unsigned char)*end)) {
        case 'K':
            mult = 1024.0;
            break;
        case 'M':
            mult = 1024.0 * 1024.0;
            break;
        case 'G':
            mult = 1024.0 * 1024.0 * 1024.0;
            break;
        case 'T':
            mult = 1024.0 * 1024.0 * 1024.0 * 1024.0;
            break;
        default:
            return -1;
        }
        end++;
        /* K, KB, KiB (always binary: GPU memory is) */
        if (strcasecmp(end, "") != 0 && strcasecmp(end, "b") != 0 && strcasecmp(end, "ib") != 0)
            return -1;
    }
    v *= mult;
    if (v < 1024.0 * 1024.0 || v > (double)XMEM_PLUGIN_MAX_BUDGET_BYTES)
        return -1;
    *bytes = (uint64_t)v;
    return 0;
}

int xmem_decimal_parse(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    size_t n;

    if (s == NULL)
        return -1;
    /* 15 digits stay below 2^53: Lua 5.1 (a double) reads every such number exactly too. */
    for (n = 0; s[n] != '\0'; n++) {
        if (s[n] < '0' || s[n] > '9' || n >= XMEM_DECIMAL_MAX_DIGITS)
            return -1;
        v = v * 10 + (uint64_t)(s[n] - '0');
    }
    if (n == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

uint64_t xmem_mib_ceil(uint64_t bytes)
{
    return bytes / (1ULL << 20) + (bytes % (1ULL << 20) != 0);
}

int xmem_value_parse(const char *arg, struct xmem_value *v, char *err, size_t errlen)
{
    size_t i;

    v->mode = XMEM_MODE_UNSET;
    v->budget_bytes = 0;
    /* Bare --xmem: Slurm passes NULL (some paths pass "(null)" or "set"). */
    if (arg == NULL || arg[0] == '\0' || strcmp(arg, "(null)") == 0 || strcmp(arg, "set") == 0) {
        v->mode = XMEM_MODE_AUTO;
        return 0;
    }
    for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcasecmp(arg, modes[i].name) == 0) {
            v->mode = modes[i].mode;
            return 0;
        }
    }
    if (xmem_size_parse(arg, &v->budget_bytes) == 0) {
        v->mode = XMEM_MODE_BUDGET;
        return 0;
    }
    snprintf(err, errlen,
             "xmem: --xmem: invalid value: '%s' (use --xmem, --xmem=check, --xmem=off or a "
             "size such as --xmem=12G)",
             arg);
    return -1;
}
