package reward

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"
	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/task"
)

// addPrompt is three-digit addition with the scratchpad (MaxResponseLen
// 13) and its prompt 123+456.
func addPrompt(t *testing.T) (task.Task, task.Prompt) {
	t.Helper()
	tk, err := task.New("add", task.AddParams{Digits: 3, Scratchpad: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tk.ParsePrompt("123+456")
	if err != nil {
		t.Fatal(err)
	}
	return tk, p
}

func TestMixerHandCases(t *testing.T) {
	tk, p := addPrompt(t)
	// A reward model that says ¾ to every response it can read: zero
	// weight, bias ln 3.
	rm := smallModel(t, 1)
	mat.Data[float32](rm.Bias)[0] = float32(math.Log(3))
	cfg := Config{Verifier: 1, Model: 0.5, Format: 0.25, Length: 0.13} // length: −len/100 up to 13 characters
	mix, err := NewMixer(cfg, tk, rm)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		response string
		reason   task.Reason
		terms    Terms
		reward   float64
	}{
		{"09 07 05=579", task.Correct, Terms{1, 0.75, 1, -12.0 / 13}, 1 + 0.375 + 0.25 - 0.12},
		{"09 07 05=578", task.WrongAnswer, Terms{0, 0.75, 1, -12.0 / 13}, 0.375 + 0.25 - 0.12},
		{"=579", task.Correct, Terms{1, 0.75, 1, -4.0 / 13}, 1 + 0.375 + 0.25 - 0.04},
		{"579", task.ParseError, Terms{0, 0.75, 0, -3.0 / 13}, 0.375 - 0.03},
		{"", task.Empty, Terms{0, 0.75, 0, 0}, 0.375},
		// Too long for the task and, at 40 tokens, for the small reward
		// model's 32 positions: no model term; the length term is capped at −1.
		{strings.Repeat("1", 30), task.TooLong, Terms{0, 0, 0, -1}, -0.13},
		// A character outside the alphabet: the reward model cannot read it.
		{"A=579", task.BadChar, Terms{0, 0, 0, -5.0 / 13}, -0.05},
	}
	prompts := make([]task.Prompt, len(cases))
	responses := make([]string, len(cases))
	for i, c := range cases {
		prompts[i], responses[i] = p, c.response
	}
	got, err := mix.Score(prompts, responses)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	for i, c := range cases {
		g := got[i]
		if g.Verdict.Reason != c.reason {
			t.Errorf("%q: reason %s, want %s", c.response, g.Verdict.Reason, c.reason)
		}
		if !near(g.Terms.Verifier, c.terms.Verifier) || !near(g.Terms.Model, c.terms.Model) || !near(g.Terms.Format, c.terms.Format) || !near(g.Terms.Length, c.terms.Length) {
			t.Errorf("%q: terms %+v, want %+v", c.response, g.Terms, c.terms)
		}
		if !near(g.Reward, c.reward) {
			t.Errorf("%q: reward %v, want %v", c.response, g.Reward, c.reward)
		}
	}

	if _, err := mix.Score(prompts, responses[:2]); err == nil {
		t.Error("Score with more prompts than responses: no error")
	}
}

func TestMixerDefaultIsVerifierAlone(t *testing.T) {
	tk, err := task.New("add", nil)
	if err != nil {
		t.Fatal(err)
	}
	mix, err := NewMixer(DefaultConfig(), tk, nil) // no reward model needed
	if err != nil {
		t.Fatal(err)
	}
	var prompts []task.Prompt
	var responses []string
	for i := 0; i < 20; i++ {
		p, err := tk.Prompt(task.Train, 1, i)
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p, p)
		responses = append(responses, p.Demo, p.Demo[:len(p.Demo)-1]+"x")
	}
	got, err := mix.Score(prompts, responses)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		want := tk.Verify(prompts[i], responses[i]).Reward
		if g.Reward != want || g.Terms.Model != 0 {
			t.Errorf("%q: reward %v (model term %v), want the verifier's %v alone", responses[i], g.Reward, g.Terms.Model, want)
		}
	}
}

