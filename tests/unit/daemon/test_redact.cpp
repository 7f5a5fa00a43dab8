// test-redact.cpp — what the ledger keeps of argv, script lines and values (issue 26, L5).
#include "cmocka.hpp"
#include "redact.h"
#include "test-list.h"

using namespace xmem::server;

static void argv_option_values(void **)
{
    assert_string_equal(
        redact_argv({"python", "train.py", "--api-key=abc123", "--hf_token", "hf_x", "--lr", "3"})
            .c_str(),
        "python train.py --api-key=*** --hf_token *** --lr 3");
    assert_string_equal(redact_argv({"train.py", "--Password", "--epochs", "2"}).c_str(),
                        "train.py --Password --epochs 2"); // no value given: nothing to hide
    assert_string_equal(redact_argv({"train.py", "--data", "s3://u:p@bucket/x"}).c_str(),
                        "train.py --data s3://***@bucket/x");
}

static void script_lines(void **)
{
    assert_string_equal(redact_text("export HF_Token=hf_abc").c_str(), "export HF_Token=***");
    assert_string_equal(redact_text("CONDA_PASSWD=x  python t.py --secret-file=/a").c_str(),
                        "CONDA_PASSWD=***  python t.py --secret-file=***");
    assert_string_equal(
        redact_text("pip install --index-url https://me:tok@pypi.example/simple x").c_str(),
        "pip install --index-url https://***@pypi.example/simple x");
    assert_string_equal(redact_text("module load cuda/12.4").c_str(), "module load cuda/12.4");
    assert_string_equal(redact_text("source ~/venv/bin/activate").c_str(),
                        "source ~/venv/bin/activate");
}

static void values(void **)
{
    assert_string_equal(redact_text("https://user:pw@hf.example").c_str(),
                        "https://***@hf.example");
    assert_string_equal(redact_text("/usr/bin:/bin").c_str(), "/usr/bin:/bin");
    assert_string_equal(redact_text("http://host/a@b").c_str(), "http://host/a@b");
}

int test_group_redact(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(argv_option_values),
                                       cmocka_unit_test(script_lines), cmocka_unit_test(values)};
    return cmocka_run_group_tests_name("redact", tests, nullptr, nullptr);
}
