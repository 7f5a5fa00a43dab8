// test_cache_key.cpp — SHA-256 vectors, entrypoint discovery, import scanning, what does
// and does not change a cache key, and remembered file digests that follow every change.
#include "cache_key.h"
#include "cmocka.hpp"
#include "sha256.h"
#include "test-list.h"

#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace xmem::server;

static std::string g_dir;

static void put(const std::string &name, const std::string &text)
{
    std::ofstream(g_dir + "/" + name) << text;
}

static int setup(void **)
{
    char tmpl[] = "/tmp/xmemd-test-key-XXXXXX";
    g_dir = mkdtemp(tmpl);
    mkdir((g_dir + "/pkg").c_str(), 0755);
    put("train.py", "import os, model\nfrom pkg.sub import x  # local package\nimport torch\n");
    put("model.py", "from .layers import L\n");
    put("layers.py", "L = 1\n");
    put("pkg/__init__.py", "");
    put("unrelated.py", "X = 1\n");
    return 0;
}

static int teardown(void **)
{
    std::string cmd = "rm -rf '" + g_dir + "'";
    return system(cmd.c_str());
}

static KeyInputs base()
{
    KeyInputs in;
    in.argv = {"python3", "train.py", "--lr", "0.1"};
    in.cwd = g_dir;
    in.env = {{"PATH", "/usr/bin"}};
    in.gpu = "A100-40GB";
    in.steps = 3;
    in.config_fingerprint = "f";
    return in;
}

static std::string key(const KeyInputs &in)
{
    auto r = cache_key(in);
    if (!r)
        print_error("%s\n", r.error().message.c_str());
    assert_true((bool)r);
    return r.value();
}

