#!/usr/bin/env bash
# Runs `go test` with the given arguments through gotestsum, then prints how
# many tests passed, failed and were skipped. Under CI (CI set and not
# "false") a skipped test fails the run: CI runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BGGITOPS_BIN_DIR:-$PWD/bin}"
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
status=0
"$bin/gotestsum" --format pkgname-and-test-fails --format-hide-empty-pkg --jsonfile "$json" -- "$@" || status=$?
count() { grep '"Test":' "$json" | grep -c "\"Action\":\"$1\"" || true; }
passed=$(count pass) failed=$(count fail) skipped=$(count skip)
# A package that does not build or fails outside a test has no failed test.
pkgfailed=$(grep -v '"Test":' "$json" | grep -c '"Action":"fail"' || true)
echo "tests: $passed passed, $failed failed, $skipped skipped; packages failed: $pkgfailed"
if [ "$skipped" -gt 0 ]; then
  grep '"Test":' "$json" | grep '"Action":"skip"' | sed -E 's/.*"Package":"([^"]*)".*"Test":"([^"]*)".*/  skipped: \1 \2/'
  case "${CI:-}" in
    ""|false) ;;
    *) echo "CI: skipped tests count as failures"; status=1 ;;
  esac
fi
exit "$status"
