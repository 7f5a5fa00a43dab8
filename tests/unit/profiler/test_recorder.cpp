// Recorder: storage ids, totals, device rules, context interning, phase records.
#include <unistd.h>

#include "recorder.h"
#include "test-list.h"

using xmem::capture::Dev;
using xmem::capture::OpContext;
using xmem::capture::Recorder;

namespace
{

struct Fixture {
    std::string dir, path;
    Recorder rec;
};

int setup(void **state)
{
    auto *f = new Fixture;
    f->dir = xmem_test_temp_dir();
    f->path = f->dir + "/t.trace";
    if (!f->rec.open(f->path).ok())
        return -1;
    Recorder::set_thread_dev(Dev::unset);
    *state = f;
    return 0;
}

int teardown(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    unlink(f->path.c_str());
    unlink((f->path + ".spool").c_str());
    rmdir(f->dir.c_str());
    Recorder::set_thread_dev(Dev::unset);
    delete f;
    return 0;
}

std::string finish(Fixture *f)
{
    assert_true(f->rec.finish().ok());
    std::string text = xmem_test_read_file(f->path);
    return text.substr(text.find('\n') + 1); // drop the header line
}

OpContext op(const char *outer, const char *inner)
{
    return OpContext{outer, inner, false};
}

} // namespace

static void ids_and_totals_follow_allocs_and_frees(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    int a = 0, b = 0;
    f->rec.on_alloc(&a, 100, op("aten::add", "aten::add"));
    f->rec.on_alloc(&b, 28, op("aten::add", "aten::add"));
    f->rec.on_free(&a);
    f->rec.on_free(&a);         // double free of a dead pointer: no record
    f->rec.on_free(&f);         // never allocated under capture: ignored
    f->rec.on_alloc(&a, 0, {}); // zero bytes: the allocator returns no storage
    auto t = f->rec.totals();
    assert_int_equal(t.allocs, 2);
    assert_int_equal(t.frees, 1);
    assert_int_equal(t.live_bytes, 28);
    assert_string_equal(finish(f).c_str(),
                        "S 1 |aten::add\nA 1 100 g 0 1\nA 2 28 g 0 1\nF 1\nZ 2 1 28\n");
}

static void reused_pointer_gets_a_new_id(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    int a = 0;
    f->rec.on_alloc(&a, 8, op("aten::empty", "aten::empty"));
    f->rec.on_free(&a);
    f->rec.on_alloc(&a, 16, op("aten::empty", "aten::empty"));
    assert_string_equal(finish(f).c_str(),
                        "S 1 |aten::empty\nA 1 8 g 0 1\nF 1\nA 2 16 g 0 1\nZ 2 1 16\n");
}

static void an_address_reused_without_our_free_closes_the_old_storage(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    int a = 0;
    f->rec.on_alloc(&a, 8, op("aten::empty", "aten::empty"));
    f->rec.on_alloc(&a, 32, op("aten::empty", "aten::empty")); // its free went elsewhere
    auto t = f->rec.totals();
    assert_int_equal(t.frees, 1);
    assert_int_equal(t.live_bytes, 32);
    assert_true(f->rec.finish().ok());
    assert_string_equal(xmem_test_read_file(f->path).c_str(),
                        "#xmem-trace 1\nM missed_frees 1\nS 1 |aten::empty\nA 1 8 g 0 1\nF 1\n"
                        "A 2 32 g 0 1\nZ 2 1 32\n");
}

static void device_rules(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    int a = 0, b = 0, c = 0, d = 0, e = 0;
    Recorder::set_thread_dev(Dev::gpu);
    f->rec.on_alloc(&a, 4, op("Optimizer.step#SGD.step", nullptr)); // wrapped scalar: host
    f->rec.on_alloc(&b, 4, op("aten::mul", "aten::mul"));           // op on device tensors
    f->rec.on_alloc(&c, 288, OpContext{"profiler::_record_function_enter", "aten::empty", true});
    Recorder::set_thread_dev(Dev::gpu_explicit);
    f->rec.on_alloc(&d, 12, op(nullptr, nullptr)); // torch.tensor(data, device='cuda')
    Recorder::set_thread_dev(Dev::host);
    f->rec.on_alloc(&e, 64, op("aten::cat", "aten::cat"));
    assert_int_equal(f->rec.dev_of(&a), 'h');
    assert_int_equal(f->rec.dev_of(&b), 'g');
    assert_int_equal(f->rec.dev_of(&c), 'h');
    assert_int_equal(f->rec.dev_of(&d), 'g');
    assert_int_equal(f->rec.dev_of(&e), 'h');
    assert_int_equal(f->rec.dev_of(&f), 0);
    auto t = f->rec.totals();
    assert_int_equal(t.live_gpu_bytes, 16);
    assert_int_equal(t.peak_gpu_bytes, 16);
    f->rec.on_free(&b);
    f->rec.reset_gpu_peak();
    assert_int_equal(f->rec.totals().peak_gpu_bytes, 12);
    finish(f);
}

