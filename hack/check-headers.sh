#!/usr/bin/env bash
# Every Go file carries the license header of hack/boilerplate.go.txt.
# With --fix, the header is added where it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
for f in $(git ls-files '*.go'); do
  head -n 12 "$f" | grep -q 'Copyright .* The bg-gitops Authors' || missing+=("$f")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "${1:-}" = "--fix" ]; then
  for f in "${missing[@]}"; do
    # A build constraint must stay above any block comment.
    if head -n 1 "$f" | grep -q '^//go:build'; then
      { head -n 1 "$f"; echo; cat hack/boilerplate.go.txt; tail -n +2 "$f"; } > "$f.tmp"
    else
      { cat hack/boilerplate.go.txt; echo; cat "$f"; } > "$f.tmp"
    fi
    mv "$f.tmp" "$f"
  done
  exit 0
fi
echo "license header missing (hack/check-headers.sh --fix adds it):"
printf '  %s\n' "${missing[@]}"
exit 1
