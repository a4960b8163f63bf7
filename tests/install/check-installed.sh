#!/usr/bin/env bash
# check-installed.sh PREFIX SOURCE_ROOT BUILD_ROOT — Wick after `meson install`,
# used as a newcomer uses it, from PREFIX only (nothing of the build tree):
#
#   1. pkg-config wick-1 from PREFIX; the installed headers are exactly
#      backend/wick/*.h, and <wick/wick.h> compiles alone as C and as C++;
#   2. the installed libwick exports exactly its public API (check-exports.py
#      on the installed .so, headers and version script);
#   3. every complete C program in docs/ compiles against the installed
#      library, runs, and writes a trace candle-graph's rules accept (checked by
#      the installed wick-trace); every Python program in docs/ does the same
#      with the installed wick package;
#   4. the installed wick Python package imports with /usr/bin/python3 and
#      records a session whose trace the installed wick-trace accepts;
#   (the installed programs and the extension find libwick by their rpath:
#   no LD_LIBRARY_PATH is set)
#   5. the schema was compiled by the post-install step, and the installed app,
#      run on a file (under a display), remembers it as a recent file;
#   6. wick-askpass is in PREFIX/libexec, named by the installed app, and runs.
#
# TAP. A skip (1..0) when PREFIX holds no installed Wick (run `meson install` first);
# exit 0 when everything holds, 1 naming each failure.
set -uo pipefail
prefix=$1 source=$2 build=$3
pcdir=$(find "$prefix" -path '*/pkgconfig/wick-1.pc' -printf '%h\n' 2>/dev/null | head -1)
if [ -z "$pcdir" ]; then
  echo "1..0 # SKIP no installed Wick under $prefix (run meson install first)"
  exit 0
