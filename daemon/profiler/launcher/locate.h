// Finding what the launcher starts: the shim package, the capture library, the interpreter
// with torch, and the command line to run.
#pragma once

#include "allocator/result.h"

#include <string>
#include <vector>

namespace xmem::profile
{

struct ShimPaths {
    std::string python_dir;  // directory holding sitecustomize.py and xmem_capture/
    std::string capture_lib; // libxmem-capture.so
};

// In a build tree (this executable sits in the build's bin/) the package comes from the
// source tree and the library from the build's lib/; installed, from XMEM_DATADIR and the
// package library directory. XMEM_PROFILER_PYDIR / XMEM_CAPTURE_LIB override either.
xmem::Result<ShimPaths> locate_shim();

// --python, then $XMEM_PYTHON, then /usr/bin/python3 (Debian's torch lives there), then PATH.
std::string find_python(const std::string &requested);

struct Command {
    std::vector<std::string> argv;
    std::string name; // what messages call it: the script's file name
};

// `python`/`python3[.X]` is replaced by the torch interpreter; a `.py` file is run with it.
Command resolve_command(const std::vector<std::string> &command, const std::string &python);

// CPUs this process may run on (sched_getaffinity), at least 1.
int available_cpus();

} // namespace xmem::profile
