#!/usr/bin/env bash
# The .desktop file claims only the types Wick reads: its MimeType entries are
# the ones data/*.mime.xml defines (not application/json), and with that MIME
# package a candle-graph trace and a Chrome trace are recognised by content
# while a plain JSON file is not claimed.
#   check-mime.sh DESKTOP MIME_XML EXAMPLE_TRACE CHROME_TRACE
set -euo pipefail
desktop=$1 xml=$2 candle=$3 chrome=$4
for tool in update-mime-database gio; do
  command -v $tool >/dev/null || { echo "check-mime: $tool not found; skipped"; exit 77; }
done
types=$(sed -n 's/^MimeType=//p' "$desktop" | tr ';' ' ')
for t in $types; do
  grep -q "type=\"$t\"" "$xml" || { echo "check-mime: $desktop claims $t, which $xml does not define"; exit 1; }
done
case " $types " in *" application/json "*|*" application/x-ndjson "*)
  echo "check-mime: $desktop claims every JSON file ($types)"; exit 1;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/mime/packages"
cp "$xml" "$tmp/mime/packages/wick.xml"
update-mime-database "$tmp/mime" >/dev/null 2>&1
type_of() {
  XDG_DATA_HOME="$tmp" XDG_DATA_DIRS="$tmp:/usr/share" gio info -a standard::content-type "$1" \
    | sed -n 's/^ *standard::content-type: //p'
}
# Names that say nothing, so that only the content decides.
cp "$candle" "$tmp/a-trace"
cp "$chrome" "$tmp/b-trace"
printf '{"kind":"not a trace"}\n' > "$tmp/c-plain.json"
got=$(type_of "$tmp/a-trace"); [ "$got" = application/x-candle-graph-trace ] \
  || { echo "check-mime: $candle is $got, not application/x-candle-graph-trace"; exit 1; }
got=$(type_of "$tmp/b-trace"); [ "$got" = application/x-chrome-trace ] \
  || { echo "check-mime: $chrome is $got, not application/x-chrome-trace"; exit 1; }
got=$(type_of "$tmp/c-plain.json"); case " $types " in *" $got "*)
  echo "check-mime: a plain JSON file is claimed ($got)"; exit 1;; esac
echo "check-mime: claims $types; plain JSON is $got"
