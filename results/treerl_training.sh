#!/usr/bin/env bash
# Regenerates results/treerl_training.md: TreeRL's training claim on
# long_add as its 2×2 design ({i.i.d., EPTree with entropy forks} × {GRPO,
# tree advantage}, experiments/configs/treerl_training.yaml), on the base
# policies the config's rule picks, 10 seeds each, dynamic sampling off.
#
#   results/treerl_training.sh [STORE [CACHE]]     (default: treerl.db, $ROLLOUT_CACHE)
#   results/treerl_training.sh STORE CACHE report   (only write the report)
#
# 1. The base-policy rule (stated in the config before any run): pretrain
#    at pretraining seeds 0, 1, 2, … in order, two at a time, and keep the
#    first four whose greedy accuracy (as `rollout pretrain` prints it, 200
#    held-out prompts) lies in [20%, 60%].
# 2. Run the design on each of them (resuming what the store holds):
#    4 × 4 variants × 10 seeds = 160 runs of 100,000 sampled tokens.
# 3. Write the report: `rollout verdict` of the four experiments (each one's
#    design record, settings, checks with Holm over the primary family,
#    planned and achieved MDE, and the checks pooled across the base
#    policies with random effects), and the accuracy tables of each.
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:-treerl.db}
cache=${2:-${ROLLOUT_CACHE:-}}
only=${3:-}
bin=$(mktemp -d)/rollout
go build -o "$bin" ./cmd/rollout
cfg=experiments/configs/treerl_training.yaml
out=results/treerl_training.md
cacheflag=()
[ -n "$cache" ] && cacheflag=(--cache "$cache")

# accuracy SEED: the base policy's greedy accuracy in % as rollout pretrain
# prints it (pretraining it, or reading it from the cache).
accuracy() {
	"$bin" pretrain "$cfg" --set pretrain.seed="$1" "${cacheflag[@]}" 2>/dev/null |
		sed -n 's/.*eval greedy accuracy \([0-9.]*\)%.*/\1/p'
}

# inband ACC: whether ACC (%) lies in [20, 60].
inband() { awk -v a="$1" 'BEGIN { exit !(a >= 20 && a <= 60) }'; }

# The rule: seeds in order, two pretrainings at a time, until four are in
# the band. tried holds "seed accuracy" lines, bases the chosen seeds.
tried=() bases=()
seed=0
while [ "${#bases[@]}" -lt 4 ]; do
	a=$(mktemp) b=$(mktemp)
	accuracy "$seed" >"$a" &
	accuracy $((seed + 1)) >"$b" &
	wait
	for s in "$seed" $((seed + 1)); do
		f=$a
		[ "$s" != "$seed" ] && f=$b
		acc=$(cat "$f")
		[ -n "$acc" ] || { echo "pretraining seed $s printed no accuracy" >&2; exit 1; }
		[ "${#bases[@]}" -lt 4 ] || break
		tried+=("$s $acc")
		inband "$acc" && bases+=("$s")
	done
	rm -f "$a" "$b"
	seed=$((seed + 2))
	[ "$seed" -lt 64 ] || { echo "fewer than four base policies in the band among seeds 0–63" >&2; exit 1; }
done
printf 'pretraining seed %s: %s%%\n' ${tried[@]} >&2
echo "base policies: ${bases[*]}" >&2

experiments=()
for s in "${bases[@]}"; do
	experiments+=("treerl_training_base$s")
	[ "$only" = report ] && continue
	"$bin" run "$cfg" --set pretrain.seed="$s" --set name="treerl_training_base$s" \
		--store "$store" --workers 2 "${cacheflag[@]}" >/dev/null
done
