package reward

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// This file trains a reward model to order one prompt's candidates, the
// job it does in best-of-N: a pairwise (Bradley–Terry) loss over the
// right and wrong responses the base policy sampled for the same prompt,
// P(right ≻ wrong) = σ(z_right − z_wrong). The negatives are the policy's
// own wrong samples for that prompt, near misses that share its prompt,
// format and most of its digits, harder than the wrong responses to other
// prompts that a pointwise classifier also learns from; and each step
// weighs every (right, wrong) pair of its prompts, so the pairs the model
// still orders wrong carry most of the gradient.

// Group is one prompt's candidates with their verifier labels.
type Group struct {
	Prompt    string
	Responses []string
	Labels    []bool // the verifier's reward is 1
}

// Mixed reports whether the group has both a right and a wrong candidate,
// the groups a ranking loss and a within-prompt AUC read.
func (g Group) Mixed() bool {
	right := 0
	for _, l := range g.Labels {
		if l {
			right++
		}
	}
	return right > 0 && right < len(g.Labels)
}

// Groups gathers examples into one group per prompt, in the order the
// prompts first appear (Collect returns a prompt's samples together).
func Groups(data []Example) []Group {
	at := map[string]int{}
	var out []Group
	for _, ex := range data {
		i, ok := at[ex.Prompt]
		if !ok {
			i = len(out)
			at[ex.Prompt] = i
			out = append(out, Group{Prompt: ex.Prompt})
		}
		out[i].Responses = append(out[i].Responses, ex.Response)
		out[i].Labels = append(out[i].Labels, ex.Label)
	}
	return out
}

// RankingData samples the data a reward model learns to rank from:
// samples responses of base to each of prompts train-split prompts
// (Collect at temperature 1), grouped per prompt (Groups), with up to
// nearMisses near misses a right candidate (NearMisses, drawn from seed);
// and what Collect sampled and the number of near misses added.
func RankingData(ctx context.Context, base *policy.Model, tok *policy.Tokenizer, t task.Task, prompts, samples, nearMisses int, seed uint64) ([]Group, CollectStats, int, error) {
	data, st, err := Collect(ctx, base, tok, t, CollectConfig{Split: task.Train, Prompts: prompts, Samples: samples})
	if err != nil {
		return nil, st, 0, err
	}
	groups, near, err := NearMisses(t, Groups(data), nearMisses, seed)
	if err != nil {
		return nil, st, 0, err
	}
	return groups, st, near, nil
}

// PairAUC is the share of (right, wrong) pairs of one prompt's candidates
// that the scores order right (a right candidate scored above a wrong
// one; equal scores count half), and whether there is such a pair.
func PairAUC(labels []bool, scores []float64) (float64, bool) {
	var wins float64
	pairs := 0
	for i, a := range labels {
		if !a {
			continue
		}
		for j, b := range labels {
			if b {
				continue
			}
			pairs++
			switch {
			case scores[i] > scores[j]:
				wins++
			case scores[i] == scores[j]:
				wins += 0.5
			}
		}
	}
	if pairs == 0 {
		return 0, false
	}
	return wins / float64(pairs), true
}

// WithinPromptAUC is the mean PairAUC of the model's scores over the
// groups that have right and wrong candidates, and their number.
func (m *Model) WithinPromptAUC(groups []Group) (float64, int, error) {
	var sum float64
	n := 0
	for gi, g := range groups {
		if !g.Mixed() {
			continue
		}
		pairs := make([]Pair, len(g.Responses))
		for i, r := range g.Responses {
			pairs[i] = Pair{Prompt: g.Prompt, Response: r}
		}
		scores, err := m.Scores(pairs)
		if err != nil {
			return 0, 0, fmt.Errorf("within-prompt AUC: group %d: %w", gi, err)
		}
		auc, _ := PairAUC(g.Labels, scores)
		sum += auc
		n++
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("within-prompt AUC: no prompt has both right and wrong candidates")
	}
	return sum / float64(n), n, nil
}

