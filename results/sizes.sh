#!/usr/bin/env bash
# Regenerates results/sizes.md and its plots (results/sizes/): the same
# claim at three model sizes. Do entropy forks pass more prompts than
# random forks, on the base policies of countdown_search at the tiny,
# small and medium sizes, and does the gap grow or shrink with size?
#
#   results/sizes.sh size tiny|small|medium [CACHE]   measure one size: results/sizes/SIZE.md and its plots
#   results/sizes.sh report                           write results/sizes.md from what the sizes wrote
#   results/sizes.sh all [CACHE]                      the three sizes, then the report
#
# CACHE is the base-policy cache (default $ROLLOUT_CACHE); a size whose
# base policy is not cached is pretrained first (rollout pretrain CONFIG
# does it on its own, with a progress bar). Every number in the report is
# printed by rollout (pretrain, passrate, model init) or by /usr/bin/time,
# except the arithmetic this script does on them, each piece named where
# it is done: Holm's correction over the three sizes, the MDEs from the
# printed intervals, the differences between sizes.
#
# THE DESIGN, declared before any of its measurements (this header, the
# variables below and the report's text; committed before the first
# `results/sizes.sh size` run):
#
# - Base policies: countdown_search's at three sizes, each the cached base
#   policy of its config: tiny (experiments/configs/countdown_search.yaml,
#   2500 pretraining steps, not retrained), small
#   (countdown_search_small.yaml) and medium (countdown_search_medium.yaml),
#   both 2000 steps of 16 demonstrations at the same step size and
#   pretraining seed. Every size is reported whatever its base policy
#   scores: the issue's band of 20-60% greedy accuracy is reported per size,
#   not used to drop one.
# - Measurement: rollout passrate, without training, on the first $prompts
#   eval prompts at sampling seed 2 (new prompts and streams: fork_rules'
#   Fig. 1, which showed the tiny effect, used seed 1), the same prompts at
#   every size: K = 16 i.i.d. samples a prompt (points n = 1, 2, 4, 8, 16)
#   and one tree a prompt at the shape 2,1,1,3 (fork_rules' training shape:
#   2 responses, each forked once into 3 continuations, 8 leaves) under the
#   fork scores random and entropy. The default segment tree (16,2,8) is
#   measured too, as rollout passrate always does; no check reads it.
# - Primary checks, one per size, Holm over the three (a size not
#   measured counts as p = 1): entropy forks against random forks at the
#   same shape, PassRate higher (paired over prompts). Holds when the
#   exact McNemar p (printed by passrate), Holm-adjusted, is below 0.05 and
#   the difference is positive; does not hold when the 95% paired bootstrap
#   interval of the difference lies wholly below the margin, 5 points (half
#   the +9.8 points fork_rules' Fig. 1 saw on tiny); inconclusive
#   otherwise. The entropy tree spends more tokens than the random one at
#   the same shape: the next check is the one at equal tokens.
# - Secondary checks, one per size, uncorrected: the entropy tree against
#   i.i.d. sampling at the tree's own tokens per prompt (passrate's paired
#   "Δ PassRate" column), PassRate higher; holds when its 95% interval lies
#   above 0, does not hold when it lies wholly below 5 points, inconclusive
#   otherwise; not testable when the tree's tokens lie beyond K samples.
# - Secondary, descriptive: the trend. The entropy - random gap at small
#   and at medium minus the gap at tiny. rollout passrate prints no
#   per-prompt outcomes, so no paired interval of a difference between
#   sizes can be computed from its output: the three intervals are set side
#   by side and the trend is described, not tested.
# - Also per size: the base policy's greedy accuracy on 200 held-out prompts
#   (rollout pretrain), the mean entropy a position before the answer and
#   pass@1 (passrate's i.i.d. samples), the tokens each method spent.
# - What it can detect (planned from fork_rules' Fig. 1 on tiny, 400
#   prompts at seed 1: the entropy - random interval's half-width 4.25
#   points, the entropy tree - i.i.d. one 4.0 points; a half-width scales
#   as 1/sqrt(prompts)): MDE = (z(1 - 0.05/6) + z(0.8)) / 1.96 x half-width
#   for the primary checks (Holm's first step, alpha/3: conservative) and
#   (z(0.975) + z(0.8)) / 1.96 x half-width for the secondary ones. At
#   400 prompts: 7.0 points (primary) and 5.7 points (secondary); the
#   report's "What the design could detect" also gives the achieved MDEs
#   from each size's printed intervals.
# - Cost (why 400 prompts): estimated, not probed, before any measurement.
#   A prompt costs about 16 x 29 (i.i.d.) + 157 (random tree) + 210
#   (entropy tree) + 46 (segment tree) = 870 sampled tokens at tiny's
#   response lengths (fork_rules' Fig. 1). Tiny: that Fig. 1 sampled 1,400
#   tokens a prompt on 400 prompts in about 140 s of wall time at load 20
#   on 2 cores, about 14 CPU-s, so about 10 CPU-s here. Medium: 25 times
#   slower a token (results/cost_model.md's decode fit: about 55 MFLOP a
#   token at 75 GFLOP/s), about 1,100 tokens a CPU-second, so 400 x 870 /
#   1,100 = 320 CPU-s. Small: about 5,000 tokens a CPU-second, 70 CPU-s.
#   With the small base policy's pretraining (2000 steps, about 15-22
#   CPU-minutes), that fits the session's 45 CPU-minutes; 400 prompts also
#   keeps fork_rules' power (the planned MDEs above). The report gives each
#   size's CPU time as /usr/bin/time measured it.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: results/sizes.sh size tiny|small|medium [CACHE] | report | all [CACHE]}
shift

