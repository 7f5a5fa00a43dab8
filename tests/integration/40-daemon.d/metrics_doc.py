"""docs/metrics.md against what xmemd exports: every metric family of a scrape (its `# TYPE`
line and its samples' label names) has a row in the doc's table with that type and those
labels, and every row names an exported family. Run by 40-daemon-metrics-doc.sh.

  metrics_doc.py DOC.md SCRAPE.txt    exit 0, or 1 with one line per disagreement
"""
import re
import sys

ROW = re.compile(r"^\| `(xmemd_\w+)` \| (\w+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$")
TYPE = re.compile(r"^# TYPE (\S+) (\S+)$")
SAMPLE = re.compile(r"^([a-zA-Z_:][\w:]*)(\{([^}]*)\})? \S+$")
SUFFIXES = ("_bucket", "_sum", "_count")


def documented(path):
    """{name: (type, frozenset of labels)} from the doc's table rows."""
    rows = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line.rstrip("\n"))
            if not m:
                continue
            name, kind, unit, labels, meaning = m.groups()
            if not unit.strip() or not meaning.strip():
                sys.exit(f"xmem: {path}: {name}: give its unit and meaning")
            names = frozenset(re.findall(r"`(\w+)`", labels))
            rows[name] = (kind, names)
    return rows


def family(name, types):
    if name in types:
        return name
    for suffix in SUFFIXES:
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)]
    return None


def exported(path):
    """{family: (type, frozenset of label names over its samples)} from a scrape."""
    types, labels = {}, {}
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        m = TYPE.match(line)
        if m:
            types[m.group(1)] = m.group(2)
    for line in lines:
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        name = family(m.group(1), types) if m else None
        if name is None:
            sys.exit(f"xmem: {path}: a sample of no declared family: {line}")
        pairs = re.findall(r'(\w+)="', m.group(3) or "")
        labels.setdefault(name, set()).update(pairs)
    return {name: (kind, frozenset(labels.get(name, ()))) for name, kind in types.items()}


def disagreements(doc, scrape):
    rows, families = documented(doc), exported(scrape)
    for name, (kind, labels) in sorted(families.items()):
        if name not in rows:
            yield f"xmemd exports {name} ({kind}), which {doc} does not document; add its row"
        elif rows[name] != (kind, labels):
            yield (f"{name}: xmemd exports a {kind} with labels {sorted(labels)}, {doc} says a "
                   f"{rows[name][0]} with {sorted(rows[name][1])}")
    for name in sorted(set(rows) - set(families)):
        yield f"{doc} documents {name}, which xmemd does not export; remove its row"


def main():
    doc, scrape = sys.argv[1:3]
    found = list(disagreements(doc, scrape))
    for line in found:
        print("xmem: metrics doc: " + line)
    if not found:
        print(f"metrics doc: {len(documented(doc))} metrics, each as xmemd exports it")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
