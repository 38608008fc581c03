package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/tracking"
)

func TestSuggest(t *testing.T) {
	names := []string{"report", "plot", "run", "ls", "export", "quickstart", "quickstart_long"}
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"reprot", []string{"report"}},
		{"rn", []string{"run", "ls"}},
		{"quickstrat", []string{"quickstart"}},
		{"quick", []string{"quickstart", "quickstart_long"}},
		{"Export", []string{"export", "report"}}, // case ignored; nearest first
		{"zzzzzz", nil},
		{"plot", nil}, // the word itself is no suggestion
	} {
		if got := suggest(tc.word, names); !slices.Equal(got, tc.want) {
			t.Errorf("suggest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// Mistyped commands, flags, tasks and experiment names exit 2 with the
// closest names offered.
func TestDidYouMean(t *testing.T) {
	store := filepath.Join(t.TempDir(), "s.db")
	st, err := tracking.Open(store, tracking.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"quickstart", "long_add"} {
		if err := st.PutExperiment(tracking.Experiment{Name: name, Variants: []string{"flat"}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reprot"}, `unknown command "reprot" for "rollout" (did you mean "report"?)`},
		{[]string{"model", "smaple"}, `unknown command "smaple" for "rollout model" (did you mean "sample"?)`},
		{[]string{"nosuch"}, `unknown command "nosuch" for "rollout": "rollout --help" lists the commands`},
		{[]string{"report", "x", "--metirc", "m"}, `unknown flag: --metirc (did you mean "--metric"?)`},
		{[]string{"trees", "x", "--stpe", "3"}, `unknown flag: --stpe (did you mean "--step" or "--store"?)`},
		{[]string{"ls", "--zzzzzz"}, `unknown flag: --zzzzzz ("rollout ls --help" lists the flags)`},
		{[]string{"task", "show", "ad"}, `unknown task "ad"`},
		{[]string{"task", "show", "chian"}, `(did you mean "chain"?)`},
		{[]string{"report", "quickstrat", "--store", store}, `no experiment "quickstrat" in ` + store + ` (did you mean "quickstart"?)`},
		{[]string{"plot", "long-add", "--metric", "m", "--out", "p.png", "--store", store}, `(did you mean "long_add"?)`},
		{[]string{"ls", "quikstart", "--store", store}, `(did you mean "quickstart"?)`},
		{[]string{"export", "quickstat", "--store", store}, `(did you mean "quickstart"?)`},
		{[]string{"show", "zzz", "--store", store}, `(rollout ls lists the experiments and runs)`},
	} {
		code, _, errOut := rollout(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// --param sets a task parameter in every command that takes it; sample's
// strategy parameters are --strategy-param.
func TestParamIsATaskParameter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--seed", "2", "--out", dir); code != 0 {
		t.Fatal(e)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string // in stdout when code is 0, else in stderr
	}{
		{[]string{"task", "show", "add", "--param", "digits=2", "--n", "1"}, 0, "prompt ≤ 5"},
		{[]string{"sample", "--checkpoint", dir, "--task", "add", "--param", "digits=2", "--strategy", "flat", "--strategy-param", "n=3"}, 0, "3 leaves"},
		{[]string{"sample", "--checkpoint", dir, "--task", "add", "--strategy", "entropy_tree", "--param", "m=2"}, 2,
			"task add: --param m=2: unknown parameter (want one of digits, scratchpad); a strategy parameter is --strategy-param key=value"},
		{[]string{"sample", "--checkpoint", dir, "--task", "add", "--strategy", "flat", "--strategy-param", "m=2"}, 2, "m"},
		{[]string{"ttc", "--checkpoint", dir, "--task", "add", "--param", "digits=2", "--n", "1", "--prompts", "2", "--no-tree", "--format", "json"}, 0, `"tokens"`},
		{[]string{"ttc", "--checkpoint", dir, "--task", "countdown", "--param", "digits=2"}, 2, "task countdown: --param digits=2: unknown parameter"},
	} {
		code, out, e := rollout(t, tc.args...)
		got := out
		if tc.code != 0 {
			got = e
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q in\n%s%s", tc.args, code, tc.code, tc.want, out, e)
		}
	}
	// The task parameter reaches the prompt: two-digit operands.
	_, out, _ := rollout(t, "sample", "--checkpoint", dir, "--task", "add", "--param", "digits=2", "--strategy", "flat", "--strategy-param", "n=1")
	if first, _, _ := strings.Cut(out, "\n"); !regexpMatch(`^prompt "[0-9]{2}\+[0-9]{2}"$`, first) {
		t.Errorf("sample --param digits=2: first line %q, want a prompt of two-digit operands", first)
	}
}

// regexpMatch reports whether s matches the regular expression re.
func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
