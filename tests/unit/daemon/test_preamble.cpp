// test_preamble.cpp — the batch script's preamble: the request fields, the environment it
// leaves to the estimator in the sandbox, and the one line that names a failing line.
#include "cmocka.hpp"
#include "contract/request_env.h"
#include "estimate_job.h"
#include "preamble.h"
#include "test-list.h"

#include <cstring>
#include <unistd.h>

using namespace xmem::server;

static SandboxRun run_with(const std::vector<ScriptLine> &preamble, const std::string &program)
{
    SandboxSpec spec;
    spec.user.uid = getuid();
    spec.user.gid = getgid();
    spec.user.name = "test";
    spec.user.home = "/tmp";
    spec.cwd = "/tmp";
    spec.argv = {"/bin/sh", "-c", program};
    spec.env = sandbox_environment(spec.user, {{"PATH", "/usr/bin:/bin"}});
    spec.limits = SandboxLimits{4096, 10, 256, 1, 10, 0, 64};
    spec.wall_ms = 10000;
    return run_with_preamble(spec, preamble, nullptr);
}

// A literal with NULs in it, all of it.
template <std::size_t N> static std::string nul_text(const char (&lit)[N])
{
    return std::string(lit, N - 1);
}

static void no_preamble_no_shell(void **)
{
    auto r = run_with({}, "echo $0");
    assert_int_equal(r.exit_status, 0);
    assert_string_equal(r.out.c_str(), "/bin/sh\n");
}

// The estimate's channel is no descriptor of the preamble's: what its lines print goes to
// stderr, a line that writes to descriptor 3 or execs a program of its own reaches only the
// environment's channel, and never the estimator's stdout.
static void preamble_cannot_write_the_estimate(void **)
{
    const char *forged = "{\"peak_bytes\": 1, \"limit_bytes\": 1, \"fits\": true}";
    auto r = run_with({{2, std::string("echo '") + forged + "'"}, {3, "printf 'chatter\\n'"}},
                      "echo estimator ran");
    assert_int_equal(r.exit_status, 0);
    assert_string_equal(r.out.c_str(), "estimator ran\n");
    assert_contains(r.err, forged);
    assert_contains(r.err, "chatter");
    for (const char *line : {"echo 'forged' >&3", "exec /bin/sh -c 'echo forged; echo forged >&3'",
                             "exec 3>&-; echo forged"}) {
        std::vector<ScriptLine> pre = {{4, line}};
        r = run_with(pre, "echo estimator ran");
        assert_true(r.out.find("forged") == std::string::npos);
        assert_true(r.out.find("estimator ran") == std::string::npos);
        auto msg = preamble_failure(r, pre);
        assert_true(msg.has_value());
        assert_contains(*msg, "the environment it left could not be read");
    }
    // What the environment's channel may carry: names, a directory; loader code stays out.
    auto e = preamble_env_parse(nul_text("xmem-preamble-env\0/w\0A=1\0LD_PRELOAD=/x.so\0"
                                         "BASH_FUNC_f%%=() { :; }\0CUDA_VISIBLE_DEVICES=0\0"));
    assert_true(e.has_value());
    assert_string_equal(e->cwd.c_str(), "/w");
    assert_string_equal(e->env[0].c_str(), "A=1");
    for (const auto &kv : e->env) {
        assert_true(kv.rfind("LD_PRELOAD=", 0) != 0);
        assert_true(kv != "CUDA_VISIBLE_DEVICES=0");
    }
    assert_false(preamble_env_parse(nul_text("xmem-preamble-env\0relative\0")).has_value());
    assert_false(preamble_env_parse(nul_text("xmem-preamble-env\0/w\0"
                                             "1A=1\0"))
                     .has_value());
    assert_false(preamble_env_parse(nul_text("xmem-preamble-env\0/w\0A=1")).has_value());
    assert_false(preamble_env_parse("{\"peak_bytes\": 1}").has_value());
}

static void estimator_inherits_what_the_preamble_set(void **)
{
    auto r = run_with({{4, "export FOO=bar; PATH=/opt/venv/bin:$PATH"},
                       {5, "cd /"},
                       {6, "export CUDA_VISIBLE_DEVICES=0"}},
                      "echo \"$FOO|$(pwd)|${CUDA_VISIBLE_DEVICES}|$PATH|$XMEM_PROFILING\"");
    assert_true(r.spawned);
    assert_int_equal(r.exit_status, 0);
    // The job's export of a GPU is overridden: no GPU while profiling on a login node.
    assert_contains(r.out, "bar|/||/opt/venv/bin:/usr/bin:/bin|1\n");
    assert_false(preamble_failure(r, {{4, "x"}}).has_value());
}

// Issue 26, L2: a kept line that makes the forced variables read-only cannot keep them: the
// estimator starts with them set again, whatever the preamble's shell made of them.
static void readonly_cannot_keep_the_gpu(void **)
{
    auto r = run_with({{4, "readonly CUDA_VISIBLE_DEVICES=0"},
                       {5, "declare -rx XMEM_PROFILING=0"},
                       {6, "export NVIDIA_VISIBLE_DEVICES=all; readonly NVIDIA_VISIBLE_DEVICES"}},
                      "echo \"${CUDA_VISIBLE_DEVICES}|$XMEM_PROFILING|$NVIDIA_VISIBLE_DEVICES\"");
    assert_true(r.spawned);
    assert_int_equal(r.exit_status, 0);
    assert_contains(r.out, "|1|void\n");
}

