#!/usr/bin/env bash
# Regenerates results/treerl_headline.md (the earlier, exploratory design; results/treerl_training.sh runs the design fixed before its runs): TreeRL's training claim on
# long_add as a 2×2 design (experiments/configs/treerl_headline.yaml):
# {i.i.d., EPTree with entropy forks, random forks} × {GRPO, tree advantage},
# plus EPTree with surprisal forks under both advantages, 10 seeds, on two
# base policies (pretraining seeds 0 and 4). Every number in the file is
# read from the store by `rollout report`/`rollout ls`; the runs resume when
# the store already holds them.
#
#   results/treerl_headline.sh [STORE]     (default: treerl.db)
#
# Takes about 45 minutes on a 2-core machine (two base policies, each
# pretrained once in about 2 minutes, then 2 × 80 runs of 100,000 sampled
# tokens, two at a time: 42 minutes and 75 minutes of CPU when last
# measured, see results/treerl.md).
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:-treerl.db}
bin=$(mktemp -d)/rollout
go build -o "$bin" ./cmd/rollout
cfg=experiments/configs/treerl_headline.yaml
out=results/treerl_headline.md
"$bin" run "$cfg" --store "$store" --workers 2 >/dev/null
"$bin" run "$cfg" --set pretrain.seed=4 --set name=treerl_headline_seed4 --store "$store" --workers 2 >/dev/null

variants="flat_grpo flat_tree entropy_tree_grpo entropy_tree_tree random_tree_grpo random_tree_tree surprisal_tree_grpo surprisal_tree_tree"

# The comparisons at the end of the runs (100,000 tokens), one family per
# base policy for Holm's correction: VARIANT BASELINE, what it tests.
comparisons="entropy_tree_tree flat_grpo TreeRL's claim: EPTree + tree advantage over i.i.d. + GRPO
random_tree_tree flat_grpo random forks + tree advantage over i.i.d. + GRPO
surprisal_tree_tree flat_grpo surprisal forks + tree advantage over i.i.d. + GRPO
entropy_tree_grpo flat_grpo the sampling alone (both GRPO)
surprisal_tree_grpo flat_grpo the sampling alone, surprisal forks (both GRPO)
flat_tree flat_grpo the advantage alone (both i.i.d.)
entropy_tree_tree entropy_tree_grpo the tree advantage on EPTree
random_tree_tree random_tree_grpo the tree advantage on random forks
surprisal_tree_tree surprisal_tree_grpo the tree advantage on surprisal forks
entropy_tree_tree random_tree_tree entropy over random forks (tree advantage)
entropy_tree_grpo random_tree_grpo entropy over random forks (GRPO)
entropy_tree_tree surprisal_tree_tree entropy over surprisal forks (tree advantage)"

# stats EXPERIMENT AT VARIANT BASELINE [METRIC]: one line "base mine diff
# lo hi p mde" (points) from report's CSV: both variants' mean ± 95%
# half-width, the paired difference VARIANT − BASELINE with its 95%
# interval, p, and the minimum detectable effect at α = 0.05 (two-sided) and
# 80% power, (t_.975 + t_.8)·SE with SE = diff/t, for the 9 degrees of
# freedom of 10 paired seeds.
stats() {
	"$bin" report "$1" --store "$store" --at "$2" --metric "${5:-eval/acc}" --baseline "$4" --format csv 2>/dev/null |
		awk -F, -v variant="$3" -v baseline="$4" '
			NR == 1 { next }
			$3 == baseline { base = sprintf("%.1f ± %.1f", 100*$7, 100*$11) }
			$3 == variant {
				mine = sprintf("%.1f ± %.1f", 100*$7, 100*$11)
				if ($16 != 9) { print "unexpected degrees of freedom " $16 > "/dev/stderr"; exit 1 }
				se = ($15 == 0) ? 0 : $14 / $15
				diff = sprintf("%+.1f [%+.1f, %+.1f]", 100*$14, 100*($14 - 2.262*se), 100*($14 + 2.262*se))
				p = $17; mde = sprintf("%.1f", 100*3.145*se)
			}
			END { printf "%s\t%s\t%s\t%s\t%s\n", base, mine, diff, p, mde }'
}

# marks EXPERIMENT VARIANT BASELINE: VARIANT against BASELINE at each mark.
marks() {
	echo "| sampled tokens | $3: greedy acc % | $2: greedy acc % | paired Δ (points) [95% CI] | p (paired t) | MDE (points) |"
	echo "| --- | --- | --- | --- | --- | --- |"
	for mark in 0 25000 50000 75000 100000; do
		stats "$1" "tokens:$mark" "$2" "$3" | awk -F'\t' -v m="$mark" '{ printf "| %s | %s | %s | %s | %.3f | %s |\n", m, $1, $2, $3, $4, $5 }'
	done
}

# means EXPERIMENT: every variant's greedy accuracy at every mark.
means() {
	echo "| variant | 0 | 25,000 | 50,000 | 75,000 | 100,000 | steps |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	for v in $variants; do
		printf "| %s" "$v"
		for mark in 0 25000 50000 75000 100000; do
			"$bin" report "$1" --store "$store" --at "tokens:$mark" --metric eval/acc --format csv 2>/dev/null |
				awk -F, -v v="$v" '$3 == v { printf " | %.1f ± %.1f", 100*$7, 100*$11 }'
		done
		printf " | %s |\n" "$(steps "$1" "$v")"
	done
}

