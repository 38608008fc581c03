package task

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeJSONL writes lines to a file in a temporary directory.
func writeJSONL(t testing.TB, dir string, lines ...string) string {
	t.Helper()
	path := filepath.Join(dir, "data.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func newJSONL(t testing.TB, p JSONLParams) *JSONL {
	t.Helper()
	tk, err := New("jsonl", p)
	if err != nil {
		t.Fatal(err)
	}
	return tk.(*JSONL)
}

func TestJSONLVerifiers(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		params JSONLParams
		line   string
		cases  []struct {
			response string
			reward   float64
			reason   Reason
			answer   string
		}
	}{
		{"exact", JSONLParams{Verifier: "exact", MaxResponseLen: 9}, `{"prompt": "capital of france", "answer": "paris"}`, []struct {
			response string
			reward   float64
			reason   Reason
			answer   string
		}{
			{"paris", 1, Correct, "paris"},
			{"  paris\n", 1, Correct, "paris"},
			{"Paris", 0, WrongAnswer, "Paris"},
			{"london", 0, WrongAnswer, "london"},
			{"", 0, Empty, ""},
			{"   ", 0, ParseError, ""},
			{"parisparis", 0, TooLong, ""},
		}},
		{"exact_default_len", JSONLParams{Verifier: "exact"}, `{"prompt": "capital of france", "answer": "paris"}`, []struct {
			response string
			reward   float64
			reason   Reason
			answer   string
		}{
			{"paris", 1, Correct, "paris"},
			{"paris ", 0, TooLong, ""}, // the longest demo is 5 characters
		}},
		{"numeric", JSONLParams{Verifier: "numeric", Tolerance: 1e-3}, `{"prompt": "1/3", "answer": 0.3333}`, []struct {
			response string
			reward   float64
			reason   Reason
			answer   string
		}{
			{"0.3333", 1, Correct, "0.3333"},
			{"0.3336", 1, Correct, "0.3336"},
			{".3333", 1, Correct, "0.3333"},
			{"0.3345", 0, WrongAnswer, "0.3345"},
			{"-0.333", 0, WrongAnswer, "-0.333"},
			{"1/3", 0, ParseError, ""},
			{"NaN", 0, ParseError, ""},
			{"inf", 0, ParseError, ""},
			{"1e999", 0, ParseError, ""},
		}},
		{"numeric_commas_relative", JSONLParams{Verifier: "numeric", Tolerance: 1e-6, MaxResponseLen: 20}, `{"prompt": "big", "answer": "1,234,567"}`, []struct {
			response string
			reward   float64
			reason   Reason
			answer   string
		}{
			{"1234567", 1, Correct, "1.234567e+06"},
			{"1,234,567.5", 1, Correct, "1.2345675e+06"}, // within 1e-6 relative
			{"1234569", 0, WrongAnswer, "1.234569e+06"},
		}},
		{"numeric_pattern", JSONLParams{Verifier: "numeric", Pattern: `#### (\S+)`, MaxResponseLen: 30}, `{"prompt": "6*7", "answer": "42"}`, []struct {
			response string
			reward   float64
			reason   Reason
			answer   string
		}{
			{"6*7=42\n#### 42", 1, Correct, "42"},
			{"#### 41 no wait #### 42.0", 1, Correct, "42"}, // the last match counts
			{"#### 42 no wait #### 41", 0, WrongAnswer, "41"},
			{"42", 0, ParseError, ""},
			{"#### forty", 0, ParseError, ""},
		}},
		{"regex_boxed", JSONLParams{Verifier: "regex", Pattern: `\\boxed\{([^}]*)\}`, MaxResponseLen: 40}, `{"prompt": "x^2=4, x>0", "answer": "2"}`, []struct {
			response string
			reward   float64
			reason   Reason
			answer   string
		}{
			{`so \boxed{2}`, 1, Correct, "2"},
			{`\boxed{ 2 }.`, 1, Correct, "2"},
			{`\boxed{-2}`, 0, WrongAnswer, "-2"},
			{`\boxed{}`, 0, ParseError, ""},
			{`2`, 0, ParseError, ""},
		}},
		{"regex_whole_match", JSONLParams{Verifier: "regex", Pattern: `[a-z]+$`, MaxResponseLen: 40}, `{"prompt": "animal", "answer": "cat", "demo": "it is a cat"}`, []struct {
			response string
			reward   float64
			reason   Reason
			answer   string
		}{
			{"it is a cat", 1, Correct, "cat"},
			{"cat dog", 0, WrongAnswer, "dog"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.params.Path = writeJSONL(t, dir, tc.line)
			if tc.params.Verifier == "" {
				tc.params.Verifier = "exact"
			}
			tk := newJSONL(t, tc.params)
			p, err := tk.Prompt(SplitOf(tk.items[0].text), 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			if p.Demo != "" {
				if v := tk.Verify(p, p.Demo); v.Reward != 1 {
					t.Errorf("demo %q graded %+v", p.Demo, v)
				}
			}
			for _, c := range tc.cases {
				v := tk.Verify(p, c.response)
				if v.Reward != c.reward || v.Reason != c.reason || v.Answer != c.answer {
					t.Errorf("Verify(%q) = %+v, want reward %g, %s, answer %q", c.response, v, c.reward, c.reason, c.answer)
				}
			}
		})
	}
}

func TestJSONLAnswerStart(t *testing.T) {
	dir := t.TempDir()
	path := writeJSONL(t, dir, `{"prompt": "q", "answer": "42"}`)
	plain := newJSONL(t, JSONLParams{Path: path, Verifier: "exact"})
	hashed := newJSONL(t, JSONLParams{Path: path, Verifier: "regex", Pattern: `#### (\d+)`, MaxResponseLen: 20})
	for _, tc := range []struct {
		tk       *JSONL
		response string
		want     int
	}{
		{plain, "42", 0},
		{hashed, "so #### 42", 8},
		{hashed, "é #### 42", 7}, // characters, not bytes
		{hashed, "so ###", 6},
	} {
		if got := tc.tk.AnswerStart(Prompt{Text: "q"}, tc.response); got != tc.want {
			t.Errorf("AnswerStart(%q) = %d, want %d", tc.response, got, tc.want)
		}
	}
}

func TestJSONLBadLines(t *testing.T) {
	dir := t.TempDir()
	path := writeJSONL(t, dir,
		`{"prompt": "ok", "answer": "1"}`,
		`{"prompt": "no answer"}`,
		``,
		`{"prompt": 5, "answer": "1"}`,
		`not json`,
		`{"prompt": "", "answer": "1"}`,
		`{"prompt": "x", "answer": "seven"}`,
		`{"prompt": "ok", "answer": "2"}`,
		`{"prompt": "y", "answer": "3", "demo": "4"}`,
		`{"prompt": "z", "answer": [3]}`,
		`{"prompt": "ok", "answer": "1"}`, // a duplicate with the same answer is fine
		`[1, 2]`,
	)
	_, err := New("jsonl", JSONLParams{Path: path, Verifier: "numeric"})
	if err == nil {
		t.Fatal("bad lines accepted")
	}
	for _, want := range []string{
		path + ":2: answer is missing",
		path + ":4: prompt is 5, want a string",
		path + ":5: not valid JSON: invalid character 'o' in literal null (expecting 'u') (at byte 2)",
		path + `:12: a JSON array, want an object {"prompt": ..., "answer": ...}`,
		path + ":6: prompt is empty",
		path + `:7: answer "seven" is not a number (verifier numeric)`,
		path + `:8: prompt "ok" repeats line 1 with another answer`,
		path + `:9: demo "4" is graded wrong_answer against answer "3"`,
		path + `:10: answer is [3], want a string or a number`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "struct") {
		t.Errorf("error names Go types:\n%v", err)
	}
	if strings.Contains(err.Error(), ":1:") || strings.Contains(err.Error(), ":11:") || strings.Contains(err.Error(), ":3:") {
		t.Errorf("good lines reported:\n%v", err)
	}

	bom := writeJSONL(t, t.TempDir(), "\xef\xbb\xbf"+`{"prompt": "q", "answer": "1"}`+"\r")
	if _, err := New("jsonl", JSONLParams{Path: bom, Verifier: "exact"}); err != nil {
		t.Errorf("a file with a byte order mark and CRLF: %v", err)
	}

	var many []string
	for i := range 15 {
		many = append(many, fmt.Sprintf(`{"prompt": "p%d"}`, i))
	}
	_, err = New("jsonl", JSONLParams{Path: writeJSONL(t, t.TempDir(), many...), Verifier: "exact"})
	if err == nil || !strings.Contains(err.Error(), ":10: answer is missing") || strings.Contains(err.Error(), ":11:") || !strings.Contains(err.Error(), "and 5 more bad lines") {
		t.Errorf("15 bad lines: %v", err)
	}
}

func TestJSONLParamErrors(t *testing.T) {
	path := writeJSONL(t, t.TempDir(), `{"prompt": "q", "answer": "a"}`)
	for _, tc := range []struct {
		p    JSONLParams
		want string
	}{
		{JSONLParams{Verifier: "exact"}, "path is required"},
		{JSONLParams{Path: path, Verifier: "fuzzy"}, `verifier = "fuzzy", want one of exact, numeric, regex`},
		{JSONLParams{Path: path, Verifier: "numeric", Tolerance: -1}, "tolerance = -1"},
		{JSONLParams{Path: path, Verifier: "regex"}, "pattern is required"},
		{JSONLParams{Path: path, Verifier: "regex", Pattern: "(", MaxResponseLen: 5}, `pattern = "("`},
		{JSONLParams{Path: path, Verifier: "regex", Pattern: "a"}, "set max_response_len"},
		{JSONLParams{Path: path, Verifier: "exact", Template: "q: "}, "has no {prompt}"},
		{JSONLParams{Path: path, Verifier: "exact", MaxResponseLen: -2}, "max_response_len = -2"},
		{JSONLParams{Path: path + ".missing", Verifier: "exact"}, "data.jsonl.missing"},
		{JSONLParams{Path: writeJSONL(t, t.TempDir(), ""), Verifier: "exact"}, "has no prompts"},
	} {
		if _, err := New("jsonl", tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.p, err, tc.want)
		}
	}
	if p, err := DefaultParams("jsonl"); err != nil || *p.(*JSONLParams) != DefaultJSONLParams() {
		t.Errorf("DefaultParams(jsonl) = %v, %v", p, err)
	}
	if _, err := New("nosuch", nil); err == nil || !strings.Contains(err.Error(), "jsonl") {
		t.Errorf("unknown task error %v does not list jsonl", err)
	}
}

// manyLines writes n arithmetic prompts.
func manyLines(t testing.TB, n int) string {
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf(`{"prompt": "%d+%d", "answer": "%d"}`, i, i+1, 2*i+1))
	}
	return writeJSONL(t, t.TempDir(), lines...)
}

