/*
 * xmem-status — `xmem status`: what xmemd is doing now (queue, in-flight profiles, counters).
 * Usage: xmem status [--socket PATH] [--json] [--timeout MS]
 */
#define _GNU_SOURCE
#include "xmem_client.h"

#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xmem status [--socket PATH] [--json] [--timeout MS]\n"
            "Show xmemd's queue, in-flight profiles and counters.\n"
            "  -s, --socket PATH   xmemd socket [$XMEM_SOCKET or %s]\n"
            "  -j, --json          print the raw JSON reply\n"
            "  -t, --timeout MS    give up after MS milliseconds [5000]\n",
            XMEM_DEFAULT_SOCKET);
}

static const char *str(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "?";
}

/* Writes `s` with every terminal control character shown as \xNN: the reply carries other
 * users' command lines, and a raw ESC or CSI would let them move the cursor, retitle the
 * terminal or hide lines. C0, DEL and C1 (UTF-8 C2 80..9F) are escaped; a backslash is
 * doubled so an escape cannot be faked. */
static void print_safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            printf("\\x%02x", *p);
        else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
            printf("\\x%02x", *++p);
        else if (*p == '\\')
            fputs("\\\\", stdout);
        else
            putchar(*p);
    }
}

/* print_safe, then spaces up to `width` bytes, as "%-*s" would. */
static void print_padded(const char *s, int width)
{
    print_safe(s);
    for (int n = (int)strlen(s); n < width; n++)
        putchar(' ');
}

static int64_t num(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

static void print_human(json_object *o)
{
    json_object *cache = NULL, *counters = NULL, *inflight = NULL;
    printf("xmemd ");
    print_safe(str(o, "version"));
    printf(" (pid %lld), up %lld s%s\n", (long long)num(o, "pid"),
           (long long)num(o, "uptime_seconds"),
           json_object_get_boolean(json_object_object_get(o, "draining")) ? ", DRAINING" : "");
    printf("config:      ");
    print_safe(str(o, "config"));
    printf("\n");
    printf("profiles:    %lld running (max %lld, %lld per user), %lld queued (max %lld)\n",
           (long long)num(o, "running"), (long long)num(o, "max_concurrent"),
           (long long)num(o, "max_per_user"), (long long)num(o, "queue_depth"),
           (long long)num(o, "queue_size"));
    printf("connections: %lld\n", (long long)num(o, "connections"));
    if (json_object_object_get_ex(o, "cache", &cache))
        printf("cache:       %lld entries, %lld hits, %lld misses (hit ratio %.2f)\n",
               (long long)num(cache, "entries"), (long long)num(cache, "hits"),
               (long long)num(cache, "misses"),
               json_object_get_double(json_object_object_get(cache, "hit_ratio")));
    if (json_object_object_get_ex(o, "in_flight", &inflight) &&
        json_object_array_length(inflight) > 0) {
        printf("in flight:\n");
        for (size_t i = 0; i < json_object_array_length(inflight); i++) {
            json_object *j = json_object_array_get_idx(inflight, i);
            printf("  ");
            print_padded(str(j, "user"), 10);
            printf(" ");
            print_padded(str(j, "state"), 9);
            printf(" %6.1f s  ", json_object_get_double(json_object_object_get(j, "seconds")));
            print_safe(str(j, "entrypoint"));
            printf("\n");
        }
    }
    if (json_object_object_get_ex(o, "held", &inflight) && json_object_array_length(inflight) > 0) {
        printf("your held jobs wait for:\n");
        for (size_t i = 0; i < json_object_array_length(inflight); i++) {
            json_object *j = json_object_array_get_idx(inflight, i);
            printf("  request %-6lld ", (long long)num(j, "request_id"));
            print_padded(str(j, "state"), 9);
            printf(" %6.1f s  ", json_object_get_double(json_object_object_get(j, "seconds")));
            print_safe(str(j, "entrypoint"));
            printf("\n");
        }
    }
    printf("requests:    %lld total\n", (long long)num(o, "requests_total"));
    if (json_object_object_get_ex(o, "counters", &counters)) {
        json_object_object_foreach(counters, key, val)
        {
            if (json_object_get_int64(val) > 0)
                printf("  %-26s %lld\n", key, (long long)json_object_get_int64(val));
        }
    }
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"socket", required_argument, NULL, 's'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"timeout", required_argument, NULL, 't'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *sock = getenv("XMEM_SOCKET");
    int raw = 0, timeout = 5000, c;
    if (!sock || !*sock)
        sock = XMEM_DEFAULT_SOCKET;
    while ((c = getopt_long(argc, argv, "s:jt:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            sock = optarg;
            break;
        case 'j':
            raw = 1;
            break;
        case 't':
            timeout = atoi(optarg);
            if (timeout <= 0) {
                fprintf(stderr, "xmem: --timeout: invalid value: %s (milliseconds > 0)\n", optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    char err[512] = "", *json = NULL;
    int rc = xmem_client_query(sock, timeout, "status", &json, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (raw) {
        printf("%s\n", json);
    } else {
        json_object *o = json_tokener_parse(json);
        if (!o) {
            fprintf(stderr, "xmem: xmemd's status reply is not JSON\n");
            free(json);
            return 1;
        }
        print_human(o);
        json_object_put(o);
    }
    free(json);
    return 0;
}
