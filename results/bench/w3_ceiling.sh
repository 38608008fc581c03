#!/usr/bin/env bash
# What bounds the float32 training step (BenchmarkW3) on this machine: for
# each of W3 tiny and small it runs the benchmark under -cpuprofile, sums
# the profile's flat CPU time in the matrix-product kernels (the tiles and
# their drivers in policy/internal/kernel: bc*, nt*, attv*, scores*, dot*,
# MatMul*), and prints one markdown table:
#
#   share    the products' part of the step's CPU time;
#   R        the step's GFLOP/s per CPU-second (its counted FLOPs are those
#            of the products: 3 × the forward pass's, see BenchmarkW3);
#   R/share  the products' own rate, set against P, a core's peak
#            (BenchmarkFLOPBound/avx512/1, GFLOP/s per CPU-second);
#   cap      the step's GFLOP/s on both cores if the products ran at the
#            peak and everything else as measured, both cores always busy:
#            2 / (1/P + (1 − share)/R), as a % of B, the two cores' bound
#            (BenchmarkFLOPBound/avx512/2);
#   need     the products' rate, as a % of P, at which the step would reach
#            TARGET (default 0.55) of B with everything else as measured and
#            both cores busy: 1 / (2/(TARGET·B) − (1 − share)/R); "none" when
#            the rest of the step alone already takes longer than that.
#
# Usage, from the repository root (on a quiet machine; note `uptime`):
#   results/bench/w3_ceiling.sh [OUTDIR]
# OUTDIR (default a temporary directory) keeps the test binaries and the
# profiles. STEPS_TINY (default 30) and STEPS_SMALL (default 8) set
# -benchtime; TARGET (default 0.55) the share of B asked for.
set -euo pipefail

out=${1:-$(mktemp -d)}
mkdir -p "$out"
target=${TARGET:-0.55}
go test -c -o "$out/kernel.test" ./policy/internal/kernel/
go test -c -o "$out/policy.test" ./policy/

bound=$("$out/kernel.test" -test.run '^$' -test.bench 'FLOPBound/avx512/' -test.benchtime 1s)
peak1=$(awk '/FLOPBound\/avx512\/1/ {for (i = 1; i < NF; i++) if ($(i+1) == "GFLOP/s-cpu") print $i}' <<<"$bound")
peak2=$(awk '/FLOPBound\/avx512\/2/ {for (i = 1; i < NF; i++) if ($(i+1) == "GFLOP/s") print $i}' <<<"$bound")
if [[ -z $peak1 || -z $peak2 ]]; then
	echo "w3_ceiling: BenchmarkFLOPBound/avx512 did not run (no AVX-512 on this CPU?)" >&2
	exit 1
fi
echo "BenchmarkFLOPBound/avx512: P = $peak1 GFLOP/s per CPU-second (1 goroutine), B = $peak2 GFLOP/s (2 goroutines)"
echo
echo "| W3 float32 | GFLOP/s (% of B) | R, GFLOP/s-cpu | products' share of CPU | products' rate (% of P) | cap: products at P | need for $target of B |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for size in tiny small; do
	steps=$([[ $size == tiny ]] && echo "${STEPS_TINY:-30}" || echo "${STEPS_SMALL:-8}")
	res=$("$out/policy.test" -test.run '^$' -test.bench "W3/$size\$" -test.benchtime "${steps}x" -test.cpuprofile "$out/$size.prof")
	gflops=$(awk '/BenchmarkW3/ {for (i = 1; i < NF; i++) if ($(i+1) == "GFLOP/s") print $i}' <<<"$res")
	r=$(awk '/BenchmarkW3/ {for (i = 1; i < NF; i++) if ($(i+1) == "GFLOP/s-cpu") print $i}' <<<"$res")
	# Flat milliseconds of every function, then the products' sum.
	go tool pprof -top -nodecount 100000 -nodefraction 0 -edgefraction 0 -unit ms "$out/policy.test" "$out/$size.prof" 2>/dev/null |
		awk -v size="$size" -v g="$gflops" -v r="$r" -v p="$peak1" -v b="$peak2" -v t="$target" '
			$1 ~ /ms$/ && NF >= 6 {
				ms = $1; sub(/ms$/, "", ms); total += ms
				if ($6 ~ /internal\/kernel\.(bc|nt|attv|scores|dot|MatMul)/) prod += ms
			}
			END {
				if (total == 0) { print "w3_ceiling: empty profile for " size > "/dev/stderr"; exit 1 }
				s = prod / total
				rp = r / s
				cap = 2 / (1 / p + (1 - s) / r)
				d = 2 / (t * b) - (1 - s) / r
				need = d > 0 ? sprintf("%.0f%% of P", 100 / d / p) : "none"
				printf "| %s | %.1f (%.0f%%) | %.1f | %.0f%% | %.1f (%.0f%%) | %.0f GFLOP/s (%.0f%% of B) | %s |\n", size, g, 100 * g / b, r, 100 * s, rp, 100 * rp / p, cap, 100 * cap / b, need
			}'
done
