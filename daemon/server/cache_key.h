/*
 * cache_key.h — what makes two estimate requests the same: the requesting uid, the content
 * of the entrypoint script and of the local modules it imports from its directory, argv, the
 * relevant environment, GPU, torch, steps, the xmem version and the config fingerprint.
 * Files are opened with whatever filesystem identity the calling thread has (see FsIdentity).
 * A file's digest is remembered by its identity (device, inode) with its stamp (size, mtime,
 * ctime): a request for an unchanged script opens and fstats it but does not read and hash it
 * again, however the path is spelled. The memo and the bytes one request hashes are bounded
 * (defaults.h, "Finding 2 and 8").
 */
#ifndef XMEMD_CACHE_KEY_H
#define XMEMD_CACHE_KEY_H

#include "common/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xmem::server
{

struct KeyInputs {
    unsigned uid = 0; // the requester, from SO_PEERCRED: estimates are per user (cache_key)
    std::vector<std::string> argv;
    std::string cwd;
    std::map<std::string, std::string> env;            // already filtered to the relevant variables
    std::vector<std::pair<int, std::string>> preamble; // the script's environment lines, run first
    // The preamble may cd elsewhere: an entrypoint script not found from cwd is then not a
    // refusal but a key that matches nothing (the script cannot be hashed, so the answer
    // must not be reused).
    bool preamble_changes_dir = false;
    std::string gpu;
    std::string torch;
    int steps = 0;
    long world = 1; // ranks the job is profiled as (--world-size): each rank's share differs
    std::string config_fingerprint;
};

// The script argv runs: the first argument ending in ".py", else argv[0] if it names a file
// by path; "" when there is none (e.g. `python -m pkg`). Relative to cwd when not absolute.
std::string entrypoint_script(const std::vector<std::string> &argv, const std::string &cwd);

// Top-level module names a Python source imports ("import a.b, c", "from d import e",
// "from .f import g" → a, c, d, f), each once in order of first mention, at most
// k_key_max_module_files of them. Purely textual: enough to find sibling files.
std::vector<std::string> python_imports(const std::string &source);

// 64 hex digits; fails with a user-facing message when the script cannot be read.
Result<std::string> cache_key(const KeyInputs &in);

// Files read and hashed so far (a remembered digest is not counted): for tests.
uint64_t cache_key_files_hashed();
// Bytes the memo of file digests holds now (bounded by k_key_memo_max_bytes): for tests.
std::size_t cache_key_memo_bytes();

} // namespace xmem::server
#endif
