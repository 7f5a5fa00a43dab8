// whatif_share.cpp — the share a policy gives each job, from share() of etc/xmem_lib.lua: the
// rule job_submit.lua applies in slurmctld is written once, in Lua, so the report runs that
// code (lua5.1, the Lua slurmctld's job_submit/lua embeds) over the policy table xmemd
// renders, rather than keeping a second copy of the rounding in C++.
#include "whatif.h"

#include "analysis/paths.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace xmem::report
{

namespace
{
constexpr int k_lua_deadline_ms = 60000; // one process for every job of the window

// Asks share() and the required level about each "LIMIT_MB\tPARTITION\tACCOUNT" line of
// arg[3], as job_submit.lua's size_job does; one "kind count per_gpu share_mb margin packed"
// line per query.
const char *const k_driver = R"LUA(
local xmem = dofile(arg[1])
local policy = dofile(arg[2])
for line in io.lines(arg[3]) do
  local limit, partition, account = line:match("^(%d+)\t([^\t]*)\t(.*)$")
  if partition == "" then partition = nil end
  if account == "" then account = nil end
  local r = xmem.share(policy, partition, tonumber(limit), account)
  local packed = r.gres ~= nil and xmem.enforcement_shortfall(policy, r.gpu, r.partition) == nil
  local per = (r.kind == "shard" and r.gpu.shards_per_gpu) or (r.kind == "mps" and r.gpu.mps_per_gpu) or 0
  io.write(string.format("%s %d %d %d %d %d\n", r.kind, r.count or 0, per, r.share_mb, r.margin,
    packed and 1 or 0))
end
)LUA";

std::string dir_of(const std::string &path)
{
    auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The xmem_lib.lua slurmctld reads (beside slurm.conf, where xmem.yaml usually is too), else
// the source tree's when run from a build tree, else the installed copy.
xmem::Result<std::string> locate_lib(const std::string &config)
{
    std::vector<std::string> tried{dir_of(config) + "/xmem_lib.lua"};
    if (xmem::analysis::in_build_tree(xmem::analysis::self_exe_dir()) && *XMEM_SOURCE_DIR)
        tried.push_back(std::string(XMEM_SOURCE_DIR) + "/etc/xmem_lib.lua");
    tried.push_back(std::string(XMEM_DATADIR) + "/slurm/xmem_lib.lua");
    std::string list;
    for (const std::string &p : tried) {
        if (xmem::analysis::is_regular_file(p))
            return xmem::Result<std::string>::ok(p);
        list += (list.empty() ? "" : ", ") + p;
    }
    return xmem::Result<std::string>::fail(
        "xmem: report: --what-if needs xmem_lib.lua, the policy code job_submit.lua runs "
        "(looked at " +
        list + "); put it beside the config");
}

std::string field(const std::string &s)
{
    std::string out = s;
    for (char &c : out)
        if (c == '\t' || c == '\n' || c == '\r')
            c = ' ';
    return out;
}

// The files the driver reads, in a private directory removed with this object.
struct Scratch {
    std::string dir;
    std::vector<std::string> files;
    ~Scratch()
    {
        for (const std::string &f : files)
            unlink(f.c_str());
        if (!dir.empty())
            rmdir(dir.c_str());
    }
    bool write(const std::string &name, const std::string &text)
    {
        files.push_back(dir + "/" + name);
        std::ofstream out(files.back(), std::ios::binary);
        return (bool)(out << text) && (bool)out.flush();
    }
};

xmem::Result<std::vector<Share>> parse_answers(const std::string &out, std::size_t want)
{
    using R = xmem::Result<std::vector<Share>>;
    std::vector<Share> shares;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        Share s;
        int packed = 0;
        std::istringstream f(line);
        if (!(f >> s.kind >> s.count >> s.per_gpu >> s.share_mb >> s.margin_percent >> packed))
            return R::fail("xmem: report: --what-if: xmem_lib.lua's share() answered '" + line +
                           "' (is it the xmem release this report belongs to?)");
        s.packed = packed == 1;
        shares.push_back(s);
    }
    if (shares.size() != want)
        return R::fail("xmem: report: --what-if: share() answered " +
                       std::to_string(shares.size()) + " of " + std::to_string(want) + " jobs");
    return R::ok(std::move(shares));
}
} // namespace

ShareFn lua_shares(const std::string &config)
{
    return [config](const xmem::server::Policy &policy, const std::vector<ShareQuery> &queries) {
        using R = xmem::Result<std::vector<Share>>;
        if (queries.empty())
            return R::ok(std::vector<Share>{});
        auto lib = locate_lib(config);
        if (!lib.ok())
            return R::fail(lib.error());
        const char *tmp = getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/xmem-what-if-XXXXXX";
        Scratch s;
        if (!mkdtemp(tmpl.data()))
            return R::fail("xmem: report: --what-if: cannot make a directory in " + tmpl);
        s.dir = tmpl;
        std::string lines;
        for (const ShareQuery &q : queries)
            lines += std::to_string(q.limit_mb) + "\t" + field(q.partition) + "\t" +
                     field(q.account) + "\n";
        if (!s.write("driver.lua", k_driver) ||
            !s.write("policy.lua", xmem::server::policy_render_lua(policy, 0)) ||
            !s.write("queries.tsv", lines))
            return R::fail("xmem: report: --what-if: cannot write in " + s.dir);
        std::string out;
        std::string why = run_capture(
            {"lua5.1", s.files[0], lib.value(), s.files[1], s.files[2]}, out, k_lua_deadline_ms,
            "install lua5.1, the Lua slurmctld's job_submit runs", "see its stderr");
        if (!why.empty())
            return R::fail("xmem: report: --what-if: " + why);
        return parse_answers(out, queries.size());
    };
}

} // namespace xmem::report
