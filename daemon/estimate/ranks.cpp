#include "ranks.h"

#include <algorithm>
#include <cstdlib>

namespace xmem::estimate
{

namespace
{

// A launcher's options, spelt with underscores (torchrun and accelerate take both).
struct LauncherSpec {
    const char *name;
    std::vector<std::string> flags;  // options without a value
    std::vector<std::string> values; // options with one that do not change what a rank runs
    bool every_option_known;         // refuse an option outside FLAGS and VALUES
    const char *nproc;               // ranks per node (torchrun) or in all (accelerate)
    const char *nnodes;
    bool local_rank_argument; // passes --local_rank=R to the script, unless --no_local_rank
};

// torchrun's other options set the rendezvous, restarts and logs, none of which changes what
// a rank allocates; accelerate's change the job (FSDP, DeepSpeed, precision through its
// config), so only those read here are taken.
const LauncherSpec k_torchrun{
    "torchrun",
    {"standalone", "m", "module", "no_python", "run_path", "virtual_local_rank"},
    {},
    false,
    "nproc_per_node",
    "nnodes",
    false};
const LauncherSpec k_accelerate{
    "accelerate launch",
    {"multi_gpu", "m", "module", "no_python", "debug", "q", "quiet", "same_network"},
    {"main_process_ip", "main_process_port", "machine_rank", "gpu_ids",
     "num_cpu_threads_per_process", "rdzv_backend", "max_restarts", "monitor_interval",
     "mixed_precision", "num_processes", "num_machines"},
    true,
    "num_processes",
    "num_machines",
    false};
// DeepSpeed's own launcher: its GPU choice (--include, --exclude, a hostfile), multi-node
// launchers and autotuning change which or how many ranks run, so only these are read.
const LauncherSpec k_deepspeed{
    "deepspeed",
    {"module", "no_python", "no_local_rank", "force_multi", "no_ssh", "no_ssh_check", "save_pid",
     "q", "quiet"},
    {"num_gpus", "num_nodes", "master_port", "master_addr", "node_rank", "ssh_port", "log_level"},
    true,
    "num_gpus",
    "num_nodes",
    true};

std::string basename_of(const std::string &path)
{
    return path.substr(path.rfind('/') + 1);
}

bool has(const std::vector<std::string> &list, const std::string &name)
{
    return std::find(list.begin(), list.end(), name) != list.end();
}

// "--nproc-per-node" -> "nproc_per_node"; "-m" -> "m".
std::string option_key(const std::string &word)
{
    std::string key = word.substr(word.find_first_not_of('-'));
    std::replace(key.begin(), key.end(), '-', '_');
    return key;
}

// The launcher starting COMMAND and where its own options begin, or nullptr.
const LauncherSpec *find_launcher(const std::vector<std::string> &command, size_t *first)
{
    if (command.empty())
        return nullptr;
    std::string exe = basename_of(command[0]);
    if (exe == "torchrun") {
        *first = 1;
        return &k_torchrun;
    }
    if (exe.rfind("python", 0) == 0 && command.size() > 2 && command[1] == "-m" &&
        command[2] == "torch.distributed.run") {
        *first = 3;
        return &k_torchrun;
    }
    if (exe == "accelerate" && command.size() > 1 && command[1] == "launch") {
        *first = 2;
        return &k_accelerate;
    }
    if (exe == "deepspeed") {
        *first = 1;
        return &k_deepspeed;
    }
    return nullptr;
}

// The interpreter the launcher runs its script with: its own (torchrun's sys.executable).
std::string launcher_python(const std::vector<std::string> &command)
{
    std::string exe = basename_of(command[0]);
    if (exe.rfind("python", 0) == 0)
        return command[0];
    size_t slash = command[0].rfind('/');
    return slash == std::string::npos ? "python" : command[0].substr(0, slash) + "/python";
}

Result<unsigned> launcher_count(const LauncherSpec &spec, const std::string &option,
                                const std::string &value)
{
    char *end = nullptr;
    unsigned long n = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end || n == 0 || n > 4096 || value[0] == '-')
        return Result<unsigned>::fail(std::string("xmem: ") + spec.name + " " + option + " " +
                                      value +
                                      ": xmem cannot tell how many ranks that is; give xmem "
                                      "estimate --world-size N");
    return Result<unsigned>::ok(static_cast<unsigned>(n));
}

// What the launcher's options say; *AT ends on the script.
struct LauncherWords {
    unsigned nproc = 0, nnodes = 1;
    bool module = false, no_python = false, no_local_rank = false;
    std::vector<std::pair<std::string, std::string>> env;
};

Result<LauncherWords> read_options(const LauncherSpec &spec, const std::vector<std::string> &cmd,
                                   size_t *at)
{
    using R = Result<LauncherWords>;
    LauncherWords w;
    for (; *at < cmd.size() && cmd[*at].size() > 1 && cmd[*at][0] == '-'; ++*at) {
        std::string word = cmd[*at], value;
        size_t eq = word.find('=');
        std::string key = option_key(word.substr(0, eq));
        if (has(spec.flags, key)) {
            w.module = w.module || key == "m" || key == "module";
            w.no_python = w.no_python || key == "no_python";
            w.no_local_rank = w.no_local_rank || key == "no_local_rank";
            continue;
        }
        if (spec.every_option_known && !has(spec.values, key))
            return R::fail(std::string("xmem: ") + spec.name + " " + word.substr(0, eq) +
                           ": xmem does not read this option (it changes what each rank runs: "
                           "the GPUs, FSDP, DeepSpeed or a config file); run the script with "
                           "torchrun, or "
                           "with xmem estimate --world-size N");
        if (eq != std::string::npos)
            value = word.substr(eq + 1);
        else if (*at + 1 < cmd.size())
            value = cmd[++*at];
        else
            return R::fail(std::string("xmem: ") + spec.name + " " + word + ": needs a value");
        if (key == spec.nproc || key == spec.nnodes) {
            auto n = launcher_count(spec, word.substr(0, eq), value);
            if (!n.ok())
                return R::fail(n.error());
            (key == spec.nproc ? w.nproc : w.nnodes) = n.value();
        } else if (key == "mixed_precision")
            w.env.emplace_back("ACCELERATE_MIXED_PRECISION", value);
    }
    return R::ok(std::move(w));
}

} // namespace

