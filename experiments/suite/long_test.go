package suite

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config"
)

// The reports whose test bed is their own run on their task (compute on
// long_add, max_length on chain with detours, stale on two-digit
// addition), name every variant of their config in the design, and read
// accuracy only at token marks their config evaluates at (multiples of
// eval.every_tokens within train.total_tokens).
func TestLongReportsMatchTheirConfigs(t *testing.T) {
	for _, tc := range []struct {
		report, task string
	}{
		{"compute", "long_add"},
		{"max_length", "chain"},
		{"stale", "add"},
	} {
		t.Run(tc.report, func(t *testing.T) {
			r, ok := Find(tc.report)
			if !ok {
				t.Fatalf("no report %q", tc.report)
			}
			f, err := config.Load(filepath.Join("..", "..", r.Config()), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range f.Variants {
				if got := v.Config.Task.Name; got != tc.task {
					t.Errorf("variant %s runs task %q, want %q", v.Name, got, tc.task)
				}
				if !strings.Contains(r.Design, "`"+v.Name+"`") {
					t.Errorf("the design does not name variant `%s`", v.Name)
				}
			}
			var ats []string
			for _, tb := range r.Tables {
				ats = append(ats, tb.At)
			}
			for _, c := range r.Checks {
				ats = append(ats, c.At)
			}
			cfg := f.Variants[0].Config
			for _, at := range ats {
				rest, ok := strings.CutPrefix(at, "tokens:")
				if !ok {
					continue
				}
				mark, err := strconv.ParseInt(rest, 10, 64)
				if err != nil {
					t.Fatalf("at %q: %v", at, err)
				}
				every, total := cfg.Eval.EveryTokens, cfg.Train.TotalTokens
				if every <= 0 || mark%every != 0 || mark > total {
					t.Errorf("at %q: not an evaluation mark of the config (eval.every_tokens %d, train.total_tokens %d)", at, every, total)
				}
			}
		})
	}
}
