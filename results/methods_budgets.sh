#!/usr/bin/env bash
# Regenerates results/methods_budgets.md and its plot: Tree-GRPO against
# flat sampling at three per-prompt budgets on countdown_search, under the
# design declared in experiments/configs/methods_budgets.yaml (experiment
# methods_budgets), committed before its pilot and its runs. With
# -e methods_budgets_others it regenerates the companion report
# results/methods_budgets_others.md instead (EPTree, ARPO and pivot
# resampling against flat at budgets 4 and 8, experiment
# methods_budgets_others, no pilot; results/methods_budgets_others.sh
# calls it so).
#
#   results/methods_budgets.sh [-e EXPERIMENT] STORE [PILOT_STORE [CACHE]]          run (resuming), then write
#   results/methods_budgets.sh [-e EXPERIMENT] STORE [PILOT_STORE [CACHE]] report   only write the report
#
# STORE holds the experiment's runs; PILOT_STORE the pilot rollout plan ran
# (methods_budgets_pilot), whose plan the report quotes (empty: no pilot
# section); CACHE is the base-policy cache (default $ROLLOUT_CACHE).
#
# The report: `rollout verdict` (design record, disclosed settings, the
# declared checks with Holm over the primary family, planned and achieved
# MDE, the verdict), the pilot's plan (`rollout plan`), the per-budget
# estimates of each method against flat side by side (`rollout report`
# against each budget's flat variant), what the groups cost against their
# budget (every group record of every run, `rollout export --what
# groups`), and a plot. Every number in it is read from the stores.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/awk_ranges.sh
exp=methods_budgets
if [ "${1:-}" = -e ]; then
	exp=${2:?usage: results/methods_budgets.sh [-e EXPERIMENT] STORE [PILOT_STORE [CACHE]] [report]}
	shift 2
fi
store=${1:?usage: results/methods_budgets.sh [-e EXPERIMENT] STORE [PILOT_STORE [CACHE]] [report]}
pilot=${2:-}
cache=${3:-${ROLLOUT_CACHE:-}}
only=${4:-}
bin=$(mktemp -d)/rollout
go build -o "$bin" ./cmd/rollout
cfg=experiments/configs/$exp.yaml
out=results/$exp.md
png=${exp}_reward_tokens.png
# Per experiment: its variants (the config's order), budgets, the methods
# compared with flat (variant METHOD_bK against flat_bK) and their names.
case $exp in
methods_budgets)
	variants="flat_b4 tree_grpo_b4 flat_b8 tree_grpo_b8 flat_b16 tree_grpo_b16"
	budgets="4 8 16"
	methods="tree_grpo"
	;;
methods_budgets_others)
	variants="flat_b4 eptree_b4 arpo_b4 pivot_b4 flat_b8 eptree_b8 arpo_b8 pivot_b8"
	budgets="4 8"
	methods="eptree arpo pivot"
	;;
*)
	echo "results/methods_budgets.sh: unknown experiment $exp (methods_budgets or methods_budgets_others)" >&2
	exit 2
	;;
esac
label() {
	case $1 in
	tree_grpo) echo Tree-GRPO ;;
	eptree) echo EPTree ;;
	arpo) echo ARPO ;;
	pivot) echo pivot ;;
	*) echo "$1" ;;
	esac
}
nvariants=$(wc -w <<<"$variants")
cacheflag=()
[ -n "$cache" ] && cacheflag=(--cache "$cache")

if [ "$only" != report ]; then
	nice -n 5 "$bin" run "$cfg" --interleave --store "$store" --workers 1 "${cacheflag[@]}" >&2
fi

