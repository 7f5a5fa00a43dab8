#!/usr/bin/env python3
"""Peak live device bytes of a trace and what allocated, for tests that compare captures.

  trace_stats.py TRACE   prints JSON: {"peak": bytes, "ops": {"OUTER>INNER": count, ...}}
where an op key is the attribution after the module path (`MODULE|OUTER>INNER`).
  trace_stats.py --sizes TRACE   also "sizes": {"OUTER>INNER BYTES": count, ...}.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "daemon", "profiler", "python"))
import xmem_trace  # noqa: E402


def stats(path, by_size=False):
    strings, live, ops, sizes = {}, {}, {}, {}
    now = peak = 0
    for _, kind, parts in xmem_trace.records(path):
        if kind == "S":
            strings[int(parts[0])] = " ".join(parts[1:])
        elif kind == "A" and parts[2] == "g":
            live[int(parts[0])] = int(parts[1])
            now += int(parts[1])
            peak = max(peak, now)
            op = strings.get(int(parts[4]), "").partition("|")[2]
            ops[op] = ops.get(op, 0) + 1
            sized = f"{op} {parts[1]}"
            sizes[sized] = sizes.get(sized, 0) + 1
        elif kind == "F" and int(parts[0]) in live:
            now -= live.pop(int(parts[0]))
    return dict({"peak": peak, "ops": ops}, **({"sizes": sizes} if by_size else {}))


if __name__ == "__main__":
    by_size = sys.argv[1] == "--sizes"
    print(json.dumps(stats(sys.argv[-1], by_size), indent=1, sort_keys=True))
