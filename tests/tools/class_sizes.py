#!/usr/bin/env python3
"""The size of every class in src/, and a check that none is over its limit.

A class's size is the lines of its definition (the class body, nested types and member
functions written inside it included) plus the lines of each member function defined outside
it, in any file. Universal Ctags (Debian's universal-ctags) finds both: its `end:` field closes
each definition, its `scope:` field names the class of an out-of-line member. Written here, not
taken from a library: no kept tool sums a class over its files.

  class_sizes.py ROOT [--limit N] [--limit-of CLASS=N ...] [--top K]

ROOT is the repository (src/ is read). Every class over its limit is a failure (exit 1), named
with its size and the files it spans; --top K also prints the K largest. A limit given for a
class that does not exist is a failure too (a rename must not silently drop its limit).
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys


def ctags_tags(src):
    ctags = shutil.which("ctags")
    if ctags is None:
        sys.exit("class_sizes: ctags not found (install universal-ctags)")
    version = subprocess.run([ctags, "--version"], capture_output=True, text=True).stdout
    if "Universal Ctags" not in version:
        sys.exit("class_sizes: " + ctags + " is not Universal Ctags (install universal-ctags)")
    out = subprocess.run(
        [ctags, "-R", "--languages=C++", "--fields=+neKZ", "-o", "-", src],
        capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) < 4:
            continue
        fields = dict(p.split(":", 1) for p in parts[4:] if ":" in p)
        if "line" not in fields or "end" not in fields:
            continue
        yield parts[0], parts[1], parts[3], int(fields["line"]), int(fields["end"]), \
            fields.get("scope", "")


def class_sizes(root):
    src = os.path.join(root, "src")
    spans = collections.defaultdict(list)  # class -> [(path, first, last)]
    members = []  # (class, path, first, last) of each member function
    for name, path, kind, first, last, scope in ctags_tags(src):
        scope_kind, _, scope_name = scope.partition(":")
        path = os.path.relpath(path, root)
        if kind in ("class", "struct"):
            full = scope_name + "::" + name if scope_name else name
            spans[full].append((path, first, last))
        elif kind == "function" and scope_kind in ("class", "struct"):
            members.append((scope_name, path, first, last))
    size = collections.Counter()
    files = collections.defaultdict(set)
    for cls, defs in spans.items():
        for path, first, last in defs:
            size[cls] += last - first + 1
            files[cls].add(path)
    for cls, path, first, last in members:
        inside = any(p == path and a <= first <= b for p, a, b in spans.get(cls, []))
        if not inside:
            size[cls] += last - first + 1
            files[cls].add(path)
    return size, files


def readable(cls):
    # Anonymous namespaces come out as __anon<hash>: "(anonymous)" reads better and is stable.
    return "::".join("(anonymous)" if p.startswith("__anon") else p for p in cls.split("::"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root")
    parser.add_argument("--limit", type=int, default=800)
    parser.add_argument("--limit-of", action="append", default=[], metavar="CLASS=N")
    parser.add_argument("--top", type=int, default=0)
    args = parser.parse_args()
    size, files = class_sizes(args.root)
    by_name = {readable(c): c for c in size}
    limits = {}
    failed = False
    for item in args.limit_of:
        cls, _, n = item.rpartition("=")
        if cls not in by_name:
            print("FAIL " + cls + ": no such class in src/ (its limit checks nothing)")
            failed = True
            continue
        limits[by_name[cls]] = int(n)
    ranked = sorted(size.items(), key=lambda kv: (-kv[1], kv[0]))
    for cls, n in ranked[:args.top]:
        print("%6d  %s" % (n, readable(cls)))
    for cls, n in ranked:
        limit = limits.get(cls, args.limit)
        if n > limit:
            print("FAIL %s: %d lines (limit %d) over %s" %
                  (readable(cls), n, limit, ", ".join(sorted(files[cls]))))
            failed = True
    if failed:
        return 1
    print("OK: %d classes, the largest %s (%d lines)" %
          (len(size), readable(ranked[0][0]), ranked[0][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
