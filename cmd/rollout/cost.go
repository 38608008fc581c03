package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/cost"
)

// costArgs are the flags of `rollout cost`.
type costArgs struct {
	variant, measurements, measure, points string
	validate                               bool
	sets                                   []string
	repeats                                int
	budget                                 float64
}

func newCostCmd() *cobra.Command {
	var a costArgs
	cmd := &cobra.Command{
		Use:   "cost (CONFIG [--variant V] | --validate | --measure FILE) [--measurements FILE]",
		Short: "A cost model of the RL step: per-phase FLOPs, bytes and fitted time; where generation dominates",
		Long: `Counts the FLOPs and bytes of each phase of an RL step (prefill, decode, scoring
of π_old's log-probs, the update's forward and backward passes) and predicts each phase's
time with constants fitted to CPU-time measurements of the tiny, small and medium models
at batch sizes 8–128 and response lengths 32–512 (the --measurements file).

  rollout cost CONFIG     prints, with its assumptions, the predicted share of each phase of
                          one step of the config's variant, and at which response length,
                          model size and hardware balance (FLOP/s per byte/s) generation
                          becomes the larger share;
  rollout cost --validate prints the markdown report (results/cost_model.md): the fit, the
                          predicted against measured table of the held-out points, and the
                          crossovers;
  rollout cost --measure FILE  runs the measurement sweep (minutes; one core) and writes it
                          to FILE, rewritten after every run; --points fit or held-out
                          measures those points only (the fitted ones first, so that the
                          form can be checked on them before the held-out ones exist), an
                          existing FILE is resumed and extended: its points keep their runs.
                          Run it at normal priority: it measures time.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCost(cmd, args, a) },
	}
	f := cmd.Flags()
	f.StringVar(&a.variant, "variant", "", "variant of the config (default: the first)")
	f.StringArrayVar(&a.sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	f.StringVar(&a.measurements, "measurements", filepath.Join("results", "cost_model.json"), "the measurement sweep to fit (written by --measure)")
	f.BoolVar(&a.validate, "validate", false, "print the fit and its validation on the held-out points as markdown")
	f.StringVar(&a.measure, "measure", "", "run the measurement sweep and write it to this file")
	f.StringVar(&a.points, "points", "all", "--measure: the points to measure: fit, held-out or all")
	f.IntVar(&a.repeats, "repeats", 3, "--measure: rounds over the points, one run of each per round; each phase's minimum taken")
	f.Float64Var(&a.budget, "budget", 20, "--measure: no more runs of a point once its phases' minima add up to this many CPU seconds")
	return cmd
}

func runCost(cmd *cobra.Command, args []string, a costArgs) error {
	modes := 0
	for _, on := range []bool{len(args) == 1, a.validate, a.measure != ""} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return usageError{fmt.Errorf("cost: give exactly one of CONFIG, --validate and --measure FILE")}
	}
	if a.measure != "" {
		return measureCost(cmd, a)
	}
	sw, err := readSweep(a.measurements)
	if err != nil {
		return err
	}
	fit, err := cost.Fit(sw)
	if err != nil {
		return err
	}
	if a.validate {
		return cost.WriteReport(cmd.OutOrStdout(), sw, fit, a.measurements)
	}
	f, err := config.Load(args[0], a.sets)
	if err != nil {
		return usageError{err}
	}
	c, err := pickVariant(f, a.variant)
	if err != nil {
		return err
	}
	st, err := cost.StepOf(c)
	if err != nil {
		return usageError{fmt.Errorf("cost %s: %w", args[0], err)}
	}
	return cost.WriteConfig(cmd.OutOrStdout(), args[0], st, fit)
}

// measureCost runs the sweep and writes it to --measure, rewriting the
// file after every point.
func measureCost(cmd *cobra.Command, a costArgs) error {
	if a.repeats < 1 {
		return usageError{fmt.Errorf("--repeats %d: want at least 1", a.repeats)}
	}
	if a.budget < 0 {
		return usageError{fmt.Errorf("--budget %g: want ≥ 0", a.budget)}
	}
	var pts []cost.Point
	switch a.points {
	case "all":
		pts = cost.Grid()
	case "fit":
		pts = cost.FitGrid()
	case "held-out":
		pts = cost.HeldOutGrid()
	default:
		return usageError{fmt.Errorf("--points %q: want fit, held-out or all", a.points)}
	}
	var prev cost.Sweep
	if _, err := os.Stat(a.measure); err == nil {
		if prev, err = readSweep(a.measure); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "cost: resuming %s: %d points measured\n", a.measure, len(prev.Samples))
	}
	write := func(sw cost.Sweep) error {
		b, err := json.MarshalIndent(sw, "", " ")
		if err != nil {
			return err
		}
		tmp := a.measure + ".tmp"
		if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("cost: write %s: %w", a.measure, err)
		}
		return os.Rename(tmp, a.measure)
	}
	var werr error
	sw, err := cost.Run(cmd.Context(), pts, a.repeats, a.budget, runtime.NumCPU(), prev, func(sw cost.Sweep, s cost.Sample) {
		fmt.Fprintf(cmd.ErrOrStderr(), "cost: %s batch %d response %d: %v CPU s (minima of %d runs), load %.1f\n", s.Size, s.Batch, s.Response, s.Seconds, s.Repeats, s.Loads[len(s.Loads)-1])
		if werr == nil {
			werr = write(sw)
		}
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return write(sw)
}

// readSweep reads a measurement sweep written by --measure.
func readSweep(path string) (cost.Sweep, error) {
	sw, err := cost.ReadSweep(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cost.Sweep{}, usageError{fmt.Errorf("--measurements %s: no such file (rollout cost --measure FILE writes one): %w", path, err)}
	}
	if err != nil {
		return cost.Sweep{}, usageError{fmt.Errorf("--measurements %s: %w", path, err)}
	}
	return sw, nil
}
