package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unsafe"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/record/codec"
	"github.com/rollout-rl/rollout/tracking"
)

// ExportFormat is an export format.
type ExportFormat string

// Export formats.
const (
	// JSONL writes one JSON object per line.
	JSONL ExportFormat = "jsonl"
	// CSV writes a header row, then one row per record; arrays are
	// space-separated numbers in one cell.
	CSV ExportFormat = "csv"
)

// ParseExportFormat checks an export format name.
func ParseExportFormat(s string) (ExportFormat, error) {
	switch f := ExportFormat(s); f {
	case JSONL, CSV:
		return f, nil
	}
	return "", fmt.Errorf("export format %q: want %q or %q", s, JSONL, CSV)
}

// ExportKind selects the records to export.
type ExportKind string

// Exportable record kinds.
const (
	// ExportMetrics is one record per run and step: cumulative tokens,
	// wall time and every metric.
	ExportMetrics ExportKind = "metrics"
	// ExportTrajectories is one record per leaf (response): the
	// root-to-leaf tokens, log-probs, entropies and advantages, with
	// reward and reason.
	ExportTrajectories ExportKind = "trajectories"
	// ExportGroups is one record per rollout group: its record's JSON
	// (record.Group.AppendJSON, as `rollout sample --format json` prints
	// it) with run, step and group index (JSON lines only).
	ExportGroups ExportKind = "groups"
)

// ParseExportKind checks an export record kind.
func ParseExportKind(s string) (ExportKind, error) {
	switch w := ExportKind(s); w {
	case ExportMetrics, ExportTrajectories, ExportGroups:
		return w, nil
	}
	return "", fmt.Errorf("export %q: want %q, %q or %q", s, ExportMetrics, ExportTrajectories, ExportGroups)
}

// Export streams the chosen records of the given runs to w.
// ExportSource is what Export reads: runs, their metrics, and their groups
// streamed through formatters in store order (*tracking.Store).
type ExportSource interface {
	Run(id string) (tracking.Run, error)
	Metrics(runID string) ([]tracking.StepMetrics, error)
	MetricNames(runID string) ([]string, error)
	FormatGroups(w io.Writer, runs []tracking.Run, newFormatter func() tracking.GroupFormatter) error
}

