package suite

import (
	"strings"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking/report"
)

// Marks of the common design: 10,000 sampled tokens per run, evaluated at
// 0, 5k and 10k (the filtering report: 20,000, evaluated every 5k).
const (
	atEnd = "tokens:10000"
	atMid = "tokens:5000"
)

// evalMetrics are the held-out metrics of the accuracy tables.
func evalMetrics() []string { return []string{"eval/acc", "eval/pass@k", "eval/maj@k"} }

// evalMetrics1 are evalMetrics with unbiased pass@1, for the reports
// whose checks read it.
func evalMetrics1() []string {
	return []string{"eval/acc", "eval/pass@1", "eval/pass@k", "eval/maj@k"}
}

// accPlot is eval/acc against sampled tokens.
func accPlot() Plot { return Plot{Metric: "eval/acc", X: report.XTokens} }

// Every report plots the metric of each of its checks (the figure its
// claim is about): a recorded one against tokens or steps, the two parts
// of a derived share (shareOf), and wall time (wall_s) as the time axis.

// Reports returns the suite's reports in the order (1–10), then
// 11, the test-time compute report redesigned with a reward model that
// ranks; the order in which they were generated is the brief's priority,
// which Priority gives.
func Reports() []Report {
	return []Report{
		compute(), filtering(), stale(), temperature(), maxLength(),
		quantized(), perPrompt(), advantage(), ttc(), recipe(), ttcRM(),
	}
}

// Priority lists the report names in the order they are generated when
// time is short: the ones the others build on first.
func Priority() []string {
	return []string{"filtering", "max_length", "temperature", "per_prompt", "advantage", "stale", "compute", "ttc", "ttc_rm", "quantized", "recipe"}
}

// Find returns the report of the given name.
func Find(name string) (Report, bool) {
	for _, r := range Reports() {
		if r.Name == name {
			return r, true
		}
	}
	return Report{}, false
}

const shortTask = `Task: two-digit addition with the carry scratchpad (responses of at most 9 characters and EOS), from the quickstart's weak base policy (300 supervised steps, about 50% greedy accuracy on 100 held-out prompts): short responses keep 5 seeds of every variant within a few minutes on 2 cores, and the base policy leaves room for RL. `

const commonBudget = `Every run samples 10,000 tokens (` + "`train.total_tokens`" + `, never exceeded) and is evaluated at 0, 5k and 10k sampled tokens (greedy accuracy, pass@4 and maj@4 from 4 samples, 100 held-out prompts); 5 seeds per variant, shared, so every test is paired.`

// Task, budget and evaluation of the reports regenerated under issue 25's
// rules (filtering, temperature, per_prompt, advantage): their configs
// declare the design, and the seeds come from a pilot.
const (
	declaredTask = `Task: two-digit addition with the carry scratchpad (responses of at most 9 characters and EOS), from the quickstart's weak base policy (300 supervised steps, pretraining seed 0, about 50% greedy accuracy): short responses keep a run near a minute on the shared 2 cores, and the base policy leaves room for RL. `

	declaredBudget = `Every run samples 10,000 tokens (` + "`train.total_tokens`" + `, never exceeded) and is evaluated at 0 and 10,000 sampled tokens on 1,000 held-out prompts drawn from the run's seed (with replacement, from the eval split's one problem in eight of 8,100): greedy accuracy, and 4 samples a prompt at the rollout temperature, from which unbiased pass@1, pass@4 and maj@4. The design (checks, base policy, seeds) was committed in the config before the first run under a new experiment name, so no earlier run is reused; the number of seeds was set from a 3-seed pilot (` + "`rollout plan --pilot 3`" + `, seeds after the design's) for 80% power at each primary check's effect of interest, capped at 20 and by the compute of the session (the config says which bound); every variant runs on every seed, so every test is paired.`
)

