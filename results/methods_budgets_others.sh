#!/usr/bin/env bash
# Regenerates results/methods_budgets_others.md and its plot: EPTree, ARPO
# and pivot resampling against flat sampling at per-prompt budgets of 4 and
# 8 responses on countdown_search, under the design declared in
# experiments/configs/methods_budgets_others.yaml (experiment
# methods_budgets_others, no pilot), committed before its runs. The
# companion of results/methods_budgets.sh, which writes it (-e).
#
#   results/methods_budgets_others.sh STORE [CACHE]          run (resuming), then write
#   results/methods_budgets_others.sh STORE [CACHE] report   only write the report
set -euo pipefail
store=${1:?usage: results/methods_budgets_others.sh STORE [CACHE] [report]}
exec "$(dirname "$0")/methods_budgets.sh" -e methods_budgets_others "$store" "" "${2:-${ROLLOUT_CACHE:-}}" "${3:-}"
