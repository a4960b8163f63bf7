#!/bin/sh
# check-translations.sh SOURCE_ROOT — every translatable string of the files in
# po/POTFILES has a German translation in po/de.po, and de.po compiles cleanly.
set -e
root=$1
for tool in xgettext msgfmt msgcmp; do
  command -v $tool >/dev/null || { echo "check-translations: $tool not found (gettext); skipped"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
xgettext --from-code=UTF-8 --add-comments --keyword=_ --keyword=N_ --keyword=C_:1c,2 \
  --keyword=NC_:1c,2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3 \
  --files-from=po/POTFILES --output="$tmp/wick.pot" 2>/dev/null
msgfmt --check --statistics -o /dev/null po/de.po
msgcmp po/de.po "$tmp/wick.pot"
echo "check-translations: every message of po/POTFILES is translated in de.po"
