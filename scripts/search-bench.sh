#!/usr/bin/env bash
# One continuous search-benchmark run: fresh queries or gold, then `pytest evals`.
# Used by .github/workflows/search-benchmarks.yml (one job per bench) and by
# scripts/search-cron.sh on a self-hosted runner. Run it inside the project environment
# (`uv run bash scripts/search-bench.sh …`), so `needle` and `python` are the project's.
#
#   scripts/search-bench.sh BENCH DATA_DIR OUT_DIR
#
# DATA_DIR/gold/<bench>.jsonl is the gold kept between runs (read only here); OUT_DIR gets
# the queries or gold this run used (OUT_DIR/gold/… for daily benches, to be kept), the run
# report under OUT_DIR/search/ and an HTML report. Environment: ENGINES (comma-separated),
# REUSE_GOLD=true to run a daily bench on its kept gold instead of generating fresh gold,
# PYTEST_WORKERS (default 4), and the engine and judge keys.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BENCH DATA_DIR OUT_DIR" >&2
  exit 2
fi
bench=$1 data=$2 out=$3
engines=${ENGINES:-keenable,exa}
workers=${PYTEST_WORKERS:-4}
mkdir -p "$out/gold"

# A daily bench's gold: the kept file when REUSE_GOLD=true and it exists, else fresh.
daily_gold() {
  local file=$1
  shift
  if [ "${REUSE_GOLD:-false}" = true ] && [ -s "$data/gold/$file" ]; then
    cp "$data/gold/$file" "$out/gold/$file"
  else
    "$@" --out "$out/gold/$file"  # generators write atomically: no half gold file
  fi
  queries=$out/gold/$file
}

extra=()
case $bench in
  news)
    needle news generate --source rss --out "$out/news.jsonl"
    queries=$out/news.jsonl
    extra=(--limit 20)
    ;;
  agentic_rare)
    needle agentic-rare generate --limit 100 --out "$out/agentic_rare.jsonl"
    queries=$out/agentic_rare.jsonl
    ;;
  finance)
    daily_gold finance.jsonl needle finance generate --max-companies 100 --per-company 1 \
      --filingdoc-target 40
    extra=(--limit 120 --judge)
    ;;
  scholar)
    daily_gold scholar.jsonl needle scholar generate --age-buckets 7d,30d,1y --per-cell 7
    extra=(--num-results 10)
    ;;
  legal)
    daily_gold legal.jsonl needle legal generate --per-court 4 --per-title 4
    ;;
  *)
    echo "$0: unknown bench '$bench' (news, agentic_rare, finance, scholar, legal)" >&2
    exit 2
    ;;
esac

parallel=()
if [ "$workers" -gt 1 ]; then
  parallel=(-n "$workers")
fi
status=0
python -m pytest "evals/test_$bench.py" -p no:cacheprovider -q --no-color \
  --queries "$queries" --engines "$engines" --results-dir "$out" \
  --html "$out/$bench.html" "${parallel[@]}" "${extra[@]}" || status=$?
# Exit 1 means some cases failed or errored: quality misses and outages are results, kept
# in the report. Anything else (interrupted, usage error, no tests) is a broken run.
if [ "$status" -gt 1 ]; then
  echo "$0: pytest exited $status for $bench" >&2
  exit "$status"
fi
if ! compgen -G "$out/search/${bench}__*.json" >/dev/null; then
  echo "$0: $bench wrote no run report under $out/search" >&2
  exit 1
fi
