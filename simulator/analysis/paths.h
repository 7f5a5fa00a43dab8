// Finding xmem's own files (the GPU catalog) in a build tree or an installation, and
// reading small files whole. Every function reports a missing file as a value.
#pragma once

#include "common/result.h"

#include <string>

namespace xmem::analysis
{

// Directory of the running executable ("" if /proc/self/exe cannot be read).
std::string self_exe_dir();
bool is_regular_file(const std::string &path);
bool is_executable(const std::string &path);
// True when `exe_dir` is `<build>/bin` of a CMake build tree (CMakeCache.txt in its parent).
bool in_build_tree(const std::string &exe_dir);
// Reads a file of at most 16 MiB into `out`.
Result<void> read_small_file(const std::string &path, std::string &out);

} // namespace xmem::analysis
