package reward

import (
	"fmt"
	"math"
	"slices"
)

// AUC is the area under the ROC curve of scores against labels (true:
// positive): the probability that a random positive scores above a random
// negative, a tie counting one half (the Mann–Whitney U statistic divided by
// positives × negatives). 1 separates perfectly, 0.5 is chance. It needs at
// least one positive, one negative and no NaN score.
func AUC(scores []float64, labels []bool) (float64, error) {
	if len(scores) != len(labels) {
		return 0, fmt.Errorf("auc: %d scores, %d labels", len(scores), len(labels))
	}
	idx := make([]int, len(scores))
	pos := 0
	for i, s := range scores {
		if math.IsNaN(s) {
			return 0, fmt.Errorf("auc: score %d is NaN", i)
		}
		idx[i] = i
		if labels[i] {
			pos++
		}
	}
	neg := len(scores) - pos
	if pos == 0 || neg == 0 {
		return 0, fmt.Errorf("auc: %d positives and %d negatives; both are needed", pos, neg)
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(scores[a], scores[b]) })
	// U = Σ over positives of (negatives below + ½ negatives tied), found
	// group by group of equal scores.
	var u float64
	below := 0 // negatives with a lower score than the current group
	for lo := 0; lo < len(idx); {
		hi := lo
		p, n := 0, 0
		for ; hi < len(idx) && scores[idx[hi]] == scores[idx[lo]]; hi++ {
			if labels[idx[hi]] {
				p++
			} else {
				n++
			}
		}
		u += float64(float64(p) * (float64(below) + float64(float64(n)/2)))
		below += n
		lo = hi
	}
	return u / (float64(pos) * float64(neg)), nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
