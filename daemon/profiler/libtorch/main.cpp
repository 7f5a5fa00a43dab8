// xmem-profile-libtorch JOB.yaml --out TRACE [--steps N] [--threads N]
// Captures a TorchScript training job described by a YAML spec (job_spec.h, docs/capture.md).
// Exit status: 0 trace written, 1 capture failed, 2 bad usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "job_spec.h"
#include "runner.h"

namespace
{

constexpr int k_exit_failed = 1;
constexpr int k_exit_usage = 2;

const char *k_usage =
    "usage: xmem-profile-libtorch JOB.yaml --out TRACE [--steps N] [--threads N]\n"
    "Trains the TorchScript module of JOB.yaml for N optimizer steps on the CPU and writes\n"
    "every tensor allocation and free to TRACE (docs/trace-format.md).\n";

bool parse_count(const char *text, int *out)
{
    char *end = nullptr;
    long v = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 1 || v > 1000)
        return false;
    *out = static_cast<int>(v);
    return true;
}

int usage_error(const std::string &message)
{
    std::fprintf(stderr, "xmem: %s\n", message.c_str());
    return k_exit_usage;
}

} // namespace

int main(int argc, char **argv)
{
    std::string job;
    xmem::libtorch::RunOptions options;
    for (int i = 0; i < argc; ++i)
        options.command += (i > 0 ? " " : "") + std::string(argv[i]);
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::fputs(k_usage, stdout);
            return 0;
        }
        bool takes_value = arg == "--out" || arg == "--steps" || arg == "--threads";
        if (takes_value && i + 1 >= argc)
            return usage_error(arg + ": missing value (see --help)");
        if (arg == "--out") {
            options.out = argv[++i];
        } else if (arg == "--steps" || arg == "--threads") {
            int *field = arg == "--steps" ? &options.steps : &options.threads;
            if (!parse_count(argv[++i], field))
                return usage_error(arg + ": invalid value: " + argv[i] +
                                   " (expected an integer from 1 to 1000)");
        } else if (arg[0] == '-') {
            return usage_error(arg + ": unknown option (see --help)");
        } else if (job.empty()) {
            job = arg;
        } else {
            return usage_error(arg + ": only one job spec may be given");
        }
    }
    if (job.empty())
        return usage_error("no job spec given (usage: xmem-profile-libtorch JOB.yaml --out TRACE)");
    if (options.out.empty())
        return usage_error("--out TRACE is required (where to write the trace)");

    auto spec = xmem::libtorch::load_job_spec(job);
    if (!spec.ok()) {
        std::fprintf(stderr, "%s\n", spec.error().message.c_str());
        return k_exit_failed;
    }
    auto ran = xmem::libtorch::run_job(spec.value(), options);
    if (!ran.ok()) {
        std::fprintf(stderr, "%s\n", ran.error().message.c_str());
        return k_exit_failed;
    }
    return 0;
}