# edge METRIC: per budget and method, flat's and the method's mean at the
# end of the runs (95% t-interval over seeds) and their difference paired
# by seed, with its t-test (uncorrected) and the per-seed differences, read
# from `rollout report --format json` against that budget's flat variant.
edge() {
	local m=$1 k meth
	echo "| budget (responses a prompt) | method | flat | method | Δ method − flat (paired) | t (df) | p (uncorrected) | Δ per seed |"
	echo "| --- | --- | --- | --- | --: | --- | --: | --- |"
	for k in $budgets; do
		for meth in $methods; do
		"$bin" report "$exp" --store "$store" --at final --metric "$m" --baseline "flat_b$k" --format json |
			jq -r --arg k "$k" --arg meth "$meth" --arg name "$(label "$meth")" '
			def f: . * 1000 | round / 1000 | tostring;
			def iv: "\(.mean | f) [\(.ci_lo | f), \(.ci_hi | f)] (n = \(.n))";
			(.variants[] | select(.variant == "flat_b" + $k) | .metrics[0]) as $a |
			(.variants[] | select(.variant == $meth + "_b" + $k) | .metrics[0]) as $b |
			[$a.seeds, $a.values] | transpose | map({key: (.[0] | tostring), value: .[1]}) | from_entries | . as $av |
			"| \($k) | \($name) | \($a | iv) | \($b | iv) | \($b.test.diff | (if . >= 0 then "+" else "" end) + f) | \($b.test.t * 100 | round / 100) (\($b.test.df)) | \($b.test.p * 1000 | round / 1000) | \([$b.seeds, $b.values] | transpose | map("\(.[0]): \((.[1] - $av[.[0] | tostring]) | f)") | join(", ")) |"'
		done
	done
}

# moved: the base policy's pass@1 (step 0, mean over seeds) and the range
# of the variants' means at the end of the runs.
moved() {
	local base end
	base=$("$bin" report "$exp" --store "$store" --at step:0 --metric eval/pass@1 --format json | jq '[.variants[].metrics[0].mean] | add / length')
	end=$("$bin" report "$exp" --store "$store" --at final --metric eval/pass@1 --format json | jq -r '[.variants[].metrics[0].mean] | "\(min * 1000 | round / 1000)–\(max * 1000 | round / 1000)"')
	printf 'pass@1 %.3f for the base policy, %s for the %d variants at the end (means over seeds)' "$base" "$end" "$nvariants"
}

# groups: every group record of every run, per variant: the groups, their
# per-prompt limit, the tokens they generated (mean and largest), the
# largest share of the limit any group used, the groups over their limit
# (must be 0), leaves, skipped branches (not started: the budget left could
# not cover their longest length) and missing forks (a response with too
# few steps to expand) per group.
groups() {
	"$bin" export "$exp" --store "$store" --what groups --format jsonl |
		jq -r '[.variant, .budget.limit, .budget.generated_tokens, (.leaves | length), .budget.skipped_branches, .missing_forks] | @tsv' |
		awk -F'\t' -v variants="$variants" '
	BEGIN { nv = split(variants, order, " ") }
	{
		v = $1; n[v]++; gen[v] += $3; lv[v] += $4; sk[v] += $5; mf[v] += $6
		if (!(v in lim)) lim[v] = $2; else if (lim[v] != $2) lim[v] = lim[v] "/" $2
		if ($3 > mx[v]) mx[v] = $3
		if ($2 > 0 && $3 / $2 > share[v]) share[v] = $3 / $2
		if ($2 > 0 && $3 > $2) over[v]++
	}
	END {
		print "| variant | groups | limit (tokens) | tokens a group, mean | largest | largest share of the limit | groups over the limit | leaves a group | skipped branches a group | missing forks a group |"
		print "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |"
		for (k = 1; k <= nv; k++) {
			v = order[k]
			if (!n[v]) continue
			printf "| %s | %d | %s | %.1f | %d | %.3f | %d | %.2f | %.3f | %.3f |\n", v, n[v], lim[v], gen[v] / n[v], mx[v], share[v], over[v] + 0, lv[v] / n[v], sk[v] / n[v], mf[v] / n[v]
		}
	}'
}