func compute() Report {
	// A share's figures are the two times (or FLOPs) it is made of; the
	// checks are on generation's share of step time, derived per run
	// (shareOf), not recorded.
	atSize := func(v string, sd float64) Check {
		return Check{Name: "gen_share_" + v, Claim: "generation takes more than half of a step's time at the " + v + " size", Variant: v, Metric: "share/gen_time", At: "mean", Want: Higher, Versus: true, Constant: 0.5, Margin: 0.05, PilotSD: sd, Premise: "accelerator_decoding"}
	}
	trend := func(v string) Check {
		return Check{Name: "gen_share_grows_" + v, Claim: "generation's share of step time is higher at the " + v + " size than at the tiny one", Variant: v, Metric: "share/gen_time", At: "mean", Want: Higher, Family: design.Secondary}
	}
	return Report{
		Number: 1, Name: "compute", Experiment: "econ_compute_sizes", Title: "Where the compute goes",
		Claim:  `"the rollout phase dominates": generation takes most of an RL step's time.`,
		Source: "verl, OpenRLHF and AReaL system papers",
		Design: `Task: ` + "`long_add`" + ` — 4- to 6-digit addition worked column by column with the rewritten scratchpad: responses of 69–70, 91–92 and 115–116 tokens (EOS included) for 4, 5 and 6 digits, the task's cap being 116. Three model sizes, each from its own base policy of long_add's pretraining at seed 1: ` + "`tiny`" + ` (dim 128, 4 layers, 0.87 M parameters; 1,000 supervised steps in float32, the base policy of the earlier design), ` + "`small`" + ` (dim 256, 6 layers, 5.1 M; 100 steps with BF16 products) and ` + "`medium`" + ` (dim 512, 8 layers, 27 M; 60 steps with BF16 products): fewer pretraining steps for the larger sizes because the shared 2-core machine was loaded, so the larger base policies are weaker; a step's cost depends on its responses' lengths (` + "`response_length/mean`" + ` below), not on whether they are right. Every run: 4 samples per prompt, 8 prompts a step, the task's full length, 2 steps, no filtering, float32 RL updates, 3 seeds, runs one at a time. Per step: wall time of generation (` + "`timing_s/gen`" + `) and of the update (` + "`timing_s/update`" + `), sampled FLOPs (` + "`budget/flops`" + `: every position's forward pass with its context) and training FLOPs (` + "`budget/train_flops`" + `: π_old's forward and 3× forward per epoch). share/gen_time and share/gen_flops are generation's share of the step's sum, per run. The primary checks test the share of wall time at each size against one half; the secondary ones whether it grows from tiny to small and to medium. Wall times depend on what else runs on the machine (the load is recorded beside each run), and the sizes ran one after another, so differences of wall time between sizes mix in the drift of the machine's load (a share compares generation and update within the same steps); the FLOPs are counts, the same on any machine. Where generation would become the larger share — at which model size, response length and hardware balance — is the cost model's extrapolation ([cost_model.md](cost_model.md), ` + "`rollout cost`" + `), fitted to CPU time, not to these runs.`,
		Tables: []Table{{Title: "Cost per step", At: "mean", Metrics: []string{"timing_s/gen", "timing_s/update", "share/gen_time", "budget/flops", "budget/train_flops", "share/gen_flops", "response_length/mean", "response_length/clip_ratio"}}},
		Checks: []Check{
			// PilotSD: the SD over seeds of share/gen_time in econ_compute's
			// n4_full (the tiny size's setting, 5 seeds); none is known for
			// the larger sizes before their runs.
			atSize("tiny", 0.027), atSize("small", 0), atSize("medium", 0),
			trend("small"), trend("medium"),
		},
		Premises: []design.Premise{{Name: "accelerator_decoding",
			Text:  "a large model decoding token by token on an accelerator, the setting in which the system papers measure the rollout phase",
			Unmet: "the test bed is models of 0.87 to 27 M parameters sampled and trained on 2 CPU cores"}},
		Plots:     []Plot{{Metric: "timing_s/gen", X: report.XStep}, {Metric: "timing_s/update", X: report.XStep}},
		CostModel: "results/cost_model.json",
		Minutes:   30,
	}
}

func filtering() Report {
	return Report{
		Number: 2, Name: "filtering", Title: "Filtering (DAPO dynamic sampling)", Experiment: "econ_filtering_v2",
		Claim:  `dynamic sampling — dropping groups whose rewards are all equal and drawing more prompts — "saves compute without hurting learning".`,
		Source: "DAPO (Yu et al. 2025), dynamic sampling",
		Design: declaredTask + `Filtering drops the groups whose rewards are all equal (all right or all wrong); the per-step table gives how many. Variants: ` + "`no_filter`" + ` (every group trained on) and ` + "`filter_resample2`" + ` (DAPO's dynamic sampling: groups with equal rewards dropped, up to 2 extra rounds of prompts to refill the batch); 8 prompts × 8 samples a step. Dropped groups were sampled, so they count in the budget of sampled tokens; they are never trained on, so compute saved is measured as training FLOPs at equal sampled tokens. The checks: training FLOPs lower, and unbiased pass@1 not worse by more than 3 points (primary); greedy accuracy not worse by more than 3 points (secondary). ` + declaredBudget,
		Tables: []Table{
			{Title: "Held-out accuracy at 10,000 sampled tokens", At: atEnd, Metrics: evalMetrics1()},
			{Title: "The base policy (0 sampled tokens)", At: "tokens:0", Metrics: evalMetrics1()},
			{Title: "Compute at 10,000 sampled tokens", At: atEnd, Metrics: []string{"budget/train_flops_cum"}},
			{Title: "Per step", At: "mean", Metrics: []string{"steps", "groups/filtered", "groups/kept", "groups/resample_rounds", "groups/zero_std_frac", "wall_s"}},
		},
		// The config declares the design (its checks are these); these
		// serve a config that declares none.
		Checks: []Check{
			{Name: "filter_saves_compute", Variant: "filter_resample2", Metric: "budget/train_flops_cum", At: atEnd, Want: Lower, Margin: 0, Effect: 6e9},
			{Name: "filter_keeps_learning", Variant: "filter_resample2", Metric: "eval/pass@1", At: atEnd, Want: NotWorse, Margin: 0.03},
			{Name: "filter_keeps_greedy", Variant: "filter_resample2", Metric: "eval/acc", At: atEnd, Want: NotWorse, Margin: 0.03, Family: design.Secondary},
		},
		Plots:   []Plot{{Metric: "eval/pass@1", X: report.XTokens}, accPlot(), {Metric: "budget/train_flops_cum", X: report.XTokens}},
		Minutes: 30,
	}
}

