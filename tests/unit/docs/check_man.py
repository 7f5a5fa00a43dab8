#!/usr/bin/env python3
"""The man pages against the programs they describe (tests/unit/docs/CMakeLists.txt).

  options BIN MAN_SRC  every option `--help` prints (xmem, each command, xmemd) is defined in
                       its page's section, and every option defined there is printed
  keys SRC             every key xmemd's config parser and the plugin's plugstack parser
                       accept is defined in xmem.yaml(5) / xmem-slurm(8), and no other
  render MAN_BUILD     `MANWIDTH=80 man --warnings -l PAGE` prints no warning for any page
  list MAN_SRC         (for the completion test) the commands xmem(1) has a section for
  list MAN_SRC CMD     the long options xmem(1) defines for CMD ("" for xmem's own)
  choices MAN_SRC CMD  "OPTION WORD..." for each of CMD's options whose argument is a choice

A page defines an option on a line that starts with `*-` (`*-s*, *--socket* _PATH_`) and a
key on a line that starts with `*KEY*` (`*socket*: _PATH_`, `*socket*=_PATH_`). An option
`--help` prints is one in its usage lines or at the start of an indented option line; an
option only named in the prose (an example's `--batch-size`) is not one.
"""
import os
import re
import subprocess
import sys

OPTION = re.compile(r"^--?[A-Za-z][A-Za-z0-9-]*$")
PAGE_OPTION = re.compile(r"\*(--?[A-Za-z][A-Za-z0-9-]*)\*")


def help_text(argv):
    out = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"check_man: {' '.join(argv)} --help exited {out.returncode}: {out.stderr}")
    return out.stdout


def help_options(text):
    """The options in the usage lines and at the head of the indented option lines."""
    found, in_usage = set(), False
    for line in text.splitlines():
        if re.match(r"^[Uu]sage:", line):
            in_usage = True
        elif in_usage and (not line.strip() or not line[0].isspace()):
            in_usage = False
        if in_usage:
            words = (w.strip("[]") for w in line.split())
            found.update(w for w in words if OPTION.match(w))
        elif re.match(r"^\s+-", line):
            head = re.split(r"\s{2,}", line.strip())[0]
            found.update(w for w in re.split(r"[\s,]+", head) if OPTION.match(w))
    return found


def help_commands(text):
    """The commands `xmem --help` lists: the indented words after "Commands found:"."""
    after = text.split("Commands found:", 1)[1]
    block = after.strip("\n").split("\n\n", 1)[0]
    return [w.strip() for w in block.splitlines() if re.match(r"^\s+[a-z][a-z0-9-]*$", w)]


def page_sections(path):
    """{heading: [lines]} for each `# ` and `## ` heading of an scdoc page."""
    sections, current = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^#{1,2} (.+)$", line)
            if m:
                current = m.group(1).strip()
                sections[current] = []
            elif current is not None:
                sections[current].append(line.rstrip("\n"))
    return sections


def defined_options(lines):
    found = set()
    for line in lines:
        if line.startswith("*-"):
            found.update(PAGE_OPTION.findall(line.split(" _", 1)[0]))
    return found


def defined_choices(lines):
    """{option: [words]} for definitions such as `*--mode* fast|exact|auto`, `*--by* account`."""
    found = {}
    for line in lines:
        m = re.match(r"^\*(--[a-z][a-z0-9-]*)\* ([a-z0-9-]+(?:\|[a-z0-9-]+)*)$", line)
        if m:
            found[m.group(1)] = m.group(2).split("|")
    return found


def defined_keys(lines, after):
    return {m.group(1) for line in lines if (m := re.match(r"^\*([a-z_]+)\*" + after, line))}


def compare(what, printed, defined, problems):
    for o in sorted(printed - defined):
        problems.append(f"{what}: {o} is printed by --help but not defined in the page")
    for o in sorted(defined - printed):
        problems.append(f"{what}: {o} is defined in the page but --help does not print it")


