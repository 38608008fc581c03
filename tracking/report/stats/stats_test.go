package stats

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// Student's sleep data (Cushny & Peebles 1905, as in R's `datasets::sleep`):
// extra hours of sleep of 10 patients under two drugs.
var (
	sleep1 = []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	sleep2 = []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
)

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestSummarizeAgainstR(t *testing.T) {
	// R 4.x: t.test(sleep$extra[1:10]) →
	//   t = 1.3257, df = 9, p-value = 0.2176
	//   95 percent confidence interval: -0.5297804  2.0297804
	//   mean of x 0.75; sd(sleep$extra[1:10]) = 1.78901
	s := Summarize(sleep1)
	checks := []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"mean", s.Mean, 0.75, 1e-12},
		{"std", s.Std, 1.78901, 1e-5},
		{"lo", s.Lo, -0.5297804, 1e-7},
		{"hi", s.Hi, 2.0297804, 1e-7},
		{"t", s.Mean / s.StdErr, 1.3257, 1e-4},
		{"p", TwoSidedP(s.Mean/s.StdErr, 9), 0.2176, 1e-4},
	}
	for _, c := range checks {
		if !near(c.got, c.want, c.tol) {
			t.Errorf("%s = %.8g, want %.8g", c.name, c.got, c.want)
		}
	}
	if !s.HasInterval || s.N != 10 {
		t.Errorf("summary %+v: want N=10 with an interval", s)
	}
}

func TestTestsAgainstR(t *testing.T) {
	// Published values: R's example(t.test) on the sleep data.
	//   t.test(extra ~ group, data = sleep)   # Welch
	//     t = -1.8608, df = 17.776, p-value = 0.07939
	//     95 percent confidence interval: -3.3654832  0.2054832
	//   t.test(sleep1, sleep2, paired = TRUE)
	//     t = -4.0621, df = 9, p-value = 0.002833
	//     95 percent confidence interval: -2.4598858 -0.7001142
	//     mean difference -1.58
	tests := []struct {
		name                   string
		run                    func(a, b []float64) (TestResult, error)
		kind                   TestKind
		diff, t, df, p, lo, hi float64
	}{
		{"welch", WelchTest, Welch, -1.58, -1.8608, 17.776, 0.07939, -3.3654832, 0.2054832},
		{"paired", PairedTest, Paired, -1.58, -4.0621, 9, 0.002833, -2.4598858, -0.7001142},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.run(sleep1, sleep2)
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != tc.kind {
				t.Errorf("kind %q, want %q", r.Kind, tc.kind)
			}
			for _, c := range []struct {
				name      string
				got, want float64
				tol       float64
			}{
				{"diff", r.Diff, tc.diff, 1e-12},
				{"t", r.T, tc.t, 5e-5},
				{"df", r.DF, tc.df, 5e-5},
				{"p", r.P, tc.p, 5e-4},
				{"lo", r.Lo, tc.lo, 1e-7},
				{"hi", r.Hi, tc.hi, 1e-7},
			} {
				if !near(c.got, c.want, c.tol) {
					t.Errorf("%s = %.8g, want %.8g", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestEdgeCases(t *testing.T) {
	t.Run("summary n=0", func(t *testing.T) {
		s := Summarize(nil)
		if s.N != 0 || s.HasInterval || s.Mean != 0 {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("summary n=1", func(t *testing.T) {
		s := Summarize([]float64{3.5})
		if s.N != 1 || s.HasInterval || s.Mean != 3.5 || s.Std != 0 || s.Lo != 3.5 || s.Hi != 3.5 {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("summary zero variance", func(t *testing.T) {
		s := Summarize([]float64{2, 2, 2})
		if !s.HasInterval || s.Std != 0 || s.HalfWidth != 0 || s.Lo != 2 || s.Hi != 2 {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("bad level", func(t *testing.T) {
		for _, level := range []float64{0, 1, -0.5, 95, math.NaN()} {
			if _, err := SummarizeLevel([]float64{1, 2}, level); err == nil {
				t.Errorf("level %v accepted", level)
			}
		}
	})
	zero := []struct {
		name    string
		a, b    []float64
		t, p    float64
		wantErr error
	}{
		{"equal constants", []float64{1, 1, 1}, []float64{1, 1}, 0, 1, nil},
		{"greater constants", []float64{2, 2}, []float64{1, 1}, math.Inf(1), 0, nil},
		{"smaller constants", []float64{0, 0}, []float64{1, 1}, math.Inf(-1), 0, nil},
		{"one value", []float64{1}, []float64{1, 2}, 0, 0, ErrTooFewSamples},
		{"NaN", []float64{1, math.NaN()}, []float64{1, 2}, 0, 0, ErrNotFinite},
		{"Inf", []float64{1, 2}, []float64{math.Inf(-1), 2}, 0, 0, ErrNotFinite},
	}
	for _, tc := range zero {
		t.Run("welch "+tc.name, func(t *testing.T) {
			r, err := WelchTest(tc.a, tc.b)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if r.T != tc.t || r.P != tc.p || math.IsNaN(r.DF) || math.IsNaN(r.Lo) {
				t.Errorf("got %+v, want t=%v p=%v", r, tc.t, tc.p)
			}
		})
	}
	t.Run("welch one constant group", func(t *testing.T) {
		r, err := WelchTest([]float64{1, 1, 1}, []float64{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		// se = sqrt(1/3), t = -1/se, df = (1/3)^2/((1/3)^2/2) = 2.
		if !near(r.T, -math.Sqrt(3), 1e-12) || !near(r.DF, 2, 1e-12) {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("paired constant shift", func(t *testing.T) {
		r, err := PairedTest([]float64{2, 3, 4}, []float64{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsInf(r.T, 1) || r.P != 0 || r.Diff != 1 {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("paired length mismatch", func(t *testing.T) {
		if _, err := PairedTest([]float64{1, 2}, []float64{1}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("paired NaN", func(t *testing.T) {
		if _, err := PairedTest([]float64{1, math.NaN()}, []float64{2, 3}); !errors.Is(err, ErrNotFinite) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("paired one pair", func(t *testing.T) {
		if _, err := PairedTest([]float64{1}, []float64{2}); !errors.Is(err, ErrTooFewSamples) {
			t.Errorf("err %v", err)
		}
	})
}

func ExampleWelchTest() {
	flat := []float64{0.41, 0.44, 0.39, 0.45}
	tree := []float64{0.48, 0.52, 0.47, 0.50}
	r, err := WelchTest(tree, flat)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("diff %.3f, t %.2f, df %.1f, p %.4f\n", r.Diff, r.T, r.DF, r.P)
	// Output: diff 0.070, t 3.96, df 5.7, p 0.0082
}
