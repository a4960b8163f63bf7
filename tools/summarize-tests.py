#!/usr/bin/env python3
"""Prints one closing line over meson test logs: N passed, N failed, N skipped.

Before it, each test that did not pass is named with its log and the last lines
of its output, so that the tail of a CI log says what failed without the rest.
"""
import json
import sys

TAIL_LINES = 25

passed = failed = skipped = 0
failures = []
for path in sys.argv[1:]:
    try:
        with open(path) as log:
            for line in log:
                entry = json.loads(line)
                result = entry.get("result")
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
                    failures.append((path, entry))
    except FileNotFoundError:
        failed += 1
        print(f"missing test log {path}")

for path, entry in failures:
    name = entry.get("name", "?")
    result = entry.get("result", "?")
    duration = entry.get("duration") or 0.0
    print(f"== not passed: {name}: {result} after {duration:.1f} s (exit {entry.get('returncode')}) in {path}")
    output = ((entry.get("stdout") or "") + (entry.get("stderr") or "")).rstrip("\n").splitlines()
    for text in output[-TAIL_LINES:]:
        print(f"   | {text[:300]}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
