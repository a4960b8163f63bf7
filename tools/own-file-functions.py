#!/usr/bin/env python3
"""Functions declared in a header under app/ or backend/ (not backend/wick/,
the installed API, which is ABI) whose only callers outside tests are in the
.c that defines them. Run from the repository root: one line a function,
tab-separated: what (own-file: used only there, make it static; no-caller:
delete it; tests-only: tests call it too, it belongs in a *-private.h), the
name, its .c, its headers, the tests that call it.

Method: ctags lists the prototypes of those headers and the function
definitions of every tracked C/CUDA file; every tracked source, build, UI and
Python file is split into words (C comments dropped), and a declared name
counts as used in each file it appears in, its declaring header counting
only beyond its prototype (an inline function or a cleanup macro there)."""
import collections, os, re, subprocess, sys

files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
src = [f for f in files if re.search(r"\.(c|h|cu|cc|cpp|m)$", f)]
headers = [f for f in src if f.endswith(".h") and re.match(r"(app|backend)/", f)
           and not f.startswith("backend/wick/")]

def ctags(paths, kinds):
    out = subprocess.run(["ctags", "-x", "--_xformat=%N\t%F\t%K", f"--kinds-C={kinds}",
                          "--language-force=C", "-f", "-"] + paths,
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name, path, kind = line.split("\t")
        yield name, path

declared = collections.defaultdict(set)
for name, path in ctags(headers, "p"):
    declared[name].add(path)
defined = collections.defaultdict(set)
for name, path in ctags([f for f in src if not f.endswith(".h")], "f"):
    defined[name].add(path)

word = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
uses = collections.defaultdict(collections.Counter)
for f in files:
    if not re.search(r"\.(c|h|cu|cc|cpp|m|py|ui|xml|map|sym|ver|build|sh|txt)$", f) and "meson" not in f:
        continue
    try:
        text = open(f, errors="replace").read()
    except (IsADirectoryError, FileNotFoundError):
        continue
    # comments do not call anything
    if f.endswith((".c", ".h", ".cu")):
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
    for w in word.findall(text):
        if w in declared:
            uses[w][f] += 1

for name in sorted(declared):
    homes = defined.get(name, set())
    if len(homes) != 1:
        continue  # not defined in one .c (a macro, an inline, generated)
    home = next(iter(homes))
    # a declaring header's own uses beyond its prototype (an inline
    # function or a cleanup macro there) are callers too
    elsewhere = {f: n - (f in declared[name]) for f, n in uses[name].items() if f != home}
    elsewhere = {f: n for f, n in elsewhere.items() if n > 0}
    in_home = uses[name][home] - 1  # the definition itself
    tests = sorted(f for f in elsewhere if f.startswith("tests/"))
    others = sorted(f for f in elsewhere if not f.startswith("tests/"))
    if others:
        continue
    what = "tests-only" if tests else ("own-file" if in_home > 0 else "no-caller")
    print(f"{what}\t{name}\t{home}\t{' '.join(sorted(declared[name]))}\t{' '.join(tests)}")
