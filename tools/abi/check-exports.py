#!/usr/bin/env python3
"""Checks that libwick exports exactly its public API.

usage: check-exports.py LIBWICK.so HEADER_DIR MAP

- every function declared in an installed header (backend/wick/*.h) carries
  WICK_AVAILABLE_IN_x_y (or WICK_DEPRECATED_IN_...), and every annotated name
  is in the version script;
- the shared library's dynamic symbol table holds exactly those functions,
  each with a WICK_ version, and no data symbol (the version nodes aside).

Prints each difference with the place it comes from and exits 1, else 0.
"""
import os
import re
import subprocess
import sys

ANNOTATION = re.compile(r'^\s*WICK_(AVAILABLE|DEPRECATED)_IN_\w+')
FUNC = re.compile(r'\b(wick_\w+)\s*\(')


def header_functions(header_dir):
    """(annotated, unannotated) name -> 'file:line'."""
    annotated, bare = {}, {}
    for name in sorted(os.listdir(header_dir)):
        if not name.endswith('.h'):
            continue
        path = os.path.join(header_dir, name)
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
        depth = 0
        in_comment = False
        pending = False  # the previous code line was an annotation
        stmt, stmt_line, stmt_annotated = '', 0, False
        for number, raw in enumerate(lines, 1):
            code = raw
            if in_comment:
                if '*/' not in code:
                    continue
                code = code.split('*/', 1)[1]
                in_comment = False
            code = re.sub(r'/\*.*?\*/', '', code)
            if '/*' in code:
                code, in_comment = code.split('/*', 1)[0], True
            s = code.strip()
            if not s or s.startswith('#'):
                continue
            if ANNOTATION.match(s):
                pending = True
                continue
            if s in ('WICK_BEGIN_DECLS', 'WICK_END_DECLS'):
                continue
            if not stmt:
                stmt_line, stmt_annotated, pending = number, pending, False
            stmt += s + ' '
            depth += s.count('{') - s.count('}')
            if depth == 0 and (s.endswith(';') or s.endswith('}')):
                text = stmt.strip()
                m = FUNC.search(text)
                if m and not text.startswith('typedef') and text.endswith(';'):
                    where = '%s:%d' % (path, stmt_line)
                    (annotated if stmt_annotated else bare)[m.group(1)] = where
                stmt = ''
    return annotated, bare


def map_symbols(path):
    with open(path, encoding='utf-8') as f:
        text = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
    names = {}
    for number, line in enumerate(text.split('\n'), 1):
        for m in re.finditer(r'\b(wick_\w+)\s*;', line):
            names[m.group(1)] = '%s:%d' % (path, number)
    return names


def exported(library):
    out = subprocess.run(['nm', '-D', '--defined-only', '--with-symbol-versions', library],
                         check=True, capture_output=True, text=True).stdout
    functions, others = {}, []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, name = parts[1], parts[2]
        base, _, version = name.partition('@')
        version = version.lstrip('@')
        if kind == 'A' and base.startswith('WICK_'):
            continue  # the version node itself
        if kind in 'Ti':
            functions[base] = version
        else:
            others.append('%s (%s)' % (base, kind))
    return functions, others


def main():
    library, header_dir, map_path = sys.argv[1:4]
    annotated, bare = header_functions(header_dir)
    in_map = map_symbols(map_path)
    functions, others = exported(library)
    problems = []
    for name, where in sorted(bare.items()):
        problems.append('%s: %s is declared without WICK_AVAILABLE_IN_1_0' % (where, name))
    for name, where in sorted(annotated.items()):
        if name not in in_map:
            problems.append('%s: %s is public but missing from %s' % (where, name, map_path))
        elif name not in functions:
            problems.append('%s: %s is public but %s does not export it (no definition?)'
                            % (where, name, library))
    for name, where in sorted(in_map.items()):
        if name not in annotated and name not in bare:
            problems.append('%s: %s is in the version script but no installed header declares it'
                            % (where, name))
    for name, version in sorted(functions.items()):
        if name not in annotated and name not in in_map:
            problems.append('%s: exports %s, which no installed header declares'
                            % (library, name))
        if not version.startswith('WICK_'):
            problems.append('%s: %s has no WICK_ symbol version (%r)' % (library, name, version))
    for other in others:
        problems.append('%s: exports the non-function symbol %s' % (library, other))
    for p in problems:
        print(p)
    print('%d public functions, %d exported, %d problems'
          % (len(annotated), len(functions), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
