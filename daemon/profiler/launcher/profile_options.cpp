#include "profile_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace xmem::profile
{

namespace
{

bool parse_int(const char *text, int lo, int hi, int *out)
{
    if (text == nullptr || *text == '\0')
        return false;
    errno = 0;
    char *end = nullptr;
    long v = std::strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = static_cast<int>(v);
    return true;
}

ParseResult error(std::string message)
{
    return {ParseStatus::error, "xmem: " + std::move(message)};
}

struct IntOption {
    const char *name;
    int Options::*field;
    int lo;
    int hi;
};

const IntOption k_int_options[] = {
    {"--steps", &Options::steps, 1, k_max_steps},
    {"--threads", &Options::threads, 1, k_max_threads},
    {"--timeout", &Options::timeout_s, 1, k_max_timeout_s},
    {"--budget", &Options::budget_s, 1, k_max_timeout_s},
    {"--max-rss", &Options::max_rss_mib, k_rss_unlimited, k_max_rss_mib},
};

} // namespace

const char *usage_text()
{
    return "usage: xmem-profile --out TRACE [--steps N] [--threads N] [--timeout SECONDS]\n"
           "                    [--budget SECONDS] [--max-rss MIB] [--python PATH] [--verbose]\n"
           "                    [--what-if CHANGE]\n"
           "                    -- COMMAND ARGS...\n"
           "Runs a PyTorch training command on the CPU with CUDA faked, records every tensor\n"
           "allocation and free of its first N optimizer steps (default 3) into TRACE, and exits.\n"
           "  --out TRACE        trace file to write (docs/trace-format.md)\n"
           "  --steps N          optimizer steps to capture (default 3)\n"
           "  --threads N        CPU threads for torch (default: all CPUs this process may use)\n"
           "  --timeout SECONDS  fail when no next optimizer step completes within this time,\n"
           "                     or 3 x the first step's when that is more (default 120)\n"
           "  --budget SECONDS   fail when the whole run, set-up included, takes longer (default\n"
           "                     540, or TIMEOUT x (STEPS + 1) when that is more)\n"
           "  --max-rss MIB      stop the job when its processes' resident memory passes MIB\n"
           "                     (default: 80 % of what the machine, cgroup and RLIMIT_AS leave\n"
           "                     free at the start; 0: no limit)\n"
           "  --python PATH      interpreter for python/python3/*.py commands (default:\n"
           "                     $XMEM_PYTHON, else the command's own, found on PATH)\n"
           "  --verbose          show the script's stderr as it runs\n"
           "  --what-if CHANGE   run the job with CHANGE applied: amp=bf16, checkpoint=all-blocks\n"
           "                     or optimizer=fused (exit 8, one line, when it cannot apply)\n";
}

ParseResult parse_options(int argc, const char *const *argv, Options *opts)
{
    int i = 1;
    for (; i < argc; ++i) {
        const char *arg = argv[i];
        if (std::strcmp(arg, "--") == 0) {
            ++i;
            break;
        }
        if (std::strcmp(arg, "-h") == 0 || std::strcmp(arg, "--help") == 0)
            return {ParseStatus::help, {}};
        if (std::strcmp(arg, "--version") == 0)
            return {ParseStatus::version, {}};
        if (std::strcmp(arg, "--verbose") == 0 || std::strcmp(arg, "-v") == 0) {
            opts->verbose = true;
            continue;
        }
        if (arg[0] != '-')
            break; // the command starts (the "--" is optional)
        const IntOption *int_opt = nullptr;
        for (const auto &o : k_int_options)
            if (std::strcmp(arg, o.name) == 0)
                int_opt = &o;
        bool is_string = std::strcmp(arg, "--out") == 0 || std::strcmp(arg, "--python") == 0 ||
                         std::strcmp(arg, "--what-if") == 0;
        if (int_opt == nullptr && !is_string)
            return error(std::string(arg) + ": unknown option (see --help)");
        if (i + 1 >= argc)
            return error(std::string(arg) + ": missing value (see --help)");
        const char *value = argv[++i];
        if (int_opt) {
            if (!parse_int(value, int_opt->lo, int_opt->hi, &(opts->*(int_opt->field))))
                return error(std::string(arg) + ": invalid value: " + value +
                             " (expected an integer from " + std::to_string(int_opt->lo) + " to " +
                             std::to_string(int_opt->hi) + ")");
        } else if (*value == '\0') {
            return error(std::string(arg) + ": empty value");
        } else if (std::strcmp(arg, "--out") == 0) {
            opts->out = value;
        } else if (std::strcmp(arg, "--what-if") == 0) {
            opts->what_if = value;
        } else {
            opts->python = value;
        }
    }
    for (; i < argc; ++i)
        opts->command.emplace_back(argv[i]);
    if (opts->out.empty())
        return error("--out TRACE is required (where to write the trace)");
    if (opts->command.empty())
        return error("no command given (usage: xmem-profile --out TRACE -- python3 train.py ...)");
    return {};
}

} // namespace xmem::profile
