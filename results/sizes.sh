#!/usr/bin/env bash
# Regenerates results/sizes.md and its plots (results/sizes/): the same
# claim at three model sizes. Do entropy forks pass more prompts than
# random forks, on the base policies of countdown_search at the tiny,
# small and medium sizes, and does the gap grow or shrink with size?
#
#   results/sizes.sh size tiny|small|medium [CACHE [REV]]   measure one size: results/sizes/SIZE.md, its plots and SIZE_outcomes.csv
#   results/sizes.sh report                                 write results/sizes.md from what the sizes wrote
#   results/sizes.sh all [CACHE]                            the three sizes, then the report
#
# CACHE is the base-policy cache (default $ROLLOUT_CACHE); a size whose
# base policy is not cached is pretrained first (rollout pretrain CONFIG
# does it on its own, with a progress bar). REV, if given, is a git
# revision whose version of the size's config is measured (the size file
# names it), for a config committed on another branch. Every number in the
# report is printed by rollout (pretrain, passrate, passrate trend, model
# init) or by /usr/bin/time, except the arithmetic this script does on
# them, each piece named where it is done: Holm's correction over the three
# sizes, the MDEs from the printed intervals, the verdicts' comparisons.
#
# Version 2 (THE DESIGN, v2, below) replaces version 1 (577d4dd). Version
# 1 measured medium on a base policy at a floor (3.0% greedy accuracy: its
# pretraining, the recipe small had, did not teach it the task), and set
# the trend side by side without an interval because passrate wrote no
# per-prompt outcomes. Version 2 measures medium again on a base policy
# re-pretrained with a new recipe, chosen before this measurement, and
# tests the trend from per-prompt outcomes (rollout passrate --out now
# writes SIZE_outcomes.csv; rollout passrate trend compares them). Tiny
# and small are measured again only to write their outcomes: same
# configs, base policies, prompts and seeds, so their printed numbers are
# version 1's. Version 1's medium file stays as results/sizes/medium_v1.md
# (its plots medium_v1_*.png) and its row stays in the report as history.
#
# THE DESIGN, v2, declared before the new medium measurement (this header,
# the variables below and the report's text; committed before the first
# `results/sizes.sh size` run of version 2). Version 1's design (the
# primary and secondary checks) is kept word for word but for medium's
# base policy; the trend check is new.
#
# - Base policies: countdown_search's at three sizes, each the cached base
#   policy of its config: tiny (experiments/configs/countdown_search.yaml,
#   2500 pretraining steps, not retrained), small
#   (countdown_search_small.yaml, 2000 steps of 16 demonstrations at step
#   size 1e-3, pretraining seed 0) and medium (countdown_search_medium.yaml
#   at its new recipe: warm-up, cosine decay, a lower step size and a
#   flush of subnormal numbers, the values in the config; committed after
#   this design, before its measurement). Small and medium no longer share
#   a recipe: a difference between them mixes size and recipe. Every size
#   is reported whatever its base policy scores: the issue's band of
#   20-60% greedy accuracy is reported per size, not used to drop one.
# - Measurement: rollout passrate, without training, on the first $prompts
#   eval prompts at sampling seed 2 (new prompts and streams: fork_rules'
#   Fig. 1, which showed the tiny effect, used seed 1), the same prompts at
#   every size: K = 16 i.i.d. samples a prompt (points n = 1, 2, 4, 8, 16)
#   and one tree a prompt at the shape 2,1,1,3 (fork_rules' training shape:
#   2 responses, each forked once into 3 continuations, 8 leaves) under the
#   fork scores random and entropy. The default segment tree (16,2,8) is
#   measured too, as rollout passrate always does; no check reads it.
#   Passrate writes each prompt's outcome under each method to
#   results/sizes/SIZE_outcomes.csv.
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
# - Secondary checks of the trend, two, uncorrected (new in v2): does the
#   entropy - random gap change with size? For medium and for small, the
#   gap at that size minus the gap at tiny, paired over the same 400
#   prompts (every size reads the same prompts at seed 2), with its 95%
#   paired percentile bootstrap interval: rollout passrate trend on the
#   sizes' outcomes files, 2000 resamples of bootstrap seed 2 (passrate's
#   own at --seed 2, so each size's gap and interval repeat the ones
#   passrate printed). The claim: the gap differs between the size and
#   tiny. Holds when the interval excludes 0 (the gap grows, if the
#   interval lies above 0, or shrinks, if below); does not hold when the
#   interval lies wholly inside -5 to +5 points (any change is smaller than
#   the margin, 5 points, the primary checks'); inconclusive otherwise; not
#   measured when the size or tiny has no outcomes file. Small - tiny is
#   not blind: tiny and small are measured again with the same seeds and
#   version 1 printed both gaps (a difference of -0.2 points), so only its
#   interval is new; medium - tiny is a new measurement.
# - History: version 1's medium (results/sizes/medium_v1.md) stays in the
#   report with its checks as version 1 read them; it enters no check of
#   version 2.
# - Also per size: the base policy's greedy accuracy on 200 held-out prompts
#   (rollout pretrain), the mean entropy a position before the answer and
#   pass@1 (passrate's i.i.d. samples), the tokens each method spent.
# - What it can detect (planned from fork_rules' Fig. 1 on tiny, 400
#   prompts at seed 1: the entropy - random interval's half-width 4.25
#   points, the entropy tree - i.i.d. one 4.0 points; a half-width scales
#   as 1/sqrt(prompts)): MDE = (z(1 - 0.05/6) + z(0.8)) / 1.96 x half-width
#   for the primary checks (Holm's first step, alpha/3: conservative) and
#   (z(0.975) + z(0.8)) / 1.96 x half-width for the secondary ones. At
#   400 prompts: 7.0 points (primary) and 5.7 points (secondary). The
#   trend's change is a difference of two gaps on the same prompts: its
#   half-width is at most sqrt(2) x 4.25 = 6.0 points when the two gaps are
#   uncorrelated over prompts (less when they correlate), so its MDE is at
#   most 8.6 points; with a half-width near 6 its interval cannot lie
#   inside -5 to +5, so "does not hold" needs gaps that correlate across
#   sizes. The report's "What the design could detect" also gives the
#   achieved MDEs from each printed interval.
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
#   size's CPU time as /usr/bin/time measured it. (Version 1 measured 19,
#   63 and 366 CPU-s; version 2 costs the same again.)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: results/sizes.sh size tiny|small|medium [CACHE [REV]] | report | all [CACHE]}
shift

