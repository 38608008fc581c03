package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/record/codec"
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
	// Colours are the variants' colours (report.Palette, by the
	// experiment's variant order), as #rrggbb: those of `rollout plot`.
	Colours []string `json:"colours"`
	Seeds   []int64  `json:"seeds"`
	Runs    int      `json:"runs"`
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
	s.Colours = make([]string, len(s.Variants))
	for i := range s.Variants {
		s.Colours[i] = report.Hex(report.VariantColour(i))
	}
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
	// MetricInfo is the registry's label, unit and range of each metric
	// (report.Metric).
	MetricInfo map[string]MetricInfo `json:"metric_info"`
	// DefaultMetrics are those of the report's defaults some run recorded.
	DefaultMetrics []string `json:"default_metrics"`
	// TokenMarks are the points tokens:T can compare at: the token marks
	// the runs' evaluations recorded (the values of the report's
	// MarkMetric, e.g. 0, 4000, 8000), or, when no run recorded one, the
	// cumulative token counts of the rows where the first default metric
	// was recorded (TokenMarksRecorded false). See report.TokenMarks.
	TokenMarks         []int64 `json:"token_marks"`
	TokenMarksRecorded bool    `json:"token_marks_recorded"`
	// XAxis is the experiment's budget axis, the curves' default: tokens
	// when its evaluations fall on token marks, else step.
	XAxis string `json:"x_axis"`
	// ConfigKeys are the keys of the runs' resolved configs flattened to
	// dotted keys (train.lr, rollout.strategy), each with its distinct
	// values, sorted, "(absent)" among them when some run's config lacks
	// the key: what curves can be grouped by and filtered on.
	ConfigKeys map[string][]string `json:"config_keys"`
	// RunConfigs are, by run ID, the values of the keys whose value
	// differs between runs.
	RunConfigs map[string]map[string]string `json:"run_configs"`
	// Notes are the notes on the experiment's runs (`rollout note`).
	Notes []tracking.Note `json:"notes"`
}

// MetricInfo is a metric's entry of the registry, its range with null for
// an open end.
type MetricInfo struct {
	Label    string    `json:"label"`
	Unit     string    `json:"unit"`
	AxisText string    `json:"axis_label"`
	Lo       jsonFloat `json:"lo"`
	Hi       jsonFloat `json:"hi"`
	Minimize bool      `json:"minimize"`
}

func metricInfo(key string) MetricInfo {
	m := report.Metric(key)
	return MetricInfo{Label: m.Label, Unit: m.Unit, AxisText: m.AxisLabel(), Lo: jsonFloat(m.Lo), Hi: jsonFloat(m.Hi), Minimize: m.Minimize}
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
	d := ExperimentDetail{Experiment: e, Summary: summarize(e, runs), Runs: runs, Metrics: []string{}, DefaultMetrics: []string{},
		MetricInfo: map[string]MetricInfo{}, ConfigKeys: map[string][]string{}, RunConfigs: map[string]map[string]string{}}
	if d.Runs == nil {
		d.Runs = []tracking.Run{}
	}
	ids := make([]string, len(runs))
	flat := make([]map[string]string, len(runs))
	for i, run := range runs {
		ids[i] = run.ID
		names, err := st.MetricNames(run.ID)
		if err != nil && !errors.Is(err, tracking.ErrNotFound) {
			return nil, err
		}
		for _, n := range names {
			if !slices.Contains(d.Metrics, n) {
				d.Metrics = append(d.Metrics, n)
			}
		}
		if flat[i], err = flatConfig(run.Config); err != nil {
			return nil, fmt.Errorf("run %s: config: %w", run.ID, err)
		}
	}
	d.ConfigKeys = configKeys(flat)
	for i, run := range runs {
		d.RunConfigs[run.ID] = map[string]string{}
		for k, vs := range d.ConfigKeys {
			if v, ok := flat[i][k]; ok && len(vs) > 1 {
				d.RunConfigs[run.ID][k] = v
			}
		}
	}
	slices.Sort(d.Metrics)
	for _, m := range d.Metrics {
		d.MetricInfo[m] = metricInfo(m)
	}
	for _, m := range h.opts.Report.DefaultMetrics {
		if slices.Contains(d.Metrics, m) {
			d.DefaultMetrics = append(d.DefaultMetrics, m)
		}
	}
	first := ""
	if len(d.DefaultMetrics) > 0 {
		first = d.DefaultMetrics[0]
	}
	if d.TokenMarks, d.TokenMarksRecorded, err = report.TokenMarks(st, name, h.opts.Report.MarkMetric, first); err != nil {
		return nil, err
	}
	if d.TokenMarks == nil {
		d.TokenMarks = []int64{}
	}
	d.XAxis = string(report.XStep)
	if d.TokenMarksRecorded {
		d.XAxis = string(report.XTokens)
	}
	if d.Notes, err = st.Notes(ids...); err != nil {
		return nil, err
	}
	if d.Notes == nil {
		d.Notes = []tracking.Note{}
	}
	return d, nil
}

