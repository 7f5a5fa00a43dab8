// xmemd_options.h — xmemd's command line. Every path is a flag so tests run in a temp dir.
#ifndef XMEMD_XMEMD_OPTIONS_H
#define XMEMD_XMEMD_OPTIONS_H

#include "daemon.h"

namespace xmem::server
{

// Parses argv; prints usage/version and exits for --help/--version, or an error and exits 2.
Options options_parse(int argc, char **argv);

} // namespace xmem::server
#endif
