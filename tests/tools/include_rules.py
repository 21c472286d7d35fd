#!/usr/bin/env python3
"""The include rule of docs/ARCHITECTURE.md, checked on src/.

Reads the ```layers block of docs/ARCHITECTURE.md ("a -> b c": folder a may include b, c and
everything they may include), then every #include "..." of every file under src/. A folder is
src/<x>, or src/k8s/<x> under k8s. Fails (exit 1) on an include edge the table does not allow,
on a folder under src/ the table does not place, on an include of a folder that does not exist,
and on a table with a cycle. Usage: include_rules.py [REPO_ROOT]
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_table(doc):
    text = doc.read_text()
    m = re.search(r"^```layers\n(.*?)^```", text, re.M | re.S)
    if not m:
        sys.exit(f"{doc}: no ```layers block")
    table = {}
    first = text[: m.start(1)].count("\n") + 1
    for n, line in enumerate(m.group(1).splitlines(), first):
        if not line.strip():
            continue
        left, arrow, right = line.partition("->")
        if not arrow or not left.strip():
            sys.exit(f"{doc}:{n}: expected 'folder -> folder ...', got {line!r}")
        table[left.strip()] = right.split()
    return table


def closure(table):
    """Every folder each folder may include; exits on a cycle."""
    memo, active = {}, set()

    def below(f):
        if f in memo:
            return memo[f]
        if f in active:
            sys.exit(f"the layers table has a cycle through '{f}'")
        active.add(f)
        out = set()
        for g in table.get(f, []):
            out |= {g} | below(g)
        active.discard(f)
        memo[f] = out
        return out

    for f in table:
        below(f)
    return memo


def folder_of(rel):
    parts = rel.split("/")
    if parts[0] == "k8s" and len(parts) > 2:
        return "k8s/" + parts[1]
    return parts[0] if len(parts) > 1 else ""


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2])
    src = root / "src"
    table = read_table(root / "docs/ARCHITECTURE.md")
    allowed = closure(table)
    known = set(table) | {g for gs in table.values() for g in gs}
    problems = []
    folders = set()
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(src).as_posix()
        here = folder_of(rel)
        folders.add(here)
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            there = folder_of(m.group(1))
            if not there or there == here:
                continue
            if not (src / there).is_dir():
                problems.append(f"src/{rel}:{n}: includes \"{m.group(1)}\": no folder src/{there}")
            elif there not in allowed.get(here, set()):
                problems.append(
                    f"src/{rel}:{n}: {here} -> {there} (\"{m.group(1)}\") is not allowed by "
                    f"docs/ARCHITECTURE.md's layers table")
    for f in sorted(folders - known):
        problems.append(f"src/{f}/: a folder the layers table of docs/ARCHITECTURE.md does not place")
    for p in problems:
        print("FAIL", p)
    if problems:
        return 1
    edges = sum(len(v) for v in allowed.values())
    print(f"OK: {len(folders)} folders, every include within the {edges} allowed edges")
    return 0


if __name__ == "__main__":
    sys.exit(main())
