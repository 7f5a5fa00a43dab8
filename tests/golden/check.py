#!/usr/bin/env python3
"""Reads `xmem sim --json` output on stdin and checks each `key value` line of the given
.check file (hand-computed values; dotted keys reach into nested objects, except that a
top-level key containing dots, like allocated_bytes.all.peak, is looked up whole)."""
import json
import sys


def lookup(doc, key):
    if key in doc:
        return doc[key]
    node = doc
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(key)
        node = node[part]
    return node


def main():
    doc = json.load(sys.stdin)
    bad = 0
    with open(sys.argv[1]) as checks:
        for number, line in enumerate(checks, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, want = line.split(None, 1)
            try:
                got = lookup(doc, key)
            except KeyError:
                print(f"{sys.argv[1]}:{number}: no key {key} in the output")
                bad += 1
                continue
            if json.dumps(got) != want:
                print(f"{sys.argv[1]}:{number}: {key} is {json.dumps(got)}, hand computation says {want}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