func TestJSONLSplitsAndOrder(t *testing.T) {
	tk := newJSONL(t, JSONLParams{Path: manyLines(t, 200), Verifier: "exact", Template: "q {prompt} ="})
	if tk.Len(Train)+tk.Len(Eval) != 200 || tk.Len(Eval) == 0 || tk.Len(Train) <= tk.Len(Eval) {
		t.Fatalf("splits of %d train, %d eval", tk.Len(Train), tk.Len(Eval))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, split := range []Split{Train, Eval} {
		n := tk.Len(split)
		seen := make(map[string]bool)
		for i := range n {
			p, err := tk.Prompt(split, 7, i)
			if err != nil {
				t.Fatal(err)
			}
			if SplitOf(p.Text) != split || !strings.HasPrefix(p.Text, "q ") || !strings.HasSuffix(p.Text, " =") {
				t.Fatalf("%s prompt %d: %q", split, i, p.Text)
			}
			if seen[p.Text] {
				t.Fatalf("%s prompt %q repeats within the first %d indices", split, p.Text, n)
			}
			seen[p.Text] = true
			again, _ := tk.Prompt(split, 7, i)
			if again.Text != p.Text {
				t.Fatalf("%s prompt %d: %q then %q", split, i, p.Text, again.Text)
			}
			if v := tk.Verify(p, p.Demo); v.Reward != 1 {
				t.Fatalf("demo %q of %q graded %+v", p.Demo, p.Text, v)
			}
			if w := tk.FlawedDemo(p, rng); tk.Verify(p, w).Reward >= 1 || len(w) > tk.MaxResponseLen() {
				t.Fatalf("flawed demo %q of %q graded %+v", w, p.Text, tk.Verify(p, w))
			}
			parsed, err := tk.ParsePrompt(p.Text)
			if err != nil || parsed.Demo != p.Demo {
				t.Fatalf("ParsePrompt(%q) = %+v, %v", p.Text, parsed, err)
			}
		}
	}
	a, _ := tk.Prompt(Train, 1, 0)
	b, _ := tk.Prompt(Train, 2, 0)
	c, _ := tk.Prompt(Train, 1, tk.Len(Train))
	if a.Text == b.Text && a.Text == c.Text {
		t.Errorf("seeds and epochs give the same first prompt %q", a.Text)
	}
	if _, err := tk.ParsePrompt("q 1+1 ="); err == nil {
		t.Error("a prompt not in the file parsed")
	}
	if v := tk.Verify(Prompt{Text: "nope"}, "1"); v.Reason != BadPrompt {
		t.Errorf("unknown prompt graded %+v", v)
	}
	if _, err := tk.Prompt(Train, 1, -1); err == nil {
		t.Error("negative index accepted")
	}
}

func TestJSONLEmptySplit(t *testing.T) {
	// One prompt falls into one split only.
	tk := newJSONL(t, JSONLParams{Path: writeJSONL(t, t.TempDir(), `{"prompt": "q", "answer": "a"}`), Verifier: "exact"})
	empty := Train
	if SplitOf("q") == Train {
		empty = Eval
	}
	if _, err := tk.Prompt(empty, 1, 0); err == nil || !strings.Contains(err.Error(), "no "+empty.String()+" prompts") {
		t.Errorf("empty %s split: %v", empty, err)
	}
}

func TestPermuteIsABijection(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 5, 16, 17, 100, 1000} {
		seen := make([]bool, n)
		for j := range n {
			k := permute(j, n, 12345)
			if k >= n || seen[k] {
				t.Fatalf("n %d: permute(%d) = %d, out of range or repeated", n, j, k)
			}
			seen[k] = true
		}
	}
}

