/* test_requeue.c — the requeue after a CUDA OOM on a share: the oom_requeue= option, what
 * job_submit.lua wrote in the AdminComment, the mark, the decision and the scontrol command lines.
 */
#include <stdio.h>
#include <string.h>

#include "test-list.h"
#include "acct.h"
#include "enforce.h"
#include "jobinfo.h"
#include "requeue.h"

/* What job_submit.lua appends for a packed job, after the user's own comment. */
static const char packed[] = "my run; xmem: estimate=7200M limit=8000M policy=shard "
                             "request=gres:gpu:1->shard:3";

static void option_values(void **state)
{
    struct xmem_requeue_option o;
    char err[256];

    assert_int_equal(xmem_requeue_option_parse("whole", &o, err, sizeof(err)), 0);
    assert_int_equal(o.mode, XMEM_REQUEUE_WHOLE);
    assert_int_equal(xmem_requeue_option_parse("off", &o, err, sizeof(err)), 0);
    assert_int_equal(o.mode, XMEM_REQUEUE_OFF);
    assert_int_equal(xmem_requeue_option_parse("factor:1.5", &o, err, sizeof(err)), 0);
    assert_int_equal(o.mode, XMEM_REQUEUE_FACTOR);
    assert_true(o.factor == 1.5);
    assert_int_equal(xmem_requeue_option_parse("factor:10", &o, err, sizeof(err)), 0);
    const char *bad[] = {
        "factor:1", "factor:0.5", "factor:10.01", "factor:",  "factor:2x", "factor:nan",
        "Whole",    "",           "on",           "factor:-3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(xmem_requeue_option_parse(bad[i], &o, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "xmem: oom_requeue: invalid value: "));
    }
}

static void settings_key(void **state)
{
    struct xmem_settings s;
    char err[256];
    char *def[] = {"socket=/run/x.sock"}, *factor[] = {"oom_requeue=factor:2"},
         *bad[] = {"oom_requeue=twice"};

    xmem_settings_init(&s);
    assert_int_equal(xmem_settings_parse(&s, 1, def, err, sizeof(err)), 0);
    assert_int_equal(s.oom_requeue.mode, XMEM_REQUEUE_WHOLE); /* the default */
    assert_int_equal(xmem_settings_parse(&s, 1, factor, err, sizeof(err)), 0);
    assert_int_equal(s.oom_requeue.mode, XMEM_REQUEUE_FACTOR);
    assert_int_equal(xmem_settings_parse(&s, 1, bad, err, sizeof(err)), -1);
    assert_string_equal(err, "xmem: oom_requeue: invalid value: twice (whole, off, or factor:F "
                             "with F above 1 and at most 10)");
}

