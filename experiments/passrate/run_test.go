package passrate

import (
	"context"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/remote"
)

// RunRemote refuses what a completions server cannot sample before it
// sends anything (the sampler has no client: a request would fail
// differently).
func TestRunRemoteRefuses(t *testing.T) {
	tree := Spec{Name: "entropy(1,2,1,1)", Family: "entropy", Strategy: search.EntropyTree{M: 1, N: 2, L: 1, T: 1, Score: search.ScoreEntropy}}
	seg := Spec{Name: "segment(4,2,2)", Family: "segment", Strategy: search.SegmentTree{S: 4, B: 2, W: 2}}
	opts := func(specs ...Spec) Options {
		return Options{Prompts: 2, Batch: 8, K: 2, IIDNs: []int{1, 2}, Specs: specs, Bootstrap: DefaultBootstrap()}
	}
	for _, tc := range []struct {
		name     string
		sampling policy.Sampling
		o        Options
		want     string
	}{
		{"segment tree", policy.Sampling{Temperature: 1, TopP: 1}, opts(tree, seg), `method segment(4,2,2): remote: strategy "segment_tree" has no remote form`},
		{"top-k", policy.Sampling{Temperature: 1, TopP: 1, TopK: 5}, opts(tree), "top-k 5: a completions server takes temperature and top-p only"},
		{"bad options", policy.Sampling{Temperature: 1, TopP: 1}, Options{Prompts: 0, Batch: 1, K: 1}, "prompts = 0"},
	} {
		_, err := RunRemote(context.Background(), &remote.Sampler{}, rl.Setup{Sampling: tc.sampling}, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