prompts=400
seed=2
flags="--prompts $prompts --k 16 --iid-n 1,2,4,8,16 --shape 2,1,1,3 --score random,entropy --seed $seed --batch 256"
margin=5 # points: the checks' effect of interest
trendflags=(--a 'entropy(2,1,1,3)' --b 'random(2,1,1,3)' --seed "$seed" --resamples 2000)
trendtext="--a 'entropy(2,1,1,3)' --b 'random(2,1,1,3)' --seed $seed --resamples 2000"
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


# measure SIZE [CACHE [REV]]: the size's base policy (rollout pretrain),
# its parameters (rollout model init), rollout passrate with its CPU time,
# written to results/sizes/SIZE.md (the passrate plots and
# SIZE_outcomes.csv beside it); with REV, the config as of that revision.
measure() {
	local size=$1 cache=${2:-${ROLLOUT_CACHE:-}} rev=${3:-} cfg run tmp timing cacheflag=() at=""
	cfg=$(config "$size")
	[ -n "$cache" ] && cacheflag=(--cache "$cache")
	mkdir -p "$dir"
	tmp=$(mktemp -d)
	run=$cfg
	if [ -n "$rev" ]; then
		run=$tmp/$(basename "$cfg")
		git show "$rev:$cfg" >"$run"
		at=" as of commit $(git log -1 --format='%h, %cI' "$rev" -- "$cfg")"
	fi
	# Version 1's medium config (its last commit, 951dfb2) would measure
	# version 1's cached base policy again: refused.
	if [ "$size" = medium ] && [ "$(git hash-object "$run")" = "$(git rev-parse 951dfb2:"$cfg")" ]; then
		echo "medium: $cfg${rev:+ at $rev} is version 1's config (951dfb2): give REV, the commit of the new recipe" >&2
		rm -rf "$tmp"
		return 2
	fi
	timing=()
	[ -x /usr/bin/time ] && timing=(/usr/bin/time -f "%U %S %e %M" -o "$tmp/time")
	{
		echo "Base policy: \`rollout pretrain $cfg\`$at:"
		echo
		echo '```'
		"$bin" pretrain "$run" "${cacheflag[@]}" | sed -E 's#base policy [^:]*:#base policy:#'
		echo '```'
		echo
		echo "Parameters: \`rollout model init --size $size\`: $("$bin" model init --size "$size" --out "$tmp/init" | sed -E 's/^wrote [^:]*: //')."
		echo
		"${timing[@]}" nice -n 5 "$bin" passrate "$run" $flags --out "$dir/$size" "${cacheflag[@]}" >"$tmp/passrate.md"
		local cpu=""
		[ -s "$tmp/time" ] && cpu=$(awk '{ printf "; /usr/bin/time: %.0f CPU-s (user + sys), %.0f s wall, peak RSS %.0f MB", $1 + $2, $3, $4 / 1024 }' "$tmp/time")
		echo "Command: \`rollout passrate $cfg $flags --out $dir/$size\` (${at:+the config$at; }build of commit $commit, $(date -u +%Y-%m-%d), one-minute load average $(cut -d' ' -f1 /proc/loadavg) at the end on $(nproc) cores$cpu)"
		echo
		cat "$tmp/passrate.md"
	} >"$dir/$size.md.tmp"
	mv "$dir/$size.md.tmp" "$dir/$size.md"
	rm -f "$dir/${size}_leafacc.png" # leaf accuracy is in the table
	rm -rf "$tmp"
	echo "wrote $dir/$size.md, $dir/${size}_outcomes.csv and its plots" >&2
}

