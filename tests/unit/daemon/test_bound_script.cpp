// test_bound_script.cpp — the batch script a decision is bound to: read or built from --wrap,
// hashed, and checked against the request's argv and preamble with the plugin's own parser
// (daemon/script/xmem_script.h), so a client cannot name big.sh and profile tiny.py.
#include "bound_script.h"
#include "cmocka.hpp"
#include "test-list.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace xmem::server;

static const char *k_big =
    "#!/bin/bash\n#SBATCH --gres=gpu:1\nmodule load cuda\n"
    "srun hostname\nOMP_NUM_THREADS=4 srun -n 1 python3 big.py --layers 96\n";

static BoundScript script_of(const std::string &text)
{
    char path[] = "/tmp/xmem-bound-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text.data(), text.size()), (ssize_t)text.size());
    close(fd);
    auto s = bound_script_read(path, "", "/");
    unlink(path);
    assert_true(s.ok());
    return s.value();
}

static void reads_and_hashes(void **)
{
    BoundScript s = script_of("x\n");
    // sha256("x\n"), as sha256sum prints it (and job_submit.lua computes it).
    assert_string_equal(s.sha256.c_str(),
                        "73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac");
    auto none = bound_script_read("", "", "/");
    assert_true(none.ok());
    assert_string_equal(none.value().sha256.c_str(), "-");
    assert_false(bound_script_mismatch(none.value(), {"python3", "any.py"}, {}).has_value());
    auto missing = bound_script_read("no-such.sbatch", "", "/nonexistent");
    assert_false(missing.ok());
    assert_contains(missing.error().message,
                    "xmem: cannot read the batch script /nonexistent/no-such.sbatch");
}

static void request_must_profile_what_the_script_runs(void **)
{
    BoundScript s = script_of(k_big);
    std::vector<ScriptLine> pre = {{3, "module load cuda"}, {5, "export OMP_NUM_THREADS=4"}};
    assert_false(
        bound_script_mismatch(s, {"python3", "big.py", "--layers", "96"}, pre).has_value());
    // big.sh's path with tiny.py's argv: refused, naming both commands.
    auto why = bound_script_mismatch(s, {"python3", "tiny.py"}, pre);
    assert_true(why.has_value());
    assert_contains(*why, "xmem: the request profiles 'python3 tiny.py', but ");
    assert_contains(*why, " runs 'python3 big.py --layers 96' (line 5) (submit with sbatch --xmem");
    // The right argv, another preamble (a line dropped, or moved): the profile would differ.
    why = bound_script_mismatch(s, {"python3", "big.py", "--layers", "96"}, {pre[0]});
    assert_true(why.has_value());
    assert_contains(*why, "xmem: the request's preamble is not the environment lines ");
    assert_true(bound_script_mismatch(s, {"python3", "big.py", "--layers", "96"},
                                      {{2, "module load cuda"}, pre[1]})
                    .has_value());
    // A script with no entrypoint binds nothing a request could profile.
    why = bound_script_mismatch(script_of("#!/bin/sh\nhostname\n"), {"python3", "t.py"}, {});
    assert_true(why.has_value());
    assert_contains(*why, "names no training entrypoint, but the request profiles 'python3 t.py'");
}

static void wrap_is_bound_to_its_command(void **)
{
    auto a = bound_script_read("", "python3 a.py", "/");
    auto b = bound_script_read("", "python3 b.py", "/");
    assert_true(a.ok() && b.ok());
    // The digest of the bytes sbatch submits, so one --wrap decision does not fit another.
    assert_string_equal(a.value().sha256.c_str(), script_of(a.value().text).sha256.c_str());
    assert_string_not_equal(a.value().sha256.c_str(), b.value().sha256.c_str());
    assert_false(bound_script_mismatch(a.value(), {"python3", "a.py"}, {}).has_value());
    assert_true(bound_script_mismatch(a.value(), {"python3", "b.py"}, {}).has_value());
}

int test_group_bound_script(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(reads_and_hashes),
                                       cmocka_unit_test(request_must_profile_what_the_script_runs),
                                       cmocka_unit_test(wrap_is_bound_to_its_command)};
    return cmocka_run_group_tests_name("bound_script", tests, nullptr, nullptr);
}
