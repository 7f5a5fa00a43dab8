// preamble.cpp — runs the batch script's environment preamble before the estimator.
//
// Why bash -c with one brace group per line, and not the lines as one script under `set -e`:
// each line's status is checked by itself, so the failing line is named by its number in the
// batch script (bash's own messages number the generated script), and a user's `set +e` or
// a failing command inside a kept line's `||` cannot hide a failure. The lines run in the
// shell itself (a brace group is no subshell), so `cd`, `export` and `source .../activate`
// change what the estimator inherits through `exec "$@"`.
//
// Why two processes, the preamble's shell and then the estimator, and not `exec "$@"` at the
// end of the shell: the estimate comes back on the estimator's stdout, and a descriptor the
// shell holds is one its lines can write to (`echo '{...}'`, `>&N` to a saved copy, `exec` of
// a program of their own). The shell's stdout is its stderr; what it leaves (its exported
// variables and its directory) goes out on descriptor 3, which its lines may write too: that
// only sets an environment they could set anyway. The estimator then starts in a sandbox of
// its own, whose stdout no process of the preamble ever held.
//
// Why the GPU variables are set again after the preamble: a line such as
// `export CUDA_VISIBLE_DEVICES=0` must not let a profile on a login node see a GPU.
#include "preamble.h"

#include "defaults.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xmem::server
{

namespace
{

constexpr const char *k_marker = "xmem-preamble-failed ";
constexpr const char *k_argv0 = "xmem-preamble";
constexpr const char *k_env_tag = "xmem-preamble-env";

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
    // The environment's channel on 3, the lines' stdout on stderr.
    std::string s = "exec 3>&1 1>&2\n";
    // `set +x` first, silently: a preamble's `set -x` must not trace the marker's printf.
    s += "xmem_failed() { { set +x; } 2>/dev/null; printf '\\n" + std::string(k_marker) +
         "%s %s\\n' \"$1\" \"$2\" >&2; exit " + std::to_string(k_preamble_failed_status) + "; }\n";
    s += shell_functions(preamble);
    for (const auto &l : preamble)
        s += "{ " + l.text + "\n} || xmem_failed " + std::to_string(l.line) + " $?\n";
    // What the lines left: the directory, then every exported variable, NUL-terminated.
    return s + "{ set +x; } 2>/dev/null\n{ builtin printf '" + std::string(k_env_tag) +
           "\\0%s\\0' \"$PWD\"\n  for xmem_n in $(builtin compgen -e); do\n"
           "    builtin printf '%s=%s\\0' \"$xmem_n\" \"${!xmem_n}\"\n  done\n} >&3 || xmem_failed "
           "0 $?\n";
}

std::optional<PreambleEnv> preamble_env_parse(const std::string &out)
{
    std::vector<std::string> parts;
    for (std::size_t at = 0; at < out.size();) {
        std::size_t nul = out.find('\0', at);
        if (nul == std::string::npos)
            return std::nullopt; // cut: no NUL after the last one
        parts.push_back(out.substr(at, nul - at));
        at = nul + 1;
    }
    if (parts.size() < 2 || parts[0] != k_env_tag || parts[1].empty() || parts[1][0] != '/' ||
        parts.size() - 2 > k_preamble_max_vars)
        return std::nullopt;
    PreambleEnv e;
    e.cwd = parts[1];
    const auto &forced = sandbox_forced_variables();
    for (std::size_t i = 2; i < parts.size(); i++) {
        std::size_t eq = parts[i].find('=');
        std::string name = parts[i].substr(0, eq == std::string::npos ? 0 : eq);
        // Loader and shell start-up code stays out, as in a request (docs/protocol.md "env"),
        // and the GPU-hiding variables are set again below.
        bool dropped = name == "LD_PRELOAD" || name == "LD_AUDIT" || name == "BASH_ENV" ||
                       name == "ENV" || name.rfind("BASH_FUNC_", 0) == 0;
        for (const auto &kv : forced)
            dropped |= kv.compare(0, kv.find('=') + 1, name + "=") == 0;
        if (dropped)
            continue;
        if (name.empty() ||
            name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789_") != std::string::npos ||
            (name[0] >= '0' && name[0] <= '9'))
            return std::nullopt;
        e.env.push_back(parts[i]);
    }
    e.env.insert(e.env.end(), forced.begin(), forced.end());
    return e;
}

SandboxRun run_with_preamble(const SandboxSpec &spec, const std::vector<ScriptLine> &preamble,
                             const std::atomic<bool> *cancel)
{
    if (preamble.empty())
        return sandbox_run(spec, cancel);
    SandboxSpec first = spec;
    first.argv = {k_preamble_shell,          "--noprofile", "--norc", "-c",
                  preamble_script(preamble), k_argv0};
    SandboxRun pre = sandbox_run(first, cancel);
    std::optional<PreambleEnv> left;
    if (pre.spawned && pre.exit_status == 0 && !pre.output_overflow)
        left = preamble_env_parse(pre.out);
    pre.out.clear(); // an environment, never an estimate
    if (!pre.spawned || pre.exit_status != 0 || pre.term_signal != 0 || pre.wall_expired ||
        pre.cancelled)
        return pre;
    if (!left) { // a line wrote to or closed descriptor 3, exec'd, or left too much
        pre.exit_status = k_preamble_failed_status;
        pre.err += std::string("\n") + k_marker + "0 0\n";
        return pre;
    }
    SandboxSpec second = spec;
    second.cwd = left->cwd;
    second.env = left->env;
    second.wall_ms = std::max(1, spec.wall_ms - (int)(pre.wall_seconds * 1000));
    SandboxRun run = sandbox_run(second, cancel);
    run.cpu_seconds += pre.cpu_seconds;
    run.wall_seconds += pre.wall_seconds;
    std::size_t keep = (std::size_t)spec.limits.output_kb * 1024;
    run.err = pre.err + run.err;
    if (run.err.size() > keep)
        run.err.erase(0, run.err.size() - keep);
    return run;
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
    if (line == 0) // run_with_preamble: its lines ran, what they left could not be read
        return std::string("xmem: the batch script's preamble ran, but the environment it left "
                           "could not be read (a line that writes to or closes descriptor 3, "
                           "or execs a program, ends the preamble's shell early); keep such "
                           "lines below the training command");
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