prompts=400
seed=2
flags="--prompts $prompts --k 16 --iid-n 1,2,4,8,16 --shape 2,1,1,3 --score random,entropy --seed $seed --batch 256"
margin=5 # points: the checks' effect of interest
sizes="tiny small medium"
dir=results/sizes
out=results/sizes.md

config() {
	case $1 in
	tiny) echo experiments/configs/countdown_search.yaml ;;
	small) echo experiments/configs/countdown_search_small.yaml ;;
	medium) echo experiments/configs/countdown_search_medium.yaml ;;
	*) echo "unknown size $1: want tiny, small or medium" >&2 && return 1 ;;
	esac
}


# measure SIZE [CACHE]: the size's base policy (rollout pretrain), its
# parameters (rollout model init), rollout passrate with its CPU time,
# written to results/sizes/SIZE.md (the passrate plots beside it).
measure() {
	local size=$1 cache=${2:-${ROLLOUT_CACHE:-}} cfg tmp timing cacheflag=()
	cfg=$(config "$size")
	[ -n "$cache" ] && cacheflag=(--cache "$cache")
	mkdir -p "$dir"
	tmp=$(mktemp -d)
	timing=()
	[ -x /usr/bin/time ] && timing=(/usr/bin/time -f "%U %S %e %M" -o "$tmp/time")
	{
		echo "Base policy: \`rollout pretrain $cfg\`:"
		echo
		echo '```'
		"$bin" pretrain "$cfg" "${cacheflag[@]}" | sed -E 's#base policy [^:]*:#base policy:#'
		echo '```'
		echo
		echo "Parameters: \`rollout model init --size $size\`: $("$bin" model init --size "$size" --out "$tmp/init" | sed -E 's/^wrote [^:]*: //')."
		echo
		"${timing[@]}" nice -n 5 "$bin" passrate "$cfg" $flags --out "$dir/$size" "${cacheflag[@]}" >"$tmp/passrate.md"
		local cpu=""
		[ -s "$tmp/time" ] && cpu=$(awk '{ printf "; /usr/bin/time: %.0f CPU-s (user + sys), %.0f s wall, peak RSS %.0f MB", $1 + $2, $3, $4 / 1024 }' "$tmp/time")
		echo "Command: \`rollout passrate $cfg $flags --out $dir/$size\` (build of commit $commit, $(date -u +%Y-%m-%d), one-minute load average $(cut -d' ' -f1 /proc/loadavg) at the end on $(nproc) cores$cpu)"
		echo
		cat "$tmp/passrate.md"
	} >"$dir/$size.md.tmp"
	mv "$dir/$size.md.tmp" "$dir/$size.md"
	rm -f "$dir/${size}_leafacc.png" # leaf accuracy is in the table
	rm -rf "$tmp"
	echo "wrote $dir/$size.md and its plots" >&2
}

