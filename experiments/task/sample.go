package task

import "math/rand/v2"

// DemoSampler is implemented by a task whose correct responses carry real
// choices (which step to try next, in which order): SampleDemo draws one
// correct response to p from rng, each choice uniform among the valid
// next steps, so that a policy pretrained on drawn demonstrations learns a
// spread distribution over the choices rather than one fixed order
// (Prompt.Demo is one fixed draw, a pure function of the prompt). It
// returns p.Demo when p does not parse or no draw fits the task's limits.
type DemoSampler interface {
	SampleDemo(p Prompt, rng *rand.Rand) string
}

// DemoFor returns a correct demonstration of p for pretraining: a fresh
// draw from rng when t is a DemoSampler, p.Demo otherwise (rng is then
// left untouched).
func DemoFor(t Task, p Prompt, rng *rand.Rand) string {
	if s, ok := t.(DemoSampler); ok {
		return s.SampleDemo(p, rng)
	}
	return p.Demo
}
