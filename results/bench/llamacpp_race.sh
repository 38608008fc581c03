#!/usr/bin/env bash
# A speed race against llama.cpp on the same models: for each reference size
# (tiny, small, medium; random weights from `rollout model init --seed 1`,
# the weights policy's engine benchmarks draw: speed does not depend on
# them) it exports GGUF files in F32 and Q8_0 with `rollout model export`,
# measures llama.cpp's sampling throughput at batch 1 (W1) and 64 (W2)
# through node-llama-cpp (llamacpp_race.mjs) with one and two threads, and
# rollout's float32 and int8 engines on the same shapes with the W1 and W2
# benchmarks (BenchmarkW1, BenchmarkW2 of ./policy), then prints one
# markdown table. Each figure is the median of ITERATIONS runs (node: timed
# iterations after a warm-up; Go: -count runs of -benchtime 3x).
#
# Usage, from the repository root:
#   results/bench/llamacpp_race.sh [NODE_LLAMA_CPP_DIR]
# NODE_LLAMA_CPP_DIR (default $ROLLOUT_NODE_LLAMA_CPP) holds
# node_modules/node-llama-cpp (`npm i -E node-llama-cpp@3.21.1` there; .ci/run
# installs it). SIZES (default "tiny small medium"), ITERATIONS (default 3) and
# LLAMA_TIMEOUT (seconds one llama.cpp measurement may take, default 600; a
# figure that timed out shows as "timeout": two llama.cpp threads on a
# shared machine can be very slow) may be set in the environment.
set -euo pipefail

dir=${1:-${ROLLOUT_NODE_LLAMA_CPP:-}}
if [[ -z $dir || ! -f $dir/node_modules/node-llama-cpp/package.json ]]; then
	echo "usage: $0 NODE_LLAMA_CPP_DIR (a directory where \`npm i -E node-llama-cpp@3.21.1\` ran; or set ROLLOUT_NODE_LLAMA_CPP)" >&2
	exit 2
fi
sizes=${SIZES:-tiny small medium}
iters=${ITERATIONS:-3}
limit=${LLAMA_TIMEOUT:-600}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/rollout" ./cmd/rollout
go test -c -o "$work/policy.test" ./policy/

# median of the numbers on stdin, rounded to an integer.
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) exit 1; m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%.0f\n", m}'; }

# llama SIZE TYPE BATCH NEW THREADS: llama.cpp's median tokens/s, or
# "timeout".
llama() {
	local out
	if out=$(timeout "$limit" node "$here/llamacpp_race.mjs" "$dir" "$work/$1-$2.gguf" "$3" "$4" "$5" "$iters"); then
		sed -n 's/.*"tok_s":\[\([^]]*\)\].*/\1/p' <<<"$out" | tr ',' '\n' | median
	else
		echo timeout
	fi
}

# best A B: the larger of two figures, either of which may be "timeout".
best() { printf '%s\n' "$@" | { grep -E '^[0-9]+$' || true; } | sort -n | tail -1; }

# go_bench W SUB: rollout's median tokens/s of BenchmarkW/SUB.
go_bench() {
	(cd policy && "$work/policy.test" -test.run '^$' -test.bench "^Benchmark$1\$/^$2\$" -test.benchtime 3x -test.count "$iters") |
		awk '{for (i = 2; i <= NF; i++) if ($i == "tok/s") print $(i-1)}' | median
}

# ratio A B: A/B to two significant digits, with ×; "—" without B.
ratio() {
	if [[ -z $2 ]]; then echo "—"; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN {r = a / b; printf(r >= 10 ? "%.0f×" : "%.1f×", r)}'
}

# fmt N: N with thousands separators (a word as it is).
fmt() {
	sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"
}

echo "uptime at the start: $(uptime)" >&2
rows=()
for size in $sizes; do
	case $size in
	tiny) maxseq=64 ;;
	small) maxseq=128 ;;
	medium) maxseq=256 ;;
	*) echo "unknown size $size" >&2; exit 2 ;;
	esac
	new=$((maxseq - 16))
	"$work/rollout" model init --size "$size" --seed 1 --out "$work/$size" >&2
	for t in f32 q8_0; do
		"$work/rollout" model export --checkpoint "$work/$size" --format gguf --type "$t" --out "$work/$size-$t.gguf" >&2
	done
	for batch in 1 64; do
		w=W1
		[[ $batch == 64 ]] && w=W2
		f32_1=$(llama "$size" f32 "$batch" "$new" 1)
		f32_2=$(llama "$size" f32 "$batch" "$new" 2)
		q8_1=$(llama "$size" q8_0 "$batch" "$new" 1)
		q8_2=$(llama "$size" q8_0 "$batch" "$new" 2)
		r32=$(go_bench "$w" "$size")
		r8=$(go_bench "$w" "${size}_int8")
		best32=$(best "$f32_1" "$f32_2")
		best8=$(best "$q8_1" "$q8_2")
		rows+=("| $w $size (batch $batch, 16 + $new tokens) | $(fmt "$f32_1") / $(fmt "$f32_2") | $(fmt "$r32") | **$(ratio "$r32" "$best32")** | $(fmt "$q8_1") / $(fmt "$q8_2") | $(fmt "$r8") | **$(ratio "$r8" "$best8")** |")
		echo "${rows[-1]}" >&2
	done
done
echo "uptime at the end: $(uptime)" >&2

echo "| workload | llama.cpp F32, 1 / 2 threads (tok/s) | rollout float32 | rollout / best llama.cpp | llama.cpp Q8_0, 1 / 2 threads | rollout int8 | rollout / best llama.cpp |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