static void sha256_vectors(void **)
{
    assert_string_equal(sha256_hex("").c_str(),
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_string_equal(sha256_hex("abc").c_str(),
                        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    std::string million(1000000, 'a');
    assert_string_equal(sha256_hex(million).c_str(),
                        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void finds_entrypoint(void **)
{
    assert_string_equal(entrypoint_script({"python3", "-u", "t.py", "x.py"}, "/w").c_str(),
                        "/w/t.py");
    assert_string_equal(entrypoint_script({"/abs/run.sh", "a"}, "/w").c_str(), "/abs/run.sh");
    assert_string_equal(entrypoint_script({"./run.sh"}, "/w").c_str(), "/w/./run.sh");
    assert_string_equal(entrypoint_script({"python3", "-m", "pkg"}, "/w").c_str(), "");
}

static void scans_imports(void **)
{
    auto m = python_imports("import a.b, c as d\n  from e.f import g\nfrom .h import i\n"
                            "# import nope\nx = 'import y'\nimport (z)\n");
    std::vector<std::string> want = {"a", "c", "e", "h", "z"};
    assert_int_equal(m.size(), want.size());
    for (size_t i = 0; i < want.size(); i++)
        assert_string_equal(m[i].c_str(), want[i].c_str());
}

static void stable_and_sensitive(void **)
{
    std::string k = key(base());
    assert_int_equal(k.size(), 64);
    assert_string_equal(k.c_str(), key(base()).c_str());
    auto changed = [&](auto mutate) {
        KeyInputs in = base();
        mutate(in);
        return key(in) != k;
    };
    assert_true(changed([](KeyInputs &in) { in.argv.back() = "0.2"; }));
    assert_true(changed([](KeyInputs &in) { in.env["PYTHONPATH"] = "/x"; }));
    assert_true(changed([](KeyInputs &in) { in.gpu = "H100-80GB"; }));
    assert_true(changed([](KeyInputs &in) { in.torch = "2.1"; }));
    assert_true(changed([](KeyInputs &in) { in.steps = 4; }));
    // Each rank's share differs with the world size (FSDP shards by it).
    assert_true(changed([](KeyInputs &in) { in.world = 2; }));
    assert_false(changed([](KeyInputs &in) { in.world = 1; }));
    assert_true(changed([](KeyInputs &in) { in.config_fingerprint = "g"; }));
    // Per user: another user's Python path can change what the same script allocates.
    assert_true(changed([](KeyInputs &in) { in.uid = 1001; }));
    // Field boundaries are length-prefixed: moving a character between fields changes it.
    KeyInputs a = base(), b = base();
    a.argv = {"python3", "train.py", "ab", "c"};
    b.argv = {"python3", "train.py", "a", "bc"};
    assert_string_not_equal(key(a).c_str(), key(b).c_str());
}

static void follows_local_modules(void **)
{
    std::string k = key(base());
    put("layers.py", "L = 2\n"); // imported transitively through model.py
    std::string k2 = key(base());
    assert_string_not_equal(k.c_str(), k2.c_str());
    put("pkg/__init__.py", "Y = 1\n");
    std::string k3 = key(base());
    assert_string_not_equal(k2.c_str(), k3.c_str());
    put("unrelated.py", "X = 2\n"); // not imported: no effect
    assert_string_equal(k3.c_str(), key(base()).c_str());
    put("train.py", "import os, model\nfrom pkg.sub import x\nimport torch\n# edit\n");
    assert_string_not_equal(k3.c_str(), key(base()).c_str());
}

static void unreadable_script_is_an_error(void **)
{
    KeyInputs in = base();
    in.argv = {"python3", "missing.py"};
    auto r = cache_key(in);
    assert_false((bool)r);
    assert_contains(r.error().message, "xmem: cannot read the entrypoint " + g_dir + "/missing.py");
    in.argv = {"python3", "pkg.py"};
    mkdir((g_dir + "/pkg.py").c_str(), 0755);
    r = cache_key(in);
    assert_false((bool)r);
    assert_contains(r.error().message, "Is a directory");
}

// Sets a file's mtime back to `t` (its ctime becomes now: the kernel allows no other).
static void set_mtime(const std::string &name, const struct timespec &t)
{
    struct timespec times[2] = {t, t};
    assert_int_equal(utimensat(AT_FDCWD, (g_dir + "/" + name).c_str(), times, 0), 0);
}

static struct timespec mtime_of(const std::string &name)
{
    struct stat st;
    assert_int_equal(stat((g_dir + "/" + name).c_str(), &st), 0);
    return st.st_mtim;
}

// A settled file's digest is remembered (a hit reads nothing), and any change to the file,
// even one that keeps its size and mtime, makes the key read and hash it again.
static void remembers_digests_until_a_file_changes(void **)
{
    put("m.py", "import helper, extra\n");
    put("helper.py", "H = 1\n");
    usleep(2100 * 1000); // older than the settle time: the stamps can be trusted
    KeyInputs in = base();
    in.argv = {"python3", "m.py"};
    std::string k = key(in);
    uint64_t n = cache_key_files_hashed();
    assert_string_equal(key(in).c_str(), k.c_str());
    assert_int_equal(cache_key_files_hashed(), n); // unchanged: nothing read again

    // Same size, and the old mtime put back: only the ctime tells, and it is enough.
    struct timespec old = mtime_of("helper.py");
    put("helper.py", "H = 2\n");
    set_mtime("helper.py", old);
    std::string k2 = key(in);
    assert_string_not_equal(k2.c_str(), k.c_str());
    assert_int_equal(cache_key_files_hashed(), n + 1); // helper.py only

    // A file changed just now is not trusted yet: read on every request.
    put("helper.py", "H = 1\n");
    assert_string_equal(key(in).c_str(), k.c_str()); // the first content, the first key
    assert_string_equal(key(in).c_str(), k.c_str());
    assert_int_equal(cache_key_files_hashed(), n + 3);

    // Replaced by rename (a new inode) with the same size: read again.
    put("helper.tmp", "H = 3\n");
    assert_int_equal(rename((g_dir + "/helper.tmp").c_str(), (g_dir + "/helper.py").c_str()), 0);
    std::string k3 = key(in);
    assert_string_not_equal(k3.c_str(), k.c_str());
    assert_string_not_equal(k3.c_str(), k2.c_str());

    // A local module that appears later is found: absent candidates are looked up each time.
    put("extra.py", "E = 1\n");
    assert_string_not_equal(key(in).c_str(), k3.c_str());
}

// The memo is keyed by the file, not the spelling: respelling the path reads nothing again,
// and a file of one import repeated keeps one name, not one per mention.
static void memo_is_per_file_and_bounded(void **)
{
    std::string many = "import ";
    for (int i = 0; i < 100000; i++)
        many += "a,";
    many += "a\n";
    put("rep.py", many);
    usleep(2100 * 1000);
    KeyInputs in = base();
    in.argv = {"python3", "rep.py"};
    key(in);
    std::size_t bytes = cache_key_memo_bytes();
    uint64_t n = cache_key_files_hashed();
    for (const char *spelled : {"./rep.py", "././rep.py", ".//./rep.py"}) {
        in.argv = {"python3", spelled};
        key(in);
    }
    assert_int_equal(cache_key_files_hashed(), n);
    assert_int_equal(cache_key_memo_bytes(), bytes);
    assert_true(bytes < 64 * 1024);
}

// Local modules past the per-request bound refuse the key rather than being left out of it.
static void refuses_past_the_request_byte_bound(void **)
{
    std::string big(3u << 20, '#');
    std::string imports;
    for (int i = 0; i < 6; i++) {
        put("big" + std::to_string(i) + ".py", big);
        imports += "import big" + std::to_string(i) + "\n";
    }
    put("huge.py", imports);
    KeyInputs in = base();
    in.argv = {"python3", "huge.py"};
    auto r = cache_key(in);
    assert_false((bool)r);
    assert_contains(r.error().message, "more than xmemd hashes for one request");
}

int test_group_cache_key(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(finds_entrypoint),
        cmocka_unit_test(scans_imports),
        cmocka_unit_test(stable_and_sensitive),
        cmocka_unit_test(follows_local_modules),
        cmocka_unit_test(unreadable_script_is_an_error),
        cmocka_unit_test(remembers_digests_until_a_file_changes),
        cmocka_unit_test(memo_is_per_file_and_bounded),
        cmocka_unit_test(refuses_past_the_request_byte_bound),
    };
    return cmocka_run_group_tests_name("cache_key", tests, setup, teardown);
}