func stale() Report {
	const end = "tokens:10000"
	acc := []string{"eval/pass@1", "eval/acc", "eval/pass@k", "eval/maj@k"}
	return Report{
		Number: 3, Name: "stale", Experiment: "econ_stale_async", Title: "Stale reuse, asynchronous against synchronous",
		Claim:  `reusing rollouts of an older policy version costs no accuracy — with an importance-sampling correction, "more updates from each generation pass" — and letting generation run ahead of training (asynchronous rollouts with bounded staleness) spends the same sampled tokens in less time.`,
		Source: "AReaL (Fu et al. 2025, asynchronous RL with bounded staleness), TIS (Yao et al. 2025)",
		Design: shortTask + `**What changed from the earlier test bed, and why:** the earlier report replayed old groups synchronously (` + "`train.max_staleness`" + ` 1, 2 and 4 in the same loop), where extra updates can only add time, while the claim is about throughput from sampling the next steps while the current update runs. This design sets synchronous replay beside the asynchronous loop (` + "`train.async`" + ` k: the rollouts of step t come from exactly policy version t−k, sampled on half of the run's cores while the updates before step t run on the other half), under a new experiment name (` + "`econ_stale_async`" + `), seeds from 201 (the earlier report used 1–5 with the same base policy), and pass@1 from 4 samples on 200 prompts instead of greedy accuracy on 100. ` +
			`Variants, all with TIS (cap 2), so that they differ only in staleness: ` + "`sync_fresh`" + ` (the baseline; its importance ratio is 1 but for rounding), ` + "`sync_stale1_tis`" + ` (each group trained again one version later in the same loop) and ` + "`async1`" + ` (k = 1: each step's rollouts one version stale, sampled while the previous update runs); k = 2 was left out, a fourth variant not being affordable on the shared machine in the time left. No filtering, 8 prompts × 8 samples a step. Every run samples 10,000 tokens (` + "`train.total_tokens`" + `, never exceeded) and is evaluated at 0 and 10k sampled tokens on 200 held-out prompts drawn per seed, greedy and 4 samples each at temperature 1; the accuracy checks read unbiased pass@1 from the 4 samples (800 sampled answers a run). The seeds were set from a 3-seed pilot before the first run; the variants share each seed's eval prompts and streams, so every test is paired. ` +
			`Time: the runs went seed by seed, two at a time (` + "`rollout run --interleave --workers 2`" + `), with the load recorded beside every run; with three variants on two workers not every pair of a seed's runs overlapped (the checks say where), and a wall time compares only runs that did. The asynchronous loop can only gain time when its sampler and its updates have cores of their own (premise ` + "`own_cores`" + `): with two workers on this 2-core machine, shared with other jobs, each run's team is one core, on which sampling and updates take turns, so the time check was declared, before the runs, not testable here; its wall times are reported (` + "`timing_s/overlap`" + ` records the seconds both phases ran at once). CPU seconds are not recorded per run (the runs of a sitting share one process) and could not show the gain anyway: the asynchronous loop does the same work, only at once. The checks (declared in the config before any run): ` + "`async1`" + ` is not worse than ` + "`sync_fresh`" + ` by more than 3 points of pass@1 at 10k tokens, ` + "`sync_stale1_tis`" + ` is higher than ` + "`sync_fresh`" + ` there, and ` + "`async1`" + ` takes less wall time (primary, Holm over the testable ones); ` + "`async1`" + ` is not worse than ` + "`sync_stale1_tis`" + ` (secondary).`,
		Tables: []Table{
			{Title: "Held-out accuracy at 10,000 sampled tokens", At: end, Metrics: acc},
			{Title: "The base policy (0 sampled tokens)", At: "tokens:0", Metrics: acc},
			{Title: "Per step: reuse, importance weights, staleness", At: "mean", Metrics: []string{"steps", "buffer/stale_groups", "is/ratio_mean", "mismatch/kl", "async/staleness"}},
			{Title: "Time per step and per run", At: "mean", Metrics: []string{"timing_s/gen", "timing_s/update", "timing_s/overlap", "timing_s/wait", "wall_s"}},
		},
		// The config declares the design (its checks are these); these
		// serve a config that declares none.
		Checks: []Check{
			{Name: "async1_keeps_accuracy", Variant: "async1", Metric: "eval/pass@1", At: end, Want: NotWorse, Margin: 0.03},
			{Name: "stale1_more_from_each_pass", Variant: "sync_stale1_tis", Metric: "eval/pass@1", At: end, Want: Higher, Effect: 0.03},
			{Name: "async1_faster", Variant: "async1", Metric: "wall_s", At: "mean", Want: Lower, Premise: "own_cores"},
			{Name: "async1_vs_sync_stale", Variant: "async1", Baseline: "sync_stale1_tis", Metric: "eval/pass@1", At: end, Want: NotWorse, Margin: 0.03, Family: design.Secondary},
		},
		Premises: []design.Premise{{Name: "own_cores",
			Text:  "each run's sampler and its updates have cores of their own, so that they can run at once (the setting of AReaL's throughput claim)",
			Unmet: "the runs of a seed run side by side with --workers 2 on a 2-core machine shared with other jobs: each run's team is one core, on which sampling and updates take turns"}},
		Plots:   []Plot{{Metric: "eval/pass@1", X: report.XTokens}, {Metric: "eval/pass@1", X: report.XTime}},
		Minutes: 15,
	}
}