// configKeys lists each key of the flattened configs with its distinct
// values, sorted, "(absent)" among them when a config lacks the key.
func configKeys(flat []map[string]string) map[string][]string {
	out := map[string][]string{}
	for _, c := range flat {
		for k, v := range c {
			if !slices.Contains(out[k], v) {
				out[k] = append(out[k], v)
			}
		}
	}
	for k := range out {
		for _, c := range flat {
			if _, ok := c[k]; !ok {
				out[k] = append(out[k], absent)
				break
			}
		}
		slices.Sort(out[k])
	}
	return out
}

// absent is the value of a config key a run's config lacks, as
// tracking.DiffConfigs writes it; filters and groups match it.
const absent = "(absent)"

// flatConfig is a resolved config text as dotted key → value.
func flatConfig(text string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(text) == "" {
		return out, nil
	}
	// Every key of the text differs from an empty config's: the diff lists
	// the flattened text (tracking.DiffConfigs flattens both sides).
	diffs, err := tracking.DiffConfigs(text, "")
	if err != nil {
		return nil, err
	}
	for _, d := range diffs {
		out[d.Key] = d.Recorded
	}
	return out, nil
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
// (null for values that are not finite); on a diff answer, the mean
// paired difference from the baseline and its paired interval, N counting
// seed pairs.
type Curve struct {
	Variant string `json:"variant"`
	// Colour is the variant's (report.Palette by Index): `rollout plot`'s.
	Colour string      `json:"colour"`
	Index  int         `json:"index"`
	X      []jsonFloat `json:"x"`
	Mean   []jsonFloat `json:"mean"`
	Lo     []jsonFloat `json:"lo"`
	Hi     []jsonFloat `json:"hi"`
	N      []int       `json:"n"`
	// Marks is true when the points are shared evaluation marks on the
	// tokens axis (see report.Curve).
	Marks bool `json:"marks"`
	// Seeds, Recorded, Omitted, Unpaired and Clipped are report.Curve's:
	// what the curve leaves out.
	Seeds    int     `json:"seeds"`
	Recorded int     `json:"recorded"`
	Omitted  int     `json:"omitted"`
	Unpaired []int64 `json:"unpaired"`
	Clipped  bool    `json:"clipped"`
}

// jsonFloat encodes non-finite values as null.
type jsonFloat float64

// MarshalJSON writes the shortest form that reads back exactly, or null.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	return codec.AppendJSONFloat(nil, float64(f)), nil
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
	Metric string     `json:"metric"`
	Info   MetricInfo `json:"info"`
	X      string     `json:"x"`
	Kind   string     `json:"kind"`
	// Baseline is the variant (or group) a diff answer subtracts.
	Baseline string `json:"baseline,omitempty"`
	// GroupBy is the config key runs were grouped by instead of variant.
	GroupBy string  `json:"group_by,omitempty"`
	Curves  []Curve `json:"curves"`
	// Caption says what the lines and bands are over how many seeds, and
	// Notes what the curves leave out (report.Caption, report.CurveNotes).
	Caption string   `json:"caption"`
	Notes   []string `json:"notes"`
}

