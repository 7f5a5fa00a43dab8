"""The dependency rules of ARCHITECTURE.md ("Directories", "may depend on"), checked on every
#include "..." of the C and C++ sources: a component includes only its own headers and those
of the components it may depend on. Run by ctest (layering.includes) with the source tree.

Run-time boundaries an include cannot show stay in ARCHITECTURE.md ("Who runs what"): xmemd
(root) reaches the estimator and the profilers only as executables it runs in the sandbox.
"""
import os
import re
import sys

# component -> the components whose headers it may include (its own always).
SIM = ["simulator/common", "simulator/allocator", "simulator/trace", "simulator/timeline",
       "simulator/replay", "simulator/analysis"]
MAY_INCLUDE = {
    "simulator/common": [],
    "simulator/allocator": ["simulator/common"],
    "simulator/trace": ["simulator/common"],
    "simulator/timeline": ["simulator/common", "simulator/trace"],
    "simulator/replay": ["simulator/common", "simulator/allocator", "simulator/trace",
                         "simulator/timeline"],
    "simulator/analysis": ["simulator/common", "simulator/allocator", "simulator/trace",
                           "simulator/timeline", "simulator/replay"],
    "simulator/cli": SIM,
    "daemon/contract": [],
    "daemon/script": ["daemon/contract"],
    "daemon/client": ["daemon/contract"],
    # root: never the estimator's or the profilers' code, which run user code.
    "daemon/server": ["daemon/contract", "daemon/script", "daemon/client", "simulator/common",
                      "simulator/analysis"],
    "daemon/estimate": ["daemon/contract"] + SIM,
    "daemon/profiler": ["daemon/contract", "simulator/common", "simulator/trace"],
    "daemon/cli": ["daemon/contract", "daemon/client"],
    "daemon/probe": [],  # Python only today; NVML by ctypes, torch in the site's Python
    "daemon/report": ["daemon/contract", "daemon/server", "simulator/common", "simulator/analysis"],
    "plugin": ["daemon/contract", "daemon/client", "daemon/script"],
}
# Where a bare or rooted include is looked for after the including file's own directory:
# the include directories the CMake targets export.
SEARCH = ["simulator", "daemon", "daemon/server", "daemon/client", "daemon/script",
          "daemon/estimate", "daemon/profiler/capture", "daemon/profiler/launcher",
          "daemon/profiler/libtorch", "daemon/report", "plugin"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def component(path):
    best = None
    for name in MAY_INCLUDE:
        if path == name or path.startswith(name + "/"):
            if best is None or len(name) > len(best):
                best = name
    return best


def resolve(root, source, header):
    for base in [os.path.dirname(source)] + SEARCH:
        candidate = os.path.normpath(os.path.join(base, header))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def violations(root):
    for top in ("simulator", "daemon", "plugin"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".cpp", ".h", ".hpp")):
                    continue
                source = os.path.relpath(os.path.join(dirpath, name), root)
                owner = component(source)
                if owner is None:
                    yield f"{source}: in no component of check_layering.py's table"
                    continue
                with open(os.path.join(root, source), errors="replace") as f:
                    text = f.read()
                for header in INCLUDE.findall(text):
                    target = resolve(root, source, header)
                    if target is None:
                        continue  # generated, or a third party's
                    other = component(target)
                    if other != owner and other not in MAY_INCLUDE[owner]:
                        yield f"{source}: includes {target} ({other}), which {owner} may not depend on"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    found = list(violations(root))
    for line in found:
        print("xmem: layering: " + line)
    if found:
        print("xmem: layering: see ARCHITECTURE.md, \"Directories\" and \"Who runs what\"")
        return 1
    print("layering: every include follows ARCHITECTURE.md's dependency rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
