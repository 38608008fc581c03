package suite

import (
	"fmt"
	"strings"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/cost"
)

// writeCostModel writes the report's section on the cost model: the
// model fitted to the sweep at r.CostModel (package cost, the fit that
// results/cost_model.md validates), its predicted share of each
// variant's step, and for the last variant the whole prediction with its
// assumptions and where generation becomes the larger share
// (cost.WriteConfig). The sweep and the config are read from the current
// directory, the repository's root where rollout suite runs.
func writeCostModel(p *printer, r Report) error {
	sw, err := cost.ReadSweep(r.CostModel)
	if err != nil {
		return fmt.Errorf("suite: report %s: %w", r.Name, err)
	}
	m, err := cost.Fit(sw)
	if err != nil {
		return fmt.Errorf("suite: report %s: %w", r.Name, err)
	}
	f, err := config.Load(r.Config(), nil)
	if err != nil {
		return fmt.Errorf("suite: report %s: %w", r.Name, err)
	}
	p.f("## The cost model's extrapolation\n\n")
	p.f("The runs above measure this machine at three sizes; the cost model (package `experiments/cost`, fitted to the CPU time of each phase in `%s`, validated on held-out points in [cost_model.md](cost_model.md)) says what the shares become at other sizes, lengths and hardware. Its prediction for each variant's step, every response at the task's cap (the worst case; the runs' responses are shorter):\n\n", r.CostModel)
	p.f("| variant | model | predicted generation share, this machine | roofline, 10 FLOP/byte (a CPU) | roofline, 300 FLOP/byte (a GPU at bf16) |\n|---|---|--:|--:|--:|\n")
	var last cost.Step
	for _, v := range f.Variants {
		s, err := cost.StepOf(v.Config)
		if err != nil {
			return fmt.Errorf("suite: report %s: variant %s: %w", r.Name, v.Name, err)
		}
		p.f("| %s | dim %d × %d layers (%.1f M matrix weights) | %.0f%% | %.0f%% | %.0f%% |\n", v.Name, s.Model.Dim, s.Model.Layers, float64(s.Model.MatmulParams())/1e6,
			100*cost.GenerationShare(m.Predict(s)), 100*cost.RooflineShare(s, 10), 100*cost.RooflineShare(s, 300))
		last = s
	}
	p.f("\n")
	var b strings.Builder
	if err := cost.WriteConfig(&b, "variant "+f.Variants[len(f.Variants)-1].Name, last, m); err != nil {
		return fmt.Errorf("suite: report %s: %w", r.Name, err)
	}
	p.f("%s\n\n", strings.TrimSpace(b.String()))
	return nil
}