func temperature() Report {
	return Report{
		Number: 4, Name: "temperature", Title: "Sampling temperature", Experiment: "econ_temperature_v2",
		Claim:  `a higher rollout temperature gives more diverse rollouts (more unique responses, higher entropy) and better learning through exploration.`,
		Source: "POLARIS (An et al. 2025), Skywork-OR1 (He et al. 2025)",
		Design: declaredTask + `Rollout temperature 0.6, 1.0 (baseline) and 1.2, no filtering, 8 prompts × 8 samples a step. Evaluation samples (pass@1, pass@4, maj@4) are drawn at the run's own temperature, so they mix the temperature of the evaluation into the comparison; greedy accuracy does not depend on it, and the learning checks read it. The checks (all primary): ` + "`t1.2`" + ` samples more unique responses a step than ` + "`t1.0`" + ` (` + "`tree/unique_responses`" + `: the unique responses of a step's 8 groups; effect of interest and margin 4, half a response a group), ` + "`t1.2`" + ` reaches a higher and ` + "`t0.6`" + ` a lower greedy accuracy at 10,000 sampled tokens (effect of interest 5 points). ` + declaredBudget,
		Tables: []Table{
			{Title: "Held-out accuracy at 10,000 sampled tokens", At: atEnd, Metrics: evalMetrics1()},
			{Title: "Diversity per step", At: "mean", Metrics: []string{"tree/unique_responses", "rollout/entropy", "groups/zero_std_frac", "reward/mean", "wall_s"}},
		},
		Checks: []Check{
			{Name: "hot_more_diverse", Variant: "t1.2", Metric: "tree/unique_responses", At: "mean", Want: Higher, Margin: 4, Effect: 4},
			{Name: "hot_learns_more", Variant: "t1.2", Metric: "eval/acc", At: atEnd, Want: Higher, Margin: 0.02, Effect: 0.05},
			{Name: "cold_learns_less", Variant: "t0.6", Metric: "eval/acc", At: atEnd, Want: Lower, Margin: 0.02, Effect: 0.05},
		},
		Plots:   []Plot{accPlot(), {Metric: "tree/unique_responses", X: report.XTokens}},
		Minutes: 35,
	}
}

func maxLength() Report {
	const end = "tokens:16000"
	acc := []string{"eval/pass@1", "eval/acc", "eval/pass@k"}
	return Report{
		Number: 5, Name: "max_length", Experiment: "econ_max_length_detours", Title: "Maximum response length and overlong responses",
		Claim:  `"shorter maximum lengths where the task allows" cut the cost of a step without hurting accuracy; DAPO's overlong filtering and soft overlong punishment handle the responses cut at the cap.`,
		Source: "DAPO (Yu et al. 2025), overlong filtering and soft overlong punishment",
		Design: `Task: ` + "`chain`" + ` with detours (the test bed of chain_detours.yaml) — a chain of 4 to 6 one-digit additions and subtractions worked out one step at a time, in which a response may restate a step (the chain the step before left, written again without an operation) up to 3 times; the demonstrations of pretraining hold 0 to 3 restatements at random steps, so the base policy writes correct responses of varying length, and a restatement is pure waste: the work a response needs is the same without it. The needed length of a prompt (every step right, no restatement) is 43, 59 and 77 characters for 4, 5 and 6 operations; the task's limit is 131. A cap of 78 tokens (77 characters and the end token) is the shortest the task allows: every prompt has a correct response inside it. The design caps at 80 (` + "`rollout.max_tokens`" + `: 78 plus DAPO's L_cache of 2), because the soft punishment grows over the L_cache tokens before the cap: under a cap of 78 it would fall on lengths 77 and 78, the needed length of the 6-operation prompts, punishing needed work; at 80 it falls on 79 and 80, which only a response that restates reaches, and the cap still cuts only responses that restate. Base policy: chain_detours.yaml's pretraining (1,600 supervised steps at pretraining seed 0; 30.0% greedy accuracy on 200 held-out prompts). ` +
			`**What changed from the earlier test bed, and why:** this report ran on ` + "`long_add`" + ` with caps of 94 and 72 tokens, which cut the 6-digit (and, at 72, the 5-digit) responses before their answer: the cap cut correct, needed work, so no cap it tested was one "the task allows", and the report measured what cutting needed work costs rather than the claim. On chain with detours the over-long part of a response is waste, never needed work, so the claim's premise holds; the experiment has a new name (` + "`econ_max_length_detours`" + `), leaving the old one's records as they were. ` +
			`Variants: ` + "`full`" + ` (the task's limit, 131) and the cap of 80 with DAPO's three ways of handling a cut response: ` + "`cap80_truncate`" + ` (trained on as cut: no answer, no reward), ` + "`cap80_filter`" + ` (masked out of the loss) and ` + "`cap80_penalty`" + ` (the soft punishment with L_cache 2: lengths 79 and 80 get −0.5 and −1). No filtering of groups, 4 prompts × 8 samples a step. Evaluation generates up to the task's limit whatever the cap, so accuracy measures the trained policy, not the cap. Every run samples 16,000 tokens (` + "`train.total_tokens`" + `, never exceeded) and is evaluated at 0 and 16k sampled tokens on 200 held-out prompts drawn per seed, greedy and 2 samples each at temperature 1; the accuracy checks read unbiased pass@1 from the 2 samples (400 sampled answers a run, the behaviour a cap acts on), a larger eval set being beyond the time the shared machine left. The seeds were set from a 3-seed pilot before the first run; the variants share each seed's eval prompts and streams, so every test is paired. The checks (declared in the config before any run): the cap with truncation shortens the responses of a step (` + "`response_length/mean`" + `, each run's mean over its steps: the cost of a step of 4 prompts; the steps before the last mark draw only the prompts the tokens left cover, so per-step means of FLOPs and time mix smaller steps in), and with each overlong mode it is not worse than ` + "`full`" + ` by more than 3 points of pass@1 at 16k sampled tokens (primary, Holm); overlong filtering and the soft punishment each learn better than plain truncation at the cap (secondary). Wall times carry the drift of the shared machine's load and decide nothing.`,
		Tables: []Table{
			{Title: "Held-out accuracy at 16,000 sampled tokens", At: end, Metrics: acc},
			{Title: "The base policy (0 sampled tokens)", At: "tokens:0", Metrics: acc},
			{Title: "Cost and truncation per step", At: "mean", Metrics: []string{"steps", "response_length/mean", "response_length/clip_ratio", "overlong/masked", "reward/mean", "budget/train_flops", "timing_s/gen", "timing_s/update", "wall_s"}},
		},
		// The config declares the design (its checks are these); these
		// serve a config that declares none.
		Checks: []Check{
			{Name: "cap_shortens", Variant: "cap80_truncate", Metric: "response_length/mean", At: "mean", Want: Lower, Effect: 3},
			{Name: "cap_truncate_keeps_accuracy", Variant: "cap80_truncate", Metric: "eval/pass@1", At: end, Want: NotWorse, Margin: 0.03},
			{Name: "cap_filter_keeps_accuracy", Variant: "cap80_filter", Metric: "eval/pass@1", At: end, Want: NotWorse, Margin: 0.03},
			{Name: "cap_penalty_keeps_accuracy", Variant: "cap80_penalty", Metric: "eval/pass@1", At: end, Want: NotWorse, Margin: 0.03},
			{Name: "filter_beats_truncate", Variant: "cap80_filter", Baseline: "cap80_truncate", Metric: "eval/pass@1", At: end, Want: Higher, Effect: 0.03, Family: design.Secondary},
			{Name: "penalty_beats_truncate", Variant: "cap80_penalty", Baseline: "cap80_truncate", Metric: "eval/pass@1", At: end, Want: Higher, Effect: 0.03, Family: design.Secondary},
		},
		Plots:   []Plot{{Metric: "eval/pass@1", X: report.XTokens}, {Metric: "response_length/mean", X: report.XTokens}, {Metric: "response_length/clip_ratio", X: report.XTokens}},
		Minutes: 33,
	}
}

