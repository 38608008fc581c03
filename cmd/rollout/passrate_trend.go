package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/passrate"
)

// passrateTrendArgs are the flags of `rollout passrate trend`.
type passrateTrendArgs struct {
	a, b, format string
	resamples    int
	seed         uint64
}

func newPassrateTrendCmd() *cobra.Command {
	var a passrateTrendArgs
	cmd := &cobra.Command{
		Use:   "trend BASE_outcomes.csv OTHER_outcomes.csv... --a METHOD --b METHOD [--seed 1] [--resamples 2000]",
		Short: "How the PassRate gap between two methods changes between measurements of the same prompts",
		Long: `Reads outcomes files that rollout passrate --out wrote for measurements of the same prompts
(other policies, or other sizes, on the same eval prompts at the same seed) and compares the
gap between two methods, --a's PassRate minus --b's (e.g. --a 'entropy(2,1,1,3)' --b
'random(2,1,1,3)'): for each file the two PassRates and the gap, and for each file after the
first the change of its gap from the first file's, each with a 95% percentile bootstrap
interval over the prompts resampled together in both files (paired; every interval over the
same resamples of --seed). With passrate's --seed and --resamples, a file's gap and interval
are those passrate printed for the pair. The files must hold both methods on the same prompts
(the same number, the same text at each index); otherwise the command names the file, prompt
and texts and exits 2. Printed as markdown, or --format json.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runPassrateTrend(cmd.OutOrStdout(), args, a) },
	}
	f := cmd.Flags()
	f.StringVar(&a.a, "a", "", "the method whose PassRate the gap starts from, as the table names it (required)")
	f.StringVar(&a.b, "b", "", "the method subtracted, as the table names it (required)")
	f.Uint64Var(&a.seed, "seed", 1, "seed of the bootstrap resamples")
	f.IntVar(&a.resamples, "resamples", 2000, "bootstrap resamples")
	f.StringVar(&a.format, "format", "markdown", "markdown or json")
	return cmd
}

// trendRow is one file's line of `rollout passrate trend`.
type trendRow struct {
	File string
	// PassA and PassB are the methods' PassRates, Gap A − B.
	PassA, PassB float64
	Gap          passrate.Interval
	// Change is the gap minus the first file's; nil for the first file.
	Change *passrate.Interval `json:",omitempty"`
}

// runPassrateTrend is `rollout passrate trend`.
func runPassrateTrend(w io.Writer, files []string, a passrateTrendArgs) error {
	switch {
	case a.a == "" || a.b == "":
		return usageError{fmt.Errorf("--a and --b: want the two methods, as the passrate table names them (e.g. --a 'entropy(2,1,1,3)' --b 'random(2,1,1,3)')")}
	case a.a == a.b:
		return usageError{fmt.Errorf("--a and --b are both %q: want two methods", a.a)}
	case a.resamples < 100:
		return usageError{fmt.Errorf("--resamples %d: want at least 100", a.resamples)}
	case a.format != "markdown" && a.format != "json":
		return usageError{fmt.Errorf("--format %q: want markdown or json", a.format)}
	}
	outs := make([][]passrate.PromptOutcome, len(files))
	for i, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return usageError{fmt.Errorf("outcomes: %w", err)}
		}
		outs[i], err = passrate.ReadOutcomes(f, path)
		f.Close()
		if err != nil {
			return usageError{err}
		}
	}
	bs := passrate.Bootstrap{Resamples: a.resamples, Level: 0.95, Seed: a.seed}
	rows := make([]trendRow, len(files))
	prompts := 0
	for i := 1; i < len(files); i++ {
		g, err := passrate.CompareGaps(outs[0], outs[i], a.a, a.b, bs)
		if err != nil {
			return usageError{fmt.Errorf("%s against %s: %w", files[i], files[0], err)}
		}
		rows[0] = trendRow{File: files[0], PassA: g.BasePassA, PassB: g.BasePassB, Gap: g.BaseGap}
		change := g.Change
		rows[i] = trendRow{File: files[i], PassA: g.OtherPassA, PassB: g.OtherPassB, Gap: g.OtherGap, Change: &change}
		prompts = g.Prompts
	}
	if a.format == "json" {
		return json.NewEncoder(w).Encode(struct {
			A, B    string
			Prompts int
			Rows    []trendRow
		}{a.a, a.b, prompts, rows})
	}
	diff := func(iv passrate.Interval) string {
		return fmt.Sprintf("%+.1f [%+.1f, %+.1f]", 100*iv.Est, 100*iv.Lo, 100*iv.Hi)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PassRate of %s (A) minus %s (B) on the same %d prompts, in points, with 95%% paired bootstrap intervals (%d resamples, seed %d); the change is each file's gap minus %s's:\n\n", a.a, a.b, prompts, a.resamples, a.seed, files[0])
	b.WriteString("| outcomes | PassRate A % | PassRate B % | A − B (paired) | change of A − B (paired) |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		change := "—"
		if r.Change != nil {
			change = diff(*r.Change)
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %s | %s |\n", r.File, 100*r.PassA, 100*r.PassB, diff(r.Gap), change)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
