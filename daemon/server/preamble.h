// preamble.h — the batch script's environment preamble (docs/protocol.md, "Preamble"): the
// lines the plugin kept (module load, source .../activate, export, cd, ...) run in bash, as
// the user, inside the sandbox, and then the estimator runs in the environment and working
// directory they left, so `python` resolves on the job's own PATH.
#ifndef XMEMD_PREAMBLE_H
#define XMEMD_PREAMBLE_H

#include "sandbox.h"

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

// The argv that runs the preamble and then execs argv (unchanged when there is no preamble).
std::vector<std::string> preamble_argv(const std::vector<ScriptLine> &preamble,
                                       const std::vector<std::string> &argv);

// The bash script preamble_argv runs (for tests).
std::string preamble_script(const std::vector<ScriptLine> &preamble);

// When the run ended in a failing preamble line: the user's one line, naming the line, its
// text, what the shell said and the fix. nullopt otherwise.
std::optional<std::string> preamble_failure(const SandboxRun &run,
                                            const std::vector<ScriptLine> &preamble);

} // namespace xmem::server
#endif