// CheckFits, the gate of local policies, rejects text outside Alphabet
// and names the line; a remote policy may read any text.
func TestJSONLCheckFitsAlphabet(t *testing.T) {
	dir := t.TempDir()
	ok := newJSONL(t, JSONLParams{Path: writeJSONL(t, dir, `{"prompt": "12+34", "answer": "46"}`), Verifier: "exact"})
	if err := CheckFits(ok, 64); err != nil {
		t.Errorf("ascii data: %v", err)
	}
	if err := CheckFits(ok, 8); err == nil || !strings.Contains(err.Error(), "max sequence length 8") {
		t.Errorf("too long for 8 positions: %v", err)
	}
	path := writeJSONL(t, dir, `{"prompt": "12+34", "answer": "46"}`, `{"prompt": "Quelle est la capitale?", "answer": "paris"}`)
	fr := newJSONL(t, JSONLParams{Path: path, Verifier: "exact", MaxResponseLen: 10})
	p, err := fr.ParsePrompt("Quelle est la capitale?")
	if err != nil {
		t.Fatal(err)
	}
	if v := fr.Verify(p, "Paris!"); v.Reason != WrongAnswer {
		t.Errorf("any character may be graded: %+v", v)
	}
	err = CheckFits(fr, 64)
	if err == nil || !strings.Contains(err.Error(), path+":2: the prompt has the character 'Q' (position 0), outside the local policy's character alphabet") ||
		!strings.Contains(err.Error(), "OpenAI-compatible") {
		t.Errorf("CheckFits: %v", err)
	}
}

