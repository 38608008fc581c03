package report

import (
	"math"
	"strings"
)

// MetricInfo is what figures and the dashboard know about a metric: a
// readable label, its unit and the range its values can take. Bands are
// clipped to the range; y axes are labelled "Label (Unit)".
type MetricInfo struct {
	// Key is the metric's name in the store, e.g. "eval/acc".
	Key string `json:"key"`
	// Label reads as an axis title, e.g. "evaluation accuracy".
	Label string `json:"label"`
	// Unit is the values' unit ("share", "s", "tokens", "nats"); empty for
	// a pure number.
	Unit string `json:"unit,omitempty"`
	// Lo and Hi bound the values; -Inf and +Inf where unbounded.
	Lo float64 `json:"-"`
	Hi float64 `json:"-"`
	// Minimize is true when lower values are better (losses, KL, times).
	Minimize bool `json:"minimize"`
}

// AxisLabel is the label with its unit, e.g. "wall time of generation (s)".
func (m MetricInfo) AxisLabel() string {
	if m.Unit == "" {
		return m.Label
	}
	return m.Label + " (" + m.Unit + ")"
}

// Bounded reports whether the metric has a finite lower or upper bound.
func (m MetricInfo) Bounded() bool { return !math.IsInf(m.Lo, -1) || !math.IsInf(m.Hi, 1) }

// metricRule describes the metrics whose key matches: exactly (key), or by
// prefix or substring.
type metricRule struct {
	key, prefix, contains string
	label, unit           string
	lo, hi                float64
	minimize              bool
}

var (
	inf  = math.Inf(1)
	ninf = math.Inf(-1)
)

// metricRules is the registry, first match wins: exact keys, then
// families. A reward mixed from several terms (reward.format, reward.length
// in a config) can leave [0, 1]: Curves then does not clip (see
// MetricRange).
var metricRules = []metricRule{
	{key: "eval/acc", label: "evaluation accuracy", unit: "share", lo: 0, hi: 1},
	{key: "eval/tokens_mark", label: "evaluation token mark", unit: "tokens", lo: 0, hi: inf},
	{key: "eval/tokens", label: "tokens sampled by the evaluation", unit: "tokens", lo: 0, hi: inf},
	{key: "eval/reward_mean", label: "evaluation reward (mean)", lo: 0, hi: 1},
	{prefix: "eval/pass@", label: "evaluation pass@k", unit: "share", lo: 0, hi: 1},
	{prefix: "eval/maj@", label: "evaluation maj@k", unit: "share", lo: 0, hi: 1},
	{key: "reward/mean", label: "training reward (mean over responses)", lo: 0, hi: 1},
	{key: "reward/std", label: "training reward (std over responses)", lo: 0, hi: inf},
	{key: "budget/tokens", label: "sampled tokens per step", unit: "tokens", lo: 0, hi: inf},
	{key: "budget/tokens_cum", label: "sampled tokens (cumulative)", unit: "tokens", lo: 0, hi: inf},
	{key: "budget/prefill_tokens", label: "prefill tokens per step", unit: "tokens", lo: 0, hi: inf},
	{key: "budget/unspent", label: "unspent token budget", unit: "tokens", lo: 0, hi: inf},
	{key: "budget/flops", label: "sampling FLOPs per step", unit: "FLOPs", lo: 0, hi: inf},
	{key: "budget/train_flops", label: "training FLOPs per step", unit: "FLOPs", lo: 0, hi: inf},
	{key: "budget/train_flops_cum", label: "training FLOPs (cumulative)", unit: "FLOPs", lo: 0, hi: inf},
	{key: "rollout/entropy", label: "sampling entropy (mean per token)", unit: "nats", lo: 0, hi: inf},
	{key: "response_length/mean", label: "response length (mean)", unit: "tokens", lo: 0, hi: inf},
	{key: "response_length/clip_ratio", label: "responses cut at the length limit", unit: "share", lo: 0, hi: 1},
	{key: "actor/pg_clipfrac", label: "clipped policy-gradient terms", unit: "share", lo: 0, hi: 1},
	{key: "actor/grad_norm", label: "gradient norm", lo: 0, hi: inf},
	{key: "actor/pg_loss", label: "policy-gradient loss", lo: ninf, hi: inf, minimize: true},
	{key: "actor/kl_ref", label: "KL to the reference policy", unit: "nats", lo: 0, hi: inf, minimize: true},
	{key: "actor/ppo_kl", label: "KL to the sampling policy", unit: "nats", lo: ninf, hi: inf, minimize: true},
	{key: "mismatch/kl", label: "sampler–trainer KL", unit: "nats", lo: ninf, hi: inf, minimize: true},
	{key: "is/ratio_mean", label: "importance ratio (mean)", lo: 0, hi: inf},
	{key: "tree/forks", label: "forks per tree", lo: 0, hi: inf},
	{key: "tree/leaves", label: "leaves per tree", lo: 0, hi: inf},
	{key: "tree/unique_responses", label: "distinct responses per group", lo: 0, hi: inf},
	{key: "groups/filtered", label: "groups filtered (all rewards equal)", lo: 0, hi: inf},
	{key: "groups/kept", label: "groups kept for the update", lo: 0, hi: inf},
	{key: "groups/total", label: "groups sampled", lo: 0, hi: inf},
	{key: "wall_s", label: "wall time", unit: "s", lo: 0, hi: inf, minimize: true},
	{prefix: "timing_s/", label: "time of ", unit: "s", lo: 0, hi: inf, minimize: true},
	{prefix: "share/", label: "share of ", unit: "share", lo: 0, hi: 1},
	{contains: "_frac", label: "", unit: "share", lo: 0, hi: 1},
	{contains: "clip_ratio", label: "", unit: "share", lo: 0, hi: 1},
	{contains: "loss", label: "", lo: ninf, hi: inf, minimize: true},
	{contains: "kl", label: "", lo: ninf, hi: inf, minimize: true},
	{prefix: "tokens/", label: "tokens per ", unit: "tokens", lo: 0, hi: inf},
}

