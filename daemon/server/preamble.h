// preamble.h — the batch script's environment preamble (docs/protocol.md, "Preamble"): the
// lines the plugin kept (module load, source .../activate, export, cd, ...) run in bash, as
// the user, inside the sandbox, and then the estimator runs in the environment and working
// directory they left, so `python` resolves on the job's own PATH.
#ifndef XMEMD_PREAMBLE_H
#define XMEMD_PREAMBLE_H

#include "sandbox.h"

#include <atomic>

#include <optional>
#include <string>
#include <vector>

namespace xmem::server
{

// One line of the batch script: its 1-based number and its text.
struct ScriptLine {
    int line = 0;
    std::string text;
};

// Whether a line may change the working directory (cd, pushd): the entrypoint's path is then
// relative to a directory xmemd cannot know before running it.
bool preamble_changes_directory(const std::vector<ScriptLine> &preamble);

// Runs spec (the estimator) after the preamble: the preamble in a sandbox of its own, its
// stdout on its stderr, then the estimator in a fresh one with the environment and directory
// the preamble left. The estimate's channel is never a descriptor of the preamble's shell or
// of anything it starts (preamble.cpp says why). No preamble: spec alone. The run's err holds
// both stderrs, cpu and wall seconds both runs.
SandboxRun run_with_preamble(const SandboxSpec &spec, const std::vector<ScriptLine> &preamble,
                             const std::atomic<bool> *cancel);

// The bash script the preamble runs in (for tests): the lines, then on descriptor 3 the tag,
// the directory and every exported variable, each NUL-terminated.
std::string preamble_script(const std::vector<ScriptLine> &preamble);

// What a preamble left: its directory and the estimator's environment (its exported
// variables less loader and shell start-up code, with the GPU-hiding variables and
// XMEM_PROFILING set again).
struct PreambleEnv {
    std::string cwd;
    std::vector<std::string> env;
};
std::optional<PreambleEnv> preamble_env_parse(const std::string &out);

// When the run ended in a failing preamble line: the user's one line, naming the line, its
// text, what the shell said and the fix. nullopt otherwise.
std::optional<std::string> preamble_failure(const SandboxRun &run,
                                            const std::vector<ScriptLine> &preamble);

} // namespace xmem::server
#endif
