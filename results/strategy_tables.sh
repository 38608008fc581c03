# Sourced (from the repository root) by the strategy reports' generators,
# results/strategies.sh and results/path_strategies.sh, after they set bin
# (a rollout binary), cfg, exp, store, cache, only and variants (the config's
# variant names, in its order): runs the experiment into the store
# (resuming) unless only is "report", and defines the report's tables,
# table, budget and marks, each read from the store.
. results/awk_ranges.sh
metrics=(--metric eval/pass@1 --metric eval/acc --metric eval/pass@k --metric eval/maj@k)
cacheflag=()
[ -n "$cache" ] && cacheflag=(--cache "$cache")

if [ "$only" != report ]; then
	nice -n 5 "$bin" run "$cfg" --interleave --store "$store" --workers 1 "${cacheflag[@]}" >&2
fi

# table AT [BASELINE]: the eval metrics of every variant at AT, paired
# t-tests against BASELINE (default: the config's), uncorrected.
table() {
	local base=()
	[ -n "${2:-}" ] && base=(--baseline "$2")
	"$bin" report "$exp" --store "$store" --at "$1" "${metrics[@]}" "${base[@]}" --format markdown
}

# budget: per variant, over seeds, the steps (updates) each run took, the
# sampled tokens and the budget left unspent at its end, the training FLOPs
# at its end (mean), and per step (mean over seeds and steps) the forks,
# sampled tokens, response length and sampled-token entropy.
budget() {
	"$bin" export "$exp" --store "$store" --what metrics --format csv | awk -F, -v variants="$variants" "$ranges_awk"'
	BEGIN { nv = split(variants, order, " ") }
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		v = $col["variant"]; r = $col["run"]
		if ($col["step"] + 0 > last[r] + 0 || !(r in last)) {
			last[r] = $col["step"]; tok[r] = $col["budget/tokens_cum"]; un[r] = $col["budget/unspent"]; fl[r] = $col["budget/train_flops_cum"]
		}
		runv[r] = v
		if ($col["budget/tokens"] != "" && $col["step"] + 0 > 0) {
			n[v]++; forks[v] += $col["tree/forks"]; tps[v] += $col["budget/tokens"]
			len_[v] += $col["response_length/mean"]; ent[v] += $col["rollout/entropy"]
		}
	}
	END {
		print "| variant | runs | steps (updates) | tokens sampled | budget/unspent | train FLOPs at the end (mean) | forks per step | tokens per step | response length | entropy (nats/token) |"
		print "| --- | --: | --- | --- | --- | --: | --: | --: | --: | --: |"
		for (k = 1; k <= nv; k++) {
			v = order[k]; s1 = s2 = t1 = t2 = u1 = u2 = ""; runs = 0; f = 0
			for (r in runv) if (runv[r] == v) {
				runs++; s1 = lo(s1, last[r]); s2 = hi(s2, last[r]); t1 = lo(t1, tok[r]); t2 = hi(t2, tok[r])
				u1 = lo(u1, un[r]); u2 = hi(u2, un[r]); f += fl[r]
			}
			printf "| %s | %d | %s | %s | %s | %.3g | %.1f | %.0f | %.1f | %.3f |\n", v, runs, range(s1, s2), range(t1, t2), range(u1, u2), f / runs, forks[v] / n[v], tps[v] / n[v], len_[v] / n[v], ent[v] / n[v]
		}
	}'
}

# marks: per variant and evaluation (token marks and step evaluations),
# the steps and sampled tokens of the runs there (min–max over seeds).
marks() {
	"$bin" export "$exp" --store "$store" --what metrics --format csv | awk -F, -v variants="$variants" "$ranges_awk"'
	BEGIN { nv = split(variants, order, " ") }
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$col["eval/acc"] != "" {
		v = $col["variant"]; m = $col["eval/tokens_mark"]
		key = v SUBSEP (m == "" ? "step" : "mark " m)
		if (m != "" && !((m + 0) in mk)) { mk[m + 0] = 1; marks[++nm] = m + 0 }
		s = $col["step"] + 0; t = $col["budget/tokens_cum"] + 0
		if (!(key in s1) || s < s1[key]) s1[key] = s
		if (!(key in s2) || s > s2[key]) s2[key] = s
		if (!(key in t1) || t < t1[key]) t1[key] = t
		if (!(key in t2) || t > t2[key]) t2[key] = t
	}
	END {
		for (i = 1; i <= nm; i++) for (j = i + 1; j <= nm; j++) if (marks[j] < marks[i]) { x = marks[i]; marks[i] = marks[j]; marks[j] = x }
		printf "| variant |"; for (i = 1; i <= nm; i++) printf " mark %d |", marks[i]; print ""
		printf "| --- |"; for (i = 1; i <= nm; i++) printf " --- |"; print ""
		for (k = 1; k <= nv; k++) {
			v = order[k]; printf "| %s |", v
			for (i = 1; i <= nm; i++) { key = v SUBSEP "mark " marks[i]; printf " step %s, %s tok |", range(s1[key], s2[key]), range(t1[key], t2[key]) }
			print ""
		}
	}'
}
