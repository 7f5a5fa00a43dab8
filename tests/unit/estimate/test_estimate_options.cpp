// options: the xmem-estimate command line; every mistake is one clear line.
#include "estimate_options.h"
#include "what_if.h"

#include "est_helpers.h"

using namespace esttest;
using namespace xmem::estimate;

namespace
{

xmem::Result<EstimateOptions> parse(std::vector<std::string> args)
{
    args.insert(args.begin(), "xmem-estimate");
    std::vector<char *> argv;
    for (std::string &a : args)
        argv.push_back(a.data());
    return parse_options(static_cast<int>(argv.size()), argv.data());
}

} // namespace

static void full_command_line(void **)
{
    auto r = parse({"--gpu", "H100-80GB", "--torch=2.4", "--alloc-conf", "expandable_segments:True",
                    "--steps", "4", "--json", "--timeline", "t.html", "--margin", "0.1", "--",
                    "python3", "train.py", "--json"});
    assert_true(r.ok());
    const EstimateOptions &o = r.value();
    EXPECT_STR(o.gpu, "H100-80GB");
    EXPECT_STR(*o.torch, "2.4");
    EXPECT_STR(*o.alloc_conf, "expandable_segments:True");
    EXPECT_U64(o.steps, 4);
    assert_true(o.warnings.empty());
    assert_true(o.json);
    EXPECT_STR(o.timeline_out, "t.html");
    EXPECT_U64(o.command.size(), 3);
    EXPECT_STR(o.command[2], "--json"); // the job's own arguments are left alone
    assert_true(*o.margin > 0.099 && *o.margin < 0.101);
}

static void defaults_and_trace_in(void **)
{
    auto r = parse({"--trace-in", "run.xtrace"});
    assert_true(r.ok());
    EXPECT_STR(r.value().gpu, "A100-40GB");
    EXPECT_U64(r.value().steps, 3);
    assert_false(r.value().alloc_conf.has_value());
    assert_false(r.value().torch.has_value()); // the job's own, from the trace
}

// --iterations is the older name of --steps: still accepted, with one warning line however
// often it is given (bench/ and users' scripts pass it).
static void iterations_is_a_deprecated_alias(void **)
{
    auto r = parse({"--iterations", "5", "--iterations=6", "--", "x"});
    assert_true(r.ok());
    EXPECT_U64(r.value().steps, 6);
    EXPECT_U64(r.value().warnings.size(), 1);
    EXPECT_STR(r.value().warnings[0], "xmem: --iterations is now --steps");
}

static void mistakes_are_single_clear_lines(void **)
{
    EXPECT_CONTAINS(parse({"--steps", "0", "--", "x"}).error().message,
                    "xmem: --steps: expected a whole number >= 1, got '0'");
    EXPECT_CONTAINS(parse({"--steps", "-3", "--", "x"}).error().message, "--steps");
    EXPECT_CONTAINS(parse({"--margin", "2", "--", "x"}).error().message,
                    "xmem: --margin: expected a fraction");
    EXPECT_CONTAINS(parse({"--colour", "--", "x"}).error().message,
                    "xmem: --colour: unknown option");
    EXPECT_CONTAINS(parse({"--gpu"}).error().message, "xmem: --gpu: needs a value");
    EXPECT_CONTAINS(parse({}).error().message, "no training command");
    EXPECT_CONTAINS(parse({"--trace-in", "t", "--", "python3"}).error().message, "pick one");
    assert_true(parse({"--help"}).ok());
}

// Issue 17 class 10: --torch 2.99 was accepted and simulated as the newest release.
static void unknown_torch_releases_are_refused(void **)
{
    EXPECT_CONTAINS(parse({"--torch", "2.99", "--", "x"}).error().message,
                    "xmem: --torch 2.99: unknown PyTorch release (known: 1.13, 2.0, 2.1");
    EXPECT_CONTAINS(parse({"--torch", "0.4", "--", "x"}).error().message, "known: 1.13");
    for (const char *v : {"1.13", "1.13.1", "2.0", "2.6", "2.9", "2.4.1+cu121"})
        assert_true(parse({"--torch", v, "--", "x"}).ok());
}