static void failing_line_is_named(void **)
{
    std::vector<ScriptLine> pre = {
        {3, "export A=1"}, {7, "source /nonexistent/venv/bin/activate"}, {8, "export NEVER=1"}};
    auto r = run_with(pre, "echo estimator ran");
    assert_int_equal(r.exit_status, 121);
    assert_true(r.out.find("estimator ran") == std::string::npos);
    auto msg = preamble_failure(r, pre);
    assert_true(msg.has_value());
    assert_contains(*msg, "line 7 failed (status 1)");
    assert_contains(*msg, "'source /nonexistent/venv/bin/activate'");
    assert_contains(*msg, "No such file or directory");
    assert_contains(*msg, "python3 -m venv");
    assert_true(msg->find("xmem-preamble: line") == std::string::npos); // bash's own numbering
    assert_true(msg->find('\n') == std::string::npos);

    // A preamble's `set -x` traces the lines; the message still quotes the error.
    pre = {{3, "set -x"}, {4, "cd /nonexistent-dir"}};
    r = run_with(pre, "true");
    msg = preamble_failure(r, pre);
    assert_true(msg.has_value());
    assert_contains(*msg, "line 4 failed");
    assert_contains(*msg, "/nonexistent-dir: No such file or directory (check that the directory");

    std::vector<ScriptLine> mod = {{2, "module load no-such-module/1.0"}};
    r = run_with(mod, "true");
    msg = preamble_failure(r, mod);
    assert_true(msg.has_value());
    assert_contains(*msg, "line 2 failed");
    assert_contains(*msg, "module avail");
}

static void estimator_status_121_is_not_a_preamble(void **)
{
    std::vector<ScriptLine> pre = {{3, "export A=1"}};
    auto r = run_with(pre, "echo 'xmem-preamble-failed 3 1' >&2; exit 121");
    assert_int_equal(r.exit_status, 121);
    // The marker counts only after the newline the shell prints before it.
    assert_false(preamble_failure(r, pre).has_value());
    r = run_with({}, "exit 121");
    assert_false(preamble_failure(r, {}).has_value());
}

static void request_fields(void **)
{
    auto r = estimate_parse(nlohmann::json::parse(R"({"argv":["python","t.py"],"cwd":"/w",
        "env":{"PATH":"/v/bin","CONDA_PREFIX":"/c","HF_HUB_OFFLINE":"1","HF_TOKEN":"secret",
               "LD_PRELOAD":"/evil.so","BASH_ENV":"/x","OMP_NUM_THREADS":"2","HOME":"/h"},
        "preamble":[{"line":4,"text":"module load cuda"}],
        "preamble_skipped":[{"line":5,"text":"srun hostname"}]})"));
    assert_true(r.ok());
    std::vector<std::string> names;
    for (const auto &[k, v] : r.value().env)
        names.push_back(k);
    std::vector<std::string> want = {"CONDA_PREFIX", "HF_HUB_OFFLINE", "OMP_NUM_THREADS", "PATH"};
    assert_true(names == want);
    assert_int_equal(r.value().preamble.size(), 1);
    assert_int_equal(r.value().preamble[0].line, 4);
    assert_int_equal(r.value().skipped.size(), 1);
    for (const char *bad : {R"({"argv":["p"],"cwd":"/w","preamble":[{"line":1,"text":"a\nb"}]})",
                            R"({"argv":["p"],"cwd":"/w","preamble":[{"line":0,"text":"a"}]})",
                            R"({"argv":["p"],"cwd":"/w","preamble":"module load x"})"}) {
        auto b = estimate_parse(nlohmann::json::parse(bad));
        assert_false(b.ok());
        assert_contains(b.error().message, "xmem: preamble:");
    }
}

// The one definition the client and xmemd share (contract/request_env.h).
static void env_whitelist(void **)
{
    auto kept = [](const char *name) { return xmem_request_env_kept(name, strlen(name)) != 0; };
    for (const char *yes :
         {"PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONPATH",
          "LD_LIBRARY_PATH", "MODULEPATH", "_LMFILES_", "PYTORCH_CUDA_ALLOC_CONF", "TORCH_HOME",
          "HF_HUB_OFFLINE", "HF_HOME", "TRANSFORMERS_OFFLINE", "OMP_NUM_THREADS"})
        if (!kept(yes))
            fail_msg("%s should be kept", yes);
    for (const char *no : {"HOME", "LD_PRELOAD", "LD_AUDIT", "BASH_ENV", "ENV",
                           "CUDA_VISIBLE_DEVICES", "HF_TOKEN", "HF_HUB_TOKEN", "CONDA_API_KEY",
                           "PYTORCH_SECRET", "CONDA_", "PATH2", "1PATH", "PA-TH", "",
                           // issue 26, L5: secret words in any case, and more of them
                           "HF_Token", "CONDA_PASSWD", "TORCH_APIKEY", "HF_hub_token",
                           "CONDA_PASSWORD", "HF_AUTH", "TORCH_COOKIE"})
        if (kept(no))
            fail_msg("%s should not be kept", no);
    std::string long_name = "HF_" + std::string(XMEM_REQUEST_ENV_MAX_NAME, 'A');
    assert_false(kept(long_name.c_str()));
}

int test_group_preamble(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_preamble_no_shell),
        cmocka_unit_test(preamble_cannot_write_the_estimate),
        cmocka_unit_test(estimator_inherits_what_the_preamble_set),
        cmocka_unit_test(readonly_cannot_keep_the_gpu),
        cmocka_unit_test(failing_line_is_named),
        cmocka_unit_test(estimator_status_121_is_not_a_preamble),
        cmocka_unit_test(request_fields),
        cmocka_unit_test(env_whitelist),
    };
    return cmocka_run_group_tests_name("preamble", tests, nullptr, nullptr);
}