# summary TREND: from the sizes' files and TREND (the output of rollout
# passrate trend on their outcomes), the per-size table, the checks (Holm
# over the three sizes), the trend and version 1's medium. Arithmetic done
# here: Holm's adjusted p, the MDEs from the intervals' half-widths, the
# verdicts' comparisons; every other number is copied from rollout's
# output.
summary() {
	awk -v sizes="$sizes" -v margin="$margin" -v dir="$dir" -v prompts="$prompts" -v trendf="$1" -v hist="medium_v1" '
	function iv(s, a) { gsub(/\[|\]|,/, " ", s); return split(s, a, " ") }
	function trim(s) { gsub(/^ +| +$/, "", s); return s }
	function verdict1(s, hp) {
		if (hp < 0.05 && dest[s] > 0) return "**holds**"
		if (dhi[s] < margin) return "**does not hold**"
		return "inconclusive"
	}
	# primary S HP LABEL: the primary check'"'"'s row of size S (Holm-adjusted p HP).
	function primary(s, hp, label) {
		if (!(s in dest)) { printf "| entropy forks − random forks, PassRate higher | primary | %s | not measured | | | | %.3g | | not measured |\n", label, hp; return }
		printf "| entropy forks − random forks, PassRate higher (Δ tokens/prompt %s) | primary | %s | %s | [%s, %s] | %s / %s | %.3g | %.3g | %.1f | %s |\n", dtok[s], label, dest[s], dlo[s], dhi[s], onlyE[s], onlyR[s], p[s], hp, zp * (dhi[s] - dlo[s]) / 2, verdict1(s, hp)
	}
	# secondary S LABEL: the secondary check'"'"'s row of size S.
	function secondary(s, label) {
		if (!(s in epass)) { printf "| entropy tree − i.i.d. at the same tokens, PassRate higher | secondary | %s | not measured | | | | | | not measured |\n", label; return }
		if (!(s in vest)) { printf "| entropy tree − i.i.d. at the same tokens, PassRate higher | secondary | %s | %s | | | | | | *not testable here* (the tree spends more than K i.i.d. samples) |\n", label, vi[s]; return }
		v = "inconclusive"
		if (vlo[s] > 0) v = "**holds**"
		else if (vhi[s] < margin) v = "**does not hold**"
		printf "| entropy tree (%s tokens/prompt, PassRate %s%%) − i.i.d. at the same tokens (%s%%), PassRate higher | secondary | %s | %s | [%s, %s] | | | | %.1f | %s |\n", etok[s], epass[s], iidat[s], label, vest[s], vlo[s], vhi[s], zs * (vhi[s] - vlo[s]) / 2, v
	}
	BEGIN {
		ns = split(sizes, order, " ")
		nf = split(sizes " " hist, files, " ")
		for (k = 1; k <= nf; k++) {
			s = files[k]; f = dir "/" s ".md"; have[s] = 0
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
					gap[s] = trim(c[4])
					iv(c[4], a); dest[s] = a[1]; dlo[s] = a[2]; dhi[s] = a[3]
					dtok[s] = trim(c[5]); onlyE[s] = trim(c[6]); onlyR[s] = trim(c[7]); p[s] = trim(c[8]) + 0
				}
			}
			close(f)
			if (!(s in p)) p[s] = 1
		}
		# The trend: rollout passrate trend'"'"'s rows, one a size.
		while (trendf != "" && (getline line < trendf) > 0) {
			n = split(line, c, "|")
			if (n < 7 || trim(c[2]) !~ /_outcomes\.csv$/) continue
			s = trim(c[2]); sub(/.*\//, "", s); sub(/_outcomes\.csv$/, "", s)
			tgap[s] = trim(c[5])
			if (iv(c[6], a) == 3) { cest[s] = a[1]; clo[s] = a[2]; chi[s] = a[3] }
		}
		# Holm over the three sizes: sort p ascending, adjusted p_(i) =
		# max over j <= i of min(1, (m - j + 1) p_(j)). Version 1'"'"'s
		# medium: the same over its three sizes (version 1'"'"'s tiny and
		# small are the ones measured again here).
		for (k = 1; k <= ns; k++) idx[k] = order[k]
		for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) if (p[idx[j]] < p[idx[i]]) { t = idx[i]; idx[i] = idx[j]; idx[j] = t }
		run = 0
		for (i = 1; i <= ns; i++) { v = (ns - i + 1) * p[idx[i]]; if (v > 1) v = 1; if (v > run) run = v; holm[idx[i]] = run }
		for (k = 1; k <= ns; k++) { idx[k] = order[k]; pv[order[k]] = p[order[k]] }
		pv["medium"] = p[hist]
		for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) if (pv[idx[j]] < pv[idx[i]]) { t = idx[i]; idx[i] = idx[j]; idx[j] = t }
		run = 0
		for (i = 1; i <= ns; i++) { v = (ns - i + 1) * pv[idx[i]]; if (v > 1) v = 1; if (v > run) run = v; if (idx[i] == "medium") holm[hist] = run }
		zp = (2.394 + 0.8416) / 1.96; zs = (1.96 + 0.8416) / 1.96

		print "| size | parameters | greedy accuracy (200 prompts) | in the 20–60% band | entropy before the answer (nats a position) | pass@1 (i.i.d.) | PassRate i.i.d. n=16 | PassRate random forks | PassRate entropy forks | tokens/prompt: i.i.d. n=16, random, entropy | CPU-s of the measurement |"
		print "| --- | --: | --: | --- | --: | --: | --: | --: | --: | --- | --: |"
		for (k = 1; k <= nf; k++) {
			s = files[k]
			label = (s == hist) ? "medium, version 1 (history)" : s
			if (!have[s]) { printf "| %s | not measured | | | | | | | | | |\n", label; continue }
			band = (greedy[s] + 0 >= 20 && greedy[s] + 0 <= 60) ? "yes" : "no"
			printf "| %s | %s | %s%% | %s | %s | %s%% | %s%% | %s%% | %s%% | %s, %s, %s | %s |\n", label, params[s], greedy[s], band, ent[s], pass1[s], pass16[s], rpass[s], epass[s], tok16[s], rtok[s], etok[s], (s in cpu) ? cpu[s] : "—"
		}
		print ""
		print "### The checks"
		print ""
		print "| check | family | size | difference (points) | 95% interval | prompts only entropy / only the other passes | exact McNemar p | Holm-adjusted p | achieved MDE (points) | verdict |"
		print "| --- | --- | --- | --: | --- | --- | --: | --: | --: | --- |"
		for (k = 1; k <= ns; k++) { s = order[k]; primary(s, holm[s], s); if (s in dest) verdict[s] = verdict1(s, holm[s]) }
		for (k = 1; k <= ns; k++) secondary(order[k], order[k])
		print ""
		print "### The trend (secondary checks, declared in version 2)"
		print ""
		print "The entropy − random gap at small and at medium minus the gap at tiny, paired over the same " prompts " prompts (`rollout passrate trend`, below). The claim: the gap differs from tiny'"'"'s; holds when the 95% interval excludes 0 (the gap grows or shrinks), does not hold when it lies wholly inside −" margin " to +" margin " points, inconclusive otherwise."
		print ""
		print "| check | family | size | gap at the size (points) | gap at tiny (points) | change: size − tiny (points) | 95% paired interval | achieved MDE (points) | verdict |"
		print "| --- | --- | --- | --- | --- | --: | --- | --: | --- |"
		for (k = 1; k <= ns; k++) {
			s = order[k]
			if (s == "tiny") continue
			if (!(s in cest)) { printf "| the entropy − random gap differs from tiny'"'"'s | secondary | %s | not measured | | | | | not measured |\n", s; tv[s] = "not measured"; continue }
			v = "inconclusive"
			if (clo[s] > 0) v = "**holds**: the gap grows"
			else if (chi[s] < 0) v = "**holds**: the gap shrinks"
			else if (clo[s] > -margin && chi[s] < margin) v = "**does not hold**"
			tv[s] = v
			printf "| the entropy − random gap differs from tiny'"'"'s | secondary | %s | %s | %s | %s | [%s, %s] | %.1f | %s |\n", s, tgap[s], tgap["tiny"], cest[s], clo[s], chi[s], zs * (chi[s] - clo[s]) / 2, v
		}
		same = ""; sep = ""
		for (k = 1; k <= ns; k++) { s = order[k]; if ((s in tgap) && (s in gap)) { same = same sep s " " ((tgap[s] == gap[s]) ? "yes" : "**no** (" tgap[s] " against " gap[s] ")"); sep = ", " } }
		if (same != "") { print ""; print "Each size'"'"'s gap as `rollout passrate trend` computed it from the outcomes file, the same as the one `rollout passrate` printed for the size: " same "." }
		print ""
		# Not part of the design: written after version 1'"'"'s measurements,
		# before version 2'"'"'s medium; a reading aid (no verdict depends on it).
		line = "Read with the base policies (written after version 1'"'"'s measurements; it changes no verdict): the sizes differ in how well their pretraining taught them the task, not only in size. Greedy accuracy, the random-fork tree'"'"'s PassRate and the prompts on which the two rules disagree (the only ones McNemar'"'"'s test reads), by size:"
		sep = " "
		for (k = 1; k <= nf; k++) { s = files[k]; if (s in dest) { line = line sep ((s == hist) ? "medium (version 1)" : s) " " greedy[s] "%, " rpass[s] "%, " (onlyE[s] + onlyR[s]) " of the prompts"; sep = "; " } }
		print line ". Where a base policy passes few prompts under either rule, few prompts are discordant and the gap is held near zero by the floor: a gap that shrinks there says as much about that base policy'"'"'s pretraining as about its size."
		print ""
		printf "Verdicts of the primary check by size:"
		sep = " "
		for (k = 1; k <= ns; k++) { s = order[k]; printf "%s%s %s", sep, s, (s in verdict) ? verdict[s] : "not measured"; sep = "; " }
		printf ". Of the trend:"
		sep = " "
		for (k = 1; k <= ns; k++) { s = order[k]; if (s != "tiny") { printf "%s%s − tiny %s", sep, s, (s in tv) ? tv[s] : "not measured"; sep = "; " } }
		print "."
		print ""
		print "### History: medium in version 1"
		print ""
		if (!have[hist]) { print "Not found: results/sizes/" hist ".md."; exit }
		print "Version 1 measured medium on a base policy pretrained with small'"'"'s recipe (2000 steps of 16 demonstrations, step size 1e-3): it stayed at a floor, " greedy[hist] "% greedy accuracy, " rpass[hist] "% of the prompts passed by the random-fork tree, " (onlyE[hist] + onlyR[hist]) " discordant prompts. Its checks, as version 1 read them (Holm over version 1'"'"'s three sizes, whose tiny and small are the ones above), stay on record; they enter no check of version 2. Version 2 re-pretrained medium with a new recipe, chosen before the new measurement ([sizes/medium_v1.md](sizes/medium_v1.md) has version 1'"'"'s full output):"
		print ""
		print "| check | family | size | difference (points) | 95% interval | prompts only entropy / only the other passes | exact McNemar p | Holm-adjusted p | achieved MDE (points) | verdict |"
		print "| --- | --- | --- | --: | --- | --- | --: | --: | --: | --- |"
		primary(hist, holm[hist], "medium, version 1")
		secondary(hist, "medium, version 1")
	}'
}

