// test-payload.cpp — the signed decision's exact one-line payload, the profiler command line,
// and request validation.
#include "cmocka.hpp"
#include "estimate_job.h"
#include "verdict.h"
#include "sha256.h"
#include "signer.h"
#include "test-list.h"

#include <algorithm>

using namespace xmem::server;

// The bound variable names, as the payload carries them.
static std::string env_names()
{
    return "PATH:PYTHONPATH:PYTHONHOME:PYTHONNOUSERSITE:PYTHONUSERBASE:VIRTUAL_ENV:"
           "LD_LIBRARY_PATH:MODULEPATH:MODULESHOME:LOADEDMODULES:_LMFILES_:CUDA_HOME:CUDA_PATH:"
           "PYTORCH_CUDA_ALLOC_CONF:PYTORCH_ALLOC_CONF";
}

static void decision_line(void **)
{
    Decision d{1001,
               42,
               1073741824ULL,
               1288490189ULL,
               "A100-40GB",
               std::string(64, 'a'),
               std::string(64, 'b'),
               "gpu:a100:1",
               std::string(64, 'c'),
               1796230000};
    assert_string_equal(decision_payload(d).c_str(),
                        ("xmem-decision v1 uid=1001 request=42 peak=1073741824 limit=1288490189 "
                         "gpu=A100-40GB script=" +
                         std::string(64, 'a') + " dir=" + std::string(64, 'b') +
                         " gres=gpu:a100:1 envnames=" + env_names() +
                         " env=" + std::string(64, 'c') + " expires=1796230000")
                            .c_str());
    Decision big{
        4294967294u, 18446744073709551615ULL, 0, 1ULL << 40, "H100-80GB", "-", "", "", "", 0};
    assert_string_equal(decision_payload(big).c_str(),
                        ("xmem-decision v1 uid=4294967294 request=18446744073709551615 peak=0 "
                         "limit=1099511627776 gpu=H100-80GB script=- dir=- gres=- envnames=" +
                         env_names() + " env=- expires=0")
                            .c_str());
    // A value cannot carry a second field: the profiler's GPU name is one word.
    Decision evil{1001, 1, 1, 1, "A100 uid=0 limit=1", "", "x dir=y", "gpu:1 uid=0", "", 0};
    assert_string_equal(decision_payload(evil).c_str(),
                        ("xmem-decision v1 uid=1001 request=1 peak=1 limit=1 "
                         "gpu=A100_uid_0_limit_1 script=- dir=x_dir_y gres=gpu:1_uid_0 envnames=" +
                         env_names() + " env=- expires=0")
                            .c_str());
}

// The directory is bound by the digest of the path the profile ran in, spelled as the request
// named it: whatever it holds (spaces, '=', newlines), the payload field is one hex word, and
// the digest is the one job_submit.lua computes with sha256sum over job_desc.work_dir.
static void decision_directory_digest(void **)
{
    assert_string_equal(sha256_hex("/home/u/A").c_str(),
                        "32045075668f86a5ab9f2f1ac402c0e5b41af3e0541c759e499f95a481b58b20");
    std::string odd = "/home/u/my dir=1\nuid=0";
    Decision d{1001, 1, 1, 1, "A100", "-", sha256_hex(odd), "-", "", 0};
    std::string p = decision_payload(d);
    assert_contains(p, " dir=" + sha256_hex(odd) + " gres=- ");
    assert_int_equal(std::count(p.begin(), p.end(), '='), 11);
    assert_true(sha256_hex("/home/u/A") != sha256_hex("/home/u/A/"));
}

// The environment text job_submit.lua rebuilds from job_desc.environment: every bound name in
// order, a length before each value, unset apart from empty, prefix families left out.
static void decision_environment_text(void **)
{
    std::string unset;
    for (size_t i = 0, j = 0; j != std::string::npos; i = j + 1) {
        j = env_names().find(':', i);
        unset += env_names().substr(i, j == std::string::npos ? j : j - i) + "\n";
    }
    assert_string_equal(request_env_text({}).c_str(), unset.c_str());
    std::string t = request_env_text({{"CONDA_PREFIX", "/c"},
                                      {"PATH", "/b:/v/bin"},
                                      {"PYTHONPATH", "a\nPYTHONHOME=x"},
                                      {"VIRTUAL_ENV", ""}});
    assert_string_equal(t.substr(0, t.find("PYTHONNOUSERSITE")).c_str(),
                        "PATH=9:/b:/v/bin\nPYTHONPATH=14:a\nPYTHONHOME=x\nPYTHONHOME\n");
    assert_contains(t, "\nVIRTUAL_ENV=0:\nLD_LIBRARY_PATH\n");
    assert_true(t.find("CONDA") == std::string::npos);
    assert_string_equal(request_env_names().c_str(), env_names().c_str());
}