func quantized() Report {
	return Report{
		Number: 6, Name: "quantized", Title: "Quantized sampling", Experiment: "econ_quantized_v2",
		Claim:  `"quantized inference for the sampling phase" makes generation cheaper, and a truncated importance-sampling correction (TIS) absorbs the sampler–learner mismatch.`,
		Source: "FlashRL / TIS (Yao et al. 2025)",
		Design: declaredTask + `Variants: float32 sampling (baseline), int8 sampling (W8A8: weights and activations in int8 with VNNI dot products where the CPU has them, weight-only int8 elsewhere) without correction and with TIS (cap 2); no filtering, 8 prompts × 8 samples a step; the evaluation runs the float32 policy. It measures this build's int8 engine. The checks (primary): int8's generation time a step lower than float32's, on runs made side by side (` + "`rollout run --interleave --workers 3`" + `), and ` + "`int8_tis`" + `'s unbiased pass@1 at 10,000 sampled tokens not worse by more than 3 points; ` + "`int8`" + ` without correction not worse by 3 points (secondary). ` + declaredBudget,
		Tables: []Table{
			{Title: "Held-out accuracy at 10,000 sampled tokens", At: atEnd, Metrics: evalMetrics1()},
			{Title: "Cost and mismatch per step", At: "mean", Metrics: []string{"timing_s/gen", "mismatch/kl", "mismatch/abs_logp", "is/ratio_mean", "wall_s"}},
		},
		Checks: []Check{
			{Name: "int8_gen_cheaper", Variant: "int8", Metric: "timing_s/gen", At: "mean", Want: Lower, Margin: 0},
			{Name: "tis_keeps_learning", Variant: "int8_tis", Metric: "eval/pass@1", At: atEnd, Want: NotWorse, Margin: 0.03},
			{Name: "int8_keeps_learning", Variant: "int8", Metric: "eval/pass@1", At: atEnd, Want: NotWorse, Margin: 0.03, Family: design.Secondary},
		},
		Plots:   []Plot{{Metric: "timing_s/gen", X: report.XStep}, {Metric: "eval/pass@1", X: report.XTokens}}, // the checks: generation time, then accuracy
		Minutes: 40,
	}
}

func perPrompt() Report {
	return Report{
		Number: 7, Name: "per_prompt", Title: "Rollouts per prompt", Experiment: "econ_per_prompt_v2",
		Claim:  `at a fixed number of samples per step, more rollouts per prompt ("64 rollouts per prompt") beat more prompts with fewer rollouts each.`,
		Source: "BroRL (Hu et al. 2025); DeepSeek-R1 and Kimi k1.5 group sizes",
		Design: declaredTask + `64 samples a step as 4×16, 8×8 (baseline) and 32×2 prompts × rollouts, flat sampling, GRPO advantages, no filtering (it would drop more of the small groups). The checks: ` + "`p4_n16`" + ` reaches a higher and ` + "`p32_n2`" + ` a lower unbiased pass@1 than ` + "`p8_n8`" + ` at 10,000 sampled tokens (primary; effect of interest 5 points), and the same on greedy accuracy (secondary). ` + declaredBudget,
		Tables: []Table{
			{Title: "Held-out accuracy at 10,000 sampled tokens", At: atEnd, Metrics: evalMetrics1()},
			{Title: "Per step", At: "mean", Metrics: []string{"steps", "groups/zero_std_frac", "reward/mean", "wall_s"}},
		},
		Checks: []Check{
			{Name: "more_rollouts_better", Variant: "p4_n16", Metric: "eval/pass@1", At: atEnd, Want: Higher, Margin: 0.02, Effect: 0.05},
			{Name: "fewer_rollouts_worse", Variant: "p32_n2", Metric: "eval/pass@1", At: atEnd, Want: Lower, Margin: 0.02, Effect: 0.05},
			{Name: "more_rollouts_better_greedy", Variant: "p4_n16", Metric: "eval/acc", At: atEnd, Want: Higher, Margin: 0.02, Effect: 0.05, Family: design.Secondary},
			{Name: "fewer_rollouts_worse_greedy", Variant: "p32_n2", Metric: "eval/acc", At: atEnd, Want: Lower, Margin: 0.02, Effect: 0.05, Family: design.Secondary},
		},
		Plots:   []Plot{{Metric: "eval/pass@1", X: report.XTokens}, accPlot()},
		Minutes: 35,
	}
}