// curves answers /api/experiments/{name}/curves?metric=&x=&kind=&baseline=
// &variant=&group=&filter=KEY=VALUE: the experiment's curves as `rollout
// plot` draws them, its runs grouped by a config key's value instead of
// by variant (group), and only the runs whose config has each filter's
// value.
func (h *Handler) curves(st *tracking.Store, r *http.Request) (any, error) {
	q := r.URL.Query()
	name := r.PathValue("name")
	metric := q.Get("metric")
	if metric == "" {
		return nil, badRequest{fmt.Errorf("curves: the query needs metric=NAME")}
	}
	if _, err := st.Experiment(name); err != nil {
		return nil, err
	}
	var xa report.XAxis
	var err error
	if x := q.Get("x"); x != "" {
		if xa, err = report.ParseXAxis(x); err != nil {
			return nil, badRequest{fmt.Errorf("curves: x: %w", err)}
		}
	} else if xa, err = report.BudgetAxis(st, name, h.opts.Report.MarkMetric); err != nil {
		return nil, err
	}
	kind, err := report.ParsePlotKind(q.Get("kind"))
	if err != nil {
		return nil, badRequest{fmt.Errorf("curves: kind: %w", err)}
	}
	opts := report.PlotOptions{Metric: metric, X: xa, Kind: kind, Baseline: q.Get("baseline"), Variants: q["variant"],
		MarkMetric: h.opts.Report.MarkMetric, Range: h.opts.Range}
	filters := map[string]string{}
	for _, f := range q["filter"] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, badRequest{fmt.Errorf("curves: filter %q: want KEY=VALUE, a resolved config key (train.lr=0.001)", f)}
		}
		filters[k] = v
	}
	group := q.Get("group")
	if group != "" || len(filters) > 0 {
		configs := map[string]map[string]string{}
		flat := func(run tracking.Run) map[string]string {
			c, ok := configs[run.ID]
			if !ok {
				c, _ = flatConfig(run.Config) // a config that does not parse has no keys
				configs[run.ID] = c
			}
			return c
		}
		if len(filters) > 0 {
			opts.Runs = func(run tracking.Run) bool {
				c := flat(run)
				for k, v := range filters {
					if got, ok := c[k]; !ok && v != absent || ok && got != v {
						return false
					}
				}
				return true
			}
		}
		if group != "" {
			opts.GroupBy = func(run tracking.Run) string {
				if v, ok := flat(run)[group]; ok {
					return v
				}
				return absent
			}
		}
	}
	cs, err := report.Curves(st, name, opts)
	if err != nil {
		return nil, badRequest{err}
	}
	out := CurvesAnswer{Metric: metric, Info: metricInfo(metric), X: string(xa), Kind: string(kind), GroupBy: group, Curves: make([]Curve, len(cs)),
		Caption: report.Caption(cs, kind), Notes: report.CurveNotes(cs, xa, kind)}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if len(cs) > 0 {
		out.Baseline = cs[0].Baseline
	}
	for i, c := range cs {
		out.Curves[i] = Curve{Variant: c.Variant, Colour: report.Hex(report.VariantColour(c.Index)), Index: c.Index,
			X: jsonFloats(c.X), Mean: jsonFloats(c.Mean), Lo: jsonFloats(c.Lo), Hi: jsonFloats(c.Hi), N: c.N, Marks: c.Marks,
			Seeds: c.Seeds, Recorded: c.Recorded, Omitted: c.Omitted, Unpaired: c.Unpaired, Clipped: c.Clipped}
		if out.Curves[i].N == nil {
			out.Curves[i].N = []int{}
		}
		if out.Curves[i].Unpaired == nil {
			out.Curves[i].Unpaired = []int64{}
		}
	}
	return out, nil
}

// Style is the /api/style answer: what the dashboard draws with that the
// figures share.
type Style struct {
	// Palette is report.Palette as #rrggbb: variant i of an experiment's
	// variant order is drawn in Palette[i mod len].
	Palette []string `json:"palette"`
}