// Export streams the chosen records of the given runs to w.
func Export(w io.Writer, s ExportSource, runIDs []string, what ExportKind, format ExportFormat) error {
	if _, err := ParseExportFormat(string(format)); err != nil {
		return err
	}
	runs := make([]tracking.Run, len(runIDs))
	for i, id := range runIDs {
		r, err := s.Run(id)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		runs[i] = r
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var err error
	switch what {
	case ExportMetrics:
		err = exportMetrics(bw, s, runs, format)
	case ExportTrajectories:
		err = exportTrajectories(bw, s, runs, format)
	case ExportGroups:
		if format != JSONL {
			return fmt.Errorf("export groups: only as %s (a group is a tree, not a row)", JSONL)
		}
		err = exportGroups(bw, s, runs)
	default:
		_, err = ParseExportKind(string(what))
	}
	if err != nil {
		return fmt.Errorf("export %s: %w", what, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export %s: %w", what, err)
	}
	return nil
}

func appendRunFields(b []byte, r *tracking.Run) []byte {
	b = append(b, `{"run":`...)
	b = codec.AppendJSONString(b, r.ID)
	b = append(b, `,"experiment":`...)
	b = codec.AppendJSONString(b, r.Experiment)
	b = append(b, `,"variant":`...)
	b = codec.AppendJSONString(b, r.Variant)
	b = append(b, `,"seed":`...)
	return strconv.AppendInt(b, r.Seed, 10)
}

func exportMetrics(w *bufio.Writer, s ExportSource, runs []tracking.Run, format ExportFormat) error {
	if format == CSV {
		return exportMetricsCSV(w, s, runs)
	}
	var b []byte
	for i := range runs {
		r := &runs[i]
		ms, err := s.Metrics(r.ID)
		if err != nil {
			return err
		}
		for _, m := range ms {
			b = appendRunFields(b[:0], r)
			b = append(b, `,"step":`...)
			b = strconv.AppendInt(b, int64(m.Step), 10)
			b = append(b, `,"tokens":`...)
			b = strconv.AppendInt(b, m.Tokens, 10)
			b = append(b, `,"time_s":`...)
			b = codec.AppendJSONFloat(b, m.Elapsed.Seconds())
			b = append(b, `,"metrics":{`...)
			names := make([]string, 0, len(m.Values))
			for k := range m.Values {
				names = append(names, k)
			}
			slices.Sort(names)
			for j, k := range names {
				if j > 0 {
					b = append(b, ',')
				}
				b = codec.AppendJSONString(b, k)
				b = append(b, ':')
				b = codec.AppendJSONFloat(b, m.Values[k])
			}
			b = append(b, "}}\n"...)
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func exportMetricsCSV(w *bufio.Writer, s ExportSource, runs []tracking.Run) error {
	seen := map[string]bool{}
	var names []string
	for _, r := range runs {
		ns, err := s.MetricNames(r.ID)
		if err != nil {
			return err
		}
		for _, n := range ns {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	cw := csv.NewWriter(w)
	header := append([]string{"run", "experiment", "variant", "seed", "step", "tokens", "time_s"}, names...)
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for _, r := range runs {
		ms, err := s.Metrics(r.ID)
		if err != nil {
			return err
		}
		for _, m := range ms {
			row[0], row[1], row[2] = r.ID, r.Experiment, r.Variant
			row[3] = strconv.FormatInt(r.Seed, 10)
			row[4] = strconv.Itoa(m.Step)
			row[5] = strconv.FormatInt(m.Tokens, 10)
			row[6] = strconv.FormatFloat(m.Elapsed.Seconds(), 'g', -1, 64)
			for j, n := range names {
				row[7+j] = ""
				if v, ok := m.Values[n]; ok {
					row[7+j] = strconv.FormatFloat(v, 'g', -1, 64)
				}
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// trajectoryFormatter writes one record per leaf, as JSON lines or CSV.
type trajectoryFormatter struct {
	csv   bool
	buf   *bytes.Buffer
	cw    *csv.Writer
	b     []byte
	row   []string
	cells [4][]byte // the array cells of a CSV row
	// scratch of one root-to-leaf path
	tokens              []int
	logprobs, entropies []float32
}

// trajectoryColumns are the CSV columns of exported trajectories.
func trajectoryColumns() []string {
	return []string{"run", "experiment", "variant", "seed", "step", "group", "leaf", "filtered", "strategy", "prompt", "text", "reward", "reason", "tokens", "logprobs", "entropies", "advantages"}
}

// Begin starts a batch written to buf.
func (f *trajectoryFormatter) Begin(buf *bytes.Buffer) {
	f.buf = buf
	if f.csv {
		f.cw = csv.NewWriter(buf)
		if f.row == nil {
			f.row = trajectoryColumns() // overwritten cell by cell
		}
	}
}

// End finishes a batch.
func (f *trajectoryFormatter) End() error {
	if f.cw != nil {
		f.cw.Flush()
		return f.cw.Error()
	}
	return nil
}

// Group formats one group.
func (f *trajectoryFormatter) Group(r *tracking.Run, step, index int, g *record.Group) error {
	for li, l := range g.Leaves {
		var err error
		f.tokens, f.logprobs, f.entropies, err = g.Path(l.Node, f.tokens[:0], f.logprobs[:0], f.entropies[:0])
		if err != nil {
			return fmt.Errorf("run %s step %d group %d leaf %d: %w", r.ID, step, index, li, err)
		}
		if f.csv {
			row, c := f.row, &f.cells
			row[0], row[1], row[2], row[3] = r.ID, r.Experiment, r.Variant, strconv.FormatInt(r.Seed, 10)
			row[4], row[5], row[6] = strconv.Itoa(step), strconv.Itoa(index), strconv.Itoa(li)
			row[7], row[8], row[9], row[10] = strconv.FormatBool(g.Filtered), g.Strategy, g.Prompt, l.Text
			row[11], row[12] = strconv.FormatFloat(l.Reward, 'g', -1, 64), l.Reason
			c[0] = appendInts(c[0][:0], f.tokens, ' ')
			c[1] = codec.AppendFloats(c[1][:0], f.logprobs, ' ', false)
			c[2] = codec.AppendFloats(c[2][:0], f.entropies, ' ', false)
			c[3] = codec.AppendFloats(c[3][:0], l.Advantages, ' ', false)
			for k := range c {
				// Views, not copies: csv.Writer.Write copies them out before
				// the buffers are reused.
				row[13+k] = unsafe.String(unsafe.SliceData(c[k]), len(c[k]))
			}
			if err := f.cw.Write(row); err != nil {
				return err
			}
			continue
		}
		b := appendRunFields(f.b[:0], r)
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(step), 10)
		b = append(b, `,"group":`...)
		b = strconv.AppendInt(b, int64(index), 10)
		b = append(b, `,"leaf":`...)
		b = strconv.AppendInt(b, int64(li), 10)
		b = append(b, `,"filtered":`...)
		b = strconv.AppendBool(b, g.Filtered)
		b = append(b, `,"strategy":`...)
		b = codec.AppendJSONString(b, g.Strategy)
		b = append(b, `,"prompt":`...)
		b = codec.AppendJSONString(b, g.Prompt)
		b = append(b, `,"text":`...)
		b = codec.AppendJSONString(b, l.Text)
		b = append(b, `,"reward":`...)
		if l.Scored {
			b = codec.AppendJSONFloat(b, l.Reward)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"reason":`...)
		b = codec.AppendJSONString(b, l.Reason)
		b = append(b, `,"tokens":[`...)
		b = appendInts(b, f.tokens, ',')
		b = append(b, `],"logprobs":[`...)
		b = codec.AppendFloats(b, f.logprobs, ',', true)
		b = append(b, `],"entropies":[`...)
		b = codec.AppendFloats(b, f.entropies, ',', true)
		b = append(b, `],"advantages":[`...)
		b = codec.AppendFloats(b, l.Advantages, ',', true)
		b = append(b, "]}\n"...)
		f.buf.Write(b)
		f.b = b
	}
	return nil
}

func exportTrajectories(w io.Writer, s ExportSource, runs []tracking.Run, format ExportFormat) error {
	if format == CSV {
		cw := csv.NewWriter(w)
		if err := cw.Write(trajectoryColumns()); err != nil {
			return err
		}
		if cw.Flush(); cw.Error() != nil {
			return cw.Error()
		}
	}
	return s.FormatGroups(w, runs, func() tracking.GroupFormatter { return &trajectoryFormatter{csv: format == CSV} })
}

// groupLineFormatter writes one JSON line per group.
type groupLineFormatter struct {
	buf *bytes.Buffer
	b   []byte
}

// Begin starts a batch written to buf.
func (f *groupLineFormatter) Begin(buf *bytes.Buffer) { f.buf = buf }

// End finishes a batch.
func (f *groupLineFormatter) End() error { return nil }

// Group formats one group.
func (f *groupLineFormatter) Group(r *tracking.Run, step, index int, g *record.Group) error {
	b := appendRunFields(f.b[:0], r)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(step), 10)
	b = append(b, `,"group":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, ',')
	start := len(b)
	b = g.AppendJSON(b)
	b = append(b[:start], b[start+1:]...) // the group's fields join the run's object
	b = append(b, '\n')
	f.buf.Write(b)
	f.b = b
	return nil
}

func exportGroups(w io.Writer, s ExportSource, runs []tracking.Run) error {
	return s.FormatGroups(w, runs, func() tracking.GroupFormatter { return &groupLineFormatter{} })
}

func appendInts(b []byte, xs []int, sep byte) []byte {
	for i, x := range xs {
		if i > 0 {
			b = append(b, sep)
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return b
}