func advantage() Report {
	return Report{
		Number: 8, Name: "advantage", Title: "Advantage estimators", Experiment: "econ_advantage_v2",
		Claim:  `the estimator matters: Dr. GRPO's and RLOO's unbiased variants are at least as good as GRPO, and on tree rollouts TreeRL's tree advantage (and TreePO's subgroup advantage) beats plain GRPO advantages.`,
		Source: "Dr. GRPO (Liu et al. 2025), RLOO (Ahmadian et al. 2024), TreeRL (Hou et al. 2025), TreePO (Li et al. 2025)",
		Design: declaredTask + `Flat rollouts (8 samples) with ` + "`grpo`" + ` (baseline), ` + "`dr_grpo`" + ` (with its sequence-sum loss normalisation) and ` + "`rloo`" + `; entropy-tree rollouts (M=2, N=1, L=1, T=3: 8 leaves) with ` + "`grpo`" + `, ` + "`tree`" + ` and ` + "`tree_subgroup`" + `. 8 prompts a step, no filtering. The checks, all on unbiased pass@1 at 10,000 sampled tokens and primary: ` + "`flat_dr_grpo`" + ` and ` + "`flat_rloo`" + ` not worse than ` + "`flat_grpo`" + ` by more than 3 points; ` + "`tree_tree`" + ` and ` + "`tree_subgroup`" + ` higher than ` + "`tree_grpo`" + ` (effect of interest 5 points). ` + declaredBudget,
		Tables: []Table{
			{Title: "Held-out accuracy at 10,000 sampled tokens", At: atEnd, Metrics: evalMetrics1()},
			{Title: "Per step", At: "mean", Metrics: []string{"steps", "reward/mean", "actor/grad_norm", "wall_s"}},
		},
		Checks: []Check{
			{Name: "dr_grpo_not_worse", Variant: "flat_dr_grpo", Metric: "eval/pass@1", At: atEnd, Want: NotWorse, Margin: 0.03},
			{Name: "rloo_not_worse", Variant: "flat_rloo", Metric: "eval/pass@1", At: atEnd, Want: NotWorse, Margin: 0.03},
			{Name: "tree_advantage_better", Variant: "tree_tree", Metric: "eval/pass@1", At: atEnd, Want: Higher, Margin: 0.02, Effect: 0.05, Baseline: "tree_grpo"},
			{Name: "subgroup_advantage_better", Variant: "tree_subgroup", Metric: "eval/pass@1", At: atEnd, Want: Higher, Margin: 0.02, Effect: 0.05, Baseline: "tree_grpo"},
		},
		Plots:   []Plot{{Metric: "eval/pass@1", X: report.XTokens}, accPlot()},
		Minutes: 70,
	}
}

func ttc() Report {
	r := ttcReport()
	r.Number, r.Name, r.Title, r.Experiment = 9, "ttc", "Test-time compute", "econ_ttc_v2"
	r.Design = declaredTask + ttcRuns + ttcAnswer(`the model of the config's `+"`reward_model`"+` section, trained on the base policy's samples, as `+"`rollout reward-model`"+` caches it`) +
		`The checks, declared in the config before the first run and all primary (Holm over the six): ` + ttcChecks + `. The seeds (from 701) were set before the first run from a 3-seed pilot (` + "`rollout plan --pilot 3`" + `, seeds after the design's) for the two checks on the runs' records, and for the four at answer time, which a pilot's runs do not hold, from the per-seed SD of the same measurement in the earlier econ_ttc report (seeds 1–5, the same base policy, prompts, N, trees and reward model); the config says which bound set their number.`
	r.Minutes = 8
	return r
}

// ttcRM is the test-time compute report redesigned (issue 25): best-of-N
// by the likelihood reward model, whose reward-model checks rest on a
// premise the report measures, the reward model's within-prompt AUC on
// the candidates it reranks.
func ttcRM() Report {
	r := ttcReport()
	r.Number, r.Name, r.Title, r.Experiment = 11, "ttc_rm", "Test-time compute with a reward model that ranks", "econ_ttc_v3"
	r.Design = declaredTask + `**Why a second design:** the first, [` + "`econ_ttc_v2`" + `](ttc.md), chose best-of-N by the head reward model of the ` + "`reward_model`" + ` section's defaults (a scalar head on EOS trained with binary cross-entropy on the base policy's samples), which orders one prompt's candidates poorly (its within-prompt AUC is in that report's answer-time tables), and it declared no premise about the reward model, so its reward-model checks tested that model, not the claim, which takes a reward model that ranks for granted. This design (experiment ` + "`econ_ttc_v3`" + `, its own seeds; no run of the first is reused) chooses by the likelihood reward model of [rm_quality.md](rm_quality.md) and declares that premise; the runs, the answer-time measurement and the other checks are the first design's. ` +
		ttcRuns + ttcAnswer(`the likelihood reward model: the base policy's body scoring a response by its log-likelihood, Σ log π(token | what precedes it) over the response and EOS, trained to order one prompt's candidates with a pairwise loss, −log σ(z_right − z_wrong) over the (right, wrong) pairs of the same prompt, on the base policy's 16 samples of each of 2,048 train prompts with up to 2 near misses a right candidate as hard negatives, 1,000 Adam steps (body step size 3·10⁻⁴, training order seed 1): the settings of rm_quality.md's likelihood model, written in the config's `+"`reward_model`"+` section (`+"`scoring: likelihood`"+`), built once per base policy and cached (`+"`rollout reward-model CONFIG`"+` builds it), its within-prompt AUC on 1,024 held-out eval prompts × 16 samples given below the tables`) +
		`**Premise** ` + "`reward_model_ranks`" + `, declared in the design before the first run: the reward model orders one prompt's candidates well, a within-prompt AUC of at least 0.85 on the very candidates it reranks (the held-out prompts' 16 candidates of the policy measured, mean over the seeds). The report measures it for each reward-model check (the AUC column of the answer-time tables) and a check whose AUC falls below is *not testable here*, its numbers still given, and leaves the corrected family. ` +
		`The checks, declared in the config before the first run and all primary (Holm over the testable ones of the six): ` + ttcChecks + `; the two reward-model checks rest on the premise. The seeds (from 801) were set before the first run from a 3-seed pilot (` + "`rollout plan --pilot 3`" + `, seeds after the design's) for the two checks on the runs' records, and for the four at answer time, which a pilot's runs do not hold, from the per-seed SD of the same comparisons in the committed ttc.md (12 seeds; its reward model was the head, so for the reward-model checks the SD is a stand-in); the config says which bound set their number.`
	for i := range r.AnswerTime.Checks {
		if strings.HasPrefix(r.AnswerTime.Checks[i].Name, "rm_") {
			r.AnswerTime.Checks[i].Premise = "reward_model_ranks"
		}
	}
	r.Premises = []design.Premise{{Name: "reward_model_ranks",
		Text:    "a reward model that orders one prompt's candidates well, within-prompt AUC ≥ 0.85 on the held-out prompts' candidates it reranks",
		Measure: design.WithinPromptAUC, Min: 0.85}}
	r.Minutes = 20
	return r
}