# summary: from the sizes' files, the per-size table, the checks (Holm
# over the three sizes) and the trend. Arithmetic done here: Holm's
# adjusted p, the MDEs from the intervals' half-widths, the differences
# between sizes; every other number is copied from rollout's output.
summary() {
	awk -v sizes="$sizes" -v margin="$margin" -v dir="$dir" '
	function iv(s, a) { gsub(/\[|\]|,/, " ", s); return split(s, a, " ") }
	function trim(s) { gsub(/^ +| +$/, "", s); return s }
	function fmt(x) { return sprintf("%+.1f", x) }
	BEGIN {
		ns = split(sizes, order, " ")
		for (k = 1; k <= ns; k++) {
			s = order[k]; f = dir "/" s ".md"; have[s] = 0
			while ((getline line < f) > 0) {
				have[s] = 1
				if (line ~ /eval greedy accuracy/) { match(line, /accuracy [0-9.]+%/); greedy[s] = substr(line, RSTART + 9, RLENGTH - 10) }
				if (line ~ /^Parameters:/) { match(line, /[0-9]+ parameters/); params[s] = substr(line, RSTART, RLENGTH - 11) }
				if (line ~ /CPU-s/) { match(line, /[0-9]+ CPU-s/); cpu[s] = substr(line, RSTART, RLENGTH - 6) }
				if (line ~ /before the answer/) { match(line, /[0-9.]+ before the answer/); ent[s] = substr(line, RSTART, RLENGTH - 18) }
				n = split(line, c, "|")
				if (n < 8) continue
				m = trim(c[2])
				if (m == "iid(n=1)") { iv(c[5], a); pass1[s] = a[1] }
				if (m == "iid(n=16)") { iv(c[5], a); pass16[s] = a[1]; tok16[s] = trim(c[4]) }
				if (m == "random(2,1,1,3)" && n > 10) { iv(c[5], a); rpass[s] = a[1]; rtok[s] = trim(c[4]) }
				if (m == "entropy(2,1,1,3)" && n > 10) {
					iv(c[5], a); epass[s] = a[1]; etok[s] = trim(c[4])
					vi[s] = trim(c[8]); iidat[s] = trim(c[7])
					if (iv(c[8], a) == 3) { vest[s] = a[1]; vlo[s] = a[2]; vhi[s] = a[3] }
				}
				if (m == "entropy(2,1,1,3)" && trim(c[3]) == "random(2,1,1,3)") {
					iv(c[4], a); dest[s] = a[1]; dlo[s] = a[2]; dhi[s] = a[3]
					dtok[s] = trim(c[5]); onlyE[s] = trim(c[6]); onlyR[s] = trim(c[7]); p[s] = trim(c[8]) + 0
				}
			}
			close(f)
			if (!(s in p)) p[s] = 1
		}
		# Holm over the three sizes: sort p ascending, adjusted p_(i) =
		# max over j <= i of min(1, (m - j + 1) p_(j)).
		for (k = 1; k <= ns; k++) idx[k] = order[k]
		for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) if (p[idx[j]] < p[idx[i]]) { t = idx[i]; idx[i] = idx[j]; idx[j] = t }
		run = 0
		for (i = 1; i <= ns; i++) { v = (ns - i + 1) * p[idx[i]]; if (v > 1) v = 1; if (v > run) run = v; holm[idx[i]] = run }
		zp = (2.394 + 0.8416) / 1.96; zs = (1.96 + 0.8416) / 1.96

		print "| size | parameters | greedy accuracy (200 prompts) | in the 20–60% band | entropy before the answer (nats a position) | pass@1 (i.i.d.) | PassRate i.i.d. n=16 | PassRate random forks | PassRate entropy forks | tokens/prompt: i.i.d. n=16, random, entropy | CPU-s of the measurement |"
		print "| --- | --: | --: | --- | --: | --: | --: | --: | --: | --- | --: |"
		for (k = 1; k <= ns; k++) {
			s = order[k]
			if (!have[s]) { printf "| %s | not measured | | | | | | | | | |\n", s; continue }
			band = (greedy[s] + 0 >= 20 && greedy[s] + 0 <= 60) ? "yes" : "no"
			printf "| %s | %s | %s%% | %s | %s | %s%% | %s%% | %s%% | %s%% | %s, %s, %s | %s |\n", s, params[s], greedy[s], band, ent[s], pass1[s], pass16[s], rpass[s], epass[s], tok16[s], rtok[s], etok[s], (s in cpu) ? cpu[s] : "—"
		}
		print ""
		print "### The checks"
		print ""
		print "| check | family | size | difference (points) | 95% interval | prompts only entropy / only the other passes | exact McNemar p | Holm-adjusted p | achieved MDE (points) | verdict |"
		print "| --- | --- | --- | --: | --- | --- | --: | --: | --: | --- |"
		for (k = 1; k <= ns; k++) {
			s = order[k]
			if (!(s in dest)) { printf "| entropy forks − random forks, PassRate higher | primary | %s | not measured | | | | %.3g | | not measured |\n", s, holm[s]; continue }
			v = "inconclusive"
			if (holm[s] < 0.05 && dest[s] > 0) v = "**holds**"
			else if (dhi[s] < margin) v = "**does not hold**"
			printf "| entropy forks − random forks, PassRate higher (Δ tokens/prompt %s) | primary | %s | %s | [%s, %s] | %s / %s | %.3g | %.3g | %.1f | %s |\n", dtok[s], s, dest[s], dlo[s], dhi[s], onlyE[s], onlyR[s], p[s], holm[s], zp * (dhi[s] - dlo[s]) / 2, v
			verdict[s] = v
		}
		for (k = 1; k <= ns; k++) {
			s = order[k]
			if (!(s in epass)) { printf "| entropy tree − i.i.d. at the same tokens, PassRate higher | secondary | %s | not measured | | | | | | not measured |\n", s; continue }
			if (!(s in vest)) { printf "| entropy tree − i.i.d. at the same tokens, PassRate higher | secondary | %s | %s | | | | | | *not testable here* (the tree spends more than K i.i.d. samples) |\n", s, vi[s]; continue }
			v = "inconclusive"
			if (vlo[s] > 0) v = "**holds**"
			else if (vhi[s] < margin) v = "**does not hold**"
			printf "| entropy tree (%s tokens/prompt, PassRate %s%%) − i.i.d. at the same tokens (%s%%), PassRate higher | secondary | %s | %s | [%s, %s] | | | | %.1f | %s |\n", etok[s], epass[s], iidat[s], s, vest[s], vlo[s], vhi[s], zs * (vhi[s] - vlo[s]) / 2, v
		}
		print ""
		print "### The trend (secondary, descriptive)"
		print ""
		printf "The entropy − random gap in PassRate, with its 95%% paired interval at each size:"
		sep = " "
		for (k = 1; k <= ns; k++) { s = order[k]; if (s in dest) { printf "%s%s %s [%s, %s]", sep, s, dest[s], dlo[s], dhi[s]; sep = "; " } }
		print " points."
		if (("tiny" in dest)) {
			line = "Gap at a size minus the gap at tiny (a difference of the printed estimates, no interval: passrate prints no per-prompt outcomes from which a paired one could be drawn):"
			sep = " "
			for (k = 1; k <= ns; k++) { s = order[k]; if (s != "tiny" && (s in dest)) { line = line sep s " − tiny " fmt(dest[s] - dest["tiny"]) " points"; sep = "; " } }
			print line "."
		}
		print ""
		# Not part of the design: written after the measurements, a reading
		# aid (the verdicts above do not depend on it).
		line = "Read with the base policies (added after the measurements; it changes no verdict): the sizes differ in how well their pretraining taught them the task, not only in size. Greedy accuracy, the random-fork tree'"'"'s PassRate and the prompts on which the two rules disagree (the only ones McNemar'"'"'s test reads), by size:"
		sep = " "
		for (k = 1; k <= ns; k++) { s = order[k]; if (s in dest) { line = line sep s " " greedy[s] "%, " rpass[s] "%, " (onlyE[s] + onlyR[s]) " of the prompts"; sep = "; " } }
		print line ". Where a base policy passes few prompts under either rule, few prompts are discordant and the gap is held near zero by the floor: a gap that shrinks there says as much about that base policy'"'"'s pretraining as about its size."
		print ""
		printf "Verdicts of the primary check by size:"
		sep = " "
		for (k = 1; k <= ns; k++) { s = order[k]; printf "%s%s %s", sep, s, (s in verdict) ? verdict[s] : "not measured"; sep = "; " }
		print "."
	}'
}