func (h *Handler) style(*http.Request) (any, error) {
	return Style{Palette: report.PaletteHex()}, nil
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

// RunDetail is a run with the names of the metrics it recorded and the
// notes on it.
type RunDetail struct {
	Run     tracking.Run    `json:"run"`
	Metrics []string        `json:"metrics"`
	Notes   []tracking.Note `json:"notes"`
	// MetricInfo is the registry's label, unit and range of each metric.
	MetricInfo map[string]MetricInfo `json:"metric_info"`
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
	notes, err := st.Notes(run.ID)
	if err != nil {
		return nil, err
	}
	if notes == nil {
		notes = []tracking.Note{}
	}
	info := make(map[string]MetricInfo, len(names))
	for _, n := range names {
		info[n] = metricInfo(n)
	}
	return RunDetail{Run: run, Metrics: names, Notes: notes, MetricInfo: info}, nil
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

// stepGroups returns the groups of the request's run ({id}) and step
// (?step=), none for a step without groups; an unknown run is an error.
func stepGroups(st *tracking.Store, r *http.Request) ([]record.Group, error) {
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
	return gs, nil
}

func (h *Handler) groups(st *tracking.Store, r *http.Request) (any, error) {
	gs, err := stepGroups(st, r)
	if err != nil {
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

// Sample is one sampled response of a step: a row of the sample table.
type Sample struct {
	// Group and Leaf index the response in the step's groups (the tree
	// viewer's address: #/tree/RUN?step=S&group=G).
	Group  int    `json:"group"`
	Leaf   int    `json:"leaf"`
	Prompt string `json:"prompt"`
	// Response is the text the verifier read.
	Response string `json:"response"`
	// Reward is null for a response not scored.
	Reward *float64 `json:"reward"`
	Reason string   `json:"reason"`
	// Advantage is the mean of the response's per-token advantages (null
	// without any); AdvantageLo and AdvantageHi their range, which differ
	// when a tree estimator gives the segments of a path different values.
	Advantage   jsonFloat `json:"advantage"`
	AdvantageLo jsonFloat `json:"advantage_lo"`
	AdvantageHi jsonFloat `json:"advantage_hi"`
	// Filtered marks a group dropped from the update (all rewards equal).
	Filtered bool   `json:"filtered"`
	Strategy string `json:"strategy"`
}

// samples answers /api/runs/{id}/steps/{step}/samples: every response the
// step sampled, group by group.
func (h *Handler) samples(st *tracking.Store, r *http.Request) (any, error) {
	gs, err := stepGroups(st, r)
	if err != nil {
		return nil, err
	}
	out := []Sample{}
	for gi, g := range gs {
		for li, l := range g.Leaves {
			s := Sample{Group: gi, Leaf: li, Prompt: g.Prompt, Response: l.Text, Reason: l.Reason, Filtered: g.Filtered, Strategy: g.Strategy,
				Advantage: jsonFloat(math.NaN()), AdvantageLo: jsonFloat(math.NaN()), AdvantageHi: jsonFloat(math.NaN())}
			if l.Scored {
				s.Reward = &l.Reward
			}
			if len(l.Advantages) > 0 {
				sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
				for _, a := range l.Advantages {
					sum, lo, hi = sum+a, math.Min(lo, a), math.Max(hi, a)
				}
				s.Advantage, s.AdvantageLo, s.AdvantageHi = jsonFloat(sum/float64(len(l.Advantages))), jsonFloat(lo), jsonFloat(hi)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// ConfigDiff is the answer of the config-diff endpoints: the keys whose
// values differ between two resolved configs, A's and B's.
type ConfigDiff struct {
	A     string          `json:"a"`
	B     string          `json:"b"`
	Diffs []ConfigKeyDiff `json:"diffs"`
}

// ConfigKeyDiff is one differing key; an absent value reads "(absent)".
type ConfigKeyDiff struct {
	Key string `json:"key"`
	A   string `json:"a"`
	B   string `json:"b"`
}

func diffAnswer(a, b, ca, cb string) (ConfigDiff, error) {
	ds, err := tracking.DiffConfigs(ca, cb)
	if err != nil {
		return ConfigDiff{}, err
	}
	out := ConfigDiff{A: a, B: b, Diffs: make([]ConfigKeyDiff, len(ds))}
	for i, d := range ds {
		out.Diffs[i] = ConfigKeyDiff{Key: d.Key, A: d.Recorded, B: d.Given}
	}
	return out, nil
}

// twoParams reads the two values of a repeated query parameter.
func twoParams(r *http.Request, name string) (string, string, error) {
	vs := r.URL.Query()[name]
	if len(vs) != 2 || vs[0] == "" || vs[1] == "" {
		return "", "", badRequest{fmt.Errorf("config diff: the query needs two %s= parameters, got %d", name, len(vs))}
	}
	return vs[0], vs[1], nil
}

// runDiff answers /api/config-diff?run=A&run=B.
func (h *Handler) runDiff(st *tracking.Store, r *http.Request) (any, error) {
	a, b, err := twoParams(r, "run")
	if err != nil {
		return nil, err
	}
	ra, err := st.Run(a)
	if err != nil {
		return nil, err
	}
	rb, err := st.Run(b)
	if err != nil {
		return nil, err
	}
	return diffAnswer(a, b, ra.Config, rb.Config)
}

// variantDiff answers /api/experiments/{name}/config-diff?variant=A&variant=B.
func (h *Handler) variantDiff(st *tracking.Store, r *http.Request) (any, error) {
	a, b, err := twoParams(r, "variant")
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	e, err := st.Experiment(name)
	if err != nil {
		return nil, err
	}
	ca, oka := e.Configs[a]
	cb, okb := e.Configs[b]
	if !oka || !okb {
		missing := a
		if oka {
			missing = b
		}
		return nil, fmt.Errorf("experiment %s has no config of variant %q (variants: %s): %w", name, missing, strings.Join(e.Variants, ", "), tracking.ErrNotFound)
	}
	return diffAnswer(a, b, ca, cb)
}