static void contexts_are_interned_once(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    int a = 0, b = 0, c = 0;
    uint32_t layer = f->rec.intern("layer1.0.conv1");
    assert_int_equal(f->rec.intern("layer1.0.conv1"), layer);
    f->rec.set_module(layer);
    f->rec.on_alloc(&a, 8, op("aten::conv2d", "aten::mkldnn_convolution"));
    f->rec.on_alloc(&b, 8, op("aten::conv2d", "aten::mkldnn_convolution"));
    f->rec.set_module(0);
    f->rec.on_alloc(&c, 8, op("Optimizer.step#SGD.step", nullptr));
    std::string text = finish(f);
    assert_string_equal(text.c_str(),
                        "S 1 layer1.0.conv1|aten::conv2d>aten::mkldnn_convolution\n"
                        "A 1 8 g 0 1\nA 2 8 g 0 1\n"
                        "S 2 |Optimizer.step#SGD.step>(no-op)\nA 3 8 h 0 2\nZ 3 0 24\n");
}

// oneDNN's bf16 GEMM takes packing buffers from the CPU allocator inside the op; cuBLAS
// takes none from the caching allocator: what the product frees before it returns is host.
static void gemm_scratch_is_host_and_its_output_device(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    int gemm = 0, out = 0, scratch = 0;
    OpContext addmm{"aten::linear", "aten::addmm", false, &gemm};
    f->rec.on_alloc(&out, 64, addmm);
    f->rec.on_alloc(&scratch, 32, addmm);
    f->rec.on_free(&scratch);
    f->rec.on_gemm_end(&gemm);
    assert_int_equal(f->rec.dev_of(&out), 'g');
    std::string text = finish(f);
    assert_string_equal(text.c_str(), "S 1 |aten::linear>aten::addmm\n"
                                      "A 1 32 h 0 1\nF 1\nA 2 64 g 0 1\nZ 2 1 64\n");
}

static void markers_are_written_in_order_before_the_next_event(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    int a = 0, b = 0;
    f->rec.set_phase("setup");
    f->rec.on_alloc(&a, 8, op("aten::empty", "aten::empty"));
    f->rec.set_phase("setup"); // unchanged: no record
    f->rec.set_iteration(1);
    f->rec.set_phase("zero_grad"); // no events in it: written all the same
    f->rec.set_phase("data");
    f->rec.empty_cache();
    f->rec.memory_fraction(0.5);
    f->rec.set_iteration(2); // iteration 2 starts with the same phase: written again
    f->rec.on_alloc(&b, 8, op("aten::empty", "aten::empty"));
    f->rec.set_iteration(3); // the script stopped: no empty iteration 3 at the end
    f->rec.set_phase("other");
    assert_string_equal(finish(f).c_str(),
                        "P setup\nS 1 |aten::empty\nA 1 8 g 0 1\nI 1\nP zero_grad\nP data\nE\n"
                        "X 0.5\n"
                        "I 2\nP data\nA 2 8 g 0 1\nZ 2 0 16\n");
}

static void finishing_twice_is_an_error(void **state)
{
    auto *f = static_cast<Fixture *>(*state);
    finish(f);
    auto r = f->rec.finish();
    assert_false(r.ok());
    assert_true(r.error().message.rfind("xmem: ", 0) == 0);
    int a = 0;
    f->rec.on_alloc(&a, 8, {}); // after finish nothing is recorded
    assert_int_equal(f->rec.totals().allocs, 0);
}

int xmem_test_group_recorder(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ids_and_totals_follow_allocs_and_frees, setup, teardown),
        cmocka_unit_test_setup_teardown(reused_pointer_gets_a_new_id, setup, teardown),
        cmocka_unit_test_setup_teardown(an_address_reused_without_our_free_closes_the_old_storage,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(device_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(contexts_are_interned_once, setup, teardown),
        cmocka_unit_test_setup_teardown(gemm_scratch_is_host_and_its_output_device, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(markers_are_written_in_order_before_the_next_event, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(finishing_twice_is_an_error, setup, teardown),
    };
    return cmocka_run_group_tests_name("recorder", tests, nullptr, nullptr);
}