static void estimator_command_line(void **)
{
    auto a = estimator_argv({"/p/xmem-estimate", "--json"}, "A100-40GB", "2.1", 3,
                            {"python3", "train.py", "--", "x"});
    std::vector<std::string> want = {"/p/xmem-estimate",
                                     "--json",
                                     "--gpu",
                                     "A100-40GB",
                                     "--torch",
                                     "2.1",
                                     "--steps",
                                     "3",
                                     "--",
                                     "python3",
                                     "train.py",
                                     "--",
                                     "x"};
    assert_int_equal(a.size(), want.size());
    for (size_t i = 0; i < want.size(); i++)
        assert_string_equal(a[i].c_str(), want[i].c_str());
    auto b = estimator_argv({"/p"}, "", "", 1, {"t"});
    assert_int_equal(b.size(), 5); // no --gpu/--torch when unknown
    // Past one rank the estimator profiles the job as that many (docs/slurm.md).
    auto c = estimator_argv({"/p"}, "", "", 1, {"t"}, 4);
    assert_int_equal(c.size(), 7);
    assert_string_equal(c[3].c_str(), "--world-size");
    assert_string_equal(c[4].c_str(), "4");
    assert_string_equal(c[5].c_str(), "--");
    assert_int_equal(estimator_argv({"/p"}, "", "", 1, {"t"}, 1).size(), 5);
}

// Parses a request body; *why gets the error when it fails.
static bool parse(const char *text, std::string &why, EstimateRequest *out = nullptr)
{
    auto r = estimate_parse(nlohmann::json::parse(text));
    why = r.ok() ? "" : r.error().message;
    if (r.ok() && out)
        *out = r.value();
    return r.ok();
}

static void request_validation(void **)
{
    std::string why;
    assert_true(parse(R"({"argv":["python3","t.py"],"cwd":"/w","env":{"PATH":"/b","HOME":"/x"},
                          "gpu":"A100-40GB","iterations":2,"deadline_ms":5,"uid":0})",
                      why));
    assert_false(parse(R"({"cwd":"/w"})", why));
    assert_contains(why, "xmem: argv:");
    assert_false(parse(R"({"argv":[],"cwd":"/w"})", why));
    assert_false(parse(R"({"argv":["a",1],"cwd":"/w"})", why));
    assert_false(parse(R"({"argv":["a"],"cwd":"w"})", why));
    assert_contains(why, "xmem: cwd:");
    assert_false(parse(R"({"argv":["a"],"cwd":"/w","gpu":"A 100"})", why));
    assert_contains(why, "xmem: gpu:");
    // The GPU request is signed into the decision: one word, never a second field.
    EstimateRequest g;
    assert_true(parse(R"({"argv":["a"],"cwd":"/w","gres":"gpu:a100:1"})", why, &g));
    assert_string_equal(g.gres.c_str(), "gpu:a100:1");
    assert_false(parse(R"({"argv":["a"],"cwd":"/w","gres":"gpu:1 uid=0"})", why));
    assert_contains(why, "xmem: gres:");
    assert_false(parse(R"({"argv":["a"],"cwd":"/w","iterations":-1})", why));
    assert_false(parse(R"({"argv":["a"],"cwd":"/w","deadline_ms":0})", why));
    assert_false(parse(R"({"argv":["a"],"cwd":"/w","env":{"PATH":3}})", why));
    // Only the relevant variables survive, in a fixed order.
    EstimateRequest r;
    assert_true(
        parse(R"({"argv":["a"],"cwd":"/w","env":{"PYTHONPATH":"p","LD_PRELOAD":"x","PATH":"b"}})",
              why, &r));
    assert_int_equal(r.env.size(), 2);
    assert_string_equal(r.env[0].first.c_str(), "PATH");
    assert_string_equal(r.env[1].first.c_str(), "PYTHONPATH");
}

static void request_steps_and_allocator_env(void **)
{
    std::string why;
    EstimateRequest r;
    assert_true(parse(R"({"argv":["a"],"cwd":"/w","steps":4})", why, &r));
    assert_int_equal(r.steps, 4);
    // "iterations" is the field's older name; an older client still sends it.
    assert_true(parse(R"({"argv":["a"],"cwd":"/w","iterations":5})", why, &r));
    assert_int_equal(r.steps, 5);
    assert_false(parse(R"({"argv":["a"],"cwd":"/w","steps":1001})", why));
    assert_contains(why, "xmem: steps: expected an integer from 0 (site default) to 1000");
    // Both names of PyTorch's allocator settings travel with the request.
    assert_true(parse(R"({"argv":["a"],"cwd":"/w","env":{"PYTORCH_ALLOC_CONF":"x",
                                 "PYTORCH_CUDA_ALLOC_CONF":"y"}})",
                      why, &r));
    assert_int_equal(r.env.size(), 2);
    // Sorted by name: the order the cache key hashes them in.
    assert_string_equal(r.env[0].first.c_str(), "PYTORCH_ALLOC_CONF");
    assert_string_equal(r.env[1].first.c_str(), "PYTORCH_CUDA_ALLOC_CONF");
}

int test_group_payload(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(decision_line),
                                       cmocka_unit_test(decision_directory_digest),
                                       cmocka_unit_test(decision_environment_text),
                                       cmocka_unit_test(estimator_command_line),
                                       cmocka_unit_test(request_validation),
                                       cmocka_unit_test(request_steps_and_allocator_env)};
    return cmocka_run_group_tests_name("payload", tests, nullptr, nullptr);
}