func TestIsFormatFailure(t *testing.T) {
	for _, c := range []struct {
		r    task.Reason
		want bool
	}{
		{task.ParseError, true}, {task.BadChar, true}, {task.Empty, true}, {task.TooLong, true},
		{task.Correct, false}, {task.WrongAnswer, false}, {task.IllegalMove, false}, {task.ReusedNumber, false},
	} {
		if got := IsFormatFailure(c.r); got != c.want {
			t.Errorf("IsFormatFailure(%s) = %v, want %v", c.r, got, c.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tk, err := task.New("add", nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative verifier", Config{Verifier: -1}, "reward.verifier = -1"},
		{"NaN model", Config{Verifier: 1, Model: math.NaN()}, "reward.model = NaN"},
		{"infinite format", Config{Verifier: 1, Format: math.Inf(1)}, "reward.format = +Inf"},
		{"negative length", Config{Verifier: 1, Length: -0.1}, "reward.length = -0.1"},
		{"nothing rewards correctness", Config{Format: 1}, "reward.verifier = 0, as is reward.model"},
		{"model without a model", Config{Verifier: 1, Model: 0.5}, "reward.model = 0.5 needs a trained reward model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewMixer(c.cfg, tk, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewMixer error = %v, want one containing %q", err, c.want)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

func TestConfigDecodesOverDefaults(t *testing.T) {
	cfg := DefaultConfig()
	if err := yaml.Unmarshal([]byte("model: 0.5\nlength: 0.1\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if want := (Config{Verifier: 1, Model: 0.5, Length: 0.1}); cfg != want {
		t.Errorf("yaml over defaults = %+v, want %+v", cfg, want)
	}
	cfg = DefaultConfig()
	if err := json.Unmarshal([]byte(`{"verifier": 0, "model": 1, "format": 0.2}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if want := (Config{Model: 1, Format: 0.2}); cfg != want {
		t.Errorf("json over defaults = %+v, want %+v", cfg, want)
	}
}

// ScoringFLOPs counts the reward model's forward pass over every response
// it can read, at its sequence's length (BOS prompt SEP response EOS), and
// nothing without the model term; MaxScoringFLOPs bounds one response.
func TestMixerScoringFLOPs(t *testing.T) {
	tk, p := addPrompt(t)
	rm := smallModel(t, 1)
	responses := []string{"09 07 05=579", "=5", strings.Repeat("1", 30), "A=579"} // the last two unreadable
	prompts := []task.Prompt{p, p, p, p}
	mix, err := NewMixer(Config{Verifier: 1, Model: 0.5}, tk, rm)
	if err != nil {
		t.Fatal(err)
	}
	want := rm.ScoreFLOPs(7+12+3) + rm.ScoreFLOPs(7+2+3)
	if got := mix.ScoringFLOPs(prompts, responses); got != want || want <= 0 {
		t.Errorf("scoring FLOPs %d, want %d", got, want)
	}
	c := rm.Body.Config
	if got, want := rm.ScoreFLOPs(3), 3*(2*c.MatmulParams()-2*int64(c.Dim*c.VocabSize))+4*int64(c.Layers*c.Dim)*(1+2+3)+2*int64(c.Dim); got != want {
		t.Errorf("ScoreFLOPs(3) = %d, want %d", got, want)
	}
	if m := mix.MaxScoringFLOPs(tk.MaxPromptLen(), tk.MaxResponseLen()); m < rm.ScoreFLOPs(7+12+3) {
		t.Errorf("MaxScoringFLOPs %d below a response's %d", m, rm.ScoreFLOPs(22))
	}
	verifier, err := NewMixer(Config{Verifier: 1}, tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := verifier.ScoringFLOPs(prompts, responses) + verifier.MaxScoringFLOPs(10, 10); got != 0 {
		t.Errorf("verifier alone: %d scoring FLOPs", got)
	}
}
