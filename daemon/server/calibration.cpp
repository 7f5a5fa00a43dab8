// calibration.cpp — the calibration file's strict parser and its writer (calibration.h).
#include "calibration.h"
#include "defaults.h"

#include "analysis/catalog.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace xmem::server
{

namespace
{

struct FileError {
    int line;
    std::string key, what;
};

[[noreturn]] void fail(const YAML::Node &n, const std::string &key, const std::string &what)
{
    throw FileError{n.Mark().line + 1, key, what};
}

// A margin: a whole percent, 0..k_calibrate_max_percent.
int percent(const YAML::Node &n, const std::string &key)
{
    const std::string range = "0.." + std::to_string(k_calibrate_max_percent);
    if (!n.IsScalar())
        fail(n, key, "expected a whole percent " + range);
    const std::string &s = n.Scalar();
    if (s.empty() || s.size() > 4 || s.find_first_not_of("0123456789") != std::string::npos)
        fail(n, key, "expected a whole percent " + range + ", not '" + s + "'");
    int v = std::stoi(s);
    if (v > k_calibrate_max_percent)
        fail(n, key, "out of range: " + s + " (allowed " + range + ")");
    return v;
}

std::string account(const YAML::Node &n, const std::string &key)
{
    if (!n.IsScalar() || !calibration_account_ok(n.Scalar()))
        fail(n, key,
             "invalid account name '" + (n.IsScalar() ? n.Scalar() : std::string("?")) +
                 "' (1 to 64 printable characters, no space or quote)");
    return n.Scalar();
}

void expect_map(const YAML::Node &n, const std::string &key)
{
    if (!n.IsMap())
        fail(n, key, "expected a mapping");
}

GpuMargin margin(const YAML::Node &n, const std::string &key, const std::string &gpu)
{
    expect_map(n, key);
    GpuMargin m;
    m.gpu = gpu;
    bool has_percent = false;
    for (auto it = n.begin(); it != n.end(); ++it) {
        std::string k = it->first.Scalar(), dotted = key + "." + k;
        if (k == "percent") {
            m.percent = percent(it->second, dotted);
            has_percent = true;
        } else if (k == "accounts") {
            expect_map(it->second, dotted);
            for (auto a = it->second.begin(); a != it->second.end(); ++a) {
                std::string name = account(a->first, dotted);
                m.accounts.emplace_back(name, percent(a->second, dotted + "." + name));
            }
        } else {
            fail(it->first, dotted, "unknown key (use percent and accounts)");
        }
    }
    if (!has_percent)
        fail(n, key, "missing percent");
    return m;
}

std::vector<GpuMargin> parse_root(const YAML::Node &root, const analysis::Catalog &catalog)
{
    expect_map(root, "(top level)");
    std::vector<GpuMargin> margins;
    bool versioned = false;
    for (auto it = root.begin(); it != root.end(); ++it) {
        std::string k = it->first.Scalar();
        if (k == "version") {
            if (!it->second.IsScalar() || it->second.Scalar() != "1")
                fail(it->second, k, "expected 1 (written by another xmem? re-run xmem calibrate)");
            versioned = true;
        } else if (k == "margins") {
            expect_map(it->second, k);
            for (auto g = it->second.begin(); g != it->second.end(); ++g) {
                auto spec = catalog.find(g->first.Scalar());
                if (!spec.ok())
                    fail(g->first, k + "." + g->first.Scalar(),
                         "not a GPU of the catalog (" + catalog.path() + ")");
                for (const GpuMargin &seen : margins)
                    if (seen.gpu == spec.value().name)
                        fail(g->first, k + "." + g->first.Scalar(), "given twice");
                margins.push_back(
                    margin(g->second, k + "." + g->first.Scalar(), spec.value().name));
            }
        } else {
            fail(it->first, k, "unknown key (use version and margins)");
        }
    }
    if (!versioned)
        fail(root, "version", "missing (the first key of a calibration file is version: 1)");
    return margins;
}

} // namespace

Result<std::vector<GpuMargin>> calibration_parse(const std::string &text, const std::string &name,
                                                 const analysis::Catalog &catalog)
{
    using R = Result<std::vector<GpuMargin>>;
    try {
        YAML::Node root = YAML::Load(text);
        if (root.IsNull())
            return R::fail(name + ":1: (top level): empty (a truncated file? re-run xmem "
                                  "calibrate --apply, or delete it)");
        return R::ok(parse_root(root, catalog));
    } catch (const FileError &e) {
        return R::fail(name + ":" + std::to_string(e.line) + ": " + e.key + ": " + e.what);
    } catch (const YAML::Exception &e) {
        return R::fail(name + ":" + std::to_string(e.mark.line + 1) + ": (syntax): " + e.msg);
    }
}

Result<std::vector<GpuMargin>> calibration_load(const std::string &path,
                                                const analysis::Catalog &catalog)
{
    using R = Result<std::vector<GpuMargin>>;
    std::ifstream in(path);
    if (!in) {
        if (errno == ENOENT)
            return R::ok({});
        return R::fail(path + ": cannot read the calibration file: " + strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    return calibration_parse(text.str(), path, catalog);
}

bool calibration_account_ok(const std::string &name)
{
    if (name.empty() || name.size() > 64)
        return false;
    for (unsigned char c : name)
        if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\')
            return false;
    return true;
}

std::string calibration_render(const std::vector<GpuMargin> &margins, const std::string &comment)
{
    std::ostringstream o;
    std::istringstream lines(comment);
    for (std::string line; std::getline(lines, line);)
        o << "# " << line << "\n";
    o << "version: 1\nmargins:" << (margins.empty() ? " {}\n" : "\n");
    for (const GpuMargin &m : margins) {
        o << "  \"" << m.gpu << "\":\n    percent: " << m.percent << "\n";
        if (m.accounts.empty())
            continue;
        o << "    accounts:\n";
        for (const auto &[name, percent] : m.accounts)
            o << "      \"" << name << "\": " << percent << "\n";
    }
    return o.str();
}

Result<void> file_replace(const std::string &path, const std::string &text, unsigned mode)
{
    std::string tmp = path + ".tmp." + std::to_string(getpid());
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    bool ok = fd >= 0;
    for (std::size_t done = 0; ok && done < text.size();) {
        ssize_t n = write(fd, text.data() + done, text.size() - done);
        ok = n > 0;
        done += ok ? (std::size_t)n : 0;
    }
    ok = ok && fchmod(fd, mode) == 0 && fsync(fd) == 0;
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && ok)
        ok = false, saved = errno;
    if (ok && rename(tmp.c_str(), path.c_str()) != 0)
        ok = false, saved = errno;
    if (ok)
        return Result<void>::success();
    unlink(tmp.c_str());
    return Result<void>::fail("cannot write " + path + ": " + strerror(saved));
}

} // namespace xmem::server
