// xmemd_options.cpp — getopt_long table for xmemd.
#include "xmemd_options.h"
#include "defaults.h"

#include <cstdio>
#include <cstdlib>
#include <getopt.h>

namespace xmem::server
{

namespace
{

void usage(FILE *out)
{
    fprintf(out,
            "Usage: xmemd [OPTIONS]\n"
            "Estimate GPU memory of training jobs for Slurm (xmem).\n\n"
            "  -c, --config FILE         config file [%s]\n"
            "  -f, --foreground          do not detach; log to stderr unless log: syslog\n"
            "                            (detached, xmemd always logs to syslog)\n"
            "  -S, --socket PATH         listening socket [config socket, %s]\n"
            "  -L, --lockfile PATH       lock and pid file [config lockfile, %s]\n"
            "  -D, --database PATH       SQLite ledger [config database, %s]\n"
            "  -M, --munge-socket PATH   munged socket for signing decisions\n"
            "      --log stderr|syslog   where to log\n"
            "      --force               take over a stale lock left by a dead xmemd\n"
            "      --check-config        validate the config and exit\n"
            "      --render-policy OUT   write the packing policy as Lua for job_submit.lua\n"
            "                            (OUT '-' = stdout) and exit\n"
            "  -h, --help                this text\n"
            "  -V, --version             print the version\n",
            k_default_config, k_default_socket, k_default_lockfile, k_default_database);
}

} // namespace

Options options_parse(int argc, char **argv)
{
    enum { opt_log = 1000, opt_force, opt_check, opt_render };
    static const struct option longopts[] = {
        {"config", required_argument, nullptr, 'c'},
        {"foreground", no_argument, nullptr, 'f'},
        {"socket", required_argument, nullptr, 'S'},
        {"lockfile", required_argument, nullptr, 'L'},
        {"database", required_argument, nullptr, 'D'},
        {"munge-socket", required_argument, nullptr, 'M'},
        {"log", required_argument, nullptr, opt_log},
        {"force", no_argument, nullptr, opt_force},
        {"check-config", no_argument, nullptr, opt_check},
        {"render-policy", required_argument, nullptr, opt_render},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0}};
    Options o;
    o.config_path = k_default_config;
    int c;
    while ((c = getopt_long(argc, argv, "c:fS:L:D:M:hV", longopts, nullptr)) != -1) {
        switch (c) {
        case 'c':
            o.config_path = optarg;
            o.config_given = true;
            break;
        case 'f':
            o.foreground = true;
            break;
        case 'S':
            o.socket = optarg;
            break;
        case 'L':
            o.lockfile = optarg;
            break;
        case 'D':
            o.database = optarg;
            break;
        case 'M':
            o.munge_socket = optarg;
            break;
        case opt_log:
            o.log = optarg;
            if (o.log != "stderr" && o.log != "syslog") {
                fprintf(stderr, "xmemd: --log: invalid value: %s (use stderr or syslog)\n", optarg);
                exit(2);
            }
            break;
        case opt_force:
            o.force = true;
            break;
        case opt_check:
            o.check_config = true;
            break;
        case opt_render:
            o.render_policy_out = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            printf("xmemd %s\n", XMEM_VERSION);
            exit(0);
        default:
            fprintf(stderr, "xmemd: see xmemd --help for the options\n");
            exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "xmemd: unexpected argument '%s' (see xmemd --help)\n", argv[optind]);
        exit(2);
    }
    return o;
}

} // namespace xmem::server