static void comment_packed(void **state)
{
    struct xmem_packed p;

    assert_true(xmem_comment_packed(packed, &p));
    assert_string_equal(p.original, "gres:gpu:1");
    assert_string_equal(p.share.kind, "shard");
    assert_int_equal(p.share.count, 3);
    assert_int_equal(p.limit_mb, 8000);
    assert_int_equal(p.estimate_mb, 7200);
    assert_true(xmem_comment_packed("xmem: estimate=declared limit=4096M policy=mps "
                                    "request=gres:gpu:1->mps:11",
                                    &p));
    assert_int_equal(p.estimate_mb, 0); /* a declared budget: no estimate */
    assert_string_equal(p.share.kind, "mps");
    assert_int_equal(p.share.count, 11);
    /* The last packing part counts (job_submit.lua appends after the user's words); a forged
     * one that is not the job's share is caught by the decision (TresPerNode). */
    assert_true(xmem_comment_packed("xmem: estimate=1M limit=9M policy=shard request=gres:gpu:"
                                    "1->shard:1; xmem: estimate=1M limit=8M policy=shard "
                                    "request=gres:gpu:1->shard:2",
                                    &p));
    assert_int_equal(p.share.count, 2);
    assert_int_equal(p.limit_mb, 8);
    /* srun outside a job: cli_filter.lua asked for the share already. */
    assert_true(xmem_comment_packed("xmem: estimate=declared limit=4096M policy=shard "
                                    "request=gres:shard:2->shard:2",
                                    &p));
    assert_string_equal(p.original, "gres:shard:2");
    assert_int_equal(p.limit_mb, 4096);
    /* Not packed, or not in xmem's form. */
    const char *no[] = {
        "",
        "xmem: policy=shard request=gres:gpu:2 (unchanged: version 1 rewrites ...)",
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1 (check only)",
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:2->shard:3",
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:nic:2->shard:3",
        "xmem: estimate=7200M limit=8000M policy=shard request=shard:2->shard:3",
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1->gpu:1",
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1->shard:0",
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1->shard:3x",
        "xmem: estimate=7200M limit=8000 policy=shard request=gres:gpu:1->shard:3",
        "xmem: estimate=7200M limit=0M policy=shard request=gres:gpu:1->shard:3",
        "xmem: estimate=7200M policy=shard request=gres:gpu:1->shard:3",
        /* Numbers strtoull would read: one rule (xmem_decimal_parse). */
        "xmem: estimate=7200M limit=1e3M policy=shard request=gres:gpu:1->shard:3",
        "xmem: estimate=7200M limit=+8000M policy=shard request=gres:gpu:1->shard:3",
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1->shard:+3",
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1->shard: 3",
        "xmem: estimate=7200M limit=0x10M policy=shard request=gres:gpu:1->shard:3",
    };
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        if (xmem_comment_packed(no[i], &p))
            fail_msg("accepted: %s", no[i]);
}

/* What the node holds a job to: root's record only (remote_enforce.c). */
static void record_limit(void **state)
{
    struct xmem_record_limit r;
    const char *rec = "xmem: estimate=3072M limit=4096M policy=shard required=dmem "
                      "request=gres:gpu:1->shard:2";
    char text[512];

    assert_true(xmem_record_limit(rec, false, &r));
    assert_int_equal(r.limit_mb, 4096);
    assert_int_equal(r.rerun, 0);
    assert_string_equal(r.required, "dmem");
    assert_int_equal(r.nodes, 1);
    /* One GPU on each of 2 nodes: every node holds its rank (remote_enforce.c). */
    assert_true(xmem_record_limit("xmem: estimate=1M limit=9M policy=shard nodes=2 "
                                  "request=gres:gpu:1->shard:1",
                                  false, &r));
    assert_int_equal(r.nodes, 2);
    assert_int_equal(r.limit_mb, 9);
    assert_false(xmem_record_limit("xmem: estimate=1M limit=9M policy=shard nodes=0 "
                                   "request=gres:gpu:1->shard:1",
                                   false, &r));
    assert_false(xmem_record_limit("xmem: estimate=1M limit=9M policy=shard nodes=1e3 "
                                   "request=gres:gpu:1->shard:1",
                                   false, &r));
    /* No level required: none in the record. */
    assert_true(xmem_record_limit(packed, false, &r));
    assert_string_equal(r.required, "");
    /* A level name too long for any level, or empty: unknown, which no level meets. */
    assert_true(xmem_record_limit("xmem: estimate=1M limit=9M policy=shard "
                                  "required=dmem-and-then-some request=gres:gpu:1->shard:1",
                                  false, &r));
    assert_string_equal(r.required, "?");
    assert_false(xmem_enforce_meets(XMEM_ENFORCE_DMEM, r.required));
    /* Not packed: nothing to hold. */
    assert_false(xmem_record_limit("", false, &r));
    assert_false(xmem_record_limit("xmem: estimate=7200M limit=8000M policy=shard "
                                   "request=gres:gpu:1 (check only)",
                                   false, &r));
    /* A rerun: the mark's limit, none when whole; a mark without a restart is not yet one. */
    snprintf(text, sizeof(text),
             "%s; xmem: requeued after CUDA OOM from=shard:2 limit=4096M "
             "to=shard:4 limit=8192M",
             rec);
    assert_true(xmem_record_limit(text, true, &r));
    assert_int_equal(r.rerun, 1);
    assert_int_equal(r.limit_mb, 8192);
    assert_string_equal(r.required, "dmem");
    assert_true(xmem_record_limit(text, false, &r));
    assert_int_equal(r.rerun, 0);
    assert_int_equal(r.limit_mb, 4096);
    snprintf(text, sizeof(text),
             "%s; xmem: requeued after CUDA OOM from=shard:2 limit=4096M "
             "to=shard:10 whole",
             rec);
    assert_true(xmem_record_limit(text, true, &r));
    assert_int_equal(r.limit_mb, 0);
}

