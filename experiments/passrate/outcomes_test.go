package passrate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// trendRows are the outcomes of methods a and b on the prompts of texts:
// passes of a, then of b, "1" or "0" a prompt.
func trendRows(texts []string, aPass, bPass string) []PromptOutcome {
	var rows []PromptOutcome
	for _, m := range []struct{ name, passes string }{{"entropy(2,1,1,3)", aPass}, {"random(2,1,1,3)", bPass}} {
		for i, c := range m.passes {
			p := 0.0
			if c == '1' {
				p = 1
			}
			rows = append(rows, PromptOutcome{Prompt: i, Text: texts[i], Method: m.name, Family: strings.Split(m.name, "(")[0],
				Shape: "2,1,1,3", Leaves: 8, Correct: int(p), Tokens: 150, Pass: p})
		}
	}
	return rows
}

// texts are n prompts' texts, some with the CSV's delimiter and quotes.
func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%d,%d,\"%d\">%d", i, i+1, i+2, 10+i)
	}
	return out
}

// WriteOutcomes then ReadOutcomes gives the rows back, texts with commas
// and quotes and fractional numbers (an i.i.d. point's pass@n) included.
func TestOutcomesRoundTrip(t *testing.T) {
	rows := trendRows(texts(4), "1010", "0011")
	rows = append(rows, PromptOutcome{Prompt: 0, Text: "3,4\n5", Method: "iid(n=2)", Family: "iid", Leaves: 16, Correct: 3, Tokens: 57.125, Pass: 0.225})
	var buf bytes.Buffer
	if err := WriteOutcomes(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "prompt,prompt_text,method,family,shape,leaves,correct,tokens,pass\n0,\"0,1,\"\"2\"\">10\",\"entropy(2,1,1,3)\",entropy,\"2,1,1,3\",8,1,150,1\n") {
		t.Errorf("CSV starts\n%s", buf.String()[:200])
	}
	got, err := ReadOutcomes(&buf, "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(rows) {
		t.Errorf("read back\n%v\nwant\n%v", got, rows)
	}
}

