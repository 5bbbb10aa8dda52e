#!/bin/bash
# docs/CONFIG.md must list exactly the SHOAL_* variables of the registry
# (src/base/config_vars.h), as shoal-info prints them.  To refresh the table:
#   tests/docs/check_config_doc.sh <shoal-info> docs/CONFIG.md --update
set -euo pipefail
info=$1 doc=$2 mode=${3:-check}
begin='<!-- begin generated: shoal-info --config=markdown -->'
end='<!-- end generated -->'

grep -qF "$begin" "$doc" || { echo "FAIL: $doc lacks the marker: $begin"; exit 1; }
grep -qF "$end" "$doc" || { echo "FAIL: $doc lacks the marker: $end"; exit 1; }
want=$(env -u SHOAL_LOG "$info" --config=markdown)
have=$(sed -n "/^$begin\$/,/^$end\$/p" "$doc" | sed '1d;$d')

if [ "$mode" = "--update" ]; then
    tmp=$(mktemp)
    awk -v b="$begin" -v e="$end" -v body="$want" '
        $0 == b { print; print body; skip = 1; next }
        $0 == e { skip = 0 }
        !skip { print }' "$doc" >"$tmp"
    mv "$tmp" "$doc"
    echo "updated $doc"
    exit 0
fi
if [ "$want" != "$have" ]; then
    echo "FAIL: the table in $doc differs from the registry:"
    diff <(echo "$have") <(echo "$want") || true
    echo "run: $0 $info $doc --update"
    exit 1
fi
echo "ok: $doc lists all $(echo "$want" | grep -c '^| `SHOAL_') variables"