Result<Launch> read_launch(const std::vector<std::string> &command, unsigned world_size_option)
{
    using R = Result<Launch>;
    Launch launch;
    launch.command = command;
    launch.world_size = launch.local_world_size = world_size_option ? world_size_option : 1;
    size_t at = 0;
    const LauncherSpec *spec = find_launcher(command, &at);
    if (!spec)
        return R::ok(std::move(launch));
    auto words = read_options(*spec, command, &at);
    if (!words.ok())
        return R::fail(words.error());
    if (at >= command.size())
        return R::fail(std::string("xmem: ") + spec->name +
                       ": no script in the command; give it after the launcher's options");
    const LauncherWords &w = words.value();
    if (!w.nproc && !world_size_option)
        return R::fail(std::string("xmem: ") + spec->name + ": no " +
                       (spec == &k_torchrun    ? "--nproc-per-node"
                        : spec == &k_deepspeed ? "--num_gpus"
                                               : "--num_processes") +
                       " in the command; give it, or xmem estimate --world-size N");
    bool total = spec == &k_accelerate; // accelerate counts every machine's processes
    unsigned per_node = total ? std::max(1u, w.nproc / w.nnodes) : w.nproc;
    unsigned world = total ? w.nproc : w.nproc * w.nnodes;
    launch.world_size = world_size_option ? world_size_option : world;
    launch.local_world_size = std::min(launch.world_size, per_node ? per_node : launch.world_size);
    launch.launcher = spec->name;
    launch.env = w.env;
    launch.local_rank_argument = spec->local_rank_argument && !w.no_local_rank;
    launch.command.clear();
    if (!w.no_python)
        launch.command.push_back(launcher_python(command));
    if (w.module)
        launch.command.push_back("-m");
    launch.command.insert(launch.command.end(), command.begin() + at, command.end());
    return R::ok(std::move(launch));
}

std::vector<unsigned> profiled_ranks(unsigned world_size)
{
    if (world_size <= 1)
        return {0};
    return {0, 1};
}

unsigned profile_of(unsigned rank)
{
    return rank == 0 ? 0 : 1;
}

namespace
{
unsigned local_rank(const Launch &launch, unsigned rank)
{
    return rank % (launch.local_world_size ? launch.local_world_size : 1);
}
} // namespace

std::vector<std::string> rank_command(const Launch &launch, unsigned rank)
{
    std::vector<std::string> command = launch.command;
    if (launch.local_rank_argument)
        command.push_back("--local_rank=" + std::to_string(local_rank(launch, rank)));
    return command;
}

void export_rank(const Launch &launch, unsigned rank)
{
    unsigned local = launch.local_world_size ? launch.local_world_size : 1;
    const std::pair<const char *, std::string> vars[] = {
        {"RANK", std::to_string(rank)},
        {"LOCAL_RANK", std::to_string(local_rank(launch, rank))},
        {"GROUP_RANK", std::to_string(rank / local)},
        {"WORLD_SIZE", std::to_string(launch.world_size)},
        {"LOCAL_WORLD_SIZE", std::to_string(local)},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", "29500"},
        {"XMEM_WORLD_SIZE", std::to_string(launch.world_size)},
    };
    for (const auto &[name, value] : vars)
        setenv(name, value.c_str(), 1);
    for (const auto &[name, value] : launch.env)
        setenv(name.c_str(), value.c_str(), 1);
}

} // namespace xmem::estimate
