"""docs/trace-format.md for Python, defined once: the version line, each record's letter and
field order (RECORDS), how a record is written (record()) and read (records()).

Every Python writer (the fast capture's xmem_fast/trace_writer.py, the example generator
examples/traces/make-training-trace.py) and reader (tests/workloads/check_trace.py) uses this
module. It sits beside xmem_capture, so it is installed with it in share/xmem/python, which
both the exact and the fast capture have on their path. The C++ twin is
simulator/trace/records.h.
"""

VERSION_LINE = "#xmem-trace 1"
MAX_LINE_BYTES = 4096  # '\n' not counted

# letter -> field names in order; a name ending in '*' takes the rest of the line (text
# that may hold spaces).
RECORDS = {
    "M": ("key", "value*"),
    "S": ("id", "text*"),
    "K": ("module", "kind", "fields*"),
    "I": ("n",),
    "P": ("phase",),
    "A": ("id", "bytes", "dev", "stream", "ctx"),
    "F": ("id",),
    "R": ("id", "stream"),
    "E": (),
    "X": ("fraction",),
    "Z": ("allocs", "frees", "live_bytes"),
}

PHASES = ("setup", "data", "forward", "backward", "optimizer", "zero_grad", "other")
DEV_GPU, DEV_HOST = "g", "h"


class FormatError(Exception):
    """A line that breaks the format: 'PATH:LINE: what is wrong'."""


def one_line(text):
    """TEXT with line breaks replaced, so it cannot split a record."""
    return str(text).replace("\r", " ").replace("\n", " ")


def fraction_text(fraction):
    """The plainest decimal the readers take, as simulator/trace/records.h writes it: up to 9
    digits after the point, trailing zeros and a bare point dropped ("0.5", "1", "0")."""
    text = "%.9f" % min(max(float(fraction), 0.0), 1.0)
    return text.rstrip("0").rstrip(".") or "0"


def record(letter, *fields):
    """One record line, '\\n' included; fields in RECORDS[letter]'s order (a rest-of-line
    field may be left out: 'K module kind' has no key=value fields)."""
    names = RECORDS[letter]
    least = len(names) - 1 if names and names[-1].endswith("*") else len(names)
    if not least <= len(fields) <= len(names):
        raise ValueError(f"record {letter} takes {len(names)} fields {names}, got {len(fields)}")
    if not fields:
        return letter + "\n"
    return letter + " " + " ".join(map(str, fields)) + "\n"


def records(path):
    """Yields (line_number, letter, fields) for each record of the trace at PATH after the
    version line, fields split as RECORDS says. Raises FormatError on a line that breaks the
    shape of the format (first line, line ends, length, letter, field count); what the
    fields mean (live ids, totals) is the caller's to check."""
    with open(path, encoding="utf-8") as f:
        if f.readline() != VERSION_LINE + "\n":
            raise FormatError(f"{path}:1: not an xmem trace (expected '{VERSION_LINE}')")
        for n, line in enumerate(f, start=2):
            if not line.endswith("\n") or len(line) - 1 > MAX_LINE_BYTES or line == "\n":
                raise FormatError(f"{path}:{n}: bad line (empty, too long or unterminated)")
            yield n, *_split(path, n, line[:-1])


def _split(path, n, line):
    letter = line[0]
    names = RECORDS.get(letter)
    if names is None or (len(line) > 1 and line[1] != " "):
        raise FormatError(f"{path}:{n}: unknown record {line.split(' ')[0]!r}")
    rest = line[2:]
    if names and names[-1].endswith("*"):
        fields = rest.split(" ", len(names) - 1) if rest else []
        if len(fields) < len(names) - 1:
            raise FormatError(f"{path}:{n}: {letter} needs at least {len(names) - 1} fields")
        return letter, fields
    fields = rest.split(" ") if len(line) > 1 else []
    if len(fields) != len(names):
        raise FormatError(f"{path}:{n}: {letter} needs {len(names)} fields, has {len(fields)}")
    return letter, fields
