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

// The grid's axes: batch sizes 8–128 and response lengths 32–512, each a
// factor of two apart. The fit uses the points on every other value of
// both (8, 32, 128 × 32, 128, 512); the others are held out.
var (
	gridBatches   = []int{8, 16, 32, 64, 128}
	gridResponses = []int{32, 64, 128, 256, 512}
	fitBatches    = []int{8, 32, 128}
	fitResponses  = []int{32, 128, 512}
)

// gridCaps bounds batch × response length per size, so that the sweep
// finishes on a shared, heavily loaded machine: tiny up to 16,384
// response tokens a step (all but batch 128 at 512), small up to 4,096,
// medium up to 1,024 and one batch of 8 at 256 tokens (medium at 512 ×
// 128 would take longer than the rest of the sweep together).
var gridCaps = map[string]int{"tiny": 16384, "small": 4096, "medium": 1024}

// extraPoints are measured beyond the caps.
var extraPoints = map[Point]bool{{Size: "medium", Batch: 8, Response: 256}: true}

// Grid returns the measured points, sizes in the order tiny, small,
// medium, then by batch and response length.
func Grid() []Point {
	var pts []Point
	for _, size := range []string{"tiny", "small", "medium"} {
		for _, b := range gridBatches {
			for _, r := range gridResponses {
				if b*r > gridCaps[size] && !extraPoints[Point{Size: size, Batch: b, Response: r}] {
					continue
				}
				pts = append(pts, Point{Size: size, Batch: b, Response: r, Fit: slices.Contains(fitBatches, b) && slices.Contains(fitResponses, r)})
			}
		}
	}
	return pts
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
	Seconds [NumPhases]float64 `json:"cpu_s"`   // per phase, CPU seconds: the sweep's Statistic over the runs
	Repeats int                `json:"repeats"` // runs the statistic is over
	Load    float64            `json:"load"`    // one-minute load average after it (0: not recorded)
}

// Minimum is the statistic Measure takes over a point's runs (Sweep's
// Statistic); sweeps written before it took the median, and say nothing.
const Minimum = "min"

// Sweep is a grid's measurements with the machine's state while they ran.
type Sweep struct {
	Samples   []Sample `json:"samples"`
	Statistic string   `json:"statistic,omitempty"` // over a point's runs: Minimum, or empty for the median (older sweeps)
	LoadStart float64  `json:"load_start"`          // one-minute load average before the first point
	LoadEnd   float64  `json:"load_end"`            // and after the last
	CPUs      int      `json:"cpus"`
	Repeats   int      `json:"repeats"`  // runs per point at most
	Budget    float64  `json:"budget_s"` // no more runs once one took this much CPU time
	WallS     float64  `json:"wall_s"`   // the sweep's wall time
	Resumed   int      `json:"resumed"`  // times the sweep was resumed from its file
}

// SweepOf is the sweep a machine whose every step costs exactly m's
// prediction would measure: each point of Grid once. It is what a fit
// must recover, for tests of the fit and of what reads a sweep.
func SweepOf(m Model) (Sweep, error) {
	var sw Sweep
	for _, pt := range Grid() {
		s, err := pt.Step()
		if err != nil {
			return Sweep{}, err
		}
		sw.Samples = append(sw.Samples, Sample{Point: pt, Seconds: m.Predict(s), Repeats: 1})
	}
	return sw, nil
}

// Run measures every point of pts (Measure, at most repeats runs each,
// fewer once a run took budget CPU seconds) that prev does not hold
// already, calling onSample with the sweep so far after each: a sweep
// stopped part way resumes from what it wrote. The result holds prev's
// samples of pts and the new ones, in pts' order.
func Run(ctx context.Context, pts []Point, repeats int, budget float64, cpus int, prev Sweep, onSample func(Sweep)) (Sweep, error) {
	if len(prev.Samples) > 0 && prev.Statistic != Minimum {
		return Sweep{}, fmt.Errorf("cost: the sweep to resume took the median of each point's runs, this one takes the minimum: measure into a new file")
	}
	sw := Sweep{Statistic: Minimum, LoadStart: LoadAverage(), CPUs: cpus, Repeats: repeats, Budget: budget, WallS: prev.WallS, Resumed: prev.Resumed}
	if len(prev.Samples) > 0 {
		sw.LoadStart = prev.LoadStart
		sw.Resumed++
	}
	done := map[Point]Sample{}
	for _, s := range prev.Samples {
		done[s.Point] = s
	}
	start := time.Now()
	for _, p := range pts {
		if s, ok := done[p]; ok {
			sw.Samples = append(sw.Samples, s)
			continue
		}
		s, err := p.Step()
		if err != nil {
			return Sweep{}, err
		}
		m, err := Measure(ctx, s, repeats, budget, 1)
		if err != nil {
			return Sweep{}, fmt.Errorf("cost: point %s batch %d response %d: %w", p.Size, p.Batch, p.Response, err)
		}
		sw.Samples = append(sw.Samples, Sample{Point: p, Seconds: m.Seconds, Repeats: m.Repeats, Load: LoadAverage()})
		sw.LoadEnd = LoadAverage()
		if onSample != nil {
			cur := sw
			cur.WallS += time.Since(start).Seconds()
			onSample(cur)
		}
	}
	sw.LoadEnd = LoadAverage()
	sw.WallS += time.Since(start).Seconds()
	return sw, nil
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
