/* test-list.h — every CMocka group of the daemon component, one per module. ctest runs each
 * group in its own process (test-daemon GROUP) with a timeout. */
#ifndef XMEMD_TEST_LIST_H
#define XMEMD_TEST_LIST_H

#define XMEMD_TEST_GROUPS(X)                                                                       \
    X(frame)                                                                                       \
    X(config)                                                                                      \
    X(outcome)                                                                                     \
    X(cache_key)                                                                                   \
    X(cache)                                                                                       \
    X(policy)                                                                                      \
    X(payload)                                                                                     \
    X(scheduler)                                                                                   \
    X(profile)                                                                                     \
    X(preamble)                                                                                    \
    X(ledger)                                                                                      \
    X(bound_script)                                                                                \
    X(calibration)                                                                                 \
    X(redact)                                                                                      \
    X(user_load)                                                                                   \
    X(prepare_line)                                                                                \
    X(leaders)                                                                                     \
    X(estimate_stage)                                                                              \
    X(sandbox)                                                                                     \
    X(held_jobs)                                                                                   \
    X(profile_job)

#define X(name) int test_group_##name(void);
XMEMD_TEST_GROUPS(X)
#undef X

#endif