static void node_shares(void **state)
{
    unsigned n = 0;

    assert_int_equal(xmem_node_share_per_gpu("gpu:2,shard:20", "shard", &n), 0);
    assert_int_equal(n, 10);
    assert_int_equal(xmem_node_share_per_gpu("gpu:a100:4(S:0-1),mps:400(S:0-1)", "mps", &n), 0);
    assert_int_equal(n, 100);
    assert_int_equal(xmem_node_share_per_gpu("gpu:2,shard:20", "mps", &n), -1);
    assert_int_equal(xmem_node_share_per_gpu("shard:20", "shard", &n), -1);
    assert_int_equal(xmem_node_share_per_gpu("gpu:3,shard:20", "shard", &n), -1); /* uneven */
    assert_int_equal(xmem_node_share_per_gpu("(null)", "shard", &n), -1);
    /* A multi-node job's nodes (scontrol show node gpu[1-2]): each must say the same. */
    const char *two = "NodeName=gpu1 Arch=x86_64\n   Gres=gpu:2,shard:20\n   NodeAddr=a\n"
                      "NodeName=gpu2 Arch=x86_64\n   Gres=gpu:2,shard:20(S:0)\n   NodeAddr=b\n";
    assert_int_equal(xmem_nodes_share_per_gpu(two, "shard", &n), 0);
    assert_int_equal(n, 10);
    const char *differ =
        "NodeName=gpu1\n   Gres=gpu:2,shard:20\nNodeName=gpu2\n   Gres=gpu:2,shard:16\n";
    assert_int_equal(xmem_nodes_share_per_gpu(differ, "shard", &n), -1);
    assert_int_equal(xmem_nodes_share_per_gpu("NodeName=gpu1\n", "shard", &n), -1);
}

static void mark_round_trip(void **state)
{
    struct xmem_requeue_plan plan = {.reason = XMEM_REQUEUE_OOM,
                                     .from = {"shard", 3},
                                     .to = {"shard", 10},
                                     .from_limit_mb = 8000,
                                     .whole = 1},
                             back;
    char mark[256], comment[512];

    assert_int_equal(xmem_requeue_mark_format(&plan, mark, sizeof(mark)), 0);
    assert_string_equal(mark, "xmem: requeued after CUDA OOM from=shard:3 limit=8000M "
                              "to=shard:10 whole");
    snprintf(comment, sizeof(comment), "%s; %s", packed, mark);
    assert_true(xmem_comment_marked(comment));
    assert_false(xmem_comment_marked(packed));
    assert_int_equal(xmem_requeue_mark_parse(comment, &back), 0);
    assert_string_equal(back.reason, "CUDA OOM");
    assert_true(back.whole);
    assert_int_equal(back.from.count, 3);
    assert_int_equal(back.to.count, 10);
    assert_int_equal(back.from_limit_mb, 8000);
    assert_int_equal(back.to_limit_mb, 0);

    plan.whole = 0;
    plan.to.count = 6;
    plan.to_limit_mb = 16000;
    assert_int_equal(xmem_requeue_mark_format(&plan, mark, sizeof(mark)), 0);
    assert_int_equal(xmem_requeue_mark_parse(mark, &back), 0);
    assert_false(back.whole);
    assert_int_equal(back.to.count, 6);
    assert_int_equal(back.from_limit_mb, 8000);
    assert_int_equal(back.to_limit_mb, 16000);
    /* A reason that would break the comment's syntax is refused. */
    snprintf(plan.reason, sizeof(plan.reason), "x; y");
    assert_int_equal(xmem_requeue_mark_format(&plan, mark, sizeof(mark)), -1);
    /* Forgeries that do not parse are ignored by the rerun. */
    assert_int_equal(xmem_requeue_mark_parse("xmem: requeued after CUDA OOM from=gpu:1 "
                                             "limit=8000M to=shard:10 whole",
                                             &back),
                     -1);
    assert_int_equal(xmem_requeue_mark_parse("xmem: requeued after CUDA OOM from=shard:3 "
                                             "limit=8000M to=shard:6 limit=-1M",
                                             &back),
                     -1);
}

