package task

import (
	"fmt"
	"io"
)

// Show writes n prompts of a split with their demonstrations, one a line,
// for `rollout task show`: the index, the prompt and the demo, quoted so
// that spaces and newlines are visible.
func Show(w io.Writer, t Task, split Split, seed uint64, n int) error {
	if n < 0 {
		return fmt.Errorf("task %s: negative number of prompts %d", t.Name(), n)
	}
	if _, err := fmt.Fprintf(w, "# %s, %s split, seed %d (prompt ≤ %d, response ≤ %d characters)\n",
		t.Name(), split, seed, t.MaxPromptLen(), t.MaxResponseLen()); err != nil {
		return fmt.Errorf("task %s: show: %w", t.Name(), err)
	}
	for i := range n {
		p, err := t.Prompt(split, seed, i)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%d\tprompt %q\tdemo %q\n", i, p.Text, p.Demo); err != nil {
			return fmt.Errorf("task %s: show: %w", t.Name(), err)
		}
	}
	return nil
}

// VerifyText grades a response to a prompt given as text, for `rollout task
// verify`: a malformed prompt is an error, any response gets a verdict
// (marshal it with encoding/json for {"reward", "reason", "answer"}).
func VerifyText(t Task, promptText, response string) (Verdict, error) {
	p, err := t.ParsePrompt(promptText)
	if err != nil {
		return Verdict{}, fmt.Errorf("task %s: %w", t.Name(), err)
	}
	return t.Verify(p, response), nil
}
