// Finding what the launcher starts: the shim package, the capture library, the interpreter
// with torch, and the command line to run.
#pragma once

#include "common/result.h"

#include <string>
#include <vector>

namespace xmem::profile
{

struct ShimPaths {
    std::string python_dir;  // directory holding sitecustomize.py and xmem_capture/
    std::string capture_lib; // libxmem-capture.so built with xmem (may be absent)
    // Sources of the capture library and the simulator headers they include, for building
    // it against the job's torch on first use (xmem_capture/capture_lib.py); "" when
    // XMEM_CAPTURE_LIB names the library to use as it is.
    std::string capture_src;
    std::string capture_include;
    std::string capture_lib_torch; // "VERSION ABI" of the torch capture_lib was built against
};

// In a build tree (this executable sits in the build's bin/) the package and the capture
// sources come from the source tree and the library from the build's lib/; installed, from
// XMEM_DATADIR and the package library directory. XMEM_PROFILER_PYDIR / XMEM_CAPTURE_LIB
// override either.
xmem::Result<ShimPaths> locate_shim();

// --python, else $XMEM_PYTHON, else "": no override, the job's own interpreter runs
// (resolve_command).
std::string python_override(const std::string &requested);

// NAME (no slash) looked up in the directories of PATH_ENV as execvp would: the first
// executable file; "" when there is none.
std::string search_path(const std::string &name, const std::string &path_env);

struct Command {
    std::vector<std::string> argv;
    std::string name;   // what messages call it: the script's file name
    std::string python; // the interpreter that runs it; "" for a command that is not Python
};

// The interpreter the job itself would use (docs/capture.md, "Which interpreter"):
// `python`, `python3`, `python3.X` resolve on PATH_ENV (the job's PATH: an activated venv or
// conda env comes first), an interpreter written with a slash stays as written, and a `.py`
// file runs with `python3` from PATH_ENV. OVERRIDE (--python, $XMEM_PYTHON), when set,
// replaces the interpreter of all three. Other commands run as given. An interpreter not on
// PATH_ENV is one line naming it and the fix.
xmem::Result<Command> resolve_command(const std::vector<std::string> &command,
                                      const std::string &override, const std::string &path_env);

// CPUs this process may run on (sched_getaffinity), at least 1.
int available_cpus();

} // namespace xmem::profile
