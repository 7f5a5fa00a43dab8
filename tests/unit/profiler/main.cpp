// Runs one test group by name: test-profiler GROUP (see test-list.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "test-list.h"

std::string xmem_test_read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string xmem_test_temp_dir(void) {
  char tmpl[] = "/tmp/xmem-test-profiler.XXXXXX";
  const char* dir = mkdtemp(tmpl);
  assert_non_null(dir);
  return dir;
}

int main(int argc, char** argv) {
  struct Group {
    const char* name;
    int (*run)(void);
  };
  static const Group groups[] = {
#define XMEM_GROUP_ENTRY(name) {#name, xmem_test_group_##name},
      XMEM_PROFILER_TEST_GROUPS(XMEM_GROUP_ENTRY)
#undef XMEM_GROUP_ENTRY
  };
  int failed = 0;
  for (const Group& g : groups)
    if (argc < 2 || std::strcmp(argv[1], g.name) == 0) failed += g.run();
  return failed ? 1 : 0;
}
