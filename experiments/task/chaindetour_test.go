package task

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestChainDetoursVerify(t *testing.T) {
	tk, err := NewChain(ChainParams{MinOps: 3, MaxOps: 3, Detours: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tk.ParsePrompt("47+8-5+9")
	if err != nil {
		t.Fatal(err)
	}
	checkVerdicts(t, tk, p, []verdictCase{
		{"47+8=55-5+9 55-5=50+9 50+9=59", 1, Correct, "59"},                       // no restatement
		{"47+8=55-5+9 55-5+9 55-5=50+9 50+9=59", 1, Correct, "59"},                // one
		{"47+8=55-5+9 55-5=50+9 50+9 50+9 50+9 50+9=59", 0, ParseError, ""},       // three, more than Detours
		{"47+8=55-5+9 55-5+9 55-5=50+9 50+9 50+9=59", 1, Correct, "59"},           // two
		{"47+8=55-5+9 55-5 55-5=50+9 50+9=59", 0, ParseError, ""},                 // not an exact copy
		{"47+8-5+9 47+8=55-5+9 55-5=50+9 50+9=59", 0, ParseError, ""},             // the prompt is not a step
		{"47+8=55-5+9  55-5=50+9 50+9=59", 0, ParseError, ""},                     // an empty step
		{"47+8=55-5+9 55-5+9 55-5=50+9 50+9=58", 0, WrongAnswer, "58"},            //
		{"47+8=55-5+9 55-5+9 55-5=50+9", 0, ParseError, ""},                       // a step short
		{"47+8=55-5+9 55-5=50+9 50+9=59 59", 1, Correct, "59"},                    // the answer restated, inside the answer
		{strings.Repeat("1", tk.MaxResponseLen()+1), 0, TooLong, ""},              //
		{"47+8=55-5+9 55-5+9 55-5+9 55-5+9 55-5=50+9 50+9=59", 0, ParseError, ""}, // three in a row
		{"47+8=55-5+9 55-5+9 55-5=50+9 50+9 50+9=59 59", 0, ParseError, ""},       // three in all
		{"47+8=55-5+9 55-5+9 55-5=50+9 50+9=59", 1, Correct, "59"},                // restated once again
	})
	if got := tk.NeededLen(p); got != len("47+8=55-5+9 55-5=50+9 50+9=59") || got != len(p.Demo) {
		t.Errorf("NeededLen = %d, want %d, the demo's length", got, len(p.Demo))
	}
	// The plain task rejects a restatement, as it always did.
	plain, _ := NewChain(ChainParams{MinOps: 3, MaxOps: 4})
	if v := plain.Verify(p, "47+8=55-5+9 55-5+9 55-5=50+9 50+9=59"); v.Reason != ParseError {
		t.Errorf("plain chain graded a restatement %+v, want parse_error", v)
	}
}

// TestChainDetoursDemos checks drawn demonstrations: correct, within
// MaxResponseLen, never shorter than NeededLen, of every length from
// NeededLen to NeededLen plus Detours restatements; a cap at NeededMaxLen
// keeps every response without restatements whole.
func TestChainDetoursDemos(t *testing.T) {
	tk, err := NewChain(ChainParams{MinOps: 6, MaxOps: 8, Detours: 3})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	counts := map[int]int{} // restatements per demo
	for i := range 200 {
		p, err := tk.Prompt(Train, 1, i)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Demo) != tk.NeededLen(p) || len(p.Demo) > tk.NeededMaxLen() {
			t.Fatalf("%q: demo of %d characters, NeededLen %d, NeededMaxLen %d", p.Text, len(p.Demo), tk.NeededLen(p), tk.NeededMaxLen())
		}
		d := DemoFor(tk, p, rng)
		if v := tk.Verify(p, d); v.Reward != 1 || len(d) > tk.MaxResponseLen() || len(d) < tk.NeededLen(p) {
			t.Fatalf("%q: drawn demo %q (%d characters) graded %+v", p.Text, d, len(d), v)
		}
		counts[strings.Count(d, " ")+1-strings.Count(d, "=")]++
	}
	for k := 0; k <= 3; k++ {
		if counts[k] < 30 {
			t.Errorf("%d of 200 drawn demos with %d restatements, want about 50 (%v)", counts[k], k, counts)
		}
	}
	if tk.NeededMaxLen() != 119 {
		t.Errorf("NeededMaxLen = %d, want 119 (8 operations)", tk.NeededMaxLen())
	}
	if _, err := NewChain(ChainParams{MinOps: 6, MaxOps: 8, Detours: 9}); err == nil || !strings.Contains(err.Error(), "detours = 9") {
		t.Errorf("detours 9: error %v, want one naming detours", err)
	}
}