fi
export PKG_CONFIG_PATH=$pcdir
work=$(mktemp -d /tmp/wick-installed.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { # what failed, then its details as TAP comments
  n=$((n + 1)) failures=$((failures + 1))
  echo "not ok $n - $1"
  [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/# /'
  return 0
}

# 1. pkg-config and the headers.
if cflags=$(pkg-config --cflags wick-1) && libs=$(pkg-config --libs wick-1); then
  ok "pkg-config wick-1 from $pcdir: $cflags $libs"
else
  fail "pkg-config wick-1 from $pcdir"
fi
libdir=$(pkg-config --variable=libdir wick-1)
incdir=$(pkg-config --variable=includedir wick-1)/wick-1/wick
installed=$(cd "$incdir" 2>/dev/null && ls ./*.h | sed 's|^\./||' | sort | tr '\n' ' ')
public=$(cd "$source/backend/wick" && ls ./*.h | sed 's|^\./||' | sort | tr '\n' ' ')
if [ "$installed" = "$public" ]; then
  ok "installed headers are backend/wick/*.h: $installed"
else
  fail "installed headers [$installed] differ from backend/wick/*.h [$public]"
fi
# Only <wick/wick.h> is included directly (the others say so); it compiles
# alone, warning-free, as C11 and as C++17.
printf '#include <wick/wick.h>\nint wick_header_check;\n' >"$work/h.c"
# shellcheck disable=SC2086
if out=$(cc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only $cflags "$work/h.c" 2>&1 \
  && c++ -std=c++17 -Wall -Wextra -Werror -x c++ -fsyntax-only $cflags "$work/h.c" 2>&1); then
  ok "<wick/wick.h> compiles alone as C11 and C++17, warnings as errors"
else
  fail "<wick/wick.h> does not compile alone" "$out"
fi

# 2. The installed library exports exactly its public API.
if out=$(python3 "$source/tools/abi/check-exports.py" "$libdir/libwick.so" "$incdir" \
  "$source/backend/wick-1.map" 2>&1); then
  ok "installed $libdir/libwick.so exports exactly its public API"
else
  fail "installed libwick does not export exactly its public API" "$out"
fi

# 3. The docs' programs against the installed library and Python package.
python=/usr/bin/python3
pydir=$(find "$prefix" -type d -path '*/wick' -name wick -exec test -f '{}/__init__.py' ';' -printf '%h\n' | head -1)
docpython=
[ -n "$pydir" ] && [ -x "$python" ] && docpython=$python
if out=$(WICK_DOC_PKG_CONFIG_PATH=$pcdir WICK_DOC_PYTHON=$docpython WICK_DOC_PYTHONPATH=$pydir \
  python3 "$source/tests/docs/check-doc-examples.py" "$source" "$build" "$prefix/bin/wick-trace" cc 2>&1); then
  ok "docs/ programs against the installed libwick and wick package (traces accepted: $(echo "$out" | grep -c '^ok '))"
else
  fail "docs/ programs against the installed libwick and wick package" "$out"
fi

# 4. The installed Python package.
if [ -z "$pydir" ]; then
  fail "no installed wick Python package under $prefix"
elif ! "$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null; then
  ok "# SKIP no /usr/bin/python3 for the installed Python package"
else
  (cd "$work" && PYTHONPATH=$pydir "$python" - >"$work/py.out" 2>&1 <<'EOF'
import wick
with wick.Session("installed.check", phase="train", device="cpu", jsonl_path="py.jsonl",
                  strict=False, coverage={"tensors": "complete", "logical_memory": "complete"}) as s:
    with s.measurement("step"):
        with s.span("forward", kind="module", step="forward"):
            s.record_op("matmul", inputs=["x", "w"], output="y", shape=[4, 4], dtype="f32",
                        device="cpu", duration_ns=100)
print(wick.__file__)
EOF
  )
  py=$?
  if [ $py -eq 0 ] && grep -q "^$pydir/" "$work/py.out" \
    && "$prefix/bin/wick-trace" convert --strict "$work/py.jsonl" --output "$work/py.strict.jsonl" \
    && "$prefix/bin/wick-trace" check "$work/py.strict.jsonl" >"$work/py.check" 2>&1; then
    ok "installed wick Python package ($pydir) records a trace candle-graph accepts: $(head -1 "$work/py.check")"
  else
    fail "installed wick Python package (exit $py)" "$(cat "$work/py.out" "$work/py.check" 2>/dev/null)"
  fi
fi

# 5. Settings after install.
schemadir=$prefix/share/glib-2.0/schemas
# (the keys read whole before grep: grep -q would stop reading early, and
# under pipefail gsettings' SIGPIPE then fails the check at random)
keys=$(gsettings --schemadir "$schemadir" list-keys io.github.wickprofiler.Wick 2>&1)
if [ -f "$schemadir/gschemas.compiled" ] && grep -qx recent-files <<<"$keys"; then
  ok "the post-install step compiled the schema in $schemadir"
else
  fail "no compiled schema with recent-files in $schemadir after meson install" "$keys"
fi
if [ -z "${DISPLAY:-}" ]; then
  ok "# SKIP the installed app on a file: no display"
else
  export XDG_CONFIG_HOME=$work/config GSETTINGS_BACKEND=keyfile
  unset GSETTINGS_SCHEMA_DIR
  cp "$source/data/example-trace.jsonl" "$work/opened.jsonl"
  "$prefix/bin/wick" "$work/opened.jsonl" >"$work/app.log" 2>&1 &
  app=$!
  keyfile=$XDG_CONFIG_HOME/glib-2.0/settings/keyfile
  for _ in $(seq 300); do
    grep -q "opened.jsonl" "$keyfile" 2>/dev/null && break
    kill -0 $app 2>/dev/null || break
    sleep 0.1
  done
  kill $app 2>/dev/null
  wait $app 2>/dev/null
  if grep -q "recent-files=.*$work/opened.jsonl" "$keyfile" 2>/dev/null; then
    ok "the installed app remembers a recently opened file ($keyfile)"
  else
    fail "the installed app did not remember $work/opened.jsonl within 30 s" "$(cat "$keyfile" "$work/app.log" 2>/dev/null)"
  fi
fi

# 6. wick-askpass, ssh's questions for the app, where the app looks for it
askpass=$(find "$prefix" -path '*/libexec/wick-askpass' -type f 2>/dev/null | head -1)
if [ -z "$askpass" ] || [ ! -x "$askpass" ]; then
  fail "no executable libexec/wick-askpass under $prefix"
elif ! grep -qaF "$askpass" "$prefix/bin/wick"; then
  fail "the installed wick does not name $askpass (its WICK_ASKPASS_INSTALLED)"
else
  # no answer within its deadline: 2 (under a display), or 3 (none to show it on)
  WICK_ASKPASS_TIMEOUT=1 timeout 30 "$askpass" "Password:" >/dev/null 2>"$work/askpass.err"
  status=$?
  if { [ -n "${DISPLAY:-}" ] && [ $status -eq 2 ]; } || { [ -z "${DISPLAY:-}" ] && [ $status -eq 3 ]; }; then
    ok "the installed wick-askpass runs ($askpass: status $status unanswered)"
  else
    fail "the installed wick-askpass exited $status" "$(cat "$work/askpass.err")"
  fi
fi

echo "1..$n"
[ $failures -eq 0 ]
