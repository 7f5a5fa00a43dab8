/* test_export.c — the environment sbatch exports to a job (--export, SBATCH_EXPORT). */
#include <string.h>

#include "test-list.h"
#include "export.h"

static char *submission[] = {"PATH=/venv/bin:/usr/bin", "VIRTUAL_ENV=/venv", "HOME=/home/a",
                             "HF_HUB_OFFLINE=1", NULL};

static const char *get(char **env, const char *name)
{
    size_t len = strlen(name);
    for (char **e = env; e != NULL && *e != NULL; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e + len + 1;
    return NULL;
}

static int count(char **env)
{
    int n = 0;
    while (env[n] != NULL)
        n++;
    return n;
}

static void all_is_the_default(void **state)
{
    char **env = xmem_export_env(NULL, submission);

    (void)state;
    assert_int_equal(count(env), 4);
    assert_string_equal(get(env, "PATH"), "/venv/bin:/usr/bin");
    xmem_argv_free(env);
    env = xmem_export_env("ALL", submission);
    assert_int_equal(count(env), 4);
    xmem_argv_free(env);
}

static void none_exports_nothing(void **state)
{
    char **env = xmem_export_env("NONE", submission);

    (void)state;
    assert_non_null(env);
    assert_int_equal(count(env), 0);
    xmem_argv_free(env);
    env = xmem_export_env("NIL", submission);
    assert_int_equal(count(env), 0);
    xmem_argv_free(env);
}

static void explicit_lists(void **state)
{
    char **env = xmem_export_env("PATH,HF_HOME=/scratch/hf,MISSING", submission);

    (void)state;
    assert_int_equal(count(env), 2);
    assert_string_equal(get(env, "PATH"), "/venv/bin:/usr/bin");
    assert_string_equal(get(env, "HF_HOME"), "/scratch/hf");
    assert_null(get(env, "VIRTUAL_ENV"));
    xmem_argv_free(env);
    /* ALL plus an override: the item wins over the submission's value. */
    env = xmem_export_env("ALL,VIRTUAL_ENV=/other,PATH=/other/bin", submission);
    assert_int_equal(count(env), 4);
    assert_string_equal(get(env, "VIRTUAL_ENV"), "/other");
    assert_string_equal(get(env, "PATH"), "/other/bin");
    assert_string_equal(get(env, "HOME"), "/home/a");
    xmem_argv_free(env);
}

static void spec_order(void **state)
{
    struct xmem_cmdline c;

    (void)state;
    memset(&c, 0, sizeof(c));
    assert_string_equal(xmem_export_spec(&c, NULL), "ALL");
    c.script_export_env = "NONE";
    assert_string_equal(xmem_export_spec(&c, NULL), "NONE");
    assert_string_equal(xmem_export_spec(&c, "PATH"), "PATH"); /* SBATCH_EXPORT over #SBATCH */
    c.export_env = "ALL";
    assert_string_equal(xmem_export_spec(&c, "PATH"), "ALL"); /* the command line over both */
}

static void cmdline_and_script_export(void **state)
{
    char *argv[] = {"sbatch", "--export=NONE", "--xmem", "job.sh", NULL};
    char *script[] = {"--export=ALL,X=1", NULL};
    struct xmem_cmdline c;
    char err[256];

    (void)state;
    assert_int_equal(xmem_cmdline_scan(4, argv, &c, err, sizeof(err)), 0);
    assert_string_equal(c.export_env, "NONE");
    xmem_cmdline_apply_script(&c, script, 1);
    assert_string_equal(c.export_env, "NONE");
    assert_string_equal(c.script_export_env, "ALL,X=1");
    assert_string_equal(xmem_export_spec(&c, NULL), "NONE");
}

int xmem_test_group_export(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_is_the_default),
        cmocka_unit_test(none_exports_nothing),
        cmocka_unit_test(explicit_lists),
        cmocka_unit_test(spec_order),
        cmocka_unit_test(cmdline_and_script_export),
    };
    return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