# family EXPERIMENT: the comparisons at 100,000 tokens with Holm-adjusted p
# (over the comparisons of this base policy).
family() {
	echo "| comparison | what it tests | paired Δ (points) [95% CI] | p | Holm p | MDE (points) |"
	echo "| --- | --- | --- | --- | --- | --- |"
	while read -r variant baseline what; do
		printf "%s − %s\t%s\t%s\n" "$variant" "$baseline" "$what" "$(stats "$1" tokens:100000 "$variant" "$baseline" | cut -f3-5)"
	done <<<"$comparisons" |
		awk -F'\t' '
			{ line[NR] = $0; p[NR] = $4; order[NR] = NR }
			END {
				m = NR
				for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
					if (p[order[j]] < p[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
				run = 0
				for (i = 1; i <= m; i++) {
					a = (m - i + 1) * p[order[i]]; if (a > 1) a = 1; if (a < run) a = run; run = a
					holm[order[i]] = a
				}
				for (i = 1; i <= m; i++) {
					split(line[i], f, "\t")
					printf "| %s | %s | %s | %.3f | %.3f | %s |\n", f[1], f[2], f[3], f[4], holm[i], f[5]
				}
			}'
}

# steps EXPERIMENT VARIANT: mean optimizer steps of the variant's runs.
steps() {
	"$bin" ls "$1" --store "$store" 2>/dev/null |
		awk -F'│' -v v="$2" '{ gsub(/ /, "", $4); gsub(/ /, "", $7) } $4 == v { s += $7; n++ } END { printf "%.1f", s/n }'
}

# minsteps EXPERIMENT: the fewest optimizer steps of any of its runs.
minsteps() {
	"$bin" ls "$1" --store "$store" 2>/dev/null |
		awk -F'│' 'NF > 8 { gsub(/ /, "", $7) } $7 ~ /^[0-9]+$/ && (m == "" || $7 + 0 < m) { m = $7 + 0 } END { print m }'
}

# updates EXPERIMENT: training reward at equal optimizer updates, every
# variant against flat_grpo.
updates() {
	local n
	n=$(minsteps "$1")
	echo "Training reward (mean over the step's leaves) at step $n, the last step every run reaches (equal optimizer updates; the evaluations are on token marks only):"
	echo
	echo "| variant | reward at step $n % | paired Δ vs flat_grpo (points) [95% CI] | p |"
	echo "| --- | --- | --- | --- |"
	for v in $variants; do
		[ "$v" = flat_grpo ] && continue
		stats "$1" "step:$n" "$v" flat_grpo reward/mean | awk -F'\t' -v v="$v" '{ printf "| %s | %s | %s | %.3f |\n", v, $2, $3, $4 }'
	done
}

# section EXPERIMENT: the tables of one base policy.
section() {
	echo "Greedy accuracy (%) on 200 held-out prompts at each token mark, mean ± 95% t-interval over 10 seeds, and optimizer steps per run:"
	echo
	means "$1"
	echo
	echo "At the end (100,000 sampled tokens), paired over the 10 seeds; Holm's correction over these 12 comparisons:"
	echo
	family "$1"
	echo
	echo "TreeRL's claim at every mark (EPTree + tree advantage against i.i.d. + GRPO):"
	echo
	marks "$1" entropy_tree_tree flat_grpo
	echo
	updates "$1"
}

"$bin" plot treerl_headline --store "$store" --metric eval/acc --x tokens --out results/treerl_headline_base0.png 2>/dev/null
"$bin" plot treerl_headline_seed4 --store "$store" --metric eval/acc --x tokens --out results/treerl_headline_base4.png 2>/dev/null

{
	echo "# TreeRL's training claim on \`long_add\`: tables (earlier design, exploratory)"
	echo
	echo "**Exploratory.** The earlier design of this claim: dynamic sampling on (\`train.filter_groups: true\`, the default then, undisclosed), its base policies and comparisons chosen along the way, not recorded before the runs. [treerl_training.md](treerl_training.md) is its regeneration with the design fixed before the runs (\`experiments/configs/treerl_training.yaml\`)."
	echo
	echo "Written by \`results/treerl_headline.sh\` from the store (commit $(git rev-parse --short HEAD), $(go env GOOS)/$(go env GOARCH), $(nproc) cores, $(date -u +%Y-%m-%d)); the reading of these tables is in [treerl.md](treerl.md)."
	echo "Config: [\`experiments/configs/treerl_headline.yaml\`](../experiments/configs/treerl_headline.yaml); 10 seeds a variant,"
	echo "100,000 sampled tokens a run (never exceeded), greedy accuracy on 200 held-out prompts at each token mark; mean ± 95% t-interval over seeds."
	echo "MDE: the smallest difference the comparison detects at α = 0.05 (two-sided) with 80% power, from its paired standard error."
	echo
	echo "## Base policy 1 (pretraining seed 0, the base policy of Fig. 1)"
	echo
	echo '`rollout run experiments/configs/treerl_headline.yaml`'
	echo
	section treerl_headline
	echo
	echo "![greedy accuracy against sampled tokens, base policy 1](treerl_headline_base0.png)"
	echo
	echo "## Base policy 2 (pretraining seed 4)"
	echo
	echo '`rollout run experiments/configs/treerl_headline.yaml --set pretrain.seed=4 --set name=treerl_headline_seed4`'
	echo
	section treerl_headline_seed4
	echo
	echo "![greedy accuracy against sampled tokens, base policy 2](treerl_headline_base4.png)"
} >"$out"
echo "wrote $out"
