#!/usr/bin/env bash
# Formats the C++ sources (every tracked *.cc and *.h) with clang-format and the repository's
# .clang-format. --check changes nothing: it lists the files that are not formatted and exits 1
# if there are any. Needs clang-format (Debian: apt-get install clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
case "${1:-}" in
  "") mode=fix ;;
  --check) mode=check ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
command -v "$CLANG_FORMAT" >/dev/null || { echo "scripts/format.sh: $CLANG_FORMAT not found" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "$mode" = fix ]; then
  printf '%s\0' "${files[@]}" | xargs -0 "$CLANG_FORMAT" -i --style=file
  exit 0
fi
unformatted=0
for f in "${files[@]}"; do
  if ! "$CLANG_FORMAT" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f"
    unformatted=$((unformatted + 1))
  fi
done
if [ "$unformatted" -gt 0 ]; then
  echo "scripts/format.sh: $unformatted of ${#files[@]} files are not formatted (run scripts/format.sh)" >&2
  exit 1
fi
