package task

// Stepper is implemented by a task that says what a step of its responses
// is: the characters that end one (the character is the last of its
// step). Step-level fork scores and strategies (search.Request.StepEnds)
// fork only where a step begins. An empty string makes every character a
// step.
type Stepper interface {
	StepEnds() string
}

// DefaultStepEnds ends a step at a newline or a ';', for tasks that do
// not say what a step is.
const DefaultStepEnds = "\n;"

// StepEnds returns the characters that end a step of t's responses: t's
// own if it is a Stepper, DefaultStepEnds otherwise.
func StepEnds(t Task) string {
	if s, ok := t.(Stepper); ok {
		return s.StepEnds()
	}
	return DefaultStepEnds
}

// StepEnds implements Stepper: a column of the scratchpad ("05 04 12=…").
func (t *Add) StepEnds() string { return " " }

// StepEnds implements Stepper: every character, one token of the
// expression.
func (t *Countdown) StepEnds() string { return "" }

// StepEnds implements Stepper: every character, one move.
func (t *Path) StepEnds() string { return "" }

// StepEnds implements Stepper: one column worked out ("3251+1246:1+6+0>07 ").
func (t *LongAdd) StepEnds() string { return " " }

// StepEnds implements Stepper: one operation rewritten ("77-3=74+8 ").
func (t *Chain) StepEnds() string { return " " }
