package cost

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/rollout-rl/rollout/policy"
)

// Point is one measured shape: a reference model size, a batch and a
// response length, and whether the fit uses it (else it is held out for
// validation).
type Point struct {
	Size     string `json:"size"`
	Batch    int    `json:"batch"`
	Response int    `json:"response"`
	Fit      bool   `json:"fit"`
}

// PromptLen is the prompt length of the measured steps, in tokens.
const PromptLen = 16

// The measured points, as batch × response length per size. The fitted
// points are the earlier sweep's (batch 8, 32, 128 × response 32, 128,
// 512, capped per size so that the sweep finishes on a shared machine),
// with medium widened to batch × response ≤ 4,096 (8 × 512, 32 × 128).
// The held-out points lie between them (batch 12, 24, 48, 96 × response
// 48, 96, 192, 384, capped likewise); none of them had been measured when
// the model's form was chosen and they were fixed here (in the commit
// that introduced them) before any was measured. The earlier sweep's
// held-out points (batch 16 and 64, response 64 and 256) are not
// measured again: they were seen when the form was revised.
var (
	fitPoints = map[string][][2]int{
		"tiny":   {{8, 32}, {8, 128}, {8, 512}, {32, 32}, {32, 128}, {32, 512}, {128, 32}, {128, 128}},
		"small":  {{8, 32}, {8, 128}, {8, 512}, {32, 32}, {32, 128}, {128, 32}},
		"medium": {{8, 32}, {8, 128}, {8, 512}, {32, 32}, {32, 128}},
	}
	heldOutPoints = map[string][][2]int{
		"tiny":   {{12, 48}, {12, 96}, {12, 192}, {12, 384}, {24, 48}, {24, 96}, {24, 192}, {24, 384}, {48, 48}, {48, 96}, {48, 192}, {96, 48}, {96, 96}},
		"small":  {{12, 48}, {12, 96}, {12, 192}, {12, 384}, {24, 48}, {24, 96}, {48, 48}},
		"medium": {{12, 48}, {12, 96}, {12, 192}, {24, 48}},
	}
)

// gridSizes is the order of the sizes in Grid.
var gridSizes = []string{"tiny", "small", "medium"}

// Grid returns the measured points, sizes in the order tiny, small,
// medium, then by batch and response length.
func Grid() []Point {
	var pts []Point
	for _, size := range gridSizes {
		var sz []Point
		for _, br := range fitPoints[size] {
			sz = append(sz, Point{Size: size, Batch: br[0], Response: br[1], Fit: true})
		}
		for _, br := range heldOutPoints[size] {
			sz = append(sz, Point{Size: size, Batch: br[0], Response: br[1]})
		}
		slices.SortFunc(sz, func(a, b Point) int {
			if a.Batch != b.Batch {
				return a.Batch - b.Batch
			}
			return a.Response - b.Response
		})
		pts = append(pts, sz...)
	}
	return pts
}

// FitGrid returns Grid's fitted points.
func FitGrid() []Point { return filterGrid(true) }

// HeldOutGrid returns Grid's held-out points.
func HeldOutGrid() []Point { return filterGrid(false) }

func filterGrid(fit bool) []Point {
	var out []Point
	for _, p := range Grid() {
		if p.Fit == fit {
			out = append(out, p)
		}
	}
	return out
}

// Step returns the point's measured step (Measured).
func (p Point) Step() (Step, error) {
	c, err := policy.Size(p.Size)
	if err != nil {
		return Step{}, fmt.Errorf("cost: point %s/%d/%d: %w", p.Size, p.Batch, p.Response, err)
	}
	return Measured(c, p.Batch, PromptLen, p.Response), nil
}

// Sample is one point's measurement.
type Sample struct {
	Point
	Seconds    [NumPhases]float64 `json:"cpu_s"`                 // per phase, CPU seconds: the sweep's Statistic over the runs
	Repeats    int                `json:"repeats"`               // runs the statistic is over
	Load       float64            `json:"load"`                  // one-minute load average after its runs (their mean; 0: not recorded)
	Loads      []float64          `json:"loads,omitempty"`       // after each run
	MeasuredAt string             `json:"measured_at,omitempty"` // UTC time of its first run (RFC 3339)
}

// total is the sum of the sample's phases.
func (s Sample) total() float64 {
	t := 0.0
	for _, x := range s.Seconds {
		t += x
	}
	return t
}

// The statistics a sweep takes over a point's runs (Sweep's Statistic).
// Sweeps written before Minimum took the median and say nothing.
const (
	// Minimum is the minimum of runs made back to back (Measure).
	Minimum = "min"
	// MinimumOfRounds is the minimum of runs made in rounds over the
	// whole grid, one run of every point a round (Run): a point's runs
	// are minutes apart, so that a slow spell of the machine (other jobs
	// taking the caches, the memory bandwidth or the core's sibling)
	// does not slow all of them.
	MinimumOfRounds = "min of rounds"
)

// Sweep is a grid's measurements with the machine's state while they ran.
type Sweep struct {
	Samples   []Sample `json:"samples"`
	Statistic string   `json:"statistic,omitempty"` // over a point's runs: MinimumOfRounds, Minimum, or empty for the median (older sweeps)
	LoadStart float64  `json:"load_start"`          // one-minute load average before the first point
	LoadEnd   float64  `json:"load_end"`            // and after the last
	CPUs      int      `json:"cpus"`
	Repeats   int      `json:"repeats"`  // runs (rounds) per point at most
	Budget    float64  `json:"budget_s"` // no more runs of a point once its phases' minima add up to more
	WallS     float64  `json:"wall_s"`   // the sweep's wall time
	Resumed   int      `json:"resumed"`  // times the sweep was resumed from its file
}

