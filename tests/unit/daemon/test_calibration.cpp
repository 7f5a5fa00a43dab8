// test-calibration.cpp — the calibration file (xmem calibrate --apply writes it, xmemd reads
// it with its config): strict parsing, the writer's text read back, the margins in the
// rendered policy, and a bad file refusing the whole config (a reload keeps the old one).
#include "calibration.h"
#include "cmocka.hpp"
#include "config.h"
#include "test-list.h"

#include "analysis/catalog.h"

#include <sys/stat.h>
#include <unistd.h>

using namespace xmem::server;

static std::string shipped_catalog()
{
    return std::string(XMEM_SRC) + "/etc/gpus.yaml";
}

static xmem::analysis::Catalog catalog()
{
    auto c = xmem::analysis::Catalog::load(shipped_catalog());
    assert_true((bool)c);
    return c.value();
}

static xmem::Result<std::vector<GpuMargin>> parse(const std::string &text)
{
    return calibration_parse(text, "cal.yaml", catalog());
}

static void reads_margins_and_accounts(void **)
{
    auto r = parse("version: 1\nmargins:\n  A100-40GB:\n    percent: 12\n"
                   "    accounts: {physics: 15, chem-2: 0}\n  h100-80gb: {percent: 30}\n");
    assert_true((bool)r);
    const auto &m = r.value();
    assert_int_equal(m.size(), 2);
    assert_string_equal(m[0].gpu.c_str(), "A100-40GB");
    assert_int_equal(m[0].percent, 12);
    assert_int_equal(m[0].accounts.size(), 2);
    assert_string_equal(m[0].accounts[0].first.c_str(), "physics");
    assert_int_equal(m[0].accounts[0].second, 15);
    assert_int_equal(m[0].accounts[1].second, 0);
    assert_string_equal(m[1].gpu.c_str(), "H100-80GB"); // stored by the catalog's name
    assert_true(parse("version: 1\nmargins: {}\n").value().empty());
}

static void refuses_bad_files(void **)
{
    struct {
        const char *text, *error;
    } cases[] = {
        {"", "cal.yaml:1: (top level): empty"},
        {"margins: {}\n", "cal.yaml:1: version: missing"},
        {"version: 2\nmargins: {}\n", "cal.yaml:1: version: expected 1"},
        {"version: 1\nmargin: {}\n", "cal.yaml:2: margin: unknown key"},
        {"version: 1\nmargins:\n  Z80: {percent: 3}\n", "cal.yaml:3: margins.Z80: not a GPU"},
        {"version: 1\nmargins:\n  A100-40GB: {percent: -1}\n",
         "margins.A100-40GB.percent: expected a whole percent 0..100, not '-1'"},
        {"version: 1\nmargins:\n  A100-40GB: {percent: 101}\n", "out of range: 101"},
        {"version: 1\nmargins:\n  A100-40GB: {percent: 1.5}\n", "not '1.5'"},
        {"version: 1\nmargins:\n  A100-40GB: {accounts: {a: 1}}\n",
         "margins.A100-40GB: missing percent"},
        {"version: 1\nmargins:\n  A100-40GB: {percent: 1, extra: 2}\n", "extra: unknown key"},
        {"version: 1\nmargins:\n  A100-40GB: {percent: 1, accounts: {\"a b\": 1}}\n",
         "invalid account name 'a b'"},
        {"version: 1\nmargins:\n  A100-40GB: {percent: 1}\n  a100-40gb: {percent: 2}\n",
         "given twice"},
        {"version: 1\nmargins: [\n", "cal.yaml:"},
    };
    for (const auto &c : cases) {
        auto r = parse(c.text);
        assert_false((bool)r);
        assert_contains(r.error().message, c.error);
    }
}

static void writer_text_reads_back(void **)
{
    std::vector<GpuMargin> m{{"A100-40GB", 12, {{"physics", 15}, {"bio.x", 0}}},
                             {"H100-80GB", 0, {}}};
    std::string text = calibration_render(m, "a comment\nsecond line");
    assert_contains(text, "# a comment\n# second line\nversion: 1\n");
    auto back = parse(text);
    assert_true((bool)back);
    assert_int_equal(back.value().size(), 2);
    assert_int_equal(back.value()[0].accounts[1].second, 0);
    assert_string_equal(back.value()[0].accounts[1].first.c_str(), "bio.x");
    assert_true(parse(calibration_render({}, "")).value().empty());
}