// The parts of the test-time compute reports' designs that they share:
// the runs, the answer-time measurement (ttcAnswer, given what the
// reward model is) and the checks.
const (
	ttcRuns = `One RL run per seed and variant (flat, 8 prompts × 8 samples a step, no filtering, 10,000 sampled tokens), evaluated at 0 (the base policy) and 10,000 sampled tokens (the trained policy) on 100 held-out prompts drawn from the run's seed, greedy and 16 samples a prompt at temperature 1. The variants ` + "`k1`" + ` and ` + "`k16`" + ` train identically (same seed, same streams) and differ only in k of pass@k (best-of-k by the verifier: an oracle bound) and maj@k (majority over the first k samples), so their paired difference is majority of 16 against one sample over the same samples. `

	ttcChecks = `majority of 16 beats one sample for the base policy and after RL (` + "`k16`" + ` against ` + "`k1`" + ` on eval/maj@k at 0 and 10,000 sampled tokens; effect of interest 5 points, margin 2); reward-model best-of-16 beats reward-model best-of-1 at answer time, for each policy (effect 5 points, margin 2); an entropy tree of 16 leaves with majority vote is not worse than flat majority at the same tokens by more than 3 points, for each policy`
)

// ttcAnswer describes the answer-time measurement, the reward model
// being rm.
func ttcAnswer(rm string) string {
	return "`k1`" + ` keeps its final policy (` + "`train.save_final`" + `), which the report measures at answer time beside the base policy, each seed with its own sampling streams and held-out prompts (the config's 100 eval prompts, the rollout temperature 1): N = 1, 2, 4, 8, 16 flat samples a prompt, and entropy trees of 4 and 16 leaves (M = N/4 roots, each forked at its 3 highest-entropy tokens once: N = 3, T = 1, L = 1; a response ending before a fork point forks less, so a tree may have fewer leaves). One answer a prompt is chosen from the same candidates by the verifier (best-of-N by the verifier: an oracle bound), by the learned reward model (best-of-N by its score; ` + rm + `) and by majority vote over the answers; trees are judged by the same three rules. Tokens per prompt are the generated tokens of all candidates (a tree's shared prefixes counted once). The measurement is deterministic: the same policies, seeds and build give the same tables. Trees are compared with flat majority at matched tokens: each seed's flat majority curve interpolated linearly at the tree's tokens per prompt. `
}

// ttcReport is what the test-time compute reports share: the claim, the
// tables, the checks on the runs' records, the answer-time measurement
// and its checks, the plots.
func ttcReport() Report {
	return Report{
		Claim:  `spending more samples per prompt at answer time (best-of-N by a verifier or by a learned reward model, majority vote) raises accuracy, for the base policy and for an RL-trained one; an entropy tree at answer time spends its tokens at least as well as flat sampling.`,
		Source: "Snell et al. 2024 (scaling test-time compute); Brown et al. 2024 (large language monkeys); TreeRL (Hou et al. 2025) for trees",
		Tables: []Table{
			{Title: "Base policy (mark 0)", At: "tokens:0", Metrics: []string{"eval/acc", "eval/pass@k", "eval/maj@k", "eval/tokens"}},
			{Title: "After RL (10,000 sampled tokens)", At: atEnd, Metrics: []string{"eval/acc", "eval/pass@k", "eval/maj@k", "eval/tokens"}},
		},
		// The config declares the design (its checks are these); these
		// serve a config that declares none.
		Checks: []Check{
			{Name: "majority_base", Variant: "k16", Metric: "eval/maj@k", At: "tokens:0", Want: Higher, Margin: 0.02, Effect: 0.05},
			{Name: "majority_rl", Variant: "k16", Metric: "eval/maj@k", At: atEnd, Want: Higher, Margin: 0.02, Effect: 0.05},
		},
		AnswerTime: &AnswerTime{
			Variant: "k1", Ns: []int{1, 2, 4, 8, 16}, TreeLeaves: []int{4, 16},
			Checks: []AnswerCheck{
				{Name: "rm_best_of_n_base", Policy: PolicyBase, Method: "best_of_n", N: 16, Against: "best_of_n", AgainstN: 1, Want: Higher, Margin: 0.02},
				{Name: "rm_best_of_n_rl", Policy: PolicyRL, Method: "best_of_n", N: 16, Against: "best_of_n", AgainstN: 1, Want: Higher, Margin: 0.02},
				{Name: "tree_tokens_base", Policy: PolicyBase, Method: "tree_majority", N: 16, Against: "majority", Want: NotWorse, Margin: 0.03},
				{Name: "tree_tokens_rl", Policy: PolicyRL, Method: "tree_majority", N: 16, Against: "majority", Want: NotWorse, Margin: 0.03},
			},
			Compare: ttcComparisons(),
		},
		Plots: []Plot{{Metric: "eval/maj@k", X: report.XTokens}, {Metric: "eval/pass@k", X: report.XTokens}},
	}
}

