package task

import "testing"

// BenchmarkPrompt measures prompt generation per task and split (eval
// prompts draw about evalOneIn problems each).
func BenchmarkPrompt(b *testing.B) {
	for _, name := range Names() {
		tk, err := New(name, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, split := range []Split{Train, Eval} {
			b.Run(name+"/"+split.String(), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, err := tk.Prompt(split, 1, i); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkVerify measures grading a correct response with the parsed
// problem cached in the Prompt, and with the prompt text alone.
func BenchmarkVerify(b *testing.B) {
	for _, name := range Names() {
		tk, err := New(name, nil)
		if err != nil {
			b.Fatal(err)
		}
		p, err := tk.Prompt(Train, 1, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/cached", func(b *testing.B) {
			for b.Loop() {
				tk.Verify(p, p.Demo)
			}
		})
		b.Run(name+"/text", func(b *testing.B) {
			bare := Prompt{Text: p.Text}
			for b.Loop() {
				tk.Verify(bare, p.Demo)
			}
		})
	}
}
