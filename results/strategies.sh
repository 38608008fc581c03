#!/usr/bin/env bash
# Regenerates results/strategies.md and its plots: the rollout-strategy
# comparison on 3-digit addition under the design declared in
# experiments/configs/strategies.yaml (experiment strategies_confirm),
# committed before its pilot and its runs.
#
#   results/strategies.sh STORE [PILOT_STORE [CACHE]]          run (resuming), then write
#   results/strategies.sh STORE [PILOT_STORE [CACHE]] report   only write the report
#
# STORE holds the experiment's runs; PILOT_STORE the pilot rollout plan ran
# (strategies_confirm_pilot), whose plan the report quotes; CACHE is the
# base-policy cache (default $ROLLOUT_CACHE).
#
# The report: `rollout verdict` (design record, disclosed settings, the
# declared checks with Holm over the primary family, planned and achieved
# MDE, the verdict), the pilot's plan (`rollout plan`), steps and tokens at
# each evaluation, `rollout report` tables at equal sampled tokens and at
# equal updates, and the plots. Every number in it is read from the stores.
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:?usage: results/strategies.sh STORE [PILOT_STORE [CACHE]] [report]}
pilot=${2:-}
cache=${3:-${ROLLOUT_CACHE:-}}
only=${4:-}
bin=$(mktemp -d)/rollout
go build -o "$bin" ./cmd/rollout
cfg=experiments/configs/strategies.yaml
exp=strategies_confirm
out=results/strategies.md
variants="flat eptree_entropy random_tree segment_tree" # the config's order
. results/strategy_tables.sh

"$bin" plot "$exp" --store "$store" --metric eval/pass@1 --x tokens --out results/strategies_eval_pass1.png >/dev/null
"$bin" plot "$exp" --store "$store" --metric eval/pass@1 --x step --out results/strategies_eval_pass1_step.png >/dev/null
"$bin" plot "$exp" --store "$store" --metric eval/pass@1 --x tokens --kind diff --out results/strategies_eval_pass1_diff.png >/dev/null
"$bin" plot "$exp" --store "$store" --metric eval/acc --x tokens --out results/strategies_eval_acc.png >/dev/null

