#!/usr/bin/env bash
# Regenerates results/treerl_training.md: the headline cell of TreeRL's
# training claim on long_add (experiments/configs/treerl_headline.yaml),
# i.i.d. sampling with GRPO against EPTree with the tree advantage (and random
# forks with the tree advantage as a control), 10 seeds,
# on two base policies (pretraining seeds 0 and 1). Every number in the file
# is read from the store by `rollout report`/`rollout ls`; the runs resume
# when the store already holds them.
#
#   results/treerl_training.sh [STORE]     (default: treerl.db)
#
# Takes about an hour on 2 busy cores (two base policies: pretraining one
# of them, 2 × 30 runs of 100,000 sampled tokens, two at a time).
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:-treerl.db}
bin=$(mktemp -d)/rollout
go build -o "$bin" ./cmd/rollout
cfg=experiments/configs/treerl_headline.yaml
out=results/treerl_training.md
"$bin" run "$cfg" --store "$store" --workers 2 >/dev/null
"$bin" run "$cfg" --set pretrain.seed=1 --set name=treerl_headline_base1 --store "$store" --workers 2 >/dev/null

# row EXPERIMENT AT LABEL VARIANT BASELINE: one table row from report's CSV
# (eval/acc): both variants' mean ± 95% half-width, the paired difference
# VARIANT − BASELINE with its 95% interval, p, and the minimum detectable
# effect at α = 0.05 (two-sided) and 80% power, (t_.975 + t_.8)·SE with
# SE = diff/t, for the 9 degrees of freedom of 10 paired seeds.
row() {
	"$bin" report "$1" --store "$store" --at "$2" --metric eval/acc --baseline "$5" --format csv 2>/dev/null |
		awk -F, -v label="$3" -v variant="$4" -v baseline="$5" '
			NR == 1 { next }
			$3 == baseline { base = sprintf("%.1f ± %.1f", 100*$7, 100*$11) }
			$3 == variant {
				mine = sprintf("%.1f ± %.1f", 100*$7, 100*$11)
				if ($16 != 9) { print "unexpected degrees of freedom " $16 > "/dev/stderr"; exit 1 }
				se = ($15 == 0) ? 0 : $14 / $15
				diff = sprintf("%+.1f [%+.1f, %+.1f]", 100*$14, 100*($14 - 2.262*se), 100*($14 + 2.262*se))
				p = sprintf("%.3f", $17); mde = sprintf("%.1f", 100*3.145*se)
			}
			END { printf "| %s | %s | %s | %s | %s | %s |\n", label, base, mine, diff, p, mde }'
}

# steps EXPERIMENT VARIANT: mean optimizer steps of the variant's runs.
steps() {
	"$bin" ls "$1" --store "$store" 2>/dev/null |
		awk -F'│' -v v="$2" '{ gsub(/ /, "", $4); gsub(/ /, "", $7) } $4 == v { s += $7; n++ } END { printf "%.1f", s/n }'
}

# table EXPERIMENT VARIANT BASELINE: VARIANT against BASELINE at each mark.
table() {
	echo "| sampled tokens | $3: greedy acc % | $2: greedy acc % | paired Δ (points) [95% CI] | p (paired t) | MDE (points) |"
	echo "| --- | --- | --- | --- | --- | --- |"
	for mark in 0 25000 50000 75000 100000; do
		row "$1" "tokens:$mark" "$mark" "$2" "$3"
	done
}

# tables EXPERIMENT: the headline comparison, the random-fork control, and
# entropy against random forks.
tables() {
	echo "EPTree (entropy forks) with the tree advantage against i.i.d. sampling with GRPO:"
	echo
	table "$1" entropy_tree_tree flat_grpo
	echo
	echo "Random forks with the tree advantage against i.i.d. sampling with GRPO:"
	echo
	table "$1" random_tree_tree flat_grpo
	echo
	echo "Entropy forks against random forks (both with the tree advantage):"
	echo
	table "$1" entropy_tree_tree random_tree_tree
	echo
	echo "Optimizer steps per run (mean over seeds): flat_grpo $(steps "$1" flat_grpo), entropy_tree_tree $(steps "$1" entropy_tree_tree), random_tree_tree $(steps "$1" random_tree_tree)."
}

"$bin" plot treerl_headline --store "$store" --metric eval/acc --x tokens --out results/treerl_training_base0.png 2>/dev/null
"$bin" plot treerl_headline_base1 --store "$store" --metric eval/acc --x tokens --out results/treerl_training_base1.png 2>/dev/null

{
	echo "# TreeRL's training claim on \`long_add\`: tables"
	echo
	echo "Written by \`results/treerl_training.sh\` from the store (commit $(git rev-parse --short HEAD), $(go env GOOS)/$(go env GOARCH), $(nproc) cores, $(date -u +%Y-%m-%d)); the reading of these tables is in [treerl.md](treerl.md)."
	echo "Config: [\`experiments/configs/treerl_headline.yaml\`](../experiments/configs/treerl_headline.yaml); 10 seeds a variant,"
	echo "100,000 sampled tokens a run (never exceeded), greedy accuracy on 200 held-out prompts at each token mark; mean ± 95% t-interval over seeds."
	echo
	echo "## Base policy 1 (pretraining seed 0, the base policy of Fig. 1)"
	echo
	echo '`rollout run experiments/configs/treerl_headline.yaml`'
	echo
	tables treerl_headline
	echo
	echo "![greedy accuracy against sampled tokens, base policy 1](treerl_training_base0.png)"
	echo
	echo "## Base policy 2 (pretraining seed 1)"
	echo
	echo '`rollout run experiments/configs/treerl_headline.yaml --set pretrain.seed=1 --set name=treerl_headline_base1`'
	echo
	tables treerl_headline_base1
	echo
	echo "![greedy accuracy against sampled tokens, base policy 2](treerl_training_base1.png)"
} >"$out"
echo "wrote $out"
