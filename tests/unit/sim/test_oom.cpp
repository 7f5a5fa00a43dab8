// Out of memory (allocator.md 4.12): counters, the reported alloc_size and the message per release.
#include "allocator/oom_message.h"
#include "sim_helpers.h"

using namespace simtest;

// allocator.md 4.12: a 5 MiB tensor that needs a new segment reports "Tried to allocate 20.00 MiB".
static void oom_reports_alloc_size(void **)
{
    auto a = make("2.6", "", 30 * MiB);
    must_malloc(*a, 16 * MiB);
    MallocResult r = a->malloc(5 * MiB);
    assert_false(r.ok);
    EXPECT_U64(r.requested_size, 5 * MiB);
    EXPECT_U64(r.alloc_size, 20 * MiB);
    EXPECT_CONTAINS(r.oom_message, "Tried to allocate 20.00 MiB");
    EXPECT_I64(stat(*a, "num_alloc_retries"), 1);
    EXPECT_I64(stat(*a, "num_ooms"), 1);
}

// allocator.md 4.12: exact 2.6 text. 100 MiB device, 60 MiB held, 50 MiB asked.
static void message_2_6(void **)
{
    auto a = make("2.6", "", 100 * MiB);
    must_malloc(*a, 60 * MiB);
    MallocResult r = a->malloc(50 * MiB);
    EXPECT_STR(r.oom_message,
               "CUDA out of memory. Tried to allocate 50.00 MiB. GPU 0 has a total capacity of "
               "100.00 MiB of which "
               "40.00 MiB is free. Including non-PyTorch memory, this process has 60.00 MiB memory "
               "in use. Of the "
               "allocated memory 60.00 MiB is allocated by PyTorch, and 0 bytes is reserved by "
               "PyTorch but "
               "unallocated. If reserved but unallocated memory is large try setting "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
               "documentation for "
               "Memory Management  "
               "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
}

// allocator.md 4.12: exact 1.13 text, with a fraction ("allowed") and a cached-but-split segment.
static void message_1_13(void **)
{
    AllocatorConfig c = config("1.13", "", 100 * MiB);
    c.memory_fraction = 0.5;
    DeviceCachingAllocator a(c);
    must_malloc(a, 5 * MiB); // 20 MiB segment, 15 MiB cached in it
    MallocResult r = a.malloc(40 * MiB);
    EXPECT_STR(
        r.oom_message,
        "CUDA out of memory. Tried to allocate 40.00 MiB (GPU 0; 100.00 MiB total capacity; 5.00 "
        "MiB already "
        "allocated; 80.00 MiB free; 50.00 MiB allowed; 20.00 MiB reserved in total by PyTorch) If "
        "reserved "
        "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See "
        "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF");
    EXPECT_I64(stat(a, "num_ooms"), 1);
    EXPECT_I64(stat(a, "num_alloc_retries"), 1);
}

static void message_2_1_typo(void **)
{
    auto a = make("2.1", "", 100 * MiB);
    must_malloc(*a, 60 * MiB);
    EXPECT_CONTAINS(a->malloc(50 * MiB).oom_message, "GPU 0 has a total capacty of 100.00 MiB");
}

// allocator.md 4.12: 2.10 names PYTORCH_ALLOC_CONF in the advice; 2.11+ link docs.pytorch.org
// (the strings of each wheel's libc10_cuda.so).
static void message_advice_2_10_and_later(void **)
{
    auto a29 = make("2.9", "", 100 * MiB);
    must_malloc(*a29, 60 * MiB);
    const std::string m29 = a29->malloc(50 * MiB).oom_message;
    auto a210 = make("2.10", "", 100 * MiB);
    must_malloc(*a210, 60 * MiB);
    const std::string m210 = a210->malloc(50 * MiB).oom_message;
    auto a214 = make("2.14", "", 100 * MiB);
    must_malloc(*a214, 60 * MiB);
    const std::string m214 = a214->malloc(50 * MiB).oom_message;
    const std::string head = m29.substr(0, m29.find(" If reserved"));
    EXPECT_STR(m210.substr(0, head.size()), head);
    EXPECT_STR(m214.substr(0, head.size()), head);
    EXPECT_STR(m210.substr(head.size()),
               " If reserved but unallocated memory is large try setting "
               "PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
               "documentation for Memory Management  "
               "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
    EXPECT_STR(m214.substr(head.size()),
               " If reserved but unallocated memory is large try setting "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
               "documentation for Memory Management  "
               "(https://docs.pytorch.org/docs/stable/notes/"
               "cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)");
}

// allocator.md 4.12: after an OOM the cache has been flushed (state after the release steps).
static void oom_leaves_cache_flushed(void **)
{
    auto a = make("2.6", "", 100 * MiB);
    must_malloc(*a, 60 * MiB);
    must_free(*a, must_malloc(*a, 12 * MiB, 1));
    assert_false(a->malloc(50 * MiB).ok);
    EXPECT_I64(stat(*a, "reserved_bytes.all.current"), 60 * MiB);
    must_hold_invariants(*a);
}

static void format_size_units(void **)
{
    EXPECT_STR(format_size(0), "0 bytes");
    EXPECT_STR(format_size(1024), "1024 bytes");
    EXPECT_STR(format_size(1025), "1.00 KiB");
    EXPECT_STR(format_size(MiB), "1024.00 KiB");
    EXPECT_STR(format_size(MiB + 1), "1.00 MiB");
    EXPECT_STR(format_size(GiB), "1024.00 MiB");
    EXPECT_STR(format_size(80 * GiB), "80.00 GiB");
}

int run_oom_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oom_reports_alloc_size),
        cmocka_unit_test(message_2_6),
        cmocka_unit_test(message_1_13),
        cmocka_unit_test(message_2_1_typo),
        cmocka_unit_test(message_advice_2_10_and_later),
        cmocka_unit_test(oom_leaves_cache_flushed),
        cmocka_unit_test(format_size_units),
    };
    return cmocka_run_group_tests_name("oom", tests, nullptr, nullptr);
}