def check_options(bindir, mansrc):
    problems = []
    xmem = [os.path.join(bindir, "xmem")]
    page = page_sections(os.path.join(mansrc, "xmem.1.scd"))
    top = help_text(xmem)
    compare("xmem(1) OPTIONS", help_options(top), defined_options(page["OPTIONS"]), problems)
    commands = help_commands(top)
    if not commands:
        problems.append("xmem --help lists no command: is the build complete?")
    documented = [h[len("xmem "):] for h in page if h.startswith("xmem ")]
    for c in sorted(set(commands) - set(documented)):
        problems.append(f"xmem(1): no section '## xmem {c}' for a command xmem --help lists")
    for c in sorted(set(documented) - set(commands)):
        problems.append(f"xmem(1): section 'xmem {c}' names no command xmem --help lists")
    for c in commands:
        if c in documented:
            printed = help_options(help_text(xmem + [c]))
            compare(f"xmem(1) 'xmem {c}'", printed, defined_options(page["xmem " + c]), problems)
    xmemd = page_sections(os.path.join(mansrc, "xmemd.8.scd"))
    printed = help_options(help_text([os.path.join(bindir, "xmemd")]))
    compare("xmemd(8) OPTIONS", printed, defined_options(xmemd["OPTIONS"]), problems)
    return problems


def source_keys(path, pattern):
    with open(path, encoding="utf-8") as f:
        return set(re.findall(pattern, f.read(), re.M))


def check_keys(src):
    problems = []
    mansrc = os.path.join(src, "docs", "man")
    # config.cpp: each accepted key is a table entry {"key", handler}.
    accepted = source_keys(os.path.join(src, "daemon/server/config.cpp"), r'\{\s*"([a-z_]+)",')
    page = page_sections(os.path.join(mansrc, "xmem.yaml.5.scd"))
    defined = set().union(*(defined_keys(lines, ":") for lines in page.values()))
    compare_keys("xmem.yaml(5)", "daemon/server/config.cpp", accepted, defined, problems)
    # settings.c: each key is a line of the keys[] table, {"name", KEY_TYPE, ...}.
    accepted = source_keys(os.path.join(src, "plugin/settings.c"), r'^\s*\{"([a-z_]+)", KEY_')
    page = page_sections(os.path.join(mansrc, "xmem-slurm.8.scd"))
    defined = defined_keys(page["PLUGSTACK OPTIONS"], "=")
    compare_keys("xmem-slurm(8) PLUGSTACK OPTIONS", "plugin/settings.c", accepted, defined,
                 problems)
    return problems


def compare_keys(what, parser, accepted, defined, problems):
    if not accepted:
        problems.append(f"{parser}: no key found (has the table's form changed?)")
    for k in sorted(accepted - defined):
        problems.append(f"{what}: {k} is accepted by {parser} but not defined in the page")
    for k in sorted(defined - accepted):
        problems.append(f"{what}: {k} is defined in the page but {parser} does not accept it")


def check_render(mandir):
    problems, pages = [], sorted(p for p in os.listdir(mandir) if re.search(r"\.[1-8]$", p))
    if len(pages) < 4:
        problems.append(f"{mandir}: {len(pages)} pages rendered, expected 4")
    env = dict(os.environ, MANWIDTH="80")
    env.pop("MAN_KEEP_FORMATTING", None)  # plain text, whatever the caller's shell keeps
    for p in pages:
        out = subprocess.run(["man", "--warnings", "-l", os.path.join(mandir, p)],
                             capture_output=True, text=True, env=env, timeout=60)
        if out.returncode != 0 or out.stderr.strip():
            problems.append(f"{p}: man exited {out.returncode}: {out.stderr.strip()}")
        elif not re.search(r"^NAME$", out.stdout, re.M):
            problems.append(f"{p}: rendered without a NAME section")
    return problems


def main(argv):
    if len(argv) == 3 and argv[0] == "choices":
        page = page_sections(os.path.join(argv[1], "xmem.1.scd"))
        for option, words in sorted(defined_choices(page["xmem " + argv[2]]).items()):
            print(option, " ".join(words))
        return 0
    if len(argv) >= 2 and argv[0] == "list":
        page = page_sections(os.path.join(argv[1], "xmem.1.scd"))
        if len(argv) == 2:
            print("\n".join(h[len("xmem "):] for h in page if h.startswith("xmem ")))
        else:
            lines = page["OPTIONS"] if argv[2] == "" else page["xmem " + argv[2]]
            print("\n".join(sorted(o for o in defined_options(lines) if o.startswith("--"))))
        return 0
    checks = {"options": check_options, "keys": check_keys, "render": check_render}
    if not argv or argv[0] not in checks or len(argv) != (3 if argv[0] == "options" else 2):
        sys.exit(__doc__)
    problems = checks[argv[0]](*argv[1:])
    for p in problems:
        print(f"check_man: {p}")
    if not problems:
        print(f"check_man: {argv[0]}: the pages agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