// RankConfig is how a reward model is trained to rank: Adam (the body and
// the head at their own step sizes, the global gradient norm clipped) on
// the pairwise loss of PromptsPerStep prompts a step, each with up to
// PerLabel right and PerLabel wrong candidates, plus BCE times the mean
// binary cross-entropy of those candidates (which keeps the logits
// calibrated as probabilities; 0: the pairwise loss alone). The zero value
// of a field means its default (see Defaults).
type RankConfig struct {
	Steps          int     `yaml:"steps,omitempty" json:"steps"`                       // optimizer steps; default 1500
	PromptsPerStep int     `yaml:"prompts_per_step,omitempty" json:"prompts_per_step"` // default 8
	PerLabel       int     `yaml:"per_label,omitempty" json:"per_label"`               // right and wrong candidates per prompt and step, at most; default 4
	LR             float64 `yaml:"lr,omitempty" json:"lr"`                             // body; default 3e-4
	HeadLR         float64 `yaml:"head_lr,omitempty" json:"head_lr"`                   // score.weight and score.bias; default 1e-3
	MaxGradNorm    float64 `yaml:"max_grad_norm,omitempty" json:"max_grad_norm"`       // default 1
	BCE            float64 `yaml:"bce,omitempty" json:"bce"`                           // weight of the pointwise term; default 0
	Seed           uint64  `yaml:"seed,omitempty" json:"seed"`                         // order of prompts and candidates
}

// Defaults returns c with every zero field that has a default set to it.
func (c RankConfig) Defaults() RankConfig {
	if c.Steps == 0 {
		c.Steps = 1500
	}
	if c.PromptsPerStep == 0 {
		c.PromptsPerStep = 8
	}
	if c.PerLabel == 0 {
		c.PerLabel = 4
	}
	if c.LR == 0 {
		c.LR = 3e-4
	}
	if c.HeadLR == 0 {
		c.HeadLR = 1e-3
	}
	if c.MaxGradNorm == 0 {
		c.MaxGradNorm = 1
	}
	return c
}

// Validate reports the first setting out of range as a *field.Error.
func (c RankConfig) Validate() error {
	switch {
	case c.Steps < 0:
		return &field.Error{Key: "steps", Value: c.Steps, Msg: "want ≥ 0"}
	case c.PromptsPerStep < 1:
		return &field.Error{Key: "prompts_per_step", Value: c.PromptsPerStep, Msg: "want ≥ 1"}
	case c.PerLabel < 1:
		return &field.Error{Key: "per_label", Value: c.PerLabel, Msg: "want ≥ 1"}
	case !(c.BCE >= 0) || math.IsInf(c.BCE, 0):
		return &field.Error{Key: "bce", Value: c.BCE, Msg: "want ≥ 0"}
	}
	return TrainConfig{Steps: c.Steps, BatchSize: 1, LR: c.LR, HeadLR: c.HeadLR, MaxGradNorm: c.MaxGradNorm}.Validate()
}

// TrainRanking fits m in place to order the candidates of the groups that
// have right and wrong ones. It is deterministic for a given model, data
// and config. After every step onStep, if not nil, gets the step's
// progress; it may save or evaluate the model (checkpoints along
// training), and an error it returns stops training. Cancelling ctx stops
// training between steps with ctx's error.
func TrainRanking(ctx context.Context, m *Model, groups []Group, cfg RankConfig, onStep func(Step) error) error {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if m.Scoring == LikelihoodScore && cfg.BCE > 0 {
		return &field.Error{Key: "bce", Value: cfg.BCE, Msg: "want 0 with the likelihood scoring: a log-likelihood is not a logit"}
	}
	type encoded struct{ right, wrong [][]int }
	var data []encoded
	for gi, g := range groups {
		if !g.Mixed() {
			continue
		}
		var e encoded
		for i, r := range g.Responses {
			ids, err := m.Encode(g.Prompt, r)
			if err != nil {
				return fmt.Errorf("train ranking: group %d: %w", gi, err)
			}
			if g.Labels[i] {
				e.right = append(e.right, ids)
			} else {
				e.wrong = append(e.wrong, ids)
			}
		}
		data = append(data, e)
	}
	if len(data) == 0 {
		return fmt.Errorf("train ranking: no prompt has both right and wrong candidates")
	}
	opt := newOptimizer(m, TrainConfig{LR: cfg.LR, HeadLR: cfg.HeadLR, MaxGradNorm: cfg.MaxGradNorm})
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5a1e))
	order, next := rng.Perm(len(data)), 0
	pick := func(xs [][]int) [][]int {
		if len(xs) <= cfg.PerLabel {
			return xs
		}
		out := make([][]int, cfg.PerLabel)
		for i, j := range rng.Perm(len(xs))[:cfg.PerLabel] {
			out[i] = xs[j]
		}
		return out
	}
	for step := 0; step < cfg.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var seqs [][]int
		var labels []bool
		var prompt []int
		for k := 0; k < min(cfg.PromptsPerStep, len(data)); k++ {
			if next == len(order) {
				order, next = rng.Perm(len(data)), 0
			}
			e := data[order[next]]
			next++
			for _, s := range pick(e.right) {
				seqs, labels, prompt = append(seqs, s), append(labels, true), append(prompt, k)
			}
			for _, s := range pick(e.wrong) {
				seqs, labels, prompt = append(seqs, s), append(labels, false), append(prompt, k)
			}
		}
		loss, logits, err := m.rankLoss(seqs, labels, prompt, cfg.BCE)
		if err != nil {
			return fmt.Errorf("train ranking step %d: %w", step, err)
		}
		l := float64(mat.Data[float32](loss.Value())[0])
		norm, err := opt.step(loss)
		if err != nil {
			return fmt.Errorf("train ranking step %d: %w", step, err)
		}
		if onStep != nil {
			var wins float64
			pairs := 0
			for i := range seqs {
				for j := range seqs {
					if prompt[i] == prompt[j] && labels[i] && !labels[j] {
						pairs++
						if logits[i] > logits[j] {
							wins++
						}
					}
				}
			}
			if err := onStep(Step{Step: step + 1, Steps: cfg.Steps, Loss: l, Accuracy: wins / float64(pairs), GradNorm: norm}); err != nil {
				return err
			}
		}
	}
	return nil
}