// Metric returns what the registry knows of a metric key: its label, unit,
// range and direction. A key of a family (timing_s/gen, share/gen_time) is
// labelled from the family and the key's last part; a key the registry
// does not know is its own label, unbounded, higher better.
func Metric(key string) MetricInfo {
	for _, r := range metricRules {
		var rest string
		switch {
		case r.key != "":
			if key != r.key {
				continue
			}
		case r.prefix != "":
			var ok bool
			if rest, ok = strings.CutPrefix(key, r.prefix); !ok || rest == "" {
				continue
			}
			if r.prefix == "eval/pass@" || r.prefix == "eval/maj@" {
				rest = ""
			}
		case !strings.Contains(key, r.contains):
			continue
		}
		label := r.label
		switch {
		case label == "":
			label = key
		case rest != "":
			label += strings.ReplaceAll(rest, "_", " ")
		}
		if r.prefix == "eval/pass@" || r.prefix == "eval/maj@" {
			label = "evaluation " + strings.TrimPrefix(key, "eval/")
		}
		return MetricInfo{Key: key, Label: label, Unit: r.unit, Lo: r.lo, Hi: r.hi, Minimize: r.minimize}
	}
	return MetricInfo{Key: key, Label: key, Lo: ninf, Hi: inf}
}

// MetricRange is the registry's range of a metric, in the form
// PlotOptions.Range takes: ok is false for metrics without a finite bound.
func MetricRange(metric string) (lo, hi float64, ok bool) {
	m := Metric(metric)
	return m.Lo, m.Hi, m.Bounded()
}

// MetricMinimize reports whether lower is better for a metric, in the
// form Options.Minimize takes.
func MetricMinimize(metric string) bool { return Metric(metric).Minimize }