// SweepOf is the sweep a machine whose every step costs exactly m's
// prediction would measure: each point of Grid once. It is what a fit
// must recover, for tests of the fit and of what reads a sweep.
func SweepOf(m Model) (Sweep, error) {
	sw := Sweep{Statistic: MinimumOfRounds}
	for _, pt := range Grid() {
		s, err := pt.Step()
		if err != nil {
			return Sweep{}, err
		}
		sw.Samples = append(sw.Samples, Sample{Point: pt, Seconds: m.Predict(s), Repeats: 1})
	}
	return sw, nil
}

// Run measures the points pts in rounds: each of up to repeats rounds
// runs every point once (bench.run) that has had fewer runs than the
// round's number, unless the minima of its phases so far add up to more
// than budget CPU seconds; a point's sample keeps each phase's minimum
// over its runs. The points of one size share one model with random
// weights and its buffers, as the steps of an RL run do. onSample is
// called with the sweep so far and the sample just measured after each
// run: a sweep stopped part way
// resumes from what it wrote (prev). The result holds prev's samples, of
// pts or not, and the new ones, in Grid's order (points not in Grid
// last).
func Run(ctx context.Context, pts []Point, repeats int, budget float64, cpus int, prev Sweep, onSample func(sw Sweep, last Sample)) (Sweep, error) {
	if len(prev.Samples) > 0 && prev.Statistic != MinimumOfRounds {
		return Sweep{}, fmt.Errorf("cost: the sweep to resume took another statistic of each point's runs (%q), this one takes the minimum of rounds: measure into a new file", prev.Statistic)
	}
	sw := Sweep{Statistic: MinimumOfRounds, LoadStart: LoadAverage(), CPUs: cpus, Repeats: max(repeats, prev.Repeats), Budget: budget, WallS: prev.WallS, Resumed: prev.Resumed,
		Samples: slices.Clone(prev.Samples)}
	if len(prev.Samples) > 0 {
		sw.LoadStart = prev.LoadStart
		sw.LoadEnd = prev.LoadEnd
		sw.Resumed++
	}
	at := map[Point]int{}
	for i, s := range sw.Samples {
		at[s.Point] = i
	}
	benches := map[string]*bench{}
	start := time.Now()
	for round := 1; round <= repeats; round++ {
		for _, p := range pts {
			i, seen := at[p]
			if seen && (sw.Samples[i].Repeats >= round || sw.Samples[i].total() > budget) {
				continue
			}
			s, err := p.Step()
			if err != nil {
				return Sweep{}, err
			}
			b, err := benchFor(benches, p.Size, pts)
			if err != nil {
				return Sweep{}, err
			}
			when := time.Now().UTC().Format(time.RFC3339)
			secs, err := b.run(ctx, s)
			if err != nil {
				return Sweep{}, fmt.Errorf("cost: point %s batch %d response %d: %w", p.Size, p.Batch, p.Response, err)
			}
			load := LoadAverage()
			if !seen {
				sw.Samples = append(sw.Samples, Sample{Point: p, Seconds: secs, MeasuredAt: when})
				i = len(sw.Samples) - 1
				at[p] = i
			}
			smp := &sw.Samples[i]
			if seen {
				for ph := range secs {
					smp.Seconds[ph] = min(smp.Seconds[ph], secs[ph])
				}
			}
			smp.Repeats++
			smp.Loads = append(smp.Loads, load)
			sum := 0.0
			for _, l := range smp.Loads {
				sum += l
			}
			smp.Load = sum / float64(len(smp.Loads))
			sw.LoadEnd = load
			if onSample != nil {
				cur := sw
				cur.Samples = slices.Clone(sw.Samples)
				sortSamples(cur.Samples)
				cur.WallS += time.Since(start).Seconds()
				onSample(cur, *smp)
			}
		}
	}
	sw.LoadEnd = LoadAverage()
	sw.WallS += time.Since(start).Seconds()
	sortSamples(sw.Samples)
	return sw, nil
}

// benchFor returns the bench of a size, made on first use with a
// max_position_embeddings that fits every point of that size in pts.
func benchFor(benches map[string]*bench, size string, pts []Point) (*bench, error) {
	if b, ok := benches[size]; ok {
		return b, nil
	}
	c, err := policy.Size(size)
	if err != nil {
		return nil, fmt.Errorf("cost: %w", err)
	}
	for _, p := range pts {
		if p.Size == size {
			c.MaxSeq = max(c.MaxSeq, PromptLen+p.Response)
		}
	}
	b, err := newBench(c, 1)
	if err != nil {
		return nil, err
	}
	benches[size] = b
	return b, nil
}

// sortSamples orders samples as Grid orders their points, those not in
// Grid last (in their order).
func sortSamples(samples []Sample) {
	order := map[Point]int{}
	for i, p := range Grid() {
		order[p] = i
	}
	rank := func(s Sample) int {
		if i, ok := order[s.Point]; ok {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(samples, func(a, b Sample) int { return rank(a) - rank(b) })
}

// ReadSweep reads a measurement sweep that rollout cost --measure wrote;
// a file without samples is an error. A missing file's error wraps
// fs.ErrNotExist.
func ReadSweep(path string) (Sweep, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Sweep{}, fmt.Errorf("cost: read sweep: %w", err)
	}
	var sw Sweep
	if err := json.Unmarshal(b, &sw); err != nil {
		return Sweep{}, fmt.Errorf("cost: sweep %s: %w", path, err)
	}
	if len(sw.Samples) == 0 {
		return Sweep{}, fmt.Errorf("cost: sweep %s: no samples", path)
	}
	return sw, nil
}
