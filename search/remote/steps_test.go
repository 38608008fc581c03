package remote

import (
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search"
)

// A served policy knows no task's steps and gives no attention: the
// step-level fork scores and the step strategies are refused by name.
func TestCheckStepLevel(t *testing.T) {
	for _, tc := range []struct {
		st   search.Strategy
		want string
	}{
		{search.EntropyTree{M: 1, N: 1, L: 1, T: 1, Score: search.ScoreStepEntropy}, `fork score "step_entropy" needs the local engine`},
		{search.EntropyTree{M: 1, N: 1, L: 1, T: 1, Score: search.ScoreAttention}, `fork score "attention" needs the local engine`},
		{search.DefaultStepTree(), `strategy "tree_grpo" has no remote form`},
		{search.DefaultARPO(), `strategy "arpo" has no remote form`},
		{search.DefaultPivot(), `strategy "pivot" has no remote form`},
	} {
		if err := (&Sampler{}).Check(tc.st); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: error %v, want %q", tc.st.Name(), tc.st, err, tc.want)
		}
	}
}
