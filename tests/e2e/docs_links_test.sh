#!/usr/bin/env bash
# The docs stand alone: every relative link in README.md, docs/*.md and docs/experiments/*.md
# names a file inside the repository that exists (a clone has nothing beside it), and no doc or
# source comment sends the reader to ../shared.
set -euo pipefail
src=${TESSERA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
fails=0
fail() {
  echo "FAIL $*"
  fails=$((fails + 1))
}
links=0
for doc in README.md docs/*.md docs/experiments/*.md; do
  dir=$(dirname "$doc")
  # Markdown links [text](target): the target up to ')' or a space, anchors dropped.
  while IFS= read -r target; do
    case "$target" in
      http://* | https://* | mailto:* | '#'*) continue ;;
    esac
    path=${target%%#*}
    [ -n "$path" ] || continue
    links=$((links + 1))
    resolved=$(realpath -m "$dir/$path")
    case "$resolved" in
      "$src"/*) ;;
      *) fail "$doc: link '$target' leaves the repository" ; continue ;;
    esac
    [ -e "$resolved" ] || fail "$doc: link '$target' names a missing file"
  done < <(grep -oE '\]\([^) ]+\)' "$doc" | sed -E 's/^\]\(//; s/\)$//')
done
if grep -rnE 'DESIGN\.md' README.md docs src tests bench scripts \
  --include='*.md' --include='*.cc' --include='*.h' --include='*.sh' | grep -v docs_links_test.sh; then
  fail "the lines above point to DESIGN.md, which is not in the repository"
fi
[ "$fails" -eq 0 ] || exit 1
echo "OK: $links relative links, all inside the repository and present"
