package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// badRequest marks errors in a request's parameters (status 400).
type badRequest struct{ err error }

func (e badRequest) Error() string { return e.err.Error() }
func (e badRequest) Unwrap() error { return e.err }

// rawJSON is a body already encoded.
type rawJSON []byte

// api adapts an endpoint: it acquires the store for the request, calls fn
// and writes its value as JSON (rawJSON as is), or the error.
func (h *Handler) api(fn func(*tracking.Store, *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, release, err := h.store.acquire()
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		v, err := fn(st, r)
		release()
		answer(w, r, v, err)
	})
}

// answer writes v as JSON (rawJSON as is), or err.
func answer(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	body, ok := v.(rawJSON)
	if !ok {
		if body, err = json.Marshal(v); err != nil {
			writeError(w, http.StatusInternalServerError, fmt.Errorf("%s: encoding the answer: %w", r.URL.Path, err))
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(body)
}

// errorStatus is 404 for what the store lacks, 400 for a bad request
// (parameters, and reports or curves asked of points or metrics the runs
// do not have), and 500 for the rest (a store that cannot be read).
func errorStatus(err error) int {
	var br badRequest
	switch {
	case errors.Is(err, tracking.ErrDamaged):
		return http.StatusInternalServerError
	case errors.Is(err, tracking.ErrNotFound):
		return http.StatusNotFound
	case errors.As(err, &br):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

func writeError(w http.ResponseWriter, status int, err error) {
	body, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
}

// ExperimentSummary is one line of the experiments page.
type ExperimentSummary struct {
	Name     string   `json:"name"`
	Variants []string `json:"variants"`
	Seeds    []int64  `json:"seeds"`
	Runs     int      `json:"runs"`
	// Status counts the runs by status.
	Status map[tracking.RunStatus]int `json:"status"`
	// StepsDone sums the runs' last committed steps (step 0 is the base
	// policy's evaluation, so a run's last step counts its updates);
	// StepsTotal sums their planned steps, 0 when a run's plan is unknown.
	StepsDone  int   `json:"steps_done"`
	StepsTotal int   `json:"steps_total"`
	Tokens     int64 `json:"tokens"`
	// LastUpdate is the latest end of a run, or for a run not ended its
	// start plus its elapsed time (the time of its last step, up to the
	// pauses between resumes); zero without runs.
	LastUpdate time.Time `json:"last_update,omitzero"`
}

func (h *Handler) experiments(st *tracking.Store, _ *http.Request) (any, error) {
	exps, err := st.Experiments()
	if err != nil {
		return nil, err
	}
	runs, err := st.Runs("")
	if err != nil {
		return nil, err
	}
	out := make([]ExperimentSummary, 0, len(exps))
	for _, e := range exps {
		var mine []tracking.Run
		for _, r := range runs {
			if r.Experiment == e.Name {
				mine = append(mine, r)
			}
		}
		out = append(out, summarize(e, mine))
	}
	return out, nil
}

// summarize counts an experiment's runs.
func summarize(e tracking.Experiment, runs []tracking.Run) ExperimentSummary {
	s := ExperimentSummary{Name: e.Name, Variants: variantOrder(e, runs), Seeds: []int64{}, Runs: len(runs), Status: map[tracking.RunStatus]int{}}
	known := true
	for _, r := range runs {
		if !slices.Contains(s.Seeds, r.Seed) {
			s.Seeds = append(s.Seeds, r.Seed)
		}
		s.Status[r.Status]++
		s.StepsDone += max(0, r.LastStep)
		s.StepsTotal += r.TotalSteps
		known = known && r.TotalSteps > 0
		s.Tokens += r.Tokens
		last := r.End
		if last.IsZero() {
			last = r.Start.Add(r.Elapsed)
		}
		if last.After(s.LastUpdate) {
			s.LastUpdate = last
		}
	}
	if !known {
		s.StepsTotal = 0
	}
	slices.Sort(s.Seeds)
	return s
}

// variantOrder is the experiment's variants in config order, then those
// only its runs name, by name: the order that fixes each variant's colour.
func variantOrder(e tracking.Experiment, runs []tracking.Run) []string {
	out := slices.Clone(e.Variants)
	var extra []string
	for _, r := range runs {
		if !slices.Contains(out, r.Variant) && !slices.Contains(extra, r.Variant) {
			extra = append(extra, r.Variant)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

// ExperimentDetail is what the experiment page shows besides the table and
// the curves.
type ExperimentDetail struct {
	Experiment tracking.Experiment `json:"experiment"`
	Summary    ExperimentSummary   `json:"summary"`
	Runs       []tracking.Run      `json:"runs"`
	// Metrics are the names any run recorded, sorted.
	Metrics []string `json:"metrics"`
	// DefaultMetrics are those of the report's defaults some run recorded.
	DefaultMetrics []string `json:"default_metrics"`
	// TokenMarks are the cumulative sampled-token counts of the runs'
	// evaluation rows (where the first default metric was recorded), the
	// points tokens:T can compare at.
	TokenMarks []int64 `json:"token_marks"`
}

func (h *Handler) experiment(st *tracking.Store, r *http.Request) (any, error) {
	name := r.PathValue("name")
	e, err := st.Experiment(name)
	if err != nil {
		return nil, err
	}
	runs, err := st.Runs(name)
	if err != nil {
		return nil, err
	}
	d := ExperimentDetail{Experiment: e, Summary: summarize(e, runs), Runs: runs, Metrics: []string{}, DefaultMetrics: []string{}, TokenMarks: []int64{}}
	if d.Runs == nil {
		d.Runs = []tracking.Run{}
	}
	for _, run := range runs {
		names, err := st.MetricNames(run.ID)
		if err != nil && !errors.Is(err, tracking.ErrNotFound) {
			return nil, err
		}
		for _, n := range names {
			if !slices.Contains(d.Metrics, n) {
				d.Metrics = append(d.Metrics, n)
			}
		}
	}
	slices.Sort(d.Metrics)
	for _, m := range h.opts.Report.DefaultMetrics {
		if slices.Contains(d.Metrics, m) {
			d.DefaultMetrics = append(d.DefaultMetrics, m)
		}
	}
	if len(d.DefaultMetrics) > 0 {
		for _, run := range runs {
			ss, err := st.MetricSeries(run.ID, d.DefaultMetrics[:1])
			if err != nil && !errors.Is(err, tracking.ErrNotFound) {
				return nil, err
			}
			if len(ss) == 1 {
				d.TokenMarks = append(d.TokenMarks, ss[0].Tokens...)
			}
		}
		slices.Sort(d.TokenMarks)
		d.TokenMarks = slices.Compact(d.TokenMarks)
	}
	return d, nil
}

// report answers what `rollout report EXPERIMENT --format json` prints,
// with --at, --metric and --baseline from the query (at, metric, baseline).
func (h *Handler) report(st *tracking.Store, r *http.Request) (any, error) {
	q := r.URL.Query()
	opts := h.opts.Report
	at := q.Get("at")
	if at == "" {
		at = string(report.AtFinal)
	}
	a, err := report.ParseAt(at)
	if err != nil {
		return nil, badRequest{err}
	}
	opts.At, opts.Metrics, opts.Baseline = a, q["metric"], q.Get("baseline")
	rep, err := report.Build(st, r.PathValue("name"), opts)
	if err != nil {
		return nil, badRequest{err}
	}
	var b bytes.Buffer
	if err := rep.Write(&b, report.FormatJSON); err != nil {
		return nil, err
	}
	return rawJSON(b.Bytes()), nil
}

// Curve is one variant's line on the curves endpoint: the mean over seeds
// at each x with the 95% t-interval [Lo, Hi] and the number of seeds N
// (null for values that are not finite).
type Curve struct {
	Variant string      `json:"variant"`
	X       []jsonFloat `json:"x"`
	Mean    []jsonFloat `json:"mean"`
	Lo      []jsonFloat `json:"lo"`
	Hi      []jsonFloat `json:"hi"`
	N       []int       `json:"n"`
	// Marks is true when the points are shared evaluation marks on the
	// tokens axis (see report.Curve).
	Marks bool `json:"marks"`
}

// jsonFloat encodes non-finite values as null.
type jsonFloat float64

// MarshalJSON writes the shortest form that reads back exactly, or null.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	return record.AppendJSONFloat(nil, float64(f)), nil
}

func jsonFloats(xs []float64) []jsonFloat {
	out := make([]jsonFloat, len(xs))
	for i, x := range xs {
		out[i] = jsonFloat(x)
	}
	return out
}

// CurvesAnswer is the curves endpoint's answer.
type CurvesAnswer struct {
	Metric string  `json:"metric"`
	X      string  `json:"x"`
	Curves []Curve `json:"curves"`
}

func (h *Handler) curves(st *tracking.Store, r *http.Request) (any, error) {
	q := r.URL.Query()
	metric := q.Get("metric")
	if metric == "" {
		return nil, badRequest{fmt.Errorf("curves: the query needs metric=NAME")}
	}
	x := q.Get("x")
	if x == "" {
		x = string(report.XStep)
	}
	xa, err := report.ParseXAxis(x)
	if err != nil {
		return nil, badRequest{fmt.Errorf("curves: x: %w", err)}
	}
	cs, err := report.Curves(st, r.PathValue("name"), report.PlotOptions{Metric: metric, X: xa, Variants: q["variant"],
		MarkMetric: h.opts.Report.MarkMetric, Range: h.opts.Range})
	if err != nil {
		return nil, badRequest{err}
	}
	out := CurvesAnswer{Metric: metric, X: string(xa), Curves: make([]Curve, len(cs))}
	for i, c := range cs {
		out.Curves[i] = Curve{Variant: c.Variant, X: jsonFloats(c.X), Mean: jsonFloats(c.Mean), Lo: jsonFloats(c.Lo), Hi: jsonFloats(c.Hi), N: c.N, Marks: c.Marks}
		if out.Curves[i].N == nil {
			out.Curves[i].N = []int{}
		}
	}
	return out, nil
}

func (h *Handler) runs(st *tracking.Store, r *http.Request) (any, error) {
	exp := r.URL.Query().Get("experiment")
	if exp != "" {
		if _, err := st.Experiment(exp); err != nil {
			return nil, err
		}
	}
	runs, err := st.Runs(exp)
	if runs == nil {
		runs = []tracking.Run{}
	}
	return runs, err
}

// RunDetail is a run with the names of the metrics it recorded.
type RunDetail struct {
	Run     tracking.Run `json:"run"`
	Metrics []string     `json:"metrics"`
}

func (h *Handler) run(st *tracking.Store, r *http.Request) (any, error) {
	run, err := st.Run(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	names, err := st.MetricNames(run.ID)
	if err != nil && !errors.Is(err, tracking.ErrNotFound) {
		return nil, err
	}
	if names == nil {
		names = []string{}
	}
	return RunDetail{Run: run, Metrics: names}, nil
}

// StepMetrics is one step's metric record on the metrics endpoint.
type StepMetrics struct {
	Step    int                  `json:"step"`
	Tokens  int64                `json:"tokens"`
	Elapsed time.Duration        `json:"elapsed_ns"`
	Values  map[string]jsonFloat `json:"values"`
}

func (h *Handler) metrics(st *tracking.Store, r *http.Request) (any, error) {
	id := r.PathValue("id")
	if _, err := st.Run(id); err != nil {
		return nil, err
	}
	ms, err := st.Metrics(id)
	if err != nil && !errors.Is(err, tracking.ErrNotFound) {
		return nil, err
	}
	out := make([]StepMetrics, len(ms))
	for i, m := range ms {
		out[i] = StepMetrics{Step: m.Step, Tokens: m.Tokens, Elapsed: m.Elapsed, Values: make(map[string]jsonFloat, len(m.Values))}
		for k, v := range m.Values {
			out[i].Values[k] = jsonFloat(v)
		}
	}
	return out, nil
}

// intParam reads a non-negative integer path value.
func intParam(r *http.Request, name string) (int, error) {
	s := r.PathValue(name)
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, badRequest{fmt.Errorf("%s %q: want an integer ≥ 0", name, s)}
	}
	return n, nil
}

func (h *Handler) groups(st *tracking.Store, r *http.Request) (any, error) {
	step, err := intParam(r, "step")
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if _, err := st.Run(id); err != nil {
		return nil, err
	}
	gs, err := st.Groups(id, step)
	if err != nil && !errors.Is(err, tracking.ErrNotFound) {
		return nil, err
	}
	b := []byte{'['}
	for i := range gs {
		if i > 0 {
			b = append(b, ',')
		}
		b = gs[i].AppendJSON(b)
	}
	return rawJSON(append(b, ']')), nil
}

func (h *Handler) group(st *tracking.Store, r *http.Request) (any, error) {
	step, err := intParam(r, "step")
	if err != nil {
		return nil, err
	}
	index, err := intParam(r, "index")
	if err != nil {
		return nil, err
	}
	g, err := st.Group(r.PathValue("id"), step, index)
	if err != nil {
		return nil, err
	}
	return rawJSON(g.AppendJSON(nil)), nil
}

// maxTokenIDs bounds one tokens request.
const maxTokenIDs = 100_000

// tokens answers the display text of each id of ids=1,2,3, in order.
func (h *Handler) tokens(r *http.Request) (any, error) {
	q := r.URL.Query().Get("ids")
	out := []string{}
	if q == "" {
		return out, nil
	}
	parts := strings.Split(q, ",")
	if len(parts) > maxTokenIDs {
		return nil, badRequest{fmt.Errorf("tokens: %d ids: at most %d a request", len(parts), maxTokenIDs)}
	}
	for _, p := range parts {
		id, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, badRequest{fmt.Errorf("tokens: id %q is not an integer", p)}
		}
		if h.opts.TokenText == nil {
			out = append(out, "<"+strconv.Itoa(id)+">")
		} else {
			out = append(out, h.opts.TokenText(id))
		}
	}
	return out, nil
}