// ttcComparisons are the test-time compute report's comparisons without
// a verdict, for both policies: the reward model against majority vote
// and against the oracle at 16, trees against flat sampling at equal
// leaves and at matched tokens.
func ttcComparisons() []AnswerCheck {
	var out []AnswerCheck
	for _, pol := range []string{PolicyBase, PolicyRL} {
		out = append(out,
			AnswerCheck{Policy: pol, Method: "best_of_n", N: 16, Against: "majority", AgainstN: 16},
			AnswerCheck{Policy: pol, Method: "best_of_n", N: 16, Against: "oracle", AgainstN: 16},
			AnswerCheck{Policy: pol, Method: "majority", N: 16, Against: "majority", AgainstN: 1},
			AnswerCheck{Policy: pol, Method: "tree_majority", N: 16, Against: "majority", AgainstN: 16},
			AnswerCheck{Policy: pol, Method: "tree_best", N: 16, Against: "best_of_n"},
			AnswerCheck{Policy: pol, Method: "tree_oracle", N: 16, Against: "oracle"},
		)
	}
	return out
}

func recipe() Report {
	return Report{
		Number: 10, Name: "recipe", Title: "The recipe", Experiment: "econ_recipe_v2",
		Claim:  `the best combination of the levers above reaches a target accuracy with fewer sampled tokens and less wall time than a naive setup.`,
		Source: "this suite",
		Design: `A held-out confirmation (experiment ` + "`econ_recipe_v2`" + `; the first design, ` + "`econ_recipe`" + `, scored its runs on eval prompts 39% of which the levers had been scored on). Task: two-digit addition with the carry scratchpad, from the quickstart's weak base policy (300 supervised steps) at pretraining seed 1 — not seed 0, on which the levers were chosen. ` + "`naive`" + `: flat sampling of 8 per prompt, no filtering, float32, the task's full length, fresh rollouts, temperature 1; its own runs, shared with no other report. ` + "`recipe`" + `: the levers whose point estimates came out ahead in the suite's first reports (dynamic sampling with 2 resample rounds, a response cap of 9 tokens with truncation, temperature 0.8), fixed in the config before these runs as in the first design. Those first reports were exploratory (none of the levers significant on its own) and have since been redesigned under declared designs — filtering and temperature on new seeds with 1,000 eval prompts, max_length on ` + "`chain`" + ` with detours — so the reports of this suite are not the evidence the levers were chosen on: none of them tests a 9-token cap on this task or temperature 0.8. The claim's "reaches a target accuracy with fewer sampled tokens" is tested as a higher greedy accuracy at 5,000 sampled tokens, half the budget, not as the tokens needed to reach a stated accuracy. The seeds start at 201 (the levers were chosen on seeds 1–5) and their number was set from a 3-seed pilot before the first run. The eval prompts are disjoint from those the levers were scored on: a run's eval prompts are drawn from its seed, and each that is among the first 100 eval prompts of seeds 1–5 (the eval sets of the filtering, max_length and temperature runs that chose the levers) is replaced by a further draw that is none of them (` + "`eval.exclude_seeds`, `eval.exclude_prompts`" + `; ` + "`rollout task show --config experiments/configs/econ/recipe.yaml --split eval --n 1000 --seed S`" + ` prints a run's eval prompts, and a test checks that none is among those of seeds 1–5). Every run samples 10,000 tokens (` + "`train.total_tokens`" + `, never exceeded) and is evaluated at 0, 5k and 10k sampled tokens (greedy accuracy, pass@4 and maj@4 from 4 samples, 1,000 held-out prompts); the variants of a seed ran side by side (` + "`rollout run --interleave`" + `), so every test is paired and the wall times comparable.`,
		Tables: []Table{
			{Title: "Held-out accuracy at 5,000 sampled tokens", At: atMid, Metrics: evalMetrics()},
			{Title: "Held-out accuracy at 10,000 sampled tokens", At: atEnd, Metrics: evalMetrics()},
			{Title: "Cost", At: "mean", Metrics: []string{"steps", "timing_s/gen", "timing_s/update", "wall_s"}},
		},
		// The config declares the design (its checks are these); these
		// serve a config that declares none.
		Checks: []Check{
			{Name: "recipe_accuracy", Variant: "recipe", Metric: "eval/acc", At: atMid, Want: Higher, Margin: 0.02, Effect: 0.05},
			{Name: "recipe_wall_time", Variant: "recipe", Metric: "wall_s", At: "mean", Want: NotHigher, Margin: 0},
			{Name: "recipe_accuracy_end", Variant: "recipe", Metric: "eval/acc", At: atEnd, Want: Higher, Margin: 0.02, Effect: 0.05, Family: design.Secondary},
		},
		Plots:   []Plot{accPlot(), {Metric: "eval/acc", X: report.XTime}},
		Minutes: 13,
	}
}