/* A packed, OOMed batch job on a node with 10 shards per GPU. */
static struct xmem_requeue_facts oomed(void)
{
    struct xmem_requeue_facts f = {.cuda_oom = 1,
                                   .on_share = 1,
                                   .batch = 1,
                                   .admin_comment = packed,
                                   .tres_per_node = "gres:shard:3",
                                   .per_gpu = 10};
    return f;
}

static void decision(void **state)
{
    struct xmem_requeue_option whole = {XMEM_REQUEUE_WHOLE, 0}, off = {XMEM_REQUEUE_OFF, 0},
                               factor = {XMEM_REQUEUE_FACTOR, 2}, big = {XMEM_REQUEUE_FACTOR, 4};
    struct xmem_requeue_facts f = oomed();
    struct xmem_requeue_plan plan;
    char why[256], marked[512];

    assert_true(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    assert_true(plan.whole);
    assert_string_equal(plan.to.kind, "shard");
    assert_int_equal(plan.to.count, 10);
    assert_int_equal(plan.to_limit_mb, 0);
    assert_string_equal(plan.reason, XMEM_REQUEUE_OOM);

    assert_true(xmem_requeue_decide(&factor, &f, &plan, why, sizeof(why)));
    assert_false(plan.whole);
    assert_int_equal(plan.to.count, 6);
    assert_int_equal(plan.to_limit_mb, 16000);
    /* 3 x 4 = 12 shards: more than the GPU has, so whole. */
    assert_true(xmem_requeue_decide(&big, &f, &plan, why, sizeof(why)));
    assert_true(plan.whole);
    assert_int_equal(plan.to.count, 10);

    /* Off, no OOM, not on a share: silently nothing. */
    assert_false(xmem_requeue_decide(&off, &f, &plan, why, sizeof(why)));
    assert_string_equal(why, "");
    f.cuda_oom = 0;
    assert_false(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    f = oomed();
    f.on_share = 0;
    assert_false(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    assert_string_equal(why, "");

    /* Refusals worth a log line. */
    f = oomed();
    snprintf(marked, sizeof(marked),
             "%s; xmem: requeued after CUDA OOM from=shard:3 "
             "limit=8000M to=shard:10 whole",
             packed);
    f.admin_comment = marked;
    assert_false(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    assert_string_equal(why, "already requeued once after a CUDA OOM");
    f = oomed();
    f.batch = 0;
    assert_false(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    assert_non_null(strstr(why, "not a batch job"));
    f = oomed();
    f.tres_per_node = "gres:shard:10"; /* the record is stale */
    assert_false(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    assert_string_equal(why, "its AdminComment names gres:shard:3, but it ran on gres:shard:10");
    f = oomed();
    f.per_gpu = 3; /* shard:3 is a whole GPU there */
    assert_false(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    assert_string_equal(why, "it already had a whole GPU");
    f.per_gpu = 0;
    assert_false(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    assert_string_equal(why, "the shares per GPU of its nodes are unknown or differ");
    f = oomed();
    f.admin_comment = "no xmem here";
    assert_false(xmem_requeue_decide(&whole, &f, &plan, why, sizeof(why)));
    assert_non_null(strstr(why, "AdminComment does not say"));

    /* Another reason (o NULL): whole, with or without an OOM. */
    f = oomed();
    f.cuda_oom = 0;
    assert_true(xmem_requeue_decide(NULL, &f, &plan, why, sizeof(why)));
    assert_true(plan.whole);
}

static void command_lines(void **state)
{
    struct xmem_requeue_argv a = {.job_id = 42};
    char big[3000];

    assert_int_equal(xmem_requeue_argv("/usr/bin/scontrol", XMEM_REQUEUE_STEP_MARK, "c; m", &a), 0);
    assert_string_equal(a.argv[0], "/usr/bin/scontrol");
    assert_string_equal(a.argv[1], "update");
    assert_string_equal(a.argv[2], "JobId=42");
    assert_string_equal(a.argv[3], "AdminComment=c; m");
    assert_null(a.argv[4]);
    assert_int_equal(xmem_requeue_argv("scontrol", XMEM_REQUEUE_STEP_HOLD, NULL, &a), 0);
    assert_string_equal(a.argv[1], "requeuehold");
    assert_string_equal(a.argv[2], "42");
    assert_null(a.argv[3]);
    assert_int_equal(xmem_requeue_argv("scontrol", XMEM_REQUEUE_STEP_SHARE, "shard:10", &a), 0);
    assert_string_equal(a.argv[3], "TresPerNode=gres:shard:10");
    assert_int_equal(xmem_requeue_argv("scontrol", XMEM_REQUEUE_STEP_RELEASE, NULL, &a), 0);
    assert_string_equal(a.argv[1], "release");
    assert_string_equal(a.argv[2], "42");
    assert_int_equal(xmem_requeue_argv("scontrol", XMEM_REQUEUE_STEP_PRIORITY, "4294901759", &a),
                     0);
    assert_string_equal(a.argv[3], "Priority=4294901759");
    /* A comment too long to keep whole: no command rather than a cut one. */
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(xmem_requeue_argv("scontrol", XMEM_REQUEUE_STEP_MARK, big, &a), -1);
}

/* `scontrol show job` of a packed job (22.05, abridged from the lab). */
static void job_fields(void **state)
{
    struct xmem_job_info info;

    xmem_job_info_parse("JobId=1 JobName=packed.sbatch\n"
                        "   Priority=4294901759 Nice=0 Account=(null) QOS=(null)\n"
                        "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
                        "   NodeList=vm\n"
                        "   AdminComment=xmem: estimate=7200M limit=8000M policy=shard "
                        "request=gres:gpu:1->shard:3 \n"
                        "   Comment=xmem: estimate=7200M limit=99999M policy=shard "
                        "request=gres:gpu:1->shard:3; xmem: requeued after CUDA OOM from=shard:3 "
                        "limit=8000M to=shard:10 whole \n"
                        "   TresPerNode=gres:shard:3\n",
                        &info);
    assert_int_equal(info.priority, 4294901759u);
    assert_int_equal(info.batch, 1);
    assert_string_equal(info.node_list, "vm");
    assert_string_equal(info.tres_per_node, "gres:shard:3");
    /* Only root's AdminComment: the user's Comment (here forging a mark) is never read. */
    assert_string_equal(info.admin_comment, "xmem: estimate=7200M limit=8000M policy=shard "
                                            "request=gres:gpu:1->shard:3");
    /* A Comment holding "AdminComment=...", on a line of its own or not: ambiguous with the
     * real one (job_submit.lua writes one for every job xmem sized). */
    xmem_job_info_parse("   AdminComment=xmem: estimate=7200M limit=8000M policy=shard "
                        "request=gres:gpu:1->shard:3 \n"
                        "   Comment=x\n   AdminComment=xmem: requeued after CUDA OOM "
                        "from=shard:3 limit=8000M to=shard:10 whole \n",
                        &info);
    assert_string_equal(info.admin_comment, "");
    xmem_job_info_parse("   AdminComment=xmem: estimate=7200M limit=8000M policy=shard "
                        "request=gres:gpu:1->shard:3 \n"
                        "   Comment=x AdminComment=xmem: estimate=1M limit=99999M \n",
                        &info);
    assert_string_equal(info.admin_comment, "");
    /* A comment that forges BatchFlag= or a second TresPerNode line: ambiguous, so none. */
    xmem_job_info_parse("   Requeue=1 BatchFlag=1\n   Comment=x BatchFlag=1\n"
                        "   TresPerNode=gres:shard:3\n   TresPerNode=gres:shard:1\n",
                        &info);
    assert_int_equal(info.batch, 0);
    assert_string_equal(info.tres_per_node, "");
}

/* Root's record as squeue prints it: one line, the flag, the restart count and '/', then the
 * AdminComment. */
static void job_record(void **state)
{
    struct xmem_job_record r;

    assert_int_equal(xmem_job_record_parse("10/xmem: estimate=7200M limit=8000M policy=shard "
                                           "request=gres:gpu:1->shard:3  \n",
                                           &r),
                     0);
    assert_int_equal(r.batch, 1);
    assert_int_equal(r.restarts, 0);
    assert_string_equal(
        r.admin_comment,
        "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1->shard:3");
    assert_int_equal(xmem_job_record_parse("00/(null)\n", &r), 0);
    assert_int_equal(r.batch, 0);
    assert_string_equal(r.admin_comment, "");
    assert_int_equal(xmem_job_record_parse("00/\n", &r), 0);
    /* Issue 26, M8: a rerun is told by slurmctld's count, and a comment's own digits or
     * slashes are the comment's. */
    assert_int_equal(xmem_job_record_parse("12/7/xmem: requeued\n", &r), 0);
    assert_int_equal(r.restarts, 2);
    assert_string_equal(r.admin_comment, "7/xmem: requeued");
    const char *no[] = {"",        "\n",           "10/xmem: estimate=1M", "20/x\n",
                        "x\n",     "10/a\n10/b\n", "1xmem: no count\n",    "1/x\n",
                        "1-1/x\n", "11e3/x\n",     "199999999999/x\n"};
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        if (xmem_job_record_parse(no[i], &r) != -1)
            fail_msg("accepted: %s", no[i]);
}

/* The accounting record goes last in the AdminComment, replacing an earlier run's. */
static void acct_comment(void **state)
{
    char out[256];
    double f = 0;
    (void)state;
    assert_int_equal(xmem_acct_comment("", "{\"v\":1}", out, sizeof(out)), 0);
    assert_string_equal(out, "xmem-acct: {\"v\":1}");
    assert_int_equal(xmem_acct_comment("xmem: estimate=1M", "{\"v\":1}", out, sizeof(out)), 0);
    assert_string_equal(out, "xmem: estimate=1M; xmem-acct: {\"v\":1}");
    /* A rerun: the first run's record goes, the requeue mark before it stays. */
    assert_int_equal(xmem_acct_comment("xmem: estimate=1M; xmem: requeued after CUDA OOM; "
                                       "xmem-acct: {\"v\":1,\"el\":3}",
                                       "{\"v\":1,\"el\":9}", out, sizeof(out)),
                     0);
    assert_string_equal(out, "xmem: estimate=1M; xmem: requeued after CUDA OOM; "
                             "xmem-acct: {\"v\":1,\"el\":9}");
    assert_int_equal(xmem_acct_comment("xmem: estimate=1M", "{\"v\":1}", out, 20), -1);
    assert_int_equal(xmem_acct_fraction(3, 10, &f), 0);
    assert_true(f > 0.2999 && f < 0.3001);
    assert_int_equal(xmem_acct_fraction(3, 0, &f), -1);   /* shares per GPU unknown */
    assert_int_equal(xmem_acct_fraction(11, 10, &f), -1); /* more than a GPU */
    assert_int_equal(xmem_acct_fraction(0, 10, &f), -1);
}

int xmem_test_group_requeue(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(option_values),   cmocka_unit_test(settings_key),
        cmocka_unit_test(comment_packed),  cmocka_unit_test(node_shares),
        cmocka_unit_test(mark_round_trip), cmocka_unit_test(decision),
        cmocka_unit_test(command_lines),   cmocka_unit_test(job_fields),
        cmocka_unit_test(record_limit),    cmocka_unit_test(job_record),
        cmocka_unit_test(acct_comment),
    };
    return cmocka_run_group_tests_name("requeue", tests, NULL, NULL);
}
