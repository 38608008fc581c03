#!/usr/bin/env bash
# Regenerates results/path_strategies.md and its plots: flat sampling
# against the entropy tree (entropy and surprisal forks) and the random-fork
# tree on the path task, under the design declared in
# experiments/configs/path_strategies.yaml (experiment
# path_strategies_confirm), committed before its pilot and its runs.
#
#   results/path_strategies.sh STORE [PILOT_STORE [CACHE]]          run (resuming), then write
#   results/path_strategies.sh STORE [PILOT_STORE [CACHE]] report   only write the report
#
# STORE holds the experiment's runs; PILOT_STORE the pilot rollout plan ran
# (path_strategies_confirm_pilot), whose plan the report quotes; CACHE is
# the base-policy cache (default $ROLLOUT_CACHE). EXPERIMENT and OUT, when
# set, name another experiment of STORE to read and another file to write
# (its plots beside it): a way to try the generator on the pilot's store.
#
# The report: `rollout verdict` (design record, disclosed settings, the
# declared checks with Holm over the primary family, planned and achieved
# MDE, the verdict), the pilot's plan (`rollout plan`), steps and tokens at
# each evaluation, `rollout report` tables at equal sampled tokens and at
# equal updates, and the plots. Every number in it is read from the stores.
#
# The run, table, budget and marks come from results/strategy_tables.sh,
# shared with results/strategies.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:?usage: results/path_strategies.sh STORE [PILOT_STORE [CACHE]] [report]}
pilot=${2:-}
cache=${3:-${ROLLOUT_CACHE:-}}
only=${4:-}
bin=$(mktemp -d)/rollout
go build -o "$bin" ./cmd/rollout
cfg=experiments/configs/path_strategies.yaml
exp=${EXPERIMENT:-path_strategies_confirm}
out=${OUT:-results/path_strategies.md}
dir=$(dirname "$out")
name=$(basename "$out" .md)
variants="flat eptree_entropy eptree_surprisal random_tree" # the config's order
. results/strategy_tables.sh

# moved METRIC: the base policy's METRIC (step 0, mean over seeds and
# variants) and the range of the variants' means at the end of the runs.
moved() {
	local base end
	base=$("$bin" report "$exp" --store "$store" --at step:0 --metric "$1" --format json | jq '[.variants[].metrics[0].mean] | add / length')
	end=$("$bin" report "$exp" --store "$store" --at final --metric "$1" --format json | jq -r '[.variants[].metrics[0].mean] | "\(min) \(max)"')
	printf '%s %.3f for the base policy, %.3f–%.3f for the four variants at the end' "$1" "$base" $end
}

# seeds EXPERIMENT STORE: the seeds of the experiment's runs, as a range
# when they are consecutive.
seeds() {
	"$bin" ls "$1" --store "$2" | awk -F'│' 'NF > 9 && $5 ~ /[0-9]/ { s = $5 + 0; if (!(s in seen)) { seen[s] = 1; n++ }; if (lo == "" || s < lo) lo = s; if (s > hi) hi = s } END { if (n == hi - lo + 1) printf "%d–%d", lo, hi; else printf "%d seeds between %d and %d", n, lo, hi }'
}

"$bin" plot "$exp" --store "$store" --metric eval/pass@1 --x tokens --out "$dir/${name}_eval_pass1.png" >/dev/null
"$bin" plot "$exp" --store "$store" --metric eval/pass@1 --x step --out "$dir/${name}_eval_pass1_step.png" >/dev/null
"$bin" plot "$exp" --store "$store" --metric eval/pass@1 --x tokens --kind diff --out "$dir/${name}_eval_pass1_diff.png" >/dev/null
"$bin" plot "$exp" --store "$store" --metric eval/acc --x tokens --out "$dir/${name}_eval_acc.png" >/dev/null

pilotname=none
[ -n "$pilot" ] && pilotname=$(basename "$pilot")