func fuzzJSONL(f *testing.F, p JSONLParams, lines ...string) Task {
	p.Path = writeJSONL(f, f.TempDir(), lines...)
	tk, err := New("jsonl", p)
	if err != nil {
		f.Fatal(err)
	}
	return tk
}

// jsonlLines are the fuzzed tasks' files: plain answers, and answers with
// demos that the pattern reads.
func jsonlLines(withDemos bool) []string {
	lines := []string{
		`{"prompt": "a", "answer": "12"}`, `{"prompt": "d", "answer": "0"}`,
		`{"prompt": "e", "answer": "7"}`, `{"prompt": "f", "answer": "99"}`, `{"prompt": "g", "answer": "5"}`,
		`{"prompt": "h", "answer": "8"}`, `{"prompt": "i", "answer": "13"}`, `{"prompt": "j", "answer": "21"}`,
		`{"prompt": "k", "answer": "34"}`, `{"prompt": "l", "answer": "55"}`, `{"prompt": "m", "answer": "89"}`,
	}
	if withDemos {
		lines = append(lines, `{"prompt": "b", "answer": "-3.5", "demo": "#### -3.5"}`, `{"prompt": "c", "answer": "1000", "demo": "so #### 1000"}`)
	}
	return lines
}

var jsonlResponses = append([]string{"12", "#### 12", "#### -3.5", "1,000", "1e3", "#### #### 5", "\\boxed{12}", "12.0000001", "0x10", "1_000", "+5", ".", "e", "1e", "--1"}, nasty...)

