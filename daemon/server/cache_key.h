/*
 * cache_key.h — what makes two estimate requests the same: the content of the entrypoint
 * script and of the local modules it imports from its directory, argv, the relevant
 * environment, GPU, torch, steps, the xmem version and the config fingerprint.
 * Files are opened with whatever filesystem identity the calling thread has (see FsIdentity).
 * A file's digest is remembered by path with its stamp (device, inode, size, mtime, ctime):
 * a request for an unchanged script opens and fstats it but does not read and hash it again.
 */
#ifndef XMEMD_CACHE_KEY_H
#define XMEMD_CACHE_KEY_H

#include "allocator/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xmem::server
{

struct KeyInputs {
    std::vector<std::string> argv;
    std::string cwd;
    std::map<std::string, std::string> env; // already filtered to the relevant variables
    std::string gpu;
    std::string torch;
    int steps = 0;
    std::string config_fingerprint;
};

// The script argv runs: the first argument ending in ".py", else argv[0] if it names a file
// by path; "" when there is none (e.g. `python -m pkg`). Relative to cwd when not absolute.
std::string entrypoint_script(const std::vector<std::string> &argv, const std::string &cwd);

// Top-level module names a Python source imports ("import a.b, c", "from d import e",
// "from .f import g" → a, c, d, f). Purely textual: enough to find sibling files.
std::vector<std::string> python_imports(const std::string &source);

// 64 hex digits; fails with a user-facing message when the script cannot be read.
Result<std::string> cache_key(const KeyInputs &in);

// Files read and hashed so far (a remembered digest is not counted): for tests.
uint64_t cache_key_files_hashed();

} // namespace xmem::server
#endif
