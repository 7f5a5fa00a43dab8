// Registry of every test group of the estimate pipeline (daemon/estimate).
#pragma once

#define XMEM_ESTIMATE_GROUPS(X) X(estimate_options) X(torch_choice) X(sweep)

#define XMEM_ESTIMATE_DECLARE_GROUP(name) int run_##name##_tests(void);
XMEM_ESTIMATE_GROUPS(XMEM_ESTIMATE_DECLARE_GROUP)
