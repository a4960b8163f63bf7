#!/usr/bin/env python3
"""Compiles and runs every complete C program in docs/, and checks its traces.

usage: check-doc-examples.py SOURCE_ROOT BUILD_ROOT WICK_TRACE CC [CFLAG...]

A complete program is a ```c block of docs/*.md or README.md that defines
main. Each is compiled against libwick as a newcomer would (pkg-config wick-1:
the build tree's uninstalled wick-1.pc, or with WICK_DOC_PKG_CONFIG_PATH set
the installed one there, as tests/install does after `meson install`), run in an empty directory, and
every *.jsonl file it writes is converted with `wick-trace convert --strict`
(which leaves out Wick's extension records, as documented) and must pass
`wick-trace check` (candle-graph's rules). Blocks without main are fragments
and are listed, not run. Exit 0 when every program passes, 77 when there is
none, 1 otherwise, naming the file and line of the block.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def blocks(path):
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    inside, start, body = False, 0, []
    for number, line in enumerate(lines, 1):
        if not inside and line.strip() == '```c':
            inside, start, body = True, number, []
        elif inside and line.strip() == '```':
            inside = False
            yield start, '\n'.join(body) + '\n'
        elif inside:
            body.append(line)


def main():
    source, build, wick_trace, cc = sys.argv[1:5]
    cflags = sys.argv[5:]
    installed = os.environ.get('WICK_DOC_PKG_CONFIG_PATH')
    env = dict(os.environ, PKG_CONFIG_PATH=installed or os.path.join(build, 'meson-uninstalled'))
    pc = subprocess.run(['pkg-config', '--cflags', '--libs', 'wick-1'], env=env,
                        capture_output=True, text=True)
    if pc.returncode != 0:
        print('pkg-config wick-1 failed: ' + pc.stderr.strip())
        return 1
    libdir = os.path.join(build, 'backend')
    if installed:
        libdir = subprocess.run(['pkg-config', '--variable=libdir', 'wick-1'], env=env,
                                capture_output=True, text=True, check=True).stdout.strip()
    print('# libwick from %s (pkg-config wick-1: %s)' % (libdir, pc.stdout.strip()))
    flags = pc.stdout.split() + ['-Wl,-rpath,' + libdir]
    docs = sorted(glob.glob(os.path.join(source, 'docs', '*.md'))) + [os.path.join(source, 'README.md')]
    failures, programs = 0, 0
    for doc in docs:
        for line, code in blocks(doc):
            where = '%s:%d' % (os.path.relpath(doc, source), line)
            if not re.search(r'^main\s*\(|\bint\s+main\s*\(', code, re.M):
                print('# %s: a fragment (no main), not run' % where)
                continue
            programs += 1
            work = tempfile.mkdtemp(prefix='wick-doc-example-')
            try:
                with open(os.path.join(work, 'example.c'), 'w', encoding='utf-8') as f:
                    f.write(code)
                cmd = cc.split() + cflags + ['-std=gnu17', '-Wall', '-Werror', 'example.c', '-o',
                                             'example'] + flags
                built = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
                if built.returncode != 0:
                    print('FAIL %s: does not compile:\n%s' % (where, built.stderr))
                    failures += 1
                    continue
                ran = subprocess.run(['./example'], cwd=work, capture_output=True, text=True,
                                     timeout=60)
                if ran.returncode != 0:
                    print('FAIL %s: exits %d\n%s%s' % (where, ran.returncode, ran.stdout, ran.stderr))
                    failures += 1
                    continue
                traces = sorted(glob.glob(os.path.join(work, '*.jsonl')))
                if not traces:
                    print('FAIL %s: wrote no trace' % where)
                    failures += 1
                    continue
                for trace in traces:
                    strict = trace + '.strict'
                    conv = subprocess.run([wick_trace, 'convert', '--strict', trace, '--output', strict],
                                          capture_output=True, text=True)
                    check = subprocess.run([wick_trace, 'check', strict], capture_output=True, text=True)
                    name = os.path.basename(trace)
                    if conv.returncode != 0 or check.returncode != 0:
                        print('FAIL %s: %s is rejected:\n%s%s%s' % (where, name, conv.stderr,
                                                                   check.stdout, check.stderr))
                        failures += 1
                    else:
                        print('ok %s: %s: %s' % (where, name, check.stdout.split('\n')[0]))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    if programs == 0:
        print('no complete program in docs/')
        return 77
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
