package reward

import (
	"math"
	"strings"
	"testing"
)

func TestAUC(t *testing.T) {
	T, F := true, false
	cases := []struct {
		name   string
		scores []float64
		labels []bool
		want   float64
	}{
		{"perfect", []float64{1, 2, 3, 4}, []bool{F, F, T, T}, 1},
		{"inverted", []float64{1, 2, 3, 4}, []bool{T, T, F, F}, 0},
		{"all tied", []float64{5, 5, 5, 5}, []bool{T, F, T, F}, 0.5},
		// positive 0.35 beats 0.1 and loses to 0.4; 0.8 beats both: 3 of 4 pairs.
		{"three of four pairs", []float64{0.1, 0.4, 0.35, 0.8}, []bool{F, F, T, T}, 0.75},
		// positive 1 ties negative 1 (½) and beats 0 (1); positive 2 beats both: 3.5 of 4.
		{"ties count half", []float64{1, 1, 2, 0}, []bool{T, F, T, F}, 0.875},
		// 1 positive, 3 negatives: it beats one, ties one, loses to one: 1.5 of 3.
		{"one positive", []float64{-1, 0, 0, 2}, []bool{F, T, F, F}, 0.5},
		{"infinite scores order too", []float64{math.Inf(-1), math.Inf(1)}, []bool{F, T}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AUC(c.scores, c.labels)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-c.want) > 1e-12 {
				t.Errorf("AUC = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAUCErrors(t *testing.T) {
	cases := []struct {
		name   string
		scores []float64
		labels []bool
		want   string
	}{
		{"length mismatch", []float64{1, 2}, []bool{true}, "2 scores, 1 labels"},
		{"no negatives", []float64{1, 2}, []bool{true, true}, "2 positives and 0 negatives"},
		{"no positives", []float64{1, 2}, []bool{false, false}, "0 positives and 2 negatives"},
		{"empty", nil, nil, "0 positives and 0 negatives"},
		{"NaN", []float64{1, math.NaN()}, []bool{true, false}, "score 1 is NaN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := AUC(c.scores, c.labels)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("AUC error = %v, want one containing %q", err, c.want)
			}
		})
	}
}
