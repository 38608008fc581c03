package rl

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/cputime"
	"github.com/rollout-rl/rollout/search"
)

// packingStrategies are trees of every strategy (and a flat group, whose
// leaves share their prompt), small enough for a quick test.
var packingStrategies = []struct {
	name   string
	params map[string]string
}{
	{"flat", map[string]string{"n": "4"}},
	{"entropy_tree", map[string]string{"m": "2", "n": "2", "l": "2", "t": "2"}},
	{"random_tree", map[string]string{"m": "2", "n": "2", "l": "2", "t": "2"}},
	{"segment_tree", map[string]string{"s": "4", "b": "2", "w": "4"}},
}

// TestTreePackingGradientMatchesPerLeaf: on the groups of every strategy,
// the packed update's loss gradient is the per-leaf pass's to float32
// rounding (every parameter's gradient within a relative L2 distance of
// 1e-5), with the KL term, the entropy bonus, a correction weight, every
// aggregation, overlong filtering and minibatches that split groups; π_old
// and π_ref agree too, and the packed pass runs fewer FLOPs on trees. The
// advantages and π_old are perturbed at random so that every term, clipped
// ones included, has a gradient.
func TestTreePackingGradientMatchesPerLeaf(t *testing.T) {
	cases := []struct {
		agg, correction string
		overlong        Overlong
		minibatches     int
	}{
		{"token_mean", "none", OverlongTruncate, 1},
		{"seq_mean_token_mean", "tis", OverlongFilter, 2},
		{"seq_mean_token_sum_norm", "decoupled", OverlongTruncate, 3},
	}
	for _, sc := range packingStrategies {
		for _, tc := range cases {
			name := fmt.Sprintf("%s/%s/%s/%d", sc.name, tc.agg, tc.overlong, tc.minibatches)
			t.Run(name, func(t *testing.T) {
				s := smallSetup(t, Config{Steps: 1, PromptsPerStep: 3, LossAgg: tc.agg, Correction: tc.correction, KLCoef: 0.05, EntropyCoef: 0.01, Minibatches: tc.minibatches})
				s.Train.LossAgg, s.Train.Overlong = tc.agg, tc.overlong
				s.MaxTokens = 8
				s.Strategy, _ = search.NewStrategy(sc.name, sc.params)
				ref, err := policy.NewModel(s.Policy.Config, 9)
				if err != nil {
					t.Fatal(err)
				}
				s.Reference = ref
				loop, err := New(s)
				if err != nil {
					t.Fatal(err)
				}
				groups, err := loop.generate(context.Background(), 3)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(5, uint64(len(name))))
				var batch []staleGroup
				for _, sg := range groups {
					for _, leaf := range sg.Group.Leaves() {
						for i := range leaf.Advantages {
							leaf.Advantages[i] = rng.NormFloat64()
						}
						// A third cut at the cap (the rest as if ended by
						// EOS), which overlong filtering leaves out.
						leaf.Finish = search.FinishEOS
						if rng.IntN(3) == 0 {
							leaf.Finish = search.FinishLength
						}
					}
					batch = append(batch, staleGroup{group: sg.Group, prompt: sg.Prompt})
				}
				seqs := trainingSequences(batch, tc.overlong)
				temp := s.Sampling.Temperature
				logProbs := map[bool][]trainSeq{}
				for _, packed := range []bool{false, true} {
					loop.s.Train.TreePacking = packed
					cp := append([]trainSeq(nil), seqs...)
					if _, err := loop.oldLogProbs(cp, temp, map[string]float64{}); err != nil {
						t.Fatal(err)
					}
					logProbs[packed] = cp
				}
				for i := range seqs {
					for _, lp := range []func(trainSeq) []float64{
						func(d trainSeq) []float64 { return d.old },
						func(d trainSeq) []float64 { return d.rf },
					} {
						a, b := lp(logProbs[false][i]), lp(logProbs[true][i])
						for k := range a {
							if math.Abs(a[k]-b[k]) > 1e-5*math.Max(1, math.Abs(a[k])) {
								t.Fatalf("sequence %d token %d: per-leaf log-prob %v, packed %v", i, k, a[k], b[k])
							}
						}
					}
				}
				// The per-leaf π_old and π_ref for both passes, π_old moved
				// so that some ratios leave the clip range.
				seqs = logProbs[false]
				for i := range seqs {
					for k := range seqs[i].old {
						seqs[i].old[k] += 0.3 * rng.NormFloat64()
					}
				}
				grads := func(packed bool) ([][]float32, objectiveStats, int64) {
					loop.s.Train.TreePacking = packed
					var out [][]float32
					var stats objectiveStats
					var flops int64
					for mb := 0; mb < tc.minibatches; mb++ {
						lo, hi := len(seqs)*mb/tc.minibatches, len(seqs)*(mb+1)/tc.minibatches
						obj, loss, b, err := loop.minibatchLoss(seqs[lo:hi], temp)
						if err != nil {
							t.Fatal(err)
						}
						if err := ag.Backward(loss); err != nil {
							t.Fatal(err)
						}
						stats.tokens += obj.stats.tokens
						stats.clipped += obj.stats.clipped
						flops += b.ForwardFLOPs(s.Policy.Config)
						for k, p := range s.Policy.Params() {
							if mb == 0 {
								out = append(out, make([]float32, p.Size()))
							}
							if p.HasGrad() {
								g := mat.Data[float32](p.Grad())
								for j := range g {
									out[k][j] += g[j]
								}
							}
							p.ZeroGrad()
						}
					}
					return out, stats, flops
				}
				want, wantStats, leafFLOPs := grads(false)
				got, gotStats, packedFLOPs := grads(true)
				if wantStats.tokens == 0 || wantStats.clipped == 0 {
					t.Fatalf("the test has %d tokens, %d clipped: want both", wantStats.tokens, wantStats.clipped)
				}
				if gotStats != wantStats {
					t.Errorf("statistics: packed %+v, per-leaf %+v", gotStats, wantStats)
				}
				for k, np := range s.Policy.NamedParams() {
					if d := relDist(got[k], want[k]); d > 1e-5 || math.IsNaN(d) {
						t.Errorf("%s: packed gradient at relative distance %.3g from the per-leaf one (> 1e-5)", np.Name, d)
					}
				}
				if packedFLOPs >= leafFLOPs {
					t.Errorf("packed pass %d FLOPs, per-leaf %d: want fewer", packedFLOPs, leafFLOPs)
				}
			})
		}
	}
}

