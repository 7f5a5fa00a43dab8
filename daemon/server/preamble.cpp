// preamble.cpp — runs the batch script's environment preamble before the estimator.
//
// Why bash -c with one brace group per line, and not the lines as one script under `set -e`:
// each line's status is checked by itself, so the failing line is named by its number in the
// batch script (bash's own messages number the generated script), and a user's `set +e` or
// a failing command inside a kept line's `||` cannot hide a failure. The lines run in the
// shell itself (a brace group is no subshell), so `cd`, `export` and `source .../activate`
// change what the estimator inherits through `exec "$@"`.
//
// Why the GPU variables are set again after the preamble: a line such as
// `export CUDA_VISIBLE_DEVICES=0` must not let a profile on a login node see a GPU.
#include "preamble.h"

#include "defaults.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xmem::server
{

namespace
{

constexpr const char *k_marker = "xmem-preamble-failed ";
constexpr const char *k_argv0 = "xmem-preamble";

std::string single_quoted(const std::string &s)
{
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

bool mentions(const std::vector<ScriptLine> &preamble, const char *word)
{
    for (const auto &l : preamble)
        if (l.text.find(word) != std::string::npos)
            return true;
    return false;
}

// `module` and `conda activate` are shell functions that a login shell defines; the
// preamble runs in a non-login shell (no /etc/profile: it may do work), so define them.
std::string shell_functions(const std::vector<ScriptLine> &preamble)
{
    std::string s;
    if (mentions(preamble, "module") || mentions(preamble, "ml "))
        s += "if ! type module >/dev/null 2>&1; then\n"
             "  for f in \"${MODULESHOME:+$MODULESHOME/init/bash}\" /etc/profile.d/lmod.sh \\\n"
             "           /etc/profile.d/modules.sh /usr/share/lmod/lmod/init/bash \\\n"
             "           /usr/share/modules/init/bash; do\n"
             "    if [ -n \"$f\" ] && [ -r \"$f\" ]; then . \"$f\" >/dev/null 2>&1; break; fi\n"
             "  done\n"
             "fi\n";
    if (mentions(preamble, "activate"))
        s += "if ! type conda >/dev/null 2>&1 && [ -n \"${CONDA_EXE:-}\" ]; then\n"
             "  for f in \"${CONDA_EXE%/bin/conda}/etc/profile.d/conda.sh\" \\\n"
             "           \"${CONDA_EXE%/bin/conda}/etc/profile.d/mamba.sh\"; do\n"
             "    if [ -r \"$f\" ]; then . \"$f\" >/dev/null 2>&1; fi\n"
             "  done\n"
             "fi\n";
    return s;
}

// The stderr line before the marker: what the shell or the command said. Lines of a
// preamble's `set -x` trace ("+ xmem_failed 5 1") are passed over.
std::string said_before(const std::string &err, std::size_t marker_at)
{
    std::string line;
    std::size_t end = marker_at;
    while (end > 0) {
        std::size_t last = err.find_last_not_of("\n", end - 1);
        if (last == std::string::npos)
            return "";
        std::size_t start = err.rfind('\n', last);
        start = start == std::string::npos ? 0 : start + 1;
        line = err.substr(start, last + 1 - start);
        if (line[0] != '+')
            break;
        line.clear();
        end = start;
    }
    std::string prefix = std::string(k_argv0) + ": line ";
    if (line.rfind(prefix, 0) == 0) { // "xmem-preamble: line 7: x: not found" → "x: not found"
        std::size_t colon = line.find(": ", prefix.size());
        if (colon != std::string::npos)
            line = line.substr(colon + 2);
    }
    for (char &c : line)
        if ((unsigned char)c < 0x20 || c == 0x7f)
            c = '?';
    return line.substr(0, k_preamble_said_max_bytes);
}

std::string first_word(const std::string &text)
{
    std::size_t b = text.find_first_not_of(" \t");
    if (b == std::string::npos)
        return "";
    std::size_t e = text.find_first_of(" \t;", b);
    return text.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

std::string fix_for(const std::string &text)
{
    std::string w = first_word(text);
    if (w == "module" || w == "ml")
        return "check the module's name with 'module avail' on a login node";
    if (w == "source" || w == ".")
        return "check that the file exists on the login node and that you can read it; a venv: "
               "python3 -m venv DIR";
    if (w == "conda" || w == "mamba" || w == "micromamba")
        return "check the environment's name with 'conda env list' on a login node";
    if (w == "cd" || w == "pushd")
        return "check that the directory exists on the login node";
    return "make the line succeed on a login node, or move it below the training command";
}

} // namespace

bool preamble_changes_directory(const std::vector<ScriptLine> &preamble)
{
    for (const auto &l : preamble)
        for (const char *w : {"cd", "pushd"})
            for (std::size_t at = l.text.find(w); at != std::string::npos;
                 at = l.text.find(w, at + 1)) {
                std::size_t end = at + strlen(w);
                bool starts = at == 0 || strchr(" \t;&|", l.text[at - 1]) != nullptr;
                bool ends = end == l.text.size() || strchr(" \t;&|", l.text[end]) != nullptr;
                if (starts && ends)
                    return true;
            }
    return false;
}

std::string preamble_script(const std::vector<ScriptLine> &preamble)
{
    // `set +x` first, silently: a preamble's `set -x` must not trace the marker's printf.
    std::string s = "xmem_failed() { { set +x; } 2>/dev/null; printf '\\n" + std::string(k_marker) +
                    "%s %s\\n' \"$1\" \"$2\" >&2; exit " +
                    std::to_string(k_preamble_failed_status) + "; }\n";
    s += shell_functions(preamble);
    for (const auto &l : preamble)
        s += "{ " + l.text + "\n} || xmem_failed " + std::to_string(l.line) + " $?\n";
    s += "export";
    for (const auto &kv : sandbox_forced_variables()) {
        std::size_t eq = kv.find('=');
        s += " " + kv.substr(0, eq) + "=" + single_quoted(kv.substr(eq + 1));
    }
    return s + "\nexec \"$@\"\n";
}

std::vector<std::string> preamble_argv(const std::vector<ScriptLine> &preamble,
                                       const std::vector<std::string> &argv)
{
    if (preamble.empty())
        return argv;
    std::vector<std::string> out = {k_preamble_shell,          "--noprofile", "--norc", "-c",
                                    preamble_script(preamble), k_argv0};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

std::optional<std::string> preamble_failure(const SandboxRun &run,
                                            const std::vector<ScriptLine> &preamble)
{
    if (preamble.empty() || !run.spawned || run.exit_status != k_preamble_failed_status)
        return std::nullopt;
    std::size_t at = run.err.rfind(std::string("\n") + k_marker);
    if (at == std::string::npos)
        return std::nullopt;
    at++;
    int line = 0, status = 0;
    if (sscanf(run.err.c_str() + at + strlen(k_marker), "%d %d", &line, &status) != 2)
        return std::nullopt;
    for (const auto &l : preamble) {
        if (l.line != line)
            continue;
        std::string said = said_before(run.err, at);
        return "xmem: the batch script's line " + std::to_string(line) + " failed (status " +
               std::to_string(status) + ") before the profile: '" +
               l.text.substr(0, k_preamble_said_max_bytes) + "'" +
               (said.empty() ? "" : ": " + said) + " (" + fix_for(l.text) + ")";
    }
    return std::nullopt;
}

} // namespace xmem::server
