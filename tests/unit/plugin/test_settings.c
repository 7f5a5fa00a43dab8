/* test_settings.c — plugstack.conf arguments: strict, table-driven. */
#include <string.h>

#include "defaults.h"
#include "test-list.h"
#include "requeue.h"
#include "settings.h"

static int parse(struct xmem_settings *s, char *err, size_t len, int ac, ...)
{
    char *av[16];
    va_list ap;

    va_start(ap, ac);
    for (int i = 0; i < ac; i++)
        av[i] = va_arg(ap, char *);
    va_end(ap);
    xmem_settings_init(s);
    err[0] = '\0';
    return xmem_settings_parse(s, ac, av, err, len);
}

static void defaults(void **state)
{
    struct xmem_settings s;
    char err[256];

    assert_int_equal(parse(&s, err, sizeof(err), 0), 0);
    assert_string_equal(s.socket, XMEM_DEFAULT_SOCKET);
    assert_int_equal(s.timeout_s, XMEM_PLUGIN_DEFAULT_TIMEOUT_S);
    assert_int_equal(s.on_failure, XMEM_ON_FAILURE_KEEP);
}

static void all_keys(void **state)
{
    struct xmem_settings s;
    char err[256];

    assert_int_equal(parse(&s, err, sizeof(err), 5, "socket=/tmp/x.sock", "timeout=30",
                           "on_failure=reject", "steps=5", "verbose=yes"),
                     0);
    assert_string_equal(s.socket, "/tmp/x.sock");
    assert_int_equal(s.timeout_s, 30);
    assert_int_equal(s.on_failure, XMEM_ON_FAILURE_REJECT);
    assert_int_equal(s.steps, 5);
    assert_int_equal(s.verbose, 1);
}

/* iterations= is steps='s older name: existing plugstack.conf lines keep working. */
static void iterations_is_read_as_steps(void **state)
{
    struct xmem_settings s;
    char err[256];

    assert_int_equal(parse(&s, err, sizeof(err), 1, "iterations=7"), 0);
    assert_int_equal(s.steps, 7);
}

static void errors_name_key_and_value(void **state)
{
    static const struct {
        const char *arg;
        const char *want;
    } cases[] = {
        {"sockets=/x", "unknown argument 'sockets'"},
        {"timeout=0", "xmem: timeout: invalid value: 0"},
        {"timeout=abc", "xmem: timeout: invalid value: abc"},
        {"timeout=99999", "xmem: timeout: invalid value: 99999"},
        {"on_failure=drop", "xmem: on_failure: invalid value: drop (one of keep|reject)"},
        {"socket=relative.sock", "xmem: socket: invalid value: relative.sock"},
        {"socket=", "xmem: socket: missing value"},
        {"timeout", "xmem: timeout: missing value"},
        {"verbose=2", "xmem: verbose: invalid value: 2"},
    };
    struct xmem_settings s;
    char err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(parse(&s, err, sizeof(err), 1, cases[i].arg), -1);
        if (strstr(err, cases[i].want) == NULL)
            fail_msg("'%s': got '%s', want '%s'", cases[i].arg, err, cases[i].want);
    }
}

static void long_socket_refused(void **state)
{
    struct xmem_settings s;
    char err[512], arg[300] = "socket=/";

    memset(arg + 8, 'a', 200);
    arg[208] = '\0';
    assert_int_equal(parse(&s, err, sizeof(err), 1, arg), -1);
    assert_non_null(strstr(err, "at most 107 bytes"));
}

static void nvml_keys(void **state)
{
    struct xmem_settings s;
    char err[512];

    assert_int_equal(parse(&s, err, sizeof(err), 0), 0);
    assert_string_equal(s.nvml, XMEM_PLUGIN_DEFAULT_NVML);
    assert_int_equal(s.nvml_interval_ms, XMEM_PLUGIN_DEFAULT_NVML_INTERVAL_MS);
    assert_string_equal(s.scontrol, XMEM_PLUGIN_DEFAULT_SCONTROL);
    assert_int_equal(parse(&s, err, sizeof(err), 3, "nvml=/opt/nvidia/libnvidia-ml.so.1",
                           "nvml_interval_ms=200", "scontrol=/opt/slurm/bin/scontrol"),
                     0);
    assert_string_equal(s.nvml, "/opt/nvidia/libnvidia-ml.so.1");
    assert_int_equal(s.nvml_interval_ms, 200);
    assert_string_equal(s.scontrol, "/opt/slurm/bin/scontrol");
    assert_int_equal(parse(&s, err, sizeof(err), 1, "nvml=off"), 0);
    assert_string_equal(s.nvml, "off");
    assert_int_equal(parse(&s, err, sizeof(err), 1, "nvml=lib/libnvidia-ml.so"), -1);
    assert_non_null(strstr(err, "xmem: nvml: invalid value: lib/libnvidia-ml.so"));
    assert_int_equal(parse(&s, err, sizeof(err), 1, "nvml_interval_ms=10"), -1);
    assert_non_null(strstr(err, "an integer from 50 to 60000"));
    assert_int_equal(parse(&s, err, sizeof(err), 1, "scontrol=scontrol"), -1);
    assert_non_null(strstr(err, "xmem: scontrol: invalid value"));
}

int xmem_test_group_settings(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(all_keys),
        cmocka_unit_test(iterations_is_read_as_steps),
        cmocka_unit_test(errors_name_key_and_value),
        cmocka_unit_test(long_socket_refused),
        cmocka_unit_test(nvml_keys),
    };
    return cmocka_run_group_tests_name("settings", tests, NULL, NULL);
}
