package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rollout-rl/rollout/tracking"
)

// WriteRuns prints runs as a terminal table (what `rollout ls` shows): id
// (first 12 characters), experiment, variant, seed, status (see
// StatusText), progress, sampled tokens, wall time and start.
func WriteRuns(w io.Writer, runs []tracking.Run) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft, PerColumn: []tw.Align{
			tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}}),
	)
	t.Header([]string{"run", "experiment", "variant", "seed", "status", "steps", "tokens", "time", "started"})
	for _, r := range runs {
		id := r.ID
		if len(id) > 12 {
			id = id[:12]
		}
		status := StatusText(r)
		if r.Resumes > 0 {
			status += fmt.Sprintf(" (resumed %d×)", r.Resumes)
		}
		if err := t.Append([]string{id, r.Experiment, r.Variant, strconv.FormatInt(r.Seed, 10), status,
			progress(r), strconv.FormatInt(r.Tokens, 10), r.Elapsed.Round(time.Second).String(), r.Start.Local().Format(time.DateTime)}); err != nil {
			return fmt.Errorf("listing runs: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("listing runs: %w", err)
	}
	return nil
}

// StatusText is a run's status as rollout ls and show print it: running,
// finished, failed, or stopped or interrupted with the last step committed
// ("stopped at step 3"; "stopped before step 0" when none is).
func StatusText(r tracking.Run) string {
	switch r.Status {
	case tracking.StatusStopped, tracking.StatusInterrupted:
		if r.LastStep < 0 {
			return string(r.Status) + " before step 0"
		}
		return fmt.Sprintf("%s at step %d", r.Status, r.LastStep)
	}
	return string(r.Status)
}

// progress is the last committed step of the total, "k/total" (step 0
// is the base policy's evaluation: a finished run reaches total), or "k"
// when the total is unknown; "–" before step 0 commits.
func progress(r tracking.Run) string {
	last := "–"
	if r.LastStep >= 0 {
		last = strconv.Itoa(r.LastStep)
	}
	if r.TotalSteps > 0 {
		return fmt.Sprintf("%s/%d", last, r.TotalSteps)
	}
	return last
}

// WriteRunDetail prints one run (what `rollout show RUN` shows): its
// record, the metrics of its last step when last is not nil, and its
// resolved config.
func WriteRunDetail(w io.Writer, r tracking.Run, last *tracking.StepMetrics) error {
	end := "—"
	if !r.End.IsZero() {
		end = r.End.Local().Format(time.DateTime)
	}
	_, err := fmt.Fprintf(w, "run        %s\nexperiment %s\nvariant    %s\nseed       %d\nstatus     %s%s\nsteps      %s\ntokens     %d\ntime       %s\nhost       %s\nversion    %s\nstart      %s\nend        %s\n",
		r.ID, r.Experiment, r.Variant, r.Seed, StatusText(r), errorSuffix(r.Error), progress(r), r.Tokens,
		r.Elapsed.Round(time.Millisecond), r.Host, r.Version, r.Start.Local().Format(time.DateTime), end)
	if err != nil {
		return fmt.Errorf("showing run %s: %w", r.ID, err)
	}
	if last != nil && len(last.Values) > 0 {
		fmt.Fprintf(w, "\nmetrics at step %d:\n", last.Step)
		names := make([]string, 0, len(last.Values))
		for k := range last.Values {
			names = append(names, k)
		}
		slices.Sort(names)
		width := 0
		for _, k := range names {
			width = max(width, len(k))
		}
		for _, k := range names {
			fmt.Fprintf(w, "  %-*s %.6g\n", width, k, last.Values[k])
		}
	}
	if r.Config != "" {
		fmt.Fprintf(w, "\nconfig:\n%s", r.Config)
		if r.Config[len(r.Config)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
	return nil
}

func errorSuffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}
