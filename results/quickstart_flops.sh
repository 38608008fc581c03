#!/usr/bin/env bash
# Regenerates results/quickstart_flops.md: the quickstart's comparison of
# flat group sampling and the entropy tree at an equal budget of total
# FLOPs (experiments/configs/quickstart_flops.yaml), the tree trained packed
# and per leaf. Every number in the file is read from the store by
# `rollout verdict` and `rollout report`; the runs resume when the store
# already holds them.
#
#   results/quickstart_flops.sh [STORE]     (default: quickstart_flops.db)
#
# The 9 runs (the default two at a time, base policy from the cache) took
# 18 minutes wall on the 2-core machine at load average 36–58 from other
# jobs (2026-12-03 15:56–16:14 UTC, the build of commit 4f507e4).
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:-quickstart_flops.db}
bin=$(mktemp -d)/rollout
go build -o "$bin" ./cmd/rollout
cfg=experiments/configs/quickstart_flops.yaml
out=results/quickstart_flops.md
"$bin" run "$cfg" --store "$store" >/dev/null
{
	cat <<'EOF'
# The quickstart at equal total compute

The quickstart's comparison (flat group sampling with GRPO's advantage against the entropy
tree, EPTree's M, N, L, T = 2, 1, 1, 3 with TreeRL's tree advantage, 8 leaves a prompt, on
two-digit addition from one cached base policy) with the budget in total FLOPs instead of
sampled tokens: `train.total_flops: 3e11` counts the matrix-product FLOPs of sampling, scoring
and updates as they run, no run exceeds it, and every run is evaluated at the same FLOP marks
(0, 1e11, 2e11, 3e11). The tree is trained twice: packed (`train.tree_packing: true`, each
shared prefix run forward and backward once; flat's groups are packed too, sharing their
prompt) and per leaf (every leaf's whole sequence, the default). Three seeds, the quickstart's.
Config: [`experiments/configs/quickstart_flops.yaml`](../experiments/configs/quickstart_flops.yaml);
its checks were declared and committed before the first run.

Regenerate with `results/quickstart_flops.sh [STORE]` (it runs
`rollout run experiments/configs/quickstart_flops.yaml`, then `rollout verdict quickstart_flops`
and `rollout report quickstart_flops --at flops:F` at every mark).

EOF
	"$bin" verdict quickstart_flops --store "$store" | sed '1s/^## quickstart_flops$/## Verdict/'
	echo
	echo "## At each FLOP mark"
	echo
	echo "Sampled tokens (\`budget/tokens_cum\`) and update FLOPs (\`budget/train_flops_cum\`) at the last mark show where each variant's compute went."
	for at in flops:0 flops:1e11 flops:2e11; do
		echo
		"$bin" report quickstart_flops --store "$store" --at "$at" --format markdown --metric eval/acc --metric eval/pass@k
	done
	echo
	"$bin" report quickstart_flops --store "$store" --at flops:3e11 --format markdown --metric eval/acc --metric eval/pass@k --metric budget/tokens_cum --metric budget/train_flops_cum
	echo
	echo "## The runs"
	echo
	echo "As \`rollout ls quickstart_flops\` lists them (steps and sampled tokens at the end of each run):"
	echo
	echo '```'
	"$bin" ls quickstart_flops --store "$store"
	echo '```'
} >"$out"