{
	echo "# Entropy forking where early choices matter: the path task"
	echo
	echo "Written by \`results/path_strategies.sh\` from the stores: commit $(git rev-parse --short HEAD), $(go env GOOS)/$(go env GOARCH), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load averages $(uptime | sed 's/.*load average: //') (1, 5, 15 min, \`uptime\`) when written, $(date -u '+%Y-%m-%d %H:%M') UTC. Regenerate with \`results/path_strategies.sh STORE PILOT_STORE CACHE report\` (here the stores $(basename "$store") and $pilotname). Config: [\`experiments/configs/path_strategies.yaml\`](../experiments/configs/path_strategies.yaml), experiment \`$exp\`, whose design (declared checks, base policy, seeds, settings) was committed before its pilot and its runs; its comments say why each choice was made."
	echo
	echo "The comparison of [strategies.md](strategies.md) on \`path\`: a graph in the prompt (8 nodes, a route of 3 hops from start to goal) with a dead end next to the start, so the first moves decide success: the setting where forking at uncertain tokens should matter most. Flat group sampling (8 independent responses a prompt, GRPO advantages) against TreeRL's entropy-guided tree (EPTree, M=2, N=1, L=1, T=3: each tree forks once into 3 continuations, 8 leaves; TreeRL's process-supervised \`tree\` advantage) forking at the highest-entropy token (the paper's wording) or at the highest-surprisal token (−log p of the sampled token: TreeRL's released code), and its random-fork ablation (the same tree and advantage, forks at random positions). The same PPO-clip loop, learning rate 2e-4, 8 prompts a step, until each run has sampled 30,000 tokens (\`train.total_tokens\`, never exceeded), from one pretrained base policy; dynamic sampling off, so every sampled group is trained on. Evaluations at the token marks 0, 15,000 and 30,000 (equal sampled tokens) and every 20 steps (equal optimizer updates): greedy accuracy and unbiased pass@1 over 4 samples at temperature 1 (the primary metric) on 500 eval prompts drawn from the run's seed (shared by the variants of a seed)."
	echo
	echo "## What changed from the earlier version"
	echo
	echo "The earlier version (experiment \`path_strategies\`, the report at commit fde2cf5) was exploratory: its comparisons were chosen and read after the runs, with no declared checks and no correction in its verdict; 3 seeds (1–3); dynamic sampling on (\`train.filter_groups: true\`, the default, not disclosed), so \"equal sampled tokens\" counted groups that were sampled and not trained on; greedy accuracy, pass@4 and maj@4 on 200 eval prompts. It found no tree separable from flat, at equal tokens or at equal updates, and entropy forking not ahead of random forking. This version:"
	echo
	echo "- declares its checks, their family and the correction before any run, and records the design's hash in the store before the first run (below);"
	echo "- runs on fresh seeds (and so fresh eval prompts), their number set from a 3-seed pilot (the pilot's plan is below);"
	echo "- turns dynamic sampling off, as TreeRL trained, and prints every setting that changes what the budget or the metric means, from the store;"
	echo "- evaluates 500 prompts (instead of 200) with unbiased pass@1 over 4 samples besides greedy accuracy."
	echo
	echo "## Verdict, design record, settings and checks"
	echo
	echo "\`rollout verdict $exp\`:"
	echo
	"$bin" verdict "$exp" --store "$store" | sed 's/^#/##/'
	echo
	echo "Reading the checks: a claim \"higher\" holds when its interval (after Holm's correction, in the primary family) lies above 0; its margin, the effect of interest (3 points: TreeRL reports 3–7), decides only \"does not hold\" (the interval wholly below it). So a check can hold with an interval wholly below its margin: a difference established in direction but smaller than the effect the design was planned for. Read each interval beside the margin. The planned MDE comes from the pilot's σ_d (3 seeds, 2 degrees of freedom); the achieved MDE from these runs."
	echo
	if [ -n "$pilot" ]; then
		echo "## The pilot"
		echo
		echo "\`rollout plan $cfg --pilot 3\` ran the design's variants on the seeds $(seeds "${exp%_pilot}_pilot" "$pilot"), after the design's cap, as the experiment \`${exp%_pilot}_pilot\` (a store of its own), before any run of the experiment; the seeds and the pilot SDs in the config come from it. Its plan, as \`rollout plan\` prints it from the pilot's store against the config as committed (the configured seeds):"
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
	echo "So at equal tokens a tree's difference from flat mixes its samples with its extra updates; the evaluation at step 60 (the declared check \`entropy_tree_vs_flat_per_update\`) compares the policies after the same number of updates (the trees having sampled fewer tokens by then)."
	echo
	echo "## Held-out accuracy at equal sampled tokens"
	echo
	echo "![pass@1 against cumulative sampled tokens](${name}_eval_pass1.png)"
	echo
	echo "![pass@1, each variant minus flat, paired by seed](${name}_eval_pass1_diff.png)"
	echo
	echo "![greedy accuracy against cumulative sampled tokens](${name}_eval_acc.png)"
	echo
	echo "How far training moved the policies: $(moved eval/pass@1); $(moved eval/acc) (means over seeds)."
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
	echo "![pass@1 against optimizer steps](${name}_eval_pass1_step.png)"
	echo
	echo "After exactly 60 updates (an evaluation every 20 steps):"
	echo
	table step:60
	echo
	echo "## Against random forking"
	echo
	echo "At 30,000 sampled tokens, against the random-fork tree (exploratory but for the declared checks \`entropy_vs_random_forks\` and \`surprisal_vs_random_forks\`):"
	echo
	table tokens:30000 random_tree
	echo
	echo "## How it was made"
	echo
	echo '```sh'
	echo "ROLLOUT_CACHE=CACHE rollout plan $cfg --pilot 3 --workers 1 --store PILOT.db   # before the runs"
	echo "rollout run $cfg --interleave --store STORE.db --workers N --cache CACHE          # the runs (results/path_strategies.sh STORE.db PILOT.db CACHE runs them at --workers 1, nice 5)"
	echo "results/path_strategies.sh STORE.db PILOT.db CACHE report                                # this file and its plots"
	echo '```'
	echo
	echo "The runs, as \`rollout ls $exp\` lists them (start of the first and of the last run; each run's wall time is in the store): $("$bin" ls "$exp" --store "$store" | awk -F'│' 'NF > 9 && $10 ~ /[0-9]-/ { gsub(/^ +| +$/, "", $10); if (first == "" || $10 < first) first = $10; if ($10 > last) last = $10; n++ } END { printf "%d runs, started %s to %s UTC", n, first, last }'). They ran on a shared 2-core machine beside other jobs. Results are bit-reproducible on the same build whatever the number of workers; wall times follow the machine's load and decide nothing here."
} >"$out"
echo "wrote $out" >&2