// relDist is ‖a − b‖ / ‖b‖ (‖a − b‖ when b is 0).
func relDist(a, b []float32) float64 {
	var diff, norm float64
	for i := range b {
		d := float64(a[i]) - float64(b[i])
		diff += d * d
		norm += float64(b[i]) * float64(b[i])
	}
	if norm == 0 {
		return math.Sqrt(diff)
	}
	return math.Sqrt(diff / norm)
}

// TestTreePackingEveryKernelPath reruns the gradient equivalence under
// every other kernel path this CPU has (the path is chosen once per
// process, by policy.KernelEnvVar).
func TestTreePackingEveryKernelPath(t *testing.T) {
	if os.Getenv(policy.KernelEnvVar) != "" {
		t.Skipf("%s is set: only that path is tested", policy.KernelEnvVar)
	}
	const test = "TestTreePackingGradientMatchesPerLeaf"
	for _, name := range policy.KernelPaths() {
		if name == policy.KernelPath() {
			continue
		}
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$", "-test.count", "1", "-test.v")
			cmd.Env = append(os.Environ(), policy.KernelEnvVar+"="+name)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s=%s go test -run %s: %v\n%s", policy.KernelEnvVar, name, test, err, out)
			}
			if !strings.Contains(string(out), "--- PASS: "+test) || strings.Contains(string(out), "not available") {
				t.Errorf("%s=%s: %s did not pass on that path:\n%s", policy.KernelEnvVar, name, test, out)
			}
		})
	}
}

