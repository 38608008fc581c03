package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/passrate"
)

// passrateConfig writes a config over a freshly initialised checkpoint
// (no pretraining) and returns its path and the directory.
func passrateConfig(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--seed", "3", "--out", ckpt); code != 0 {
		t.Fatal(e)
	}
	cfg := filepath.Join(dir, "pr.yaml")
	src := "name: pr\ntask: {name: add, params: {digits: 2}}\ncheckpoint: " + ckpt + "\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

// rollout passrate on a small sweep: the table has the i.i.d. points and
// every tree, the JSON its rows, and --out writes the three figures.
func TestPassrateCommand(t *testing.T) {
	cfg, dir := passrateConfig(t)
	// Without --iid-n, the default i.i.d. points are clipped to --k: 1, 2, 4.
	small := []string{"passrate", cfg, "--prompts", "6", "--k", "4", "--shape", "1,2,1,1",
		"--score", "entropy,random", "--segment", "4,2,2", "--resamples", "100"}
	prefix := filepath.Join(dir, "fig")
	code, out, e := rollout(t, append(small, "--out", prefix)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if strings.Contains(out, "iid(n=8)") {
		t.Errorf("--k 4: the table has n = 8:\n%s", out)
	}
	for _, want := range []string{"| iid(n=1) | 1.0 |", "| iid(n=2) | 2.0 |", "| iid(n=4) | 4.0 |", "| entropy(1,2,1,1) | ", "| random(1,2,1,1) | ", "| segment(4,2,2) |", "mean length", "| iid |",
		"Fork scores at the same shape", "| entropy(1,2,1,1) | random(1,2,1,1) | "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"_passrate.png", "_leafacc.png", "_entropy.png"} {
		if st, err := os.Stat(prefix + f); err != nil || st.Size() == 0 {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	code, out, e = rollout(t, append(small, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var res struct {
		Rows []struct {
			Method string
			Tokens float64
		}
		Pairs []struct{ A, B string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Rows) != 6 {
		t.Fatalf("json: %v, %d rows, want 6:\n%s", err, len(res.Rows), out)
	}
	if len(res.Pairs) != 1 || res.Pairs[0].A != "entropy(1,2,1,1)" || res.Pairs[0].B != "random(1,2,1,1)" {
		t.Errorf("json pairs %+v, want entropy(1,2,1,1) against random(1,2,1,1)", res.Pairs)
	}
}

func TestPassrateBadInput(t *testing.T) {
	cfg, _ := passrateConfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shape", "1,2,1"}, `--shape "1,2,1": want 4 comma-separated integers`},
		{[]string{"--shape", "1,x,1,1"}, `"x" is not an integer`},
		{[]string{"--shape", "1,2,1,0"}, "--shape 1,2,1,0 --score entropy: entropy_tree: t = 0"},
		{[]string{"--score", "loud"}, `score = "loud"`},
		{[]string{"--segment", "4,1,2"}, "--segment 4,1,2: segment_tree: b = 1"},
		{[]string{"--k", "4", "--iid-n", "8"}, "n = 8: want 1 to k = 4"},
		{[]string{"--prompts", "0"}, "prompts = 0"},
		{[]string{"--resamples", "10"}, "--resamples 10"},
		{[]string{"--format", "csv"}, `--format "csv"`},
		{[]string{"--variant", "nope"}, `--variant "nope"`},
	} {
		code, _, e := rollout(t, append([]string{"passrate", cfg}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, e, tc.want)
		}
	}
}

// passrateShape is the shape of a passrate table: its sections (split at
// blank lines) with each line's first cell and number of cells, except
// the entropy-by-character table, whose rows depend on the responses.
func passrateShape(out string) []string {
	var shape []string
	for i, sec := range strings.Split(strings.TrimSpace(out), "\n\n") {
		byChar := strings.HasPrefix(sec, "| after") // rows depend on the samples
		for _, line := range strings.Split(sec, "\n") {
			if byChar && !strings.HasPrefix(line, "| after") && !strings.HasPrefix(line, "| ---") {
				continue
			}
			cells := strings.Split(line, "|")
			first := line
			if len(cells) > 1 {
				first = strings.TrimSpace(cells[1])
			} else {
				first = "(summary)"
			}
			shape = append(shape, fmt.Sprintf("%d: %s (%d cells)", i, first, len(cells)))
		}
	}
	return shape
}

// rollout passrate --policy against rollout serve on loopback gives the
// local table's shape (without the segment tree, which has no remote
// form), and every method's tokens add up to what the server reported.
func TestPassrateRemote(t *testing.T) {
	cfg, _ := passrateConfig(t)
	url, used := serveTiny(t)
	small := []string{"passrate", cfg, "--prompts", "3", "--k", "2", "--iid-n", "1,2", "--shape", "1,2,1,1",
		"--score", "entropy,surprisal,random", "--resamples", "100"}
	code, local, e := rollout(t, append(small, "--segment", "4,2,2")...)
	if code != 0 {
		t.Fatalf("local: exit %d: %s", code, e)
	}
	code, served, e := rollout(t, append(small, "--policy", url, "--model", "tiny")...)
	if code != 0 {
		t.Fatalf("remote: exit %d: %s", code, e)
	}
	var want []string
	for _, l := range passrateShape(local) {
		if !strings.Contains(l, "segment(") {
			want = append(want, l)
		}
	}
	if got := passrateShape(served); !slices.Equal(got, want) {
		t.Errorf("remote table's shape\n%s\nwant the local one's\n%s\nremote table:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), served)
	}
	before := used.Load()
	code, out, e := rollout(t, append(small, "--policy", url, "--format", "json")...)
	if code != 0 {
		t.Fatalf("remote json: exit %d: %s", code, e)
	}
	var res struct {
		Rows []struct {
			Method string
			Tokens float64
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Rows) != 5 {
		t.Fatalf("json: %v, %d rows, want 5:\n%s", err, len(res.Rows), out)
	}
	total := 0.0 // iid(n=K) costs what the K samples cost
	for _, r := range res.Rows[1:] {
		total += 3 * r.Tokens
	}
	if server := float64(used.Load() - before); total == 0 || math.Abs(total-server) > 1e-6 {
		t.Errorf("tokens of the methods sum to %g, the server reported %g", total, server)
	}
}

// Flags that do not go with --policy, or --policy without its server,
// exit 2 naming them.
func TestPassrateRemoteBadInput(t *testing.T) {
	cfg, _ := passrateConfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "http://127.0.0.1:1", "--segment", "4,2,2"}, "--segment and --policy: the segment tree has no remote form"},
		{[]string{"--policy", "http://127.0.0.1:1", "--cache", "x"}, "--cache and --policy"},
		{[]string{"--policy", "127.0.0.1:1"}, `--policy "127.0.0.1:1": want the server's URL`},
		{[]string{"--model", "tiny"}, "--model: only with --policy"},
		{[]string{"--concurrency", "2"}, "--concurrency: only with --policy"},
		{[]string{"--policy", "http://127.0.0.1:1", "--concurrency", "0"}, "--concurrency 0"},
		{[]string{"--policy", "http://127.0.0.1:1", "--set", "rollout.top_k=5"}, "rollout.top_k = 5 and --policy"},
	} {
		code, _, e := rollout(t, append([]string{"passrate", cfg}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, e, tc.want)
		}
	}
}

// Without --iid-n, --k clips the default i.i.d. points to K and ends them
// at K (TestPassrateCommand runs it; TestPassrateBadInput: given points
// must fit K).
func TestPassrateKClipsDefaultPoints(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want []int
	}{{32, []int{1, 2, 4, 8, 16, 32}}, {8, []int{1, 2, 4, 8}}, {10, []int{1, 2, 4, 8, 10}}, {1, []int{1}}, {64, []int{1, 2, 4, 8, 16, 32, 64}}} {
		if got := clipIIDNs(defaultIIDNs, tc.k); !slices.Equal(got, tc.want) {
			t.Errorf("k %d: %v, want %v", tc.k, got, tc.want)
		}
	}
}

// withoutSeconds is a passrate table without its seconds table (wall
// times, which differ between runs).
func withoutSeconds(out string) string {
	before, _, _ := strings.Cut(out, "| method | seconds |")
	return before
}

// --out PREFIX writes PREFIX_outcomes.csv, a row per method and prompt
// whose means are the table's PassRates and tokens, and changes nothing
// that passrate prints; rollout passrate trend reads it back, and a file
// compared with itself gives the pair's printed gap and a change of 0.
func TestPassrateOutcomes(t *testing.T) {
	cfg, dir := passrateConfig(t)
	args := []string{"passrate", cfg, "--prompts", "6", "--k", "4", "--shape", "1,2,1,1",
		"--score", "entropy,random", "--segment", "4,2,2", "--resamples", "100"}
	code, plain, e := rollout(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	prefix := filepath.Join(dir, "fig")
	code, withOut, e := rollout(t, append(args, "--out", prefix)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if withoutSeconds(withOut) != withoutSeconds(plain) {
		t.Errorf("--out changed the table:\n%s\nwant\n%s", withOut, plain)
	}
	code, js, e := rollout(t, append(args, "--out", prefix, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var res struct {
		Rows []struct {
			Method string
			Tokens float64
			Pass   struct{ Est float64 }
		}
		Pairs []struct {
			DiffPass struct{ Est, Lo, Hi float64 }
		}
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil || len(res.Pairs) != 1 {
		t.Fatalf("json: %v, %d pairs:\n%s", err, len(res.Pairs), js)
	}
	csvPath := prefix + "_outcomes.csv"
	raw, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if lines[0] != "prompt,prompt_text,method,family,shape,leaves,correct,tokens,pass" || len(lines) != 1+6*6 {
		t.Fatalf("outcomes: header %q and %d rows, want 36 (6 methods × 6 prompts)", lines[0], len(lines)-1)
	}
	outs, err := passrate.ReadOutcomes(strings.NewReader(string(raw)), csvPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		var pass, tokens float64
		n := 0
		for _, o := range outs {
			if o.Method == r.Method {
				pass, tokens, n = pass+o.Pass, tokens+o.Tokens, n+1
			}
		}
		if n != 6 || math.Abs(pass/6-r.Pass.Est) > 1e-12 || math.Abs(tokens/6-r.Tokens) > 1e-9 {
			t.Errorf("%s: %d rows, mean pass %g and tokens %g; the table has %g and %g", r.Method, n, pass/6, tokens/6, r.Pass.Est, r.Tokens)
		}
	}
	trend := []string{"passrate", "trend", csvPath, csvPath, "--a", "entropy(1,2,1,1)", "--b", "random(1,2,1,1)", "--resamples", "100"}
	code, out, e := rollout(t, trend...)
	if code != 0 {
		t.Fatalf("trend: exit %d: %s", code, e)
	}
	d := res.Pairs[0].DiffPass
	gap := fmt.Sprintf("%+.1f [%+.1f, %+.1f]", 100*d.Est, 100*d.Lo, 100*d.Hi)
	if !strings.Contains(out, "| "+gap+" | — |") || !strings.Contains(out, "| "+gap+" | +0.0 [+0.0, +0.0] |") {
		t.Errorf("trend of a file against itself: want the gap %s and a change of 0:\n%s", gap, out)
	}
	code, out, e = rollout(t, append(trend, "--format", "json")...)
	var tr struct {
		Prompts int
		Rows    []struct{ Change *struct{ Est float64 } }
	}
	if err := json.Unmarshal([]byte(out), &tr); code != 0 || err != nil || tr.Prompts != 6 || len(tr.Rows) != 2 || tr.Rows[0].Change != nil || tr.Rows[1].Change == nil {
		t.Errorf("trend json: exit %d, %v, %+v: %s%s", code, err, tr, out, e)
	}
}

// rollout passrate trend refuses bad input with status 2, naming the flag,
// file, line or prompt.
func TestPassrateTrendBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := "prompt,prompt_text,method,family,shape,leaves,correct,tokens,pass\n"
	rows := func(text string) string {
		return head + "0," + text + ",e,entropy,,8,1,150,1\n0," + text + ",r,random,,8,0,150,0\n"
	}
	good, moved := write("good.csv", rows("1+2")), write("moved.csv", rows("2+3"))
	bad := write("bad.csv", head+"0,1+2,e,entropy,,8,1,150,2\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{good, good, "--b", "r"}, "--a and --b"},
		{[]string{good, good, "--a", "e", "--b", "e"}, `--a and --b are both "e"`},
		{[]string{good, "--a", "e", "--b", "r"}, "requires at least 2 arg(s)"},
		{[]string{good, filepath.Join(dir, "none.csv"), "--a", "e", "--b", "r"}, "none.csv: no such file"},
		{[]string{good, bad, "--a", "e", "--b", "r"}, `bad.csv:2: column pass: "2"`},
		{[]string{good, moved, "--a", "e", "--b", "r"}, `moved.csv against ` + good + `: prompt 0 is "1+2" in the base outcomes of e and "2+3" in the other outcomes of e`},
		{[]string{good, good, "--a", "s", "--b", "r"}, `no method "s" (the outcomes have e, r)`},
		{[]string{good, good, "--a", "e", "--b", "r", "--resamples", "10"}, "--resamples 10"},
		{[]string{good, good, "--a", "e", "--b", "r", "--format", "csv"}, `--format "csv"`},
	} {
		code, _, e := rollout(t, append([]string{"passrate", "trend"}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, e, tc.want)
		}
	}
}
