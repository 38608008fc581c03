#!/usr/bin/env bash
# What bounds the float32 training step (BenchmarkW3) on this machine: for
# each of W3 tiny and small it runs the benchmark under -cpuprofile, sums
# the profile's flat CPU time in the matrix products (the tiles and their
# drivers in policy/internal/kernel: bc*, nt*, nn*, tn*, attv*, scores*,
# MatMul*; not Dot, whose callers in a training step are RMSNorm's sums of
# squares and the softmax backward, outside the counted FLOPs), and prints
# one markdown table row per size:
#
#   B        the two cores' bound (BenchmarkFLOPBound/avx512/2, GFLOP/s, the
#            best of three runs in each round);
#            P = B/2, a core's share of it;
#   R        the step's GFLOP/s per CPU-second (its counted FLOPs are the
#            products': 3 × the forward pass's, see BenchmarkW3);
#   share    the products' part of the step's CPU time; R/share is then the
#            products' own rate inside the step, set against P;
#   busy     the cores the step kept busy: GFLOP/s / R;
#   cap      the step's GFLOP/s were the products at P and everything else
#            as measured: c / (1/P + (1 − share)/R), with c = 2 (both cores
#            always busy) and with c = busy, as % of B;
#   need     the products' rate, as a % of P, at which the step would reach
#            TARGET (default 0.55) of B with everything else as measured and
#            both cores always busy: 1 / (2/(TARGET·B) − (1 − share)/R);
#            "none" when the rest of the step alone takes longer than that.
#
# Usage, from the repository root (on a quiet machine; note `uptime`):
#   results/bench/w3_ceiling.sh [OUTDIR]
# OUTDIR (default a temporary directory) keeps the test binaries and the
# profiles. ROUNDS (default 1) repeats the measurement, one table row per
# size and round; STEPS_TINY (default 30) and STEPS_SMALL (default 8) set
# -benchtime; TARGET (default 0.55) the share of B asked for.
set -euo pipefail

out=${1:-$(mktemp -d)}
mkdir -p "$out"
target=${TARGET:-0.55}
go test -c -o "$out/kernel.test" ./policy/internal/kernel/
go test -c -o "$out/policy.test" ./policy/

# field NAME UNIT TEXT prints the figure before UNIT on NAME's line of TEXT.
field() {
	awk -v name="$1" -v unit="$2" 'index($1, name) == 1 {for (i = 1; i < NF; i++) if ($(i+1) == unit) print $i}' <<<"$3"
}

echo "| W3 float32, round | B, GFLOP/s | GFLOP/s (% of B) | R, GFLOP/s-cpu | busy cores | products' share of CPU | products' rate (% of P) | cap: products at P, 2 cores / busy cores (% of B) | need for $target of B (% of P) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for round in $(seq 1 "${ROUNDS:-1}"); do
	# The best of three runs: interference (and the first loop of a
	# process, seen slow here) only ever lowers the figure.
	bound=$("$out/kernel.test" -test.run '^$' -test.bench '^BenchmarkFLOPBound$/^avx512$/^2$' -test.benchtime 1s -test.count 3) || {
		printf '%s\n' "$bound" >&2
		exit 1
	}
	b=$(field BenchmarkFLOPBound/avx512/2 GFLOP/s "$bound" | sort -g | tail -1)
	if [[ -z $b ]]; then
		echo "w3_ceiling: BenchmarkFLOPBound/avx512 did not run (no AVX-512 on this CPU?)" >&2
		exit 1
	fi
	for size in tiny small; do
		steps=$([[ $size == tiny ]] && echo "${STEPS_TINY:-30}" || echo "${STEPS_SMALL:-8}")
		prof="$out/$size.$round.prof"
		res=$("$out/policy.test" -test.run '^$' -test.bench "^BenchmarkW3\$/^$size\$" -test.benchtime "${steps}x" -test.cpuprofile "$prof") || {
			printf '%s\n' "$res" >&2
			exit 1
		}
		gflops=$(field BenchmarkW3/"$size" GFLOP/s "$res")
		r=$(field BenchmarkW3/"$size" GFLOP/s-cpu "$res")
		if [[ -z $gflops || -z $r ]]; then
			printf 'w3_ceiling: no GFLOP/s in the output of W3/%s:\n%s\n' "$size" "$res" >&2
			exit 1
		fi
		top=$(go tool pprof -top -nodecount 100000 -nodefraction 0 -edgefraction 0 -unit ms "$out/policy.test" "$prof")
		# Flat milliseconds of every function, then the products' sum.
		awk -v size="$size" -v round="$round" -v g="$gflops" -v r="$r" -v b="$b" -v t="$target" '
			$1 ~ /ms$/ && NF >= 6 {
				ms = $1; sub(/ms$/, "", ms); total += ms
				if ($6 ~ /internal\/kernel\.(bc|nt|nn|tn|attv|scores|MatMul)/) prod += ms
			}
			END {
				if (total == 0 || prod == 0) { print "w3_ceiling: no products in the profile of " size > "/dev/stderr"; exit 1 }
				p = b / 2
				s = prod / total
				busy = g / r
				rest = (1 - s) / r
				cap2 = 2 / (1 / p + rest)
				capb = busy / (1 / p + rest)
				d = 2 / (t * b) - rest
				need = d > 0 ? sprintf("%.0f%%", 100 / d / p) : "none"
				printf "| %s, %d | %.1f | %.1f (%.0f%%) | %.1f | %.2f | %.1f%% | %.1f (%.0f%%) | %.0f (%.0f%%) / %.0f (%.0f%%) | %s |\n", size, round, b, g, 100 * g / b, r, busy, 100 * s, r / s, 100 * r / s / p, cap2, 100 * cap2 / b, capb, 100 * capb / b, need
			}' <<<"$top"
	done
done
