// Seeded mutation fuzzing of both readers: thousands of truncations, byte flips, huge
// numbers, dropped/duplicated lines and wrong counts of valid inputs. Every outcome must be
// a clean read or one "xmem: ..." line; under `make test SANITIZE=1` ASan/UBSan also check
// that no mutation reads out of bounds or overflows.
#include "reader_helpers.h"
#include "snapshot_helpers.h"
#include "test-list.h"

#include "trace/compact_writer.h"

#include <random>

using namespace xmem::test;
using xmem::trace::Device;
using xmem::trace::Phase;

namespace
{

std::string valid_compact_trace()
{
    std::FILE *f = std::tmpfile();
    xmem::trace::CompactTraceWriter w(f, "seed");
    w.metadata("torch", "2.1.0");
    w.metadata("steps", "2");
    w.string(1, "layer1.0.conv1|aten::convolution");
    w.phase(Phase::setup);
    for (uint64_t id = 1; id <= 20; ++id)
        w.alloc(id, id * 1000 + 3, id % 3 ? Device::gpu : Device::host, 0, id % 2);
    for (uint32_t it = 1; it <= 2; ++it) {
        w.iteration(it);
        w.phase(Phase::forward);
        for (uint64_t id = 100; id < 130; ++id)
            w.alloc(id, id * 4096, Device::gpu, id % 2, 1);
        w.record_stream(101, 3);
        w.phase(Phase::backward);
        for (uint64_t id = 100; id < 130; ++id)
            w.free(id);
        w.set_fraction(0.5);
        w.empty_cache();
    }
    w.finish();
    std::string text = read_all(f);
    std::fclose(f);
    return text;
}

std::string valid_snapshot()
{
    std::string s = "{\"segments\": [{\"address\": 1, \"blocks\": []}], \"device_traces\": [[";
    for (int i = 0; i < 40; ++i) {
        std::string addr = std::to_string(139637976727552ULL + 2097152ULL * i);
        s += std::string(i ? "," : "") + "{\"action\": \"segment_alloc\", \"addr\": " + addr +
             ", \"size\": 2097152, \"stream\": 0, \"time_us\": 12.5},"
             "{\"action\": \"alloc\", \"addr\": " +
             addr + ", \"size\": " + std::to_string(512 * (i + 1)) +
             ", \"stream\": 0, \"frames\": [{\"filename\": \"t.py\", \"line\": " +
             std::to_string(i) +
             ", \"name\": \"f\"}]},"
             "{\"action\": \"free_requested\", \"addr\": " +
             addr + ", \"size\": 1, \"stream\": 0}";
    }
    return s + "]]}";
}

const char *k_huge[] = {
    "18446744073709551616",    "99999999999999999999999999", "-1", "4294967296", "1e308", "0",
    "00000000000000000000001", "18446744073709551615"};

std::string mutate(const std::string &base, std::mt19937_64 &rng)
{
    std::string s = base;
    auto pos = [&](size_t n) { return n ? rng() % n : 0; };
    switch (rng() % 8) {
    case 0:
        s.resize(pos(s.size()));
        break; // truncation
    case 1:
        for (int flips = 1 + rng() % 4; flips > 0; --flips)
            s[pos(s.size())] = static_cast<char>(rng() & 0xff);
        break;
    case 2: { // a huge or odd number replaces a run of digits
        size_t at = s.find_first_of("0123456789", pos(s.size()));
        if (at == std::string::npos)
            break;
        size_t end = s.find_first_not_of("0123456789", at);
        s.replace(at, end == std::string::npos ? std::string::npos : end - at, k_huge[rng() % 8]);
        break;
    }
    case 3: { // drop a line (wrong counts, frees of dead ids)
        size_t at = s.find('\n', pos(s.size()));
        size_t end = at == std::string::npos ? std::string::npos : s.find('\n', at + 1);
        if (end != std::string::npos)
            s.erase(at, end - at);
        break;
    }
    case 4: { // duplicate a line
        size_t at = s.rfind('\n', pos(s.size()));
        size_t start = at == std::string::npos ? 0 : at + 1;
        size_t end = s.find('\n', start);
        if (end != std::string::npos)
            s.insert(start, s.substr(start, end - start + 1));
        break;
    }
    case 5:
        s.insert(pos(s.size()), 1, "\n \0{}[]\",:"[rng() % 10]);
        break;
    case 6:
        s.erase(pos(s.size()), 1 + rng() % 64);
        break;
    default: { // splice two distant parts together
        size_t a = pos(s.size()), b = pos(s.size());
        s = s.substr(0, std::min(a, b)) + s.substr(std::max(a, b));
        break;
    }
    }
    return s;
}

void assert_one_line_error(const std::string &error, const char *prefix, const std::string &input)
{
    bool ok = error.rfind(prefix, 0) == 0 && error.find('\n') == std::string::npos;
    if (!ok)
        print_error("bad error \"%s\" for input of %zu bytes\n", error.c_str(), input.size());
    assert_true(ok);
}

} // namespace

static void compact_reader_survives_mutations(void **)
{
    const std::string base = valid_compact_trace();
    assert_string_equal(read_compact(base, "f").error.c_str(), "");
    std::mt19937_64 rng(20260101);
    int errors = 0;
    const int rounds = 6000;
    for (int i = 0; i < rounds; ++i) {
        std::string input = mutate(base, rng);
        ReadOutcome r = read_compact(input, "f");
        if (!r.error.empty()) {
            assert_one_line_error(r.error, "xmem: f:", input);
            ++errors;
        }
    }
    // The Z totals catch nearly every change; a reader that accepted most mutations would
    // not be checking anything.
    assert_true(errors > rounds * 8 / 10);
}

static void snapshot_reader_survives_mutations(void **)
{
    const std::string base = valid_snapshot();
    assert_string_equal(read_snapshot_text(base).error.c_str(), "");
    std::mt19937_64 rng(4242);
    int errors = 0;
    const int rounds = 4000;
    for (int i = 0; i < rounds; ++i) {
        std::string input = mutate(base, rng);
        SnapshotOutcome r = read_snapshot_text(input);
        if (!r.error.empty()) {
            assert_one_line_error(r.error, "xmem: s.json: ", input);
            ++errors;
        }
    }
    assert_true(errors > rounds / 3);
}

int run_fuzz_compact_tests(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(compact_reader_survives_mutations)};
    return cmocka_run_group_tests_name("fuzz_compact", tests, NULL, NULL);
}

int run_fuzz_snapshot_tests(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(snapshot_reader_survives_mutations)};
    return cmocka_run_group_tests_name("fuzz_snapshot", tests, NULL, NULL);
}
