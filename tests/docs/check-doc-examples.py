#!/usr/bin/env python3
"""Runs every complete program in docs/ and README.md, and checks its traces.

usage: check-doc-examples.py SOURCE_ROOT BUILD_ROOT WICK_TRACE CC [CFLAG...]

- A ```c block that defines main is compiled against libwick as a newcomer
  would (pkg-config wick-1: the build tree's uninstalled wick-1.pc, or with
  WICK_DOC_PKG_CONFIG_PATH set the installed one there, as tests/install does
  after `meson install`). A ```c block without main is a fragment, listed and
  not run.
- Every ```python block is a whole program (a first line `# not run: why`
  lists it with the reason instead; `# reads traces ...` marks one that
  writes no trace and passes on its exit status and output), run with WICK_DOC_PYTHON and the
  wick package on WICK_DOC_PYTHONPATH (not run without them, as in a sanitizer
  build, nor when it needs torch and that python has none).

Each runs in an empty directory, and every *.jsonl file it writes must pass
`wick-trace check` (candle-graph's rules) as written (Wick's facts
ride in wick_ keys, which candle-graph ignores) and converted with
`wick-trace convert --strict`. Exit 0
when every program passes, 77 when none ran, 1 otherwise, naming the file and
line of the block.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def blocks(path, language='c'):
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    inside, start, body = False, 0, []
    for number, line in enumerate(lines, 1):
        if not inside and line.strip() == '```' + language:
            inside, start, body = True, number, []
        elif inside and line.strip() == '```':
            inside = False
            yield start, '\n'.join(body) + '\n'
        elif inside:
            body.append(line)


def check_traces(where, work, wick_trace):
    """Each *.jsonl the program wrote must pass check as written and converted --strict."""
    traces = sorted(glob.glob(os.path.join(work, '*.jsonl')))
    if not traces:
        print('FAIL %s: wrote no trace' % where)
        return 1
    failures = 0
    for trace in traces:
        strict = trace + '.strict'
        conv = subprocess.run([wick_trace, 'convert', '--strict', trace, '--output', strict],
                              capture_output=True, text=True)
        check = subprocess.run([wick_trace, 'check', strict], capture_output=True, text=True)
        written = subprocess.run([wick_trace, 'check', trace], capture_output=True, text=True)
        name = os.path.basename(trace)
        if written.returncode != 0:
            print('FAIL %s: %s as written is rejected:\n%s%s' % (where, name, written.stdout,
                                                                written.stderr))
            failures += 1
        elif conv.returncode != 0 or check.returncode != 0:
            print('FAIL %s: %s is rejected:\n%s%s%s' % (where, name, conv.stderr, check.stdout,
                                                       check.stderr))
            failures += 1
        else:
            print('ok %s: %s: %s' % (where, name, check.stdout.split('\n')[0]))
    return failures


def run_program(where, cmd, work, wick_trace, reads_only=False):
    """Runs cmd in work; 0 when it exits 0 and its traces pass, else 1. A
    program that only reads traces (reads_only) passes on its exit status and
    must have printed something."""
    ran = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=120)
    if ran.returncode != 0:
        print('FAIL %s: exits %d\n%s%s' % (where, ran.returncode, ran.stdout, ran.stderr))
        return 1
    if reads_only:
        if not ran.stdout.strip():
            print('FAIL %s: a reading program that printed nothing' % where)
            return 1
        print('ok %s: %s' % (where, ran.stdout.strip().split('\n')[0]))
        return 0
    return check_traces(where, work, wick_trace)


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
                failures += run_program(where, ['./example'], work, wick_trace)
            finally:
                shutil.rmtree(work, ignore_errors=True)

    # Python blocks: every one is a whole program, run with the wick package
    # (WICK_DOC_PYTHON, WICK_DOC_PYTHONPATH: the build's or an installed one).
    python = os.environ.get('WICK_DOC_PYTHON')
    for doc in docs:
        for line, code in blocks(doc, 'python'):
            where = '%s:%d' % (os.path.relpath(doc, source), line)
            if not python:
                print('# %s: a Python program, not run (no WICK_DOC_PYTHON: a sanitizer build, '
                      'or no Python package)' % where)
                continue
            first = code.split('\n', 1)[0]
            if first.startswith('# not run:'):
                print('# %s: %s' % (where, first[2:]))
                continue
            if re.search(r'^import torch|^import .*\btorch\b', code, re.M) and subprocess.run(
                    [python, '-c', 'import torch'], capture_output=True).returncode != 0:
                print('# %s: needs torch, which %s lacks: not run' % (where, python))
                continue
            programs += 1
            work = tempfile.mkdtemp(prefix='wick-doc-example-')
            try:
                with open(os.path.join(work, 'example.py'), 'w', encoding='utf-8') as f:
                    f.write(code)
                os.environ['PYTHONPATH'] = os.environ.get('WICK_DOC_PYTHONPATH', '')
                os.environ['PYTHONDONTWRITEBYTECODE'] = '1'
                os.environ['WICK_TRACE'] = os.path.abspath(wick_trace)  # wick.trace runs it
                failures += run_program(where, [python, 'example.py'], work, wick_trace,
                                        reads_only=first.startswith('# reads traces'))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    if programs == 0:
        print('no complete program in docs/')
        return 77
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