# planned MDE at the design's prompts, from fork_rules' Fig. 1 (400
# prompts): half-widths 4.25 (entropy - random) and 4.0 (tree - i.i.d.)
# points scaled by sqrt(400 / prompts); the trend's change at most
# sqrt(2) x 4.25 scaled likewise.
planned() {
	awk -v n="$prompts" 'BEGIN {
		s = sqrt(400 / n)
		printf "%.1f points for the primary checks, %.1f for the secondary ones and at most %.1f for the trend", (2.394 + 0.8416) / 1.96 * 4.25 * s, (1.96 + 0.8416) / 1.96 * 4.0 * s, (1.96 + 0.8416) / 1.96 * sqrt(2) * 4.25 * s
	}'
}

# trend_files: the sizes' outcomes files that exist, tiny's first (none
# when tiny has none or no other size has one).
trend_files() {
	local s files=()
	for s in $sizes; do
		[ -f "$dir/${s}_outcomes.csv" ] && files+=("$dir/${s}_outcomes.csv")
	done
	[ ${#files[@]} -ge 2 ] && [ "${files[0]}" = "$dir/tiny_outcomes.csv" ] && echo "${files[@]}"
	return 0
}

# trend: rollout passrate trend on trend_files (nothing without them).
trend() {
	local files
	files=$(trend_files)
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086 # the file names have no spaces
	"$bin" passrate trend $files "${trendflags[@]}"
}

report() {
	local tmp
	tmp=$(mktemp -d)
	trend >"$tmp/trend.md"
	{
		echo "# The same claim at three sizes: entropy forks on countdown_search"
		echo
		echo "Written by \`results/sizes.sh\` from what \`results/sizes.sh size SIZE\` measured (results/sizes/SIZE.md and SIZE_outcomes.csv; report of commit $(git rev-parse --short HEAD), $(go env GOOS)/$(go env GOARCH), $(nproc) cores, $(date -u +%Y-%m-%d), one-minute load average $(cut -d' ' -f1 /proc/loadavg)). This is version 2 of the report. The design below is the script's header, version 2's committed (commit $(git log --reverse --format='%h, %cI' -S'THE DESIGN, v2, declared' -- results/sizes.sh | head -1)) before its first measurement, version 1's (commit $(git log --diff-filter=A --format='%h, %cI' -- results/sizes.sh)) before version 1's; every number is printed by rollout or /usr/bin/time, but for the arithmetic the script names (Holm's correction, the MDEs, the verdicts' comparisons)."
		echo
		echo "Does an effect that sampling shows on the tiny policy hold at larger sizes, and does it grow or shrink? The claim: forking a tree at its highest-entropy token (TreeRL's EPTree) finds more correct answers than forking at a random position. [fork_rules](fork_rules.md)' Fig. 1 saw it on tiny (+9.8 points of PassRate, exact McNemar p 2e-5, on 400 prompts at seed 1), with entropy trees spending more tokens than random ones. Here the same measurement, without training, on the base policies of countdown_search (countdown over 3 numbers written as a depth-first search; [branching_tasks](branching_tasks.md)) at three sizes: tiny (dim 128, 4 layers), small (dim 256, 6 layers) and medium (dim 512, 8 layers)."
		echo
		echo "**What changed from version 1, and why.** Version 1 measured medium on a base policy pretrained with small's recipe, which left it at a floor (3.0% greedy accuracy; few prompts passed under either fork rule, so its gap could not show much either way), and it could not test the trend: \`rollout passrate\` wrote no per-prompt outcomes. Version 2 re-pretrains medium with a new recipe (warm-up, cosine decay, a lower step size, a flush of subnormal numbers; the values in its config), chosen before the new measurement, measures it again, and tests the change of the gap with size from the per-prompt outcomes passrate now writes (\`--out\` writes SIZE_outcomes.csv; \`rollout passrate trend\` compares the files). Tiny and small were measured again only for their outcomes, with the same configs, base policies, prompts and seeds: their printed numbers are version 1's. Version 1's medium row stays below as history."
		echo
		echo "## Design (declared before the measurements)"
		echo
		echo "- **Base policies.** Each size's cached base policy of its config: tiny [\`countdown_search.yaml\`](../experiments/configs/countdown_search.yaml) (2500 pretraining steps of 16 demonstrations; the base policy the other countdown_search reports use, not retrained), small [\`countdown_search_small.yaml\`](../experiments/configs/countdown_search_small.yaml) (2000 steps of 16 demonstrations, step size 1e-3, pretraining seed 0) and medium [\`countdown_search_medium.yaml\`](../experiments/configs/countdown_search_medium.yaml) (version 2: the new recipe, committed after this design and before the measurement; medium's section names the config's commit). The sizes differ in size and in recipe: tiny in 500 more pretraining steps, medium in its recipe. Every size is reported whatever its base policy scores; the issue's band of 20–60% greedy accuracy is reported, not used to drop a size."
		echo "- **Measurement.** \`rollout passrate\` on the first $prompts eval prompts at sampling seed $seed (fork_rules' Fig. 1 used seed 1: new prompts and streams, so tiny's check replicates rather than re-reads it), the same prompts at every size: 16 i.i.d. samples a prompt, and one tree a prompt at the shape 2,1,1,3 (2 responses, each forked once into 3 continuations: 8 leaves) with random and with entropy forks. The default segment tree (16,2,8) is measured as passrate always does; no check reads it. Each prompt's outcome under each method is in results/sizes/SIZE_outcomes.csv."
		echo "- **Primary checks** (one per size, Holm's correction over the three; a size not measured would count as p = 1): entropy forks against random forks at the same shape, PassRate higher, paired over prompts. Holds when the exact McNemar p, Holm-adjusted, is below 0.05 and the difference positive; does not hold when the 95% paired bootstrap interval lies wholly below the margin of $margin points (half of tiny's +9.8 in fork_rules); inconclusive otherwise. An entropy tree of this shape spends more tokens than a random one (Δ tokens/prompt below), so the next check compares at equal tokens."
		echo "- **Secondary checks** (one per size, uncorrected): the entropy tree against i.i.d. sampling at the tree's own tokens per prompt (passrate's paired Δ PassRate), PassRate higher; holds when the interval lies above 0, does not hold when it lies wholly below $margin points, inconclusive otherwise."
		echo "- **Trend** (secondary, two checks, uncorrected; new in version 2): the entropy − random gap at medium minus the gap at tiny, and at small minus at tiny, paired over the same $prompts prompts, with a 95% percentile bootstrap interval (\`rollout passrate trend\`, 2000 resamples of bootstrap seed $seed, passrate's own: each size's gap repeats the interval passrate printed). The claim: the gap at the size differs from tiny's. Holds when the interval excludes 0 (the gap grows, or shrinks); does not hold when it lies wholly inside −$margin to +$margin points; inconclusive otherwise. Small − tiny is not blind: version 1 printed both gaps (a difference of −0.2 points) and the reruns repeat them, so only its interval is new; medium − tiny is a new measurement."
		echo "- **Cost.** $prompts prompts were chosen from an estimate made before any measurement (no probe): about 870 sampled tokens a prompt at tiny's response lengths, tiny's cost from fork_rules' Fig. 1, medium's about 25 times a token's (results/cost_model.md's decode fit), so that the three measurements and the small base policy's pretraining fit the session's compute; each size's CPU time is in the table."
		echo
		echo "## Results"
		echo
		summary "$tmp/trend.md"
		echo
		if [ -s "$tmp/trend.md" ]; then
			echo "\`rollout passrate trend\` on the sizes' outcomes (\`rollout passrate trend $(trend_files) $trendtext\`):"
			echo
			cat "$tmp/trend.md"
		else
			echo "\`rollout passrate trend\` not run: tiny and at least one other size need an outcomes file."
		fi
		echo
		echo "## What the design could detect"
		echo
		echo "Planned before the measurements, from fork_rules' Fig. 1 on tiny (400 prompts; interval half-widths 4.25 points for entropy − random and 4.0 for the entropy tree − i.i.d., scaled by √(400 / $prompts)): an MDE (80% power) of $(planned). MDE = (z₀.₉₉₁₇ + z₀.₈) / 1.96 × the interval's half-width for the primary checks (α/3: Holm's first step, conservative for the others) and (z₀.₉₇₅ + z₀.₈) / 1.96 × half-width for the secondary ones; the achieved MDE in the checks table uses each size's printed interval. The trend's change is a difference of two gaps on the same prompts: its interval's half-width is at most √2 × 4.25 = 6.0 points (at 400 prompts) when the two gaps are uncorrelated over prompts, less when they correlate; at a half-width near 6 its interval cannot lie inside −$margin to +$margin, so \"does not hold\" needs gaps that correlate across sizes. A difference smaller than its MDE is one the design could not have been expected to find."
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
		echo "## medium, version 1 (history)"
		echo
		echo "Version 1's medium measurement ([sizes/medium_v1.md](sizes/medium_v1.md), on the base policy of small's recipe; version 1's design):"
		echo
		if [ -f "$dir/medium_v1.md" ]; then cat "$dir/medium_v1.md"; else echo "Not found: $dir/medium_v1.md."; fi
		echo
		echo "![PassRate against tokens, medium version 1](sizes/medium_v1_passrate.png)"
		echo
		echo "![Entropy by position, medium version 1](sizes/medium_v1_entropy.png)"
		echo
		echo "## How it was made"
		echo
		echo '```sh'
		echo "nice -n 5 rollout pretrain experiments/configs/countdown_search_small.yaml --cache CACHE   # the small base policy (medium's likewise)"
		echo "results/sizes.sh size tiny CACHE; results/sizes.sh size small CACHE; results/sizes.sh size medium CACHE [REV]"
		echo "results/sizes.sh report                                                              # this file (it runs rollout passrate trend)"
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
size | all | report)
	bin=$(mktemp -d)/rollout
	commit=$(git rev-parse --short HEAD)
	go build -o "$bin" ./cmd/rollout
	;;
esac
case $mode in
size) measure "${1:?usage: results/sizes.sh size tiny|small|medium [CACHE [REV]]}" "${2:-}" "${3:-}" ;;
report) report ;;
all)
	for s in $sizes; do measure "$s" "${1:-}"; done
	report
	;;
*) echo "usage: results/sizes.sh size tiny|small|medium [CACHE [REV]] | report | all [CACHE]" >&2 && exit 2 ;;
esac; exit