// A bad outcomes file is refused with its name, line, column and value.
func TestReadOutcomesBadInput(t *testing.T) {
	head := "prompt,prompt_text,method,family,shape,leaves,correct,tokens,pass\n"
	for _, c := range []struct{ in, want string }{
		{"", "x.csv: empty"},
		{"prompt,method\n", `x.csv:1: header "prompt,method"`},
		{head + "0,a,m,f,,8,1,150\n", "x.csv:2: 8 fields, want 9"},
		{head + "0,a,m,f,,8,1,150,1\n-1,a,m,f,,8,1,150,1\n", `x.csv:3: column prompt: "-1" is not a whole number`},
		{head + "0,a,m,f,,eight,1,150,1\n", `x.csv:2: column leaves: "eight"`},
		{head + "0,a,m,f,,0,0,150,1\n", `x.csv:2: column leaves: "0" want at least 1 leaf`},
		{head + "0,a,m,f,,8,9,150,1\n", `x.csv:2: column correct: "9" correct of 8 leaves`},
		{head + "0,a,m,f,,8,1,-3,1\n", `x.csv:2: column tokens: "-3"`},
		{head + "0,a,m,f,,8,1,NaN,1\n", `x.csv:2: column tokens: "NaN"`},
		{head + "0,a,m,f,,8,1,150,1.5\n", `x.csv:2: column pass: "1.5" is not a pass rate`},
		{head + "0,a,,f,,8,1,150,1\n", `x.csv:2: column method: "" is empty`},
		{head + "0,\"a,m,f,,8,1,150,1\n", "x.csv"},
	} {
		_, err := ReadOutcomes(strings.NewReader(c.in), "x.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// CompareGaps: each measurement's gap is the paired interval ComparePair
// gives the pair (same seed: the same resamples), the change is exact on
// hand-built outcomes, and a measurement against itself changes by 0.
func TestCompareGaps(t *testing.T) {
	tx := texts(10)
	base := trendRows(tx, "1111111100", "1100000011")  // gap +0.4
	other := trendRows(tx, "1000000000", "1000000001") // gap −0.1
	bs := DefaultBootstrap()
	g, err := CompareGaps(base, other, "entropy(2,1,1,3)", "random(2,1,1,3)", bs)
	if err != nil {
		t.Fatal(err)
	}
	if !near(g.BaseGap.Est, 0.4) || !near(g.OtherGap.Est, -0.1) || !near(g.Change.Est, -0.5) || g.Prompts != 10 {
		t.Errorf("gaps %+v, want base +0.4, other −0.1, change −0.5 on 10 prompts", g)
	}
	if !near(g.BasePassA, 0.8) || !near(g.BasePassB, 0.4) || !near(g.OtherPassA, 0.1) || !near(g.OtherPassB, 0.2) {
		t.Errorf("pass rates %+v, want 0.8, 0.4, 0.1, 0.2", g)
	}
	if !(g.Change.Lo <= g.Change.Est && g.Change.Est <= g.Change.Hi && g.Change.Lo < g.Change.Hi) {
		t.Errorf("change interval %+v does not hold its estimate", g.Change)
	}
	a := outcomes("entropy(2,1,1,3)", "entropy", "2,1,1,3", "1111111100", 8, 150)
	b := outcomes("random(2,1,1,3)", "random", "2,1,1,3", "1100000011", 8, 150)
	p, err := ComparePair(a, b, bs)
	if err != nil {
		t.Fatal(err)
	}
	if g.BaseGap != p.DiffPass {
		t.Errorf("base gap %+v, want ComparePair's %+v", g.BaseGap, p.DiffPass)
	}
	self, err := CompareGaps(base, base, "entropy(2,1,1,3)", "random(2,1,1,3)", bs)
	if err != nil {
		t.Fatal(err)
	}
	if self.Change != (Interval{}) {
		t.Errorf("a measurement against itself changes by %+v, want exactly 0", self.Change)
	}
}

// CompareGaps refuses outcomes that are not of the same prompts or lack
// a method, naming what differs.
func TestCompareGapsBadInput(t *testing.T) {
	tx := texts(4)
	base := trendRows(tx, "1100", "0011")
	moved := trendRows(append([]string{"9,9,9>1"}, tx[1:]...), "1100", "0011")
	for _, c := range []struct {
		name  string
		other []PromptOutcome
		a     string
		want  string
	}{
		{"other prompts", moved, "entropy(2,1,1,3)", `prompt 0 is "0,1,\"2\">10" in the base outcomes of entropy(2,1,1,3) and "9,9,9>1" in the other outcomes`},
		{"fewer prompts", trendRows(tx[:3], "110", "001"), "entropy(2,1,1,3)", "4 prompts in the base outcomes, entropy(2,1,1,3) 3 in the other ones"},
		{"no such method", base, "surprisal(2,1,1,3)", `base outcomes: no method "surprisal(2,1,1,3)" (the outcomes have entropy(2,1,1,3), random(2,1,1,3))`},
		{"a prompt twice", append(trendRows(tx, "1100", "0011"), base[0]), "entropy(2,1,1,3)", "prompt 0 twice or beyond its 5 prompts"},
	} {
		_, err := CompareGaps(base, c.other, c.a, "random(2,1,1,3)", DefaultBootstrap())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// The gap between entropy and random forks at two sizes, measured on the
// same prompts, and its change.
func ExampleCompareGaps() {
	tx := texts(8)
	tiny := trendRows(tx, "11111100", "11000000")
	medium := trendRows(tx, "11000000", "10000000")
	g, err := CompareGaps(tiny, medium, "entropy(2,1,1,3)", "random(2,1,1,3)", DefaultBootstrap())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("tiny %+.3f, medium %+.3f, change %+.3f\n", g.BaseGap.Est, g.OtherGap.Est, g.Change.Est)
	// Output: tiny +0.500, medium +0.125, change -0.375
}
