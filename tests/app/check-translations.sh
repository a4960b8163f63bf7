#!/bin/sh
# check-translations.sh SOURCE_ROOT — the German catalog is complete:
#  - every file under app/ and data/ that marks a string translatable is listed
#    in po/POTFILES (else its strings escape the template and every check);
#  - every translatable string of the files in po/POTFILES has a German
#    translation in po/de.po (msgcmp counts untranslated and fuzzy entries as
#    missing);
#  - de.po compiles cleanly and holds no untranslated or fuzzy entry at all.
set -e
root=$1
for tool in xgettext msgfmt msgcmp; do
  command -v $tool >/dev/null || { echo "check-translations: $tool not found (gettext); skipped"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"

unlisted=0
for file in $(grep -rlE '(^|[^A-Za-z0-9_])(N|C|NC|Q)?_ ?\(|g_d(n|p)?gettext2? ?\(|translatable="yes"' \
                app data --include='*.c' --include='*.ui' --include='*.xml' --include='*.in' | LC_ALL=C sort); do
  if ! grep -qxF "$file" po/POTFILES; then
    echo "check-translations: $file marks strings translatable but is not in po/POTFILES"
    unlisted=1
  fi
done

xgettext --from-code=UTF-8 --add-comments --keyword=_ --keyword=N_ --keyword=C_:1c,2 \
  --keyword=NC_:1c,2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3 \
  --files-from=po/POTFILES --output="$tmp/wick.pot" 2>/dev/null
LC_ALL=C msgfmt --check --statistics -o /dev/null po/de.po 2>"$tmp/statistics"
cat "$tmp/statistics"
if grep -qE 'fuzzy|untranslated' "$tmp/statistics"; then
  echo "check-translations: po/de.po has fuzzy or untranslated entries"
  exit 1
fi
msgcmp po/de.po "$tmp/wick.pot"
[ $unlisted = 0 ] || exit 1
echo "check-translations: every message of po/POTFILES is translated in de.po"