// rankLoss is the pairwise loss of a step's candidates: the mean over the
// (right, wrong) pairs of the same prompt of −log σ(z_right − z_wrong),
// plus bce times the candidates' mean binary cross-entropy; and each
// candidate's logit.
func (m *Model) rankLoss(seqs [][]int, labels []bool, prompt []int, bce float64) (mat.Tensor, []float64, error) {
	if m.Scoring == LikelihoodScore {
		b, err := m.Body.NewBatch(seqs)
		if err != nil {
			return nil, nil, fmt.Errorf("ranking loss: %w", err)
		}
		rows, err := responseRows(b, seqs)
		if err != nil {
			return nil, nil, fmt.Errorf("ranking loss: %w", err)
		}
		f := &likelihoodRank{lp: m.Body.TokenLogProbs(b, m.Body.Logits(b), 1), rows: rows, labels: labels, prompt: prompt}
		loss := ag.NewOperator(f).Run()
		z := make([]float64, len(f.z))
		for i, v := range f.z {
			z[i] = float64(v)
		}
		return loss, z, nil
	}
	h, err := m.newHead(seqs)
	if err != nil {
		return nil, nil, fmt.Errorf("ranking loss: %w", err)
	}
	return h.run(&headRank{head: h, labels: labels, prompt: prompt, bce: bce})
}

// headRank is the pairwise loss (and the weighted BCE) over the scalar
// head's logits as one autograd function.
type headRank struct {
	*head
	labels []bool
	prompt []int // the step's index of each candidate's prompt
	bce    float64
	pairs  [][2]int // (right, wrong) indices
}

func (f *headRank) Forward() (mat.Tensor, error) {
	f.logits()
	f.pairs = rankPairs(f.labels, f.prompt)
	loss := pairLoss(f.z, f.pairs)
	if f.bce > 0 {
		var b float64
		for i, z := range f.z {
			b += bce(float64(z), label(f.labels[i]))
		}
		loss += f.bce * b / float64(len(f.z))
	}
	return mat.Scalar(float32(loss)), nil
}

func (f *headRank) Backward(gy mat.Tensor) error {
	g := float64(mat.Data[float32](gy.Value())[0])
	dz := pairGrad(f.z, f.pairs, g)
	if f.bce > 0 {
		for i, z := range f.z {
			dz[i] += float32(g * f.bce * (Sigmoid(float64(z)) - label(f.labels[i])) / float64(len(f.z)))
		}
	}
	f.backward(dz)
	return nil
}

