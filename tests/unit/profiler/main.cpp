// Runs one test group by name: test-profiler GROUP (see test-list.h).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test-list.h"

#include "../common/unit_runner.h"

std::string xmem_test_read_file(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string xmem_test_temp_dir(void)
{
    char tmpl[] = "/tmp/xmem-test-profiler.XXXXXX";
    const char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    return dir;
}

#define XMEM_PROFILER_GROUP_ENTRY(name) XMEM_UNIT_GROUP(name, xmem_test_group_##name)
XMEM_UNIT_MAIN("test-profiler", XMEM_PROFILER_TEST_GROUPS, XMEM_PROFILER_GROUP_ENTRY)
