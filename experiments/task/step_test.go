package task

import "testing"

// Every bundled task says what its step is, and a task that does not gets
// the default.
func TestStepEnds(t *testing.T) {
	for name, want := range map[string]string{"add": " ", "countdown": "", "path": "", "long_add": " ", "chain": " ", "countdown_search": ",;", "dag_search": ""} {
		tk, err := New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := StepEnds(tk); got != want {
			t.Errorf("%s: step ends %q, want %q", name, got, want)
		}
	}
	if got := StepEnds(&JSONL{}); got != DefaultStepEnds {
		t.Errorf("jsonl: step ends %q, want the default %q", got, DefaultStepEnds)
	}
}