// BenchmarkTreeUpdate is one update (π_old's pass, then one epoch of one
// minibatch: forward, backward and Adam) on the groups of two long_add
// prompts (4 to 6 digits, rewritten) sampled by EPTree (m, n, l, t), on the
// tiny model at max_position_embeddings 160 (the shape of
// experiments/configs/treerl_headline.yaml), briefly pretrained (300 steps
// of 16 demonstrations, once per process: a policy whose trees fork where
// it is uncertain, not anywhere as random weights' do), with random
// advantages. per_leaf trains every leaf's full sequence
// (train.tree_packing false), packed the trees packed; the two run one
// after the other for each shape. Besides ns/op it reports
// train-flops/op, the update's budget/train_flops, and cpu-s/op, the
// process's CPU time per update (every core, the garbage collector
// included). On a shared machine, repeat the whole benchmark rather than
// each sub-benchmark (-count runs them in a row), so that the two passes'
// rounds interleave:
//
//	for i in 1 2 3; do go test ./experiments/rl -run XXX -bench TreeUpdate -benchtime 3x; done
func BenchmarkTreeUpdate(b *testing.B) {
	tk, err := task.New("long_add", task.LongAddParams{MinDigits: 4, MaxDigits: 6, Rewrite: true})
	if err != nil {
		b.Fatal(err)
	}
	base, err := benchBase()
	if err != nil {
		b.Fatal(err)
	}
	weights, err := policy.EncodeWeights(base.Model)
	if err != nil {
		b.Fatal(err)
	}
	shapes := []struct{ m, n, l, t int }{{2, 2, 1, 1}, {6, 2, 1, 2}}
	for _, sh := range shapes {
		for _, mode := range []string{"per_leaf", "packed"} { // side by side, for a shared machine
			name := fmt.Sprintf("%s/eptree-%d-%d-%d-%d", mode, sh.m, sh.n, sh.l, sh.t)
			b.Run(name, func(b *testing.B) {
				m, err := policy.DecodeWeights(base.Model.Config, weights)
				if err != nil {
					b.Fatal(err)
				}
				st, err := search.NewStrategy("entropy_tree", map[string]string{
					"m": fmt.Sprint(sh.m), "n": fmt.Sprint(sh.n), "l": fmt.Sprint(sh.l), "t": fmt.Sprint(sh.t)})
				if err != nil {
					b.Fatal(err)
				}
				train := DefaultConfig()
				train.Steps, train.PromptsPerStep, train.FilterGroups, train.Advantage = 1, 2, false, "tree"
				train.TreePacking = mode == "packed"
				loop, err := New(Setup{Task: tk, Tokenizer: base.Tokenizer, Policy: m, Strategy: st, Sampling: policy.DefaultSampling, Train: train, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				groups, err := loop.generate(context.Background(), train.PromptsPerStep)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 1))
				var batch []staleGroup
				for _, sg := range groups {
					for _, leaf := range sg.Group.Leaves() {
						for i := range leaf.Advantages {
							leaf.Advantages[i] = rng.NormFloat64()
						}
					}
					batch = append(batch, staleGroup{group: sg.Group, prompt: sg.Prompt})
				}
				var flops int64
				b.ResetTimer()
				cpu := cputime.Process()
				for range b.N {
					if flops, err = loop.update(batch, map[string]float64{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cputime.Process()-cpu).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(flops), "train-flops/op")
			})
		}
	}
}

// benchBase pretrains BenchmarkTreeUpdate's base policy, once per process.
var benchBase = sync.OnceValues(func() (*pretrain.Result, error) {
	tk, err := task.New("long_add", task.LongAddParams{MinDigits: 4, MaxDigits: 6, Rewrite: true})
	if err != nil {
		return nil, err
	}
	pc := pretrain.DefaultConfig()
	pc.Model.MaxSeq = 160
	pc.Steps, pc.BatchSize, pc.EvalPrompts = 300, 16, 10
	return pretrain.Train(context.Background(), tk, pc, nil)
})