{
	echo "# Rollout strategies at an equal token budget: 3-digit addition"
	echo
	echo "Written by \`results/strategies.sh\` from the store (commit $(git rev-parse --short HEAD), $(go env GOOS)/$(go env GOARCH), $(nproc) cores, $(date -u +%Y-%m-%d)). Config: [\`experiments/configs/strategies.yaml\`](../experiments/configs/strategies.yaml), experiment \`$exp\`, whose design (declared checks, base policy, seeds, settings) was committed before its pilot and its runs; its comments say why each choice was made."
	echo
	echo "Flat group sampling (8 independent responses a prompt, GRPO advantages) against TreeRL's entropy-guided tree (EPTree, M=2, N=1, L=1, T=3: each tree forks once at its highest-entropy token into 3 continuations, 8 leaves; TreeRL's process-supervised \`tree\` advantage), its random-fork ablation (the same tree and advantage, forks at random positions) and a segment tree (TreePO-like, S=4, B=2, W=8: every live path splits in two every 4 tokens up to 8 leaves; \`tree\` advantage). The same PPO-clip loop, 8 prompts a step, until each run has sampled 30,000 tokens (\`train.total_tokens\`, never exceeded), from one pretrained base policy; dynamic sampling off, so every sampled group is trained on. Evaluations at the token marks 0, 15,000 and 30,000 (equal sampled tokens) and every 30 steps (equal optimizer updates): greedy accuracy and unbiased pass@1 over 4 samples at temperature 1 on 500 eval prompts drawn from the run's seed (shared by the variants of a seed)."
	echo
	echo "## What changed from the earlier version"
	echo
	echo "The earlier version (experiment \`strategies\`, the report at commit 238abb1) was exploratory: its comparisons were chosen and read after the runs, with no declared checks and no correction in its verdict; 6 variants on seeds 1–5; dynamic sampling on (\`train.filter_groups: true\`, the default, not disclosed), so \"equal sampled tokens\" counted groups that were sampled and not trained on; greedy accuracy, pass@4 and maj@4 on 200 eval prompts; evaluations only at token marks, so its equal-updates view compared evaluations made after different numbers of updates. It found every tree ahead of flat in mean at equal tokens, no difference surviving Holm's correction, and neither the fork score nor the tree advantage separable. This version:"
	echo
	echo "- declares its checks, their family and the correction before any run, and records the design's hash in the store before the first run (below);"
	echo "- runs on fresh seeds (and so fresh eval prompts), their number set from a 3-seed pilot for 80% power at 3 points (the pilot's plan is below);"
	echo "- turns dynamic sampling off, as TreeRL trained, and prints every setting that changes what the budget or the metric means, from the store;"
	echo "- evaluates 500 prompts (instead of 200) with unbiased pass@1 over 4 samples besides greedy accuracy, and every 30 steps, so that step:30 compares policies after exactly 30 updates;"
	echo "- leaves out two variants for compute: \`eptree_surprisal\` (surprisal forks) and \`eptree_entropy_grpo\` (the estimator control, which TreeRL's 2×2 design on \`long_add\` tests: [treerl.md](treerl.md))."
	echo
	echo "## Verdict, design record, settings and checks"
	echo
	echo "\`rollout verdict $exp\`:"
	echo
	"$bin" verdict "$exp" --store "$store" | sed 's/^#/##/'
	echo
	echo "Reading the checks: a claim \"higher\" holds when its interval (after Holm's correction, in the primary family) lies above 0; its margin, the effect of interest (3 points), decides only \"does not hold\" (the interval wholly below it). So a check can hold with an interval wholly below its margin: a difference established in direction but smaller than the effect the design was planned for. Read each interval beside the margin. The planned MDE comes from the pilot's σ_d (3 seeds, 2 degrees of freedom); the achieved MDE from these runs."
	echo
	if [ -n "$pilot" ]; then
		echo "## The pilot"
		echo
		echo "\`rollout plan experiments/configs/strategies.yaml --pilot 3\` ran the design's variants on the 3 seeds after the design's as the experiment \`${exp}_pilot\` (a store of its own), before any run of the experiment; the seeds and the pilot SDs in the config come from it. Its plan, as \`rollout plan\` prints it from the pilot's store against the config as committed (the configured seeds):"
		echo
		echo '```'
		"$bin" plan "$cfg" --store "$pilot" | sed "s# in $pilot # in $(basename "$pilot") #"
		echo '```'
		echo
	fi
	echo "## Equal tokens means unequal updates"
	echo
	echo "A tree shares each prefix up to its fork, so a step of 8 leaves costs fewer sampled tokens and the same budget buys more optimizer updates, each training every leaf's full sequence. Per variant, over the seeds: each run's steps, sampled tokens and unspent budget at its end (min–max), its training FLOPs at the end (mean), and per step (mean over seeds and steps) the forks, sampled tokens, response length and sampled-token entropy:"
	echo
	budget
	echo
	echo "Steps and sampled tokens at each token mark (min–max over seeds):"
	echo
	marks
	echo
	echo "So at equal tokens a tree's gain mixes better samples with more updates; the evaluation at step 30 compares the policies after the same number of updates (the trees having sampled fewer tokens by then)."
	echo
	echo "## Held-out accuracy at equal sampled tokens"
	echo
	echo "![pass@1 against cumulative sampled tokens](strategies_eval_pass1.png)"
	echo
	echo "![pass@1, each variant minus flat, paired by seed](strategies_eval_pass1_diff.png)"
	echo
	echo "![greedy accuracy against cumulative sampled tokens](strategies_eval_acc.png)"
	echo
	echo "The tables below are exploratory beside the checks above: their p-values are uncorrected paired t-tests against \`flat\`, over every metric and mark."
	echo
	for at in tokens:0 tokens:15000 tokens:30000; do
		echo "At ${at#tokens:} sampled tokens:"
		echo
		table "$at"
		echo
	done
	echo "## At equal optimizer updates"
	echo
	echo "![pass@1 against optimizer steps](strategies_eval_pass1_step.png)"
	echo
	echo "After exactly 30 updates (an evaluation every 30 steps):"
	echo
	table step:30
	echo
	echo "## Against random forking"
	echo
	echo "At 30,000 sampled tokens, against the random-fork tree (exploratory but for the declared check \`entropy_vs_random_forks\`):"
	echo
	table tokens:30000 random_tree
	echo
	echo "## Trees trained packed"
	echo
	echo "Training a tree packed (\`train.tree_packing\`, each shared prefix run forward and backward once; off by default) changes no result beyond float32 rounding. Measured on the earlier design of this report (build d1ba93b, 2026-12-03): its \`eptree_entropy\` and \`segment_tree\` runs at seed 1 (\`rollout run experiments/configs/strategies.yaml --shard 5/20 --set train.tree_packing=true\`, and again with \`=false\`) sampled the same tokens and got the same rewards, losses and evaluations at every step (42 and 79 steps); only the gradient norm and the rollout entropy differed, by at most 4e-7 relative, and the update FLOPs fell by 74% and 67%. The runs above train per leaf (packing off)."
	echo
	echo "## How it was made"
	echo
	echo '```sh'
	echo "ROLLOUT_CACHE=CACHE rollout plan experiments/configs/strategies.yaml --pilot 3 --store PILOT.db   # before the runs"
	echo "nice -n 5 rollout run experiments/configs/strategies.yaml --interleave --store STORE.db --workers 1 --cache CACHE"
	echo "results/strategies.sh STORE.db PILOT.db CACHE report                                        # this file and its plots"
	echo '```'
	echo
	echo "The runs, as \`rollout ls $exp\` lists them (start of the first and of the last run; each run's wall time is in the store): $("$bin" ls "$exp" --store "$store" | awk -F'│' 'NF > 9 && $10 ~ /[0-9]-/ { gsub(/^ +| +$/, "", $10); if (first == "" || $10 < first) first = $10; if ($10 > last) last = $10; n++ } END { printf "%d runs, started %s to %s UTC", n, first, last }'). Results are bit-reproducible on the same build whatever the number of workers; wall times follow the shared machine's load and decide nothing here."
} >"$out"
echo "wrote $out" >&2