func FuzzVerifyJSONLExact(f *testing.F) {
	fuzzVerify(f, fuzzJSONL(f, JSONLParams{Verifier: "exact", MaxResponseLen: 8}, jsonlLines(false)...), []string{"a", "b", "zz", ""}, jsonlResponses)
}

func FuzzVerifyJSONLNumeric(f *testing.F) {
	fuzzVerify(f, fuzzJSONL(f, JSONLParams{Verifier: "numeric", Tolerance: 1e-6, Pattern: `#### (\S+)`, MaxResponseLen: 40}, jsonlLines(true)...),
		[]string{"a", "b", "c", "zz"}, jsonlResponses)
}

func FuzzVerifyJSONLRegex(f *testing.F) {
	fuzzVerify(f, fuzzJSONL(f, JSONLParams{Verifier: "regex", Pattern: `(?:####|boxed\{)\s*(-?[0-9.e]+)`, MaxResponseLen: 40}, jsonlLines(true)...),
		[]string{"a", "b", "c", "zz"}, jsonlResponses)
}

// A line longer than the bound stops the reading with an error naming the
// file, the line and the bound, in the file's terms.
func TestJSONLLineTooLong(t *testing.T) {
	long := `{"prompt": "` + strings.Repeat("1", maxJSONLLine) + `", "answer": "1"}`
	path := writeJSONL(t, t.TempDir(), `{"prompt": "ok", "answer": "1"}`, long)
	_, err := New("jsonl", JSONLParams{Path: path, Verifier: "exact"})
	want := path + ":2: the line is longer than 16 MiB"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "bufio") {
		t.Errorf("a line of %d bytes: %v, want %q", len(long), err, want)
	}
}