# planned MDE at the design's prompts, from fork_rules' Fig. 1 (400
# prompts): half-widths 4.25 (entropy - random) and 4.0 (tree - i.i.d.)
# points scaled by sqrt(400 / prompts).
planned() {
	awk -v n="$prompts" 'BEGIN {
		s = sqrt(400 / n)
		printf "%.1f points for the primary checks and %.1f for the secondary ones", (2.394 + 0.8416) / 1.96 * 4.25 * s, (1.96 + 0.8416) / 1.96 * 4.0 * s
	}'
}

report() {
	{
		echo "# The same claim at three sizes: entropy forks on countdown_search"
		echo
		echo "Written by \`results/sizes.sh\` from what \`results/sizes.sh size SIZE\` measured (results/sizes/SIZE.md; report of commit $(git rev-parse --short HEAD), $(go env GOOS)/$(go env GOARCH), $(nproc) cores, $(date -u +%Y-%m-%d), one-minute load average $(cut -d' ' -f1 /proc/loadavg)). The design below is the script's header, committed (commit $(git log --diff-filter=A --format='%h, %cI' -- results/sizes.sh)) before the first measurement; every number is printed by rollout or /usr/bin/time, but for the arithmetic the script names (Holm's correction, the MDEs, differences between sizes)."
		echo
		echo "Does an effect that sampling shows on the tiny policy hold at larger sizes, and does it grow or shrink? The claim: forking a tree at its highest-entropy token (TreeRL's EPTree) finds more correct answers than forking at a random position. [fork_rules](fork_rules.md)' Fig. 1 saw it on tiny (+9.8 points of PassRate, exact McNemar p 2e-5, on 400 prompts at seed 1), with entropy trees spending more tokens than random ones. Here the same measurement, without training, on the base policies of countdown_search (countdown over 3 numbers written as a depth-first search; [branching_tasks](branching_tasks.md)) at three sizes: tiny (dim 128, 4 layers), small (dim 256, 6 layers) and medium (dim 512, 8 layers)."
		echo
		echo "## Design (declared before the measurements)"
		echo
		echo "- **Base policies.** Each size's cached base policy of its config: tiny [\`countdown_search.yaml\`](../experiments/configs/countdown_search.yaml) (2500 pretraining steps of 16 demonstrations; the base policy the other countdown_search reports use, not retrained), small [\`countdown_search_small.yaml\`](../experiments/configs/countdown_search_small.yaml) and medium [\`countdown_search_medium.yaml\`](../experiments/configs/countdown_search_medium.yaml) (2000 steps of 16 demonstrations each, step size 1e-3, pretraining seed 0). The sizes differ in size and, for tiny, in 500 more pretraining steps. Every size is reported whatever its base policy scores; the issue's band of 20–60% greedy accuracy is reported, not used to drop a size."
		echo "- **Measurement.** \`rollout passrate\` on the first $prompts eval prompts at sampling seed $seed (fork_rules' Fig. 1 used seed 1: new prompts and streams, so tiny's check replicates rather than re-reads it), the same prompts at every size: 16 i.i.d. samples a prompt, and one tree a prompt at the shape 2,1,1,3 (2 responses, each forked once into 3 continuations: 8 leaves) with random and with entropy forks. The default segment tree (16,2,8) is measured as passrate always does; no check reads it."
		echo "- **Primary checks** (one per size, Holm's correction over the three; a size not measured would count as p = 1): entropy forks against random forks at the same shape, PassRate higher, paired over prompts. Holds when the exact McNemar p, Holm-adjusted, is below 0.05 and the difference positive; does not hold when the 95% paired bootstrap interval lies wholly below the margin of $margin points (half of tiny's +9.8 in fork_rules); inconclusive otherwise. An entropy tree of this shape spends more tokens than a random one (Δ tokens/prompt below), so the next check compares at equal tokens."
		echo "- **Secondary checks** (one per size, uncorrected): the entropy tree against i.i.d. sampling at the tree's own tokens per prompt (passrate's paired Δ PassRate), PassRate higher; holds when the interval lies above 0, does not hold when it lies wholly below $margin points, inconclusive otherwise."
		echo "- **Trend** (secondary, descriptive): does the entropy − random gap grow or shrink from tiny to medium? \`rollout passrate\` prints no per-prompt outcomes, so no paired interval of a difference between sizes can be drawn from its output: the three intervals are set side by side and the trend is described, not tested."
		echo "- **Cost.** $prompts prompts were chosen from an estimate made before any measurement (no probe): about 870 sampled tokens a prompt at tiny's response lengths, tiny's cost from fork_rules' Fig. 1, medium's about 25 times a token's (results/cost_model.md's decode fit), so that the three measurements and the small base policy's pretraining fit the session's compute; each size's CPU time is in the table."
		echo
		echo "## Results"
		echo
		summary
		echo
		echo "## What the design could detect"
		echo
		echo "Planned before the measurements, from fork_rules' Fig. 1 on tiny (400 prompts; interval half-widths 4.25 points for entropy − random and 4.0 for the entropy tree − i.i.d., scaled by √(400 / $prompts)): an MDE (80% power) of $(planned). MDE = (z₀.₉₉₁₇ + z₀.₈) / 1.96 × the interval's half-width for the primary checks (α/3: Holm's first step, conservative for the others) and (z₀.₉₇₅ + z₀.₈) / 1.96 × half-width for the secondary ones; the achieved MDE in the checks table uses each size's printed interval. A difference smaller than its MDE is one the design could not have been expected to find; the trend, a difference of differences, needs more prompts than any single check to be detected and is not tested here."
		echo
		for s in $sizes; do
			f=$dir/$s.md
			echo "## $s"
			echo
			if [ ! -f "$f" ]; then
				echo "Not measured: \`results/sizes.sh size $s\` has not been run."
				echo
				continue
			fi
			cat "$f"
			echo
			echo "![PassRate against tokens, $s](sizes/${s}_passrate.png)"
			echo
			echo "![Entropy by position, $s](sizes/${s}_entropy.png)"
			echo
		done
		echo "## How it was made"
		echo
		echo '```sh'
		echo "nice -n 5 rollout pretrain experiments/configs/countdown_search_small.yaml --cache CACHE   # the small base policy (medium's likewise)"
		echo "results/sizes.sh size tiny CACHE; results/sizes.sh size small CACHE; results/sizes.sh size medium CACHE"
		echo "results/sizes.sh report                                                              # this file"
		echo '```'
		echo
		echo "Wall times (passrate's seconds table, /usr/bin/time's wall) follow the load of the shared machine and decide nothing; CPU time is steadier but not immune to it. Results are bit-reproducible on the same build."
	} >"$out.tmp"
	mv "$out.tmp" "$out"
	echo "wrote $out" >&2
}

# A fresh build of this commit measures; the script ends with the case
# below (exit on its line: an edit of the file while a measurement runs
# is never read).
case $mode in
size | all)
	bin=$(mktemp -d)/rollout
	commit=$(git rev-parse --short HEAD)
	go build -o "$bin" ./cmd/rollout
	;;
esac
case $mode in
size) measure "${1:?usage: results/sizes.sh size tiny|small|medium [CACHE]}" "${2:-}" ;;
report) report ;;
all)
	for s in $sizes; do measure "$s" "${1:-}"; done
	report
	;;
*) echo "usage: results/sizes.sh size tiny|small|medium [CACHE] | report | all [CACHE]" >&2 && exit 2 ;;
esac; exit