// rankPairs are the (right, wrong) index pairs of candidates of the same
// prompt.
func rankPairs(labels []bool, prompt []int) [][2]int {
	var pairs [][2]int
	for i := range labels {
		for j := range labels {
			if prompt[i] == prompt[j] && labels[i] && !labels[j] {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	return pairs
}

// pairLoss is the mean over pairs of −log σ(z_right − z_wrong).
func pairLoss(z []float32, pairs [][2]int) float64 {
	var sum float64
	for _, p := range pairs {
		sum += softplus(float64(z[p[1]] - z[p[0]]))
	}
	return sum / float64(max(len(pairs), 1))
}

// pairGrad is g times the gradient of pairLoss with respect to z.
func pairGrad(z []float32, pairs [][2]int, g float64) []float32 {
	dz := make([]float32, len(z))
	for _, p := range pairs {
		// d/dz_right of softplus(z_wrong − z_right) is −σ(z_wrong − z_right).
		s := Sigmoid(float64(z[p[1]]-z[p[0]])) / float64(len(pairs))
		dz[p[0]] -= float32(g * s)
		dz[p[1]] += float32(g * s)
	}
	return dz
}

// softplus is log(1+eˣ), computed without overflow.
func softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

func label(l bool) float64 {
	if l {
		return 1
	}
	return 0
}

// head is the scalar head on chosen rows of the body's hidden states:
// z_i = w·h[rows[i]] + b, and its backward pass from the logits'
// gradients; the losses (headBCE, headRank) are built on it.
type head struct {
	hidden  mat.Tensor // [rows, dim]
	w, bias *nn.Param  // [1, dim], [1, 1]
	dim     int
	rows    []int     // the row of each sequence's last position
	z       []float32 // logits, kept for the backward pass
}

// newHead runs the body's forward pass over seqs and returns the head on
// each sequence's last row.
func (m *Model) newHead(seqs [][]int) (*head, error) {
	b, err := m.Body.NewBatch(seqs)
	if err != nil {
		return nil, err
	}
	h := &head{hidden: m.Body.Hidden(b), w: m.Weight, bias: m.Bias, dim: m.Body.Config.Dim, rows: make([]int, len(seqs))}
	for i, s := range seqs {
		h.rows[i] = b.Row(i, len(s)-1)
	}
	return h, nil
}

// run runs the loss f built on h and returns it with each sequence's
// logit.
func (f *head) run(loss ag.AutoGradFunction) (mat.Tensor, []float64, error) {
	out := ag.NewOperator(loss).Run()
	logits := make([]float64, len(f.z))
	for i, z := range f.z {
		logits[i] = float64(z)
	}
	return out, logits, nil
}

// Operands are the autograd operands of a loss built on the head.
func (f *head) Operands() []mat.Tensor { return []mat.Tensor{f.hidden, f.w, f.bias} }

// logits computes z.
func (f *head) logits() {
	h, w := mat.Data[float32](f.hidden.Value()), mat.Data[float32](f.w.Value())
	b := mat.Data[float32](f.bias.Value())[0]
	f.z = make([]float32, len(f.rows))
	for i, r := range f.rows {
		f.z[i] = dot(w, h[r*f.dim:(r+1)*f.dim]) + b
	}
}

// backward accumulates the gradients of the hidden states, the weight and
// the bias from the logits' gradients dz.
func (f *head) backward(dz []float32) {
	h, w := mat.Data[float32](f.hidden.Value()), mat.Data[float32](f.w.Value())
	gw := make([]float32, f.dim)
	var gb float32
	var gh []float32
	if f.hidden.RequiresGrad() {
		gh = make([]float32, len(h))
	}
	for i, r := range f.rows {
		hr := h[r*f.dim : (r+1)*f.dim]
		for j := range gw {
			gw[j] += float32(dz[i] * hr[j])
		}
		gb += dz[i]
		if gh != nil {
			ghr := gh[r*f.dim : (r+1)*f.dim]
			for j, wj := range w {
				ghr[j] += float32(dz[i] * wj)
			}
		}
	}
	if gh != nil {
		f.hidden.AccGrad(mat.NewDense[float32](mat.WithShape(len(h)/f.dim, f.dim), mat.WithBacking(gh)))
	}
	if f.w.RequiresGrad() {
		f.w.AccGrad(mat.NewDense[float32](mat.WithShape(1, f.dim), mat.WithBacking(gw)))
	}
	if f.bias.RequiresGrad() {
		f.bias.AccGrad(mat.NewDense[float32](mat.WithShape(1, 1), mat.WithBacking([]float32{gb})))
	}
}
