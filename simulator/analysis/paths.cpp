#include "analysis/paths.h"

#include "analysis/catalog.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

#ifndef XMEM_SYSCONFDIR
#define XMEM_SYSCONFDIR "/etc"
#endif
#ifndef XMEM_SOURCE_DIR
#define XMEM_SOURCE_DIR ""
#endif

namespace xmem::analysis
{

namespace
{
constexpr size_t k_max_small_file = 16u << 20;
}

std::string self_exe_dir()
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return "";
    std::string path(buf, static_cast<size_t>(n));
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool is_regular_file(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_executable(const std::string &path)
{
    return is_regular_file(path) && access(path.c_str(), X_OK) == 0;
}

bool in_build_tree(const std::string &exe_dir)
{
    size_t slash = exe_dir.rfind('/');
    if (slash == std::string::npos)
        return false;
    return is_regular_file(exe_dir.substr(0, slash) + "/CMakeCache.txt");
}

Result<void> read_small_file(const std::string &path, std::string &out)
{
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f)
        return Result<void>::fail("xmem: " + path + ": cannot open: " + std::strerror(errno));
    out.clear();
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        out.append(buf, n);
        if (out.size() > k_max_small_file) {
            std::fclose(f);
            return Result<void>::fail("xmem: " + path +
                                      ": larger than 16 MiB; is it the right file?");
        }
    }
    bool bad = std::ferror(f);
    std::fclose(f);
    if (bad)
        return Result<void>::fail("xmem: " + path + ": read error");
    return Result<void>::success();
}

Result<std::string> locate_catalog(const std::string &explicit_path)
{
    if (!explicit_path.empty()) {
        if (!is_regular_file(explicit_path))
            return Result<std::string>::fail("xmem: --catalog " + explicit_path +
                                             ": no such file; give the path of a gpus.yaml");
        return Result<std::string>::ok(explicit_path);
    }
    std::vector<std::string> tried;
    if (const char *env = std::getenv("XMEM_CATALOG"); env && *env)
        tried.push_back(env);
    std::string exe_dir = self_exe_dir();
    if (in_build_tree(exe_dir) && *XMEM_SOURCE_DIR)
        tried.push_back(std::string(XMEM_SOURCE_DIR) + "/etc/gpus.yaml");
    tried.push_back(std::string(XMEM_SYSCONFDIR) + "/xmem/gpus.yaml");
    std::string list;
    for (const std::string &p : tried) {
        if (is_regular_file(p))
            return Result<std::string>::ok(p);
        list += (list.empty() ? "" : ", ") + p;
    }
    return Result<std::string>::fail("xmem: GPU catalog not found (looked at " + list +
                                     "); pass --catalog PATH or install etc/gpus.yaml");
}

} // namespace xmem::analysis
