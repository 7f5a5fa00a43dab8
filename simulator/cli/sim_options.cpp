#include "cli/sim_options.h"

#include "trace/units.h"

namespace xmem::cli
{

namespace
{

Result<SimOptions> usage_error(const std::string &what)
{
    return Result<SimOptions>::fail("xmem: sim: " + what + " (see 'xmem sim --help')");
}

bool parse_device(const std::string &text, uint32_t &out)
{
    if (text.empty() || text.size() > 6 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        return false;
    out = static_cast<uint32_t>(std::stoul(text));
    return true;
}

// Applies one option that takes a value; returns an empty string or the error text.
std::string apply_value(SimOptions &o, const std::string &name, const std::string &value)
{
    if (name == "--torch") {
        o.torch = value;
    } else if (name == "--alloc-conf") {
        o.alloc_conf = value;
    } else if (name == "--capacity") {
        uint64_t bytes = 0;
        if (!xmem::trace::parse_byte_size(value, bytes))
            return "--capacity '" + value +
                   "' is not a size (bytes, or with a suffix: 512M, 40G, 40GiB, 80GB)";
        o.capacity = bytes;
    } else if (name == "--timeline") {
        if (value.empty())
            return "--timeline needs an output file name";
        o.timeline = value;
    } else if (name == "--from-pickle") {
        if (value.empty())
            return "--from-pickle needs a snapshot file";
        o.from_pickle = true;
    } else if (name == "--device") {
        if (!parse_device(value, o.device))
            return "--device '" + value + "' is not a device index (0, 1, ...)";
    }
    return "";
}

bool takes_value(const std::string &name)
{
    return name == "--torch" || name == "--alloc-conf" || name == "--capacity" ||
           name == "--timeline" || name == "--device" || name == "--from-pickle";
}

} // namespace

Result<SimOptions> parse_sim_options(const std::vector<std::string> &args)
{
    SimOptions o;
    bool have_trace = false;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string arg = args[i];
        if (arg == "--help" || arg == "-h") {
            o.help = true;
            return Result<SimOptions>::ok(o);
        }
        if (arg == "--json") {
            o.json = true;
            continue;
        }
        if (arg == "--verify") {
            o.verify = true;
            continue;
        }
        if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
            size_t eq = arg.find('=');
            std::string name = arg.substr(0, eq);
            if (!takes_value(name))
                return usage_error("unknown option '" + name + "'");
            std::string value;
            if (eq != std::string::npos)
                value = arg.substr(eq + 1);
            else if (i + 1 < args.size())
                value = args[++i];
            else
                return usage_error(name + " needs a value");
            std::string problem = apply_value(o, name, value);
            if (!problem.empty())
                return usage_error(problem);
            if (name == "--from-pickle") { // its value is the trace
                if (have_trace)
                    return usage_error("more than one trace given ('" + o.trace + "' and '" +
                                       value + "')");
                o.trace = value;
                have_trace = true;
            }
            continue;
        }
        if (arg.size() > 1 && arg[0] == '-')
            return usage_error("unknown option '" + arg + "'");
        if (have_trace)
            return usage_error("more than one trace given ('" + o.trace + "' and '" + arg + "')");
        o.trace = arg;
        have_trace = true;
    }
    if (!have_trace)
        return usage_error("no trace given");
    return Result<SimOptions>::ok(o);
}

const char *sim_usage()
{
    return "usage: xmem sim [options] TRACE\n"
           "\n"
           "Replays TRACE through the simulated PyTorch CUDA caching allocator and prints peak\n"
           "allocated/reserved memory, segments and any out-of-memory. TRACE is an xmem compact\n"
           "trace (docs/trace-format.md; only dev=g storages are replayed) or a PyTorch 2.x\n"
           "memory snapshot exported to JSON; the format is detected from the first bytes.\n"
           "'-' reads standard input.\n"
           "\n"
           "options:\n"
           "  --torch VERSION      PyTorch release to mirror (1.13, 2.0 ... ; default: the "
           "trace's\n"
           "                       'torch' metadata, else 2.6)\n"
           "  --alloc-conf STRING  PYTORCH_CUDA_ALLOC_CONF, e.g. expandable_segments:True\n"
           "  --capacity BYTES     device memory available to the allocator: bytes or 512M, 40G,\n"
           "                       40GiB (binary), 80GB (decimal); default: unlimited\n"
           "  --json               print one JSON object (every torch.cuda.memory_stats() key,\n"
           "                       events, torch, oom) instead of the summary\n"
           "  --timeline OUT.html  write a self-contained page plotting allocated and reserved "
           "bytes\n"
           "  --verify             snapshots: compare the simulated segment allocations and frees\n"
           "                       with the real ones and report the first divergence\n"
           "  --device N           snapshots: which device_traces list to replay (default 0)\n"
           "  --from-pickle FILE   read FILE, PyTorch's own pickled snapshot (_dump_snapshot),\n"
           "                       with a reader that runs no code and refuses any object\n"
           "  -h, --help           this text\n"
           "\n"
           "exit status: 0 replayed (even if the job would run out of memory), 2 bad input or\n"
           "usage, 3 --verify found a divergence.\n";
}

} // namespace xmem::cli