static void replaces_atomically_with_mode(void **)
{
    char dir[] = "/tmp/xmemd-test-cal-XXXXXX";
    assert_non_null(mkdtemp(dir));
    std::string path = std::string(dir) + "/c.yaml";
    assert_true((bool)file_replace(path, "one", 0644));
    assert_true((bool)file_replace(path, "two", 0644));
    struct stat st;
    assert_int_equal(stat(path.c_str(), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(st.st_size, 3);
    auto bad = file_replace(std::string(dir) + "/no/such/dir", "x", 0644);
    assert_false((bool)bad);
    assert_contains(bad.error().message, "cannot write ");
    unlink(path.c_str());
    rmdir(dir);
}

// xmem.yaml's calibration: key: its margins reach the rendered policy under the catalog name
// and the target's alias; a bad file refuses the config, naming the file and line.
static void config_reads_it_into_the_policy(void **)
{
    char dir[] = "/tmp/xmemd-test-cal-XXXXXX";
    assert_non_null(mkdtemp(dir));
    std::string cal = std::string(dir) + "/cal.yaml", conf = std::string(dir) + "/xmem.yaml";
    assert_true((bool)file_replace(cal,
                                   "version: 1\nmargins:\n  A100-40GB:\n    percent: 12\n"
                                   "    accounts: {physics: 15}\n",
                                   0644));
    assert_true((bool)file_replace(conf,
                                   "catalog: " + shipped_catalog() + "\ncalibration: " + cal +
                                       "\npolicy_file: " + dir +
                                       "/p.lua\n"
                                       "policy:\n  default: {gpu: A100-40GB}\n"
                                       "  partitions:\n    big: {gpu: a100-80gb}\n"
                                       "    pcie: {gpu: A100-PCIE-40GB}\n",
                                   0644));
    auto c = config_load(conf);
    assert_true((bool)c);
    assert_string_equal(c.value().policy_file.c_str(), (std::string(dir) + "/p.lua").c_str());
    assert_int_equal(c.value().policy.margins.size(), 1);
    std::string lua = policy_render_lua(c.value().policy, 0);
    assert_contains(lua, "  margins = {\n    [\"A100-40GB\"] = { percent = 12, accounts = { "
                         "[\"physics\"] = 15, } },\n    [\"A100-PCIE-40GB\"] = { percent = 12, "
                         "accounts = { [\"physics\"] = 15, } },\n  },\n}\n");
    assert_true((bool)policy_write_lua(c.value().policy, 0, std::string(dir) + "/p.lua"));
    assert_true((bool)file_replace(cal, "version: 1\nmargins:\n  A100-40GB: {percent: x}\n", 0644));
    auto bad = config_load(conf);
    assert_false((bool)bad);
    assert_contains(bad.error().message, cal + ":3: margins.A100-40GB.percent: ");
    unlink(cal.c_str());
    auto none = config_load(conf); // no file yet: nothing calibrated, margin_percent only
    assert_true((bool)none);
    assert_true(none.value().policy.margins.empty());
    assert_true(policy_render_lua(none.value().policy, 0).find("margins") == std::string::npos);
    // Without the key the file sits beside the database.
    Config d = config_defaults();
    d.database = "/var/lib/x/ledger.sqlite";
    assert_string_equal(config_calibration_path(d).c_str(), "/var/lib/x/calibration.yaml");
    unlink(conf.c_str());
    unlink((std::string(dir) + "/p.lua").c_str());
    rmdir(dir);
}

int test_group_calibration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_margins_and_accounts), cmocka_unit_test(refuses_bad_files),
        cmocka_unit_test(writer_text_reads_back), cmocka_unit_test(replaces_atomically_with_mode),
        cmocka_unit_test(config_reads_it_into_the_policy)};
    return cmocka_run_group_tests_name("calibration", tests, nullptr, nullptr);
}