static void sweep_options_and_what_a_sweep_refuses(void **)
{
    auto r = parse({"--fit", "20G", "--sweep", "--batch-size=8,16", "--sweep-jobs", "3", "--",
                    "python3", "train.py"});
    assert_true(r.ok());
    EXPECT_STR(r.value().sweep, "--batch-size=8,16");
    EXPECT_U64(r.value().fit_bytes, 20ull << 30);
    EXPECT_U64(r.value().sweep_jobs, 3);
    auto w = parse({"--what-if", "alloc-conf=expandable_segments:True", "--", "python3", "t.py"});
    assert_true(w.ok());
    EXPECT_STR(w.value().what_if.at(0), "alloc-conf=expandable_segments:True");
    struct {
        std::vector<std::string> args;
        const char *says;
    } refused[] = {
        {{"--fit", "20G", "--", "python3", "t.py"}, "xmem: --fit: sizes a sweep's values"},
        {{"--fit", "lots", "--sweep", "--bs=1", "--", "python3", "t.py"}, "xmem: --fit: expected"},
        {{"--sweep", "--bs=1", "--trace-in", "t.xtrace"}, "xmem: --sweep: reruns the command"},
        {{"--sweep", "--bs=1", "--timeline", "t.html", "--", "python3", "t.py"},
         "xmem: --sweep: --timeline"},
        {{"--sweep", "--bs=1", "--what-if", "amp=bf16", "--", "python3", "t.py"},
         "xmem: --what-if: with --sweep"},
    };
    for (const auto &c : refused) {
        auto bad = parse(c.args);
        assert_false(bad.ok());
        EXPECT_CONTAINS(bad.error().message, c.says);
    }
}

// Each change is taken with the one value xmem can apply (alloc-conf: any settings, which
// the analysis checks), and knows where it is applied; anything else is one line.
static void what_if_changes_and_where_each_is_applied(void **)
{
    auto w = parse({"--what-if", "alloc-conf=expandable_segments:True", "--what-if", "amp=bf16",
                    "--what-if=checkpoint=all-blocks", "--what-if", "optimizer=fused", "--",
                    "python3", "t.py"});
    assert_true(w.ok());
    const std::vector<std::string> &changes = w.value().what_if;
    assert_int_equal(changes.size(), 4);
    EXPECT_STR(changes.at(2), "checkpoint=all-blocks");
    assert_false(applied_in_capture(changes.at(0))); // a replay of the same trace
    for (size_t i = 1; i < changes.size(); ++i)
        assert_true(applied_in_capture(changes.at(i))); // the job profiled again
    assert_true(parse({"--trace-in", "t.xtrace", "--what-if", "alloc-conf=x:1"}).ok());
    struct {
        std::vector<std::string> args;
        const char *says;
    } refused[] = {
        {{"--what-if", "amp=fp16", "--", "python3", "t.py"},
         "xmem: --what-if amp=fp16: fp16 needs a GradScaler in the training loop"},
        {{"--what-if", "amp=int8", "--", "python3", "t.py"},
         "xmem: --what-if amp=int8: unknown value (amp=bf16 only)"},
        {{"--what-if", "checkpoint=every-other", "--", "python3", "t.py"},
         "xmem: --what-if checkpoint=every-other: unknown value (checkpoint=all-blocks only)"},
        {{"--what-if", "optimizer=adam8bit", "--", "python3", "t.py"},
         "xmem: --what-if optimizer=adam8bit: unknown value (optimizer=fused only)"},
        {{"--trace-in", "t.xtrace", "--what-if", "optimizer=fused"},
         "xmem: --what-if optimizer=fused: profiles the job again with the change applied; a "
         "trace (--trace-in) has no command to run"},
        {{"--what-if", "colour=red", "--", "python3", "t.py"},
         "xmem: --what-if colour=red: unknown change (known: alloc-conf=SETTINGS, amp=bf16, "
         "checkpoint=all-blocks, optimizer=fused)"},
        {{"--what-if", "alloc-conf", "--", "python3", "t.py"},
         "xmem: --what-if alloc-conf: expected KEY=VALUE"},
        {{"--what-if", "amp=", "--", "python3", "t.py"},
         "xmem: --what-if amp=: expected KEY=VALUE"},
    };
    for (const auto &c : refused) {
        auto bad = parse(c.args);
        assert_false(bad.ok());
        EXPECT_STR(bad.error().message.substr(0, std::string(c.says).size()), c.says);
        assert_true(bad.error().message.find('\n') == std::string::npos); // one line
    }
}

int run_estimate_options_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sweep_options_and_what_a_sweep_refuses),
        cmocka_unit_test(what_if_changes_and_where_each_is_applied),
        cmocka_unit_test(full_command_line),
        cmocka_unit_test(defaults_and_trace_in),
        cmocka_unit_test(iterations_is_a_deprecated_alias),
        cmocka_unit_test(mistakes_are_single_clear_lines),
        cmocka_unit_test(unknown_torch_releases_are_refused),
    };
    return cmocka_run_group_tests_name("options", tests, nullptr, nullptr);
}