# runs: per variant, over seeds, the steps (updates) each run took and the
# tokens it sampled (min–max).
runs() {
	"$bin" export "$exp" --store "$store" --what metrics --format csv | awk -F, -v variants="$variants" "$ranges_awk"'
	BEGIN { nv = split(variants, order, " ") }
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		v = $col["variant"]; r = $col["run"]; runv[r] = v
		if (!(r in last) || $col["step"] + 0 > last[r] + 0) { last[r] = $col["step"]; tok[r] = $col["budget/tokens_cum"] }
	}
	END {
		print "| variant | runs | steps (updates) | tokens sampled |"
		print "| --- | --: | --- | --- |"
		for (k = 1; k <= nv; k++) {
			v = order[k]; s1 = s2 = t1 = t2 = ""; c = 0
			for (r in runv) if (runv[r] == v) { c++; s1 = lo(s1, last[r]); s2 = hi(s2, last[r]); t1 = lo(t1, tok[r]); t2 = hi(t2, tok[r]) }
			printf "| %s | %d | %s | %s |\n", v, c, range(s1, s2), range(t1, t2)
		}
	}'
}

"$bin" plot "$exp" --store "$store" --metric reward/mean --x tokens --out "results/$png" >/dev/null

{
	if [ "$exp" = methods_budgets ]; then
		echo "# Methods at equal budget across budgets: Tree-GRPO against flat sampling on countdown_search"
		echo
		echo "Written by \`results/methods_budgets.sh\` from the stores (commit $(git rev-parse --short HEAD), $(go env GOOS)/$(go env GOARCH), $(nproc) cores, one-minute load average $(cut -d' ' -f1 /proc/loadavg) when written, $(date -u +%Y-%m-%d)). Config: [\`experiments/configs/methods_budgets.yaml\`](../experiments/configs/methods_budgets.yaml), experiment \`$exp\`, whose design (declared checks, base policy, budgets, seeds, settings) was committed before its pilot and its runs; its comments say why each choice was made and what was changed, before any run, from the design's first version."
		echo
		echo "Does the tree's edge over flat sampling shrink as the per-prompt budget grows, as Tree-GRPO (Ji et al., ICLR 2026) reports? At per-prompt budgets of 4, 8 and 16 maximal responses (\`rollout.budget\` 260, 520 and 1040 tokens: a response is at most 65 tokens with EOS), flat group sampling (n = 4, 8, 16 responses, GRPO advantages) against Tree-GRPO's step tree (\`tree_grpo\`: M = 2, 4, 8 trees, N = 2 random steps of each expanded once, L = 1 round: up to 1.5× the leaves at about the same expected tokens, fewer when the budget skips a branch or a response has too few steps to expand, as counted below; its intra- plus inter-tree advantage). The same PPO-clip loop, 8 prompts a step, learning rate 1e-4, from one base policy (the countdown_search test bed's: [branching_tasks.md](branching_tasks.md)), until each run has sampled 30,000 tokens (\`train.total_tokens\`, never exceeded): at a smaller budget a run takes more, smaller steps over more prompts. **Dynamic sampling is off** (\`train.filter_groups: false\`): every sampled group is trained on, in every variant. Held-out evaluation at the start (step 0, the base policy) and at the end of each run, on 300 eval prompts drawn from the run's seed (shared by the variants of a seed): unbiased pass@1 over 4 samples at temperature 1 (the primary metric) and greedy accuracy. EPTree, ARPO and DEEP-GRPO's pivot resampling, in the design's first version, were dropped for compute before any run (the config says why)."
		if [ -f results/methods_budgets_others.md ]; then
			echo
			echo "The companion report [methods_budgets_others.md](methods_budgets_others.md) compares the three methods dropped here, EPTree, ARPO and pivot resampling, with flat sampling at per-prompt budgets of 4 and 8 responses, in its own experiment (its own flat arm and seeds)."
		fi
	else
		echo "# Methods at equal budget across budgets: EPTree, ARPO and pivot resampling against flat sampling on countdown_search"
		echo
		echo "Written by \`results/methods_budgets_others.sh\` (which runs \`results/methods_budgets.sh -e $exp\`) from the store (commit $(git rev-parse --short HEAD), $(go env GOOS)/$(go env GOARCH), $(nproc) cores, one-minute load average $(cut -d' ' -f1 /proc/loadavg) when written, $(date -u +%Y-%m-%d)). Config: [\`$cfg\`](../$cfg), experiment \`$exp\`, whose design (declared checks, base policy, budgets, seeds, settings) was committed before its runs; its comments say why each choice was made."
		echo
		echo "The companion of [methods_budgets.md](methods_budgets.md), which compared Tree-GRPO with flat sampling at per-prompt budgets of 4, 8 and 16 responses and dropped the issue's other three methods for compute: here EPTree, ARPO and DEEP-GRPO's pivot resampling are each compared with flat sampling at equal per-prompt budget, so that all five methods of the issue have a comparison with flat at equal budget. This experiment has its own flat arm and its own seeds (101–103): no run of methods_budgets is reused, and a comparison across the two reports is not paired. At per-prompt budgets of 4 and 8 maximal responses (\`rollout.budget\` 260 and 520 tokens: a response is at most 65 tokens with EOS; **budget 16 was dropped for compute before any run**, the config says why), with shapes the design chose for about equal expected cost (what their groups actually cost, which differs between methods, is measured in the last section: equal tokens a run does not mean equal tokens a group): flat group sampling (n = k responses, GRPO advantages); EPTree (\`entropy_tree\`: M = k/2 chains, N = 1 fork point at the highest-entropy token, L = 1 round, T = 2 branches; tree advantage); ARPO (\`arpo\`: n = k/2 starting responses branching by entropy rise up to m = 3k/2 responses; GRPO advantages); pivot resampling (\`pivot\`: n = k/2 responses, K = 4 continuations from one deep pivot of each failed one; GRPO advantages). The same PPO-clip loop, 8 prompts a step, learning rate 1e-4, from one base policy (the countdown_search test bed's: [branching_tasks.md](branching_tasks.md)), until each run has sampled 30,000 tokens (\`train.total_tokens\`, never exceeded). **Dynamic sampling is off** (\`train.filter_groups: false\`): every sampled group is trained on, in every variant. Held-out evaluation at the start (step 0, the base policy) and at the end of each run, on 300 eval prompts drawn from the run's seed (shared by the variants of a seed): unbiased pass@1 over 4 samples at temperature 1 (the primary metric) and greedy accuracy. **There is no pilot**: the seeds (3) were fixed in advance by compute, not by a pilot, and each check's planned MDE uses the σ_d that methods_budgets' pilot measured for Tree-GRPO against flat at the same budget (a borrowed figure; the config says which)."
	fi
	echo
	echo "## Verdict, design record, settings and checks"
	echo
	echo "\`rollout verdict $exp\`:"
	echo
	"$bin" verdict "$exp" --store "$store" | sed 's/^#/##/'
	echo
	if [ -n "$pilot" ]; then
		echo "Reading the checks: a claim \"higher\" holds when its interval (after Holm's correction, in the primary family) lies above 0; its margin, the smallest effect of interest (5 points), decides only \"does not hold\" (the interval wholly below it). The planned MDE comes from the pilot's σ_d (3 seeds, 2 degrees of freedom); the achieved MDE from these runs."
	else
		echo "Reading the checks: a claim \"higher\" holds when its interval (after Holm's correction, in the primary family) lies above 0; its margin, the smallest effect of interest (5 points), decides only \"does not hold\" (the interval wholly below it). There was no pilot: the planned MDE comes from the σ_d declared as each check's pilot_sd, borrowed from methods_budgets' pilot (Tree-GRPO against flat at the same budget, 3 seeds, 2 degrees of freedom), so it is only a rough guide; the achieved MDE, from these runs, is the figure to read."
	fi
	echo
	if [ -n "$pilot" ]; then
		echo "## The pilot"
		echo
		echo "\`rollout plan $cfg --pilot 3\` ran the design's variants on the 3 seeds after the design's cap of 1–5 (seeds 6–8) as the experiment \`${exp}_pilot\` (a store of its own), before any run of the experiment; the seeds and the pilot SDs in the config come from it. Its plan, as \`rollout plan\` prints it from the pilot's store against the config as committed (the configured seeds):"
		echo
		echo '```'
		"$bin" plan "$cfg" --store "$pilot" | sed "s# in $pilot # in $(basename "$pilot") #"
		echo '```'
		echo
	fi
	echo "## The edge at each budget, side by side"
	echo
	if [ "$exp" = methods_budgets ]; then
		echo "The shrinking-edge reading: per budget, flat's and Tree-GRPO's held-out metric at the end of the runs (mean over seeds and its 95% t-interval), and Tree-GRPO minus flat paired by seed with its t-test, uncorrected (\`rollout report $exp --at final --baseline flat_bK --format json\`); the intervals of the declared checks, Holm-corrected in the primary family, are in the verdict above. No test of the trend is declared: with these seeds only a very large one could be detected, so the three estimates are read side by side."
	else
		echo "Per budget and method, flat's and the method's held-out metric at the end of the runs (mean over seeds and its 95% t-interval), and the method minus flat paired by seed with its t-test, uncorrected (\`rollout report $exp --at final --baseline flat_bK --format json\`); the intervals of the declared checks, Holm-corrected over the six, are in the verdict above."
	fi
	echo
	echo "Held-out pass@1 (the primary metric):"
	echo
	edge eval/pass@1
	echo
	echo "Greedy accuracy (secondary):"
	echo
	edge eval/acc
	echo
	echo "The base policy on the same prompts (the evaluation at step 0, before any update; every variant of a seed evaluates the same policy on the same prompts):"
	echo
	"$bin" report "$exp" --store "$store" --at step:0 --metric eval/pass@1 --metric eval/acc --format markdown
	echo
	echo "How far training moved the policies, beside the edges above: $(moved)."
	echo
	echo "## Training reward"
	echo
	echo "![mean training reward against cumulative sampled tokens]($png)"
	echo
	echo "The training reward is the mean reward of a step's leaves: a tree's leaves share prefixes and are not independent samples of the policy, so the curves of flat and the tree methods are not comparable as accuracies; they show the training signal over each run (the held-out evaluations above are the comparison)."
	echo
	echo "## No group exceeded its budget"
	echo
	echo "Every group record of every run (\`rollout export $exp --what groups\`: the group's limit, the tokens it generated, counted exactly with a shared prefix once, its leaves, and the branches the budget skipped), per variant. \"groups over the limit\" counts the groups whose generated tokens exceed their per-prompt limit: it must be 0, and \"largest share of the limit\" is the most any group used. A skipped branch is a branch the strategy chose but did not start, because the budget left could not cover its longest possible length (the budget reserves a path's worst case until it ends); a missing fork is an expansion a tree could not make (its responses had too few steps before the answer)."
	echo
	groups
	echo
	echo "Steps (optimizer updates) and sampled tokens of the runs (min–max over seeds):"
	echo
	runs
	echo
	echo "## How it was made"
	echo
	echo '```sh'
	if [ "$exp" = methods_budgets ]; then
		echo "ROLLOUT_CACHE=CACHE rollout plan $cfg --pilot 3 --store PILOT.db --workers 1   # before the runs"
		echo "nice -n 5 rollout run $cfg --interleave --store STORE.db --workers 1 --cache CACHE"
		echo "results/methods_budgets.sh STORE.db PILOT.db CACHE report                            # this file and its plot"
	else
		echo "nice -n 5 rollout run $cfg --interleave --store STORE.db --workers 1 --cache CACHE"
		echo "results/methods_budgets_others.sh STORE.db CACHE report   # this file and its plot"
	fi
	echo '```'
	echo
	echo "The runs, as \`rollout ls $exp\` lists them (start of the first and of the last run; each run's wall time is in the store): $("$bin" ls "$exp" --store "$store" | awk -F'│' 'NF > 9 && $10 ~ /[0-9]-/ { gsub(/^ +| +$/, "", $10); if (first == "" || $10 < first) first = $10; if ($10 > last) last = $10; n++ } END { printf "%d runs, started %s to %s UTC", n, first, last }'). They ran on a shared 2-core machine at low priority (nice 5, one run at a time) beside other jobs; the store records the load average at the start and end of each run. Results are bit-reproducible on the same build whatever the number of workers; wall times follow the machine's load and decide nothing here."
} >"$out"
echo "wrote $out" >&2
