package tracking

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
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
func (s *Store) Export(w io.Writer, runIDs []string, what ExportKind, format ExportFormat) error {
	if _, err := ParseExportFormat(string(format)); err != nil {
		return err
	}
	runs := make([]Run, len(runIDs))
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
		err = s.exportMetrics(bw, runs, format)
	case ExportTrajectories:
		err = s.exportTrajectories(bw, runs, format)
	case ExportGroups:
		if format != JSONL {
			return fmt.Errorf("export groups: only as %s (a group is a tree, not a row)", JSONL)
		}
		err = s.exportGroups(bw, runs)
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

func appendRunFields(b []byte, r *Run) []byte {
	b = append(b, `{"run":`...)
	b = record.AppendJSONString(b, r.ID)
	b = append(b, `,"experiment":`...)
	b = record.AppendJSONString(b, r.Experiment)
	b = append(b, `,"variant":`...)
	b = record.AppendJSONString(b, r.Variant)
	b = append(b, `,"seed":`...)
	return strconv.AppendInt(b, r.Seed, 10)
}

func (s *Store) exportMetrics(w *bufio.Writer, runs []Run, format ExportFormat) error {
	if format == CSV {
		return s.exportMetricsCSV(w, runs)
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
			b = record.AppendJSONFloat(b, m.Elapsed.Seconds())
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
				b = record.AppendJSONString(b, k)
				b = append(b, ':')
				b = record.AppendJSONFloat(b, m.Values[k])
			}
			b = append(b, "}}\n"...)
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) exportMetricsCSV(w *bufio.Writer, runs []Run) error {
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

func (f *trajectoryFormatter) begin(buf *bytes.Buffer) {
	f.buf = buf
	if f.csv {
		f.cw = csv.NewWriter(buf)
		if f.row == nil {
			f.row = trajectoryColumns() // overwritten cell by cell
		}
	}
}

func (f *trajectoryFormatter) end() error {
	if f.cw != nil {
		f.cw.Flush()
		return f.cw.Error()
	}
	return nil
}

func (f *trajectoryFormatter) group(r *Run, step, index int, g *record.Group) error {
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
			c[1] = record.AppendFloats(c[1][:0], f.logprobs, ' ', false)
			c[2] = record.AppendFloats(c[2][:0], f.entropies, ' ', false)
			c[3] = record.AppendFloats(c[3][:0], l.Advantages, ' ', false)
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
		b = record.AppendJSONString(b, g.Strategy)
		b = append(b, `,"prompt":`...)
		b = record.AppendJSONString(b, g.Prompt)
		b = append(b, `,"text":`...)
		b = record.AppendJSONString(b, l.Text)
		b = append(b, `,"reward":`...)
		if l.Scored {
			b = record.AppendJSONFloat(b, l.Reward)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"reason":`...)
		b = record.AppendJSONString(b, l.Reason)
		b = append(b, `,"tokens":[`...)
		b = appendInts(b, f.tokens, ',')
		b = append(b, `],"logprobs":[`...)
		b = record.AppendFloats(b, f.logprobs, ',', true)
		b = append(b, `],"entropies":[`...)
		b = record.AppendFloats(b, f.entropies, ',', true)
		b = append(b, `],"advantages":[`...)
		b = record.AppendFloats(b, l.Advantages, ',', true)
		b = append(b, "]}\n"...)
		f.buf.Write(b)
		f.b = b
	}
	return nil
}

func (s *Store) exportTrajectories(w io.Writer, runs []Run, format ExportFormat) error {
	if format == CSV {
		cw := csv.NewWriter(w)
		if err := cw.Write(trajectoryColumns()); err != nil {
			return err
		}
		if cw.Flush(); cw.Error() != nil {
			return cw.Error()
		}
	}
	return s.formatGroups(w, runs, func() groupFormatter { return &trajectoryFormatter{csv: format == CSV} })
}

// groupLineFormatter writes one JSON line per group.
type groupLineFormatter struct {
	buf *bytes.Buffer
	b   []byte
}

func (f *groupLineFormatter) begin(buf *bytes.Buffer) { f.buf = buf }
func (f *groupLineFormatter) end() error              { return nil }
func (f *groupLineFormatter) group(r *Run, step, index int, g *record.Group) error {
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

func (s *Store) exportGroups(w io.Writer, runs []Run) error {
	return s.formatGroups(w, runs, func() groupFormatter { return &groupLineFormatter{} })
}

// groupFormatter turns groups into bytes; each export worker has its own.
type groupFormatter interface {
	begin(buf *bytes.Buffer)
	group(r *Run, step, index int, g *record.Group) error
	end() error
}

// exportBatch is a run of consecutive groups formatted by one worker.
type exportBatch struct {
	run   *Run
	arena []byte
	keys  [][]byte
	raws  [][]byte
	out   bytes.Buffer
	err   error
	done  chan struct{}
	bytes int
}

// formatGroups streams every group of the runs through formatters running
// on GOMAXPROCS workers and writes their output to w in store order.
func (s *Store) formatGroups(w io.Writer, runs []Run, newFormatter func() groupFormatter) error {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *exportBatch, 2*workers)
	order := make(chan *exportBatch, 4*workers)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := newFormatter()
			var g record.Group
			for job := range jobs {
				job.out.Grow(3 * job.bytes)
				f.begin(&job.out)
				for i, raw := range job.raws {
					step, first, err := parseGroupKey(job.keys[i])
					if err == nil {
						err = eachInChunk(first, raw, func(index int, enc []byte) error {
							if err := record.Decode(enc, &g); err != nil {
								return fmt.Errorf("step %d group %d: %w", step, index, err)
							}
							return f.group(job.run, step, index, &g)
						})
					}
					if err != nil {
						job.err = fmt.Errorf("run %s: %w", job.run.ID, err)
						break
					}
				}
				if err := f.end(); job.err == nil && err != nil {
					job.err = err
				}
				close(job.done)
			}
		}()
	}
	// The writer drains batches in order.
	writeErr := make(chan error, 1)
	go func() {
		var err error
		for job := range order {
			<-job.done
			if err == nil {
				err = job.err
				if err == nil {
					_, err = w.Write(job.out.Bytes())
				}
				if err != nil {
					close(quit)
				}
			}
		}
		writeErr <- err
	}()

	const maxChunks, maxBytes = 64, 1 << 20
	send := func(job *exportBatch) bool {
		select {
		case order <- job:
		case <-quit:
			return false
		}
		select {
		case jobs <- job:
			return true
		case <-quit:
			close(job.done)
			return false
		}
	}
	var readErr error
	for i := range runs {
		r := &runs[i]
		job := &exportBatch{run: r, done: make(chan struct{})}
		readErr = s.view(func(tx *bolt.Tx) error {
			b, err := runData(tx, r.ID, bucketGroups)
			if err != nil {
				return err
			}
			return b.ForEach(func(k, v []byte) error {
				// Copy out of the transaction into the batch's arena.
				if job.arena == nil {
					job.arena = make([]byte, 0, maxBytes+len(v)+12*maxChunks)
				}
				start := len(job.arena)
				job.arena = append(job.arena, k...)
				job.arena = append(job.arena, v...)
				job.keys = append(job.keys, job.arena[start:start+len(k)])
				job.raws = append(job.raws, job.arena[start+len(k):len(job.arena)])
				job.bytes += len(v)
				if len(job.raws) >= maxChunks || job.bytes >= maxBytes {
					if !send(job) {
						return errStopped
					}
					job = &exportBatch{run: r, done: make(chan struct{})}
				}
				return nil
			})
		})
		if readErr == nil && len(job.raws) > 0 && !send(job) {
			readErr = errStopped
		}
		if readErr != nil {
			break
		}
	}
	close(jobs)
	close(order)
	wg.Wait()
	err := <-writeErr
	if err == nil && !errors.Is(readErr, errStopped) {
		err = readErr
	}
	return err
}

var errStopped = errors.New("export stopped")

func appendInts(b []byte, xs []int, sep byte) []byte {
	for i, x := range xs {
		if i > 0 {
			b = append(b, sep)
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return b
}
