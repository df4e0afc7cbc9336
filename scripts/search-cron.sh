#!/usr/bin/env bash
# Continuous search benchmarks on a self-hosted machine: what the GitHub workflow does, in
# one process per cron line. Install one crontab line per line of `uv run needle schedule`:
#
#   17 0 * * *  cd /srv/needle && scripts/search-cron.sh "17 0 * * *" >> /var/log/needle.log 2>&1
#
#   scripts/search-cron.sh "CRON LINE" [DATA_DIR]
#
# DATA_DIR (default: ../needle-data) holds gold/, history/ and dashboard/; when it is a git
# checkout the run is committed there (and pushed when PUSH=true). Keys come from the
# environment or the project's .env.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 \"CRON LINE\" [DATA_DIR]" >&2
  exit 2
fi
cron=$1
cd "$(dirname "$0")/.."
data=$(realpath -m "${2:-../needle-data}")
mkdir -p "$data/gold" "$data/history"
out=$(mktemp -d "${TMPDIR:-/tmp}/needle-run.XXXXXX")
trap 'rm -rf "$out"' EXIT

mapfile -t benches < <(uv run --frozen needle schedule --cron "$cron" --gold-dir "$data/gold" \
  | awk -F'\t' 'NF == 2 { print $1 }')
failed=()
for bench in "${benches[@]}"; do
  if uv run --frozen bash scripts/search-bench.sh "$bench" "$data" "$out/$bench"; then
    cp "$out/$bench"/gold/*.jsonl "$data/gold/" 2>/dev/null || true
  else
    failed+=("$bench")
  fi
done

reports=("$out"/*/search/*.json)
if [ -e "${reports[0]}" ]; then
  uv run --frozen needle publish "${reports[@]}" --site "$data/history"
  uv run --frozen needle dashboard --site "$data/history" --out "$data/dashboard"
fi
if git -C "$data" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$data" add -A
  git -C "$data" commit -qm "search runs: ${benches[*]:-none} ($cron)" || true
  if [ "${PUSH:-false}" = true ]; then
    git -C "$data" push -q
  fi
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "$0: failed: ${failed[*]}" >&2
  exit 1
fi
