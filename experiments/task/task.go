// Package task holds the verifiable tasks of rollout experiments: seeded
// prompt generators with disjoint train and eval splits, correct and flawed
// demonstrations for supervised pretraining, and verifiers that grade any
// response string with a reward in [0, 1] and a reason.
//
// Seven tasks are bundled, each built from its own parameters:
//
//   - "add" (AddParams): addition of n-digit numbers, with an optional carry
//     scratchpad before the answer;
//   - "countdown" (CountdownParams): reach a target with an arithmetic
//     expression over given numbers, each used at most once;
//   - "path" (PathParams): a route from a start to a goal node in a small
//     graph written in the prompt, where a wrong first move leads into a
//     dead end;
//   - "long_add" (LongAddParams): addition of many-digit numbers written
//     out column by column (60 to 200 characters and more), a long
//     reasoning chain with a few decisive characters;
//   - "chain" (ChainParams): a chain of one-digit additions and
//     subtractions worked out one step at a time, each step rewriting the
//     operations still to do (77 to 119 characters with the defaults), a
//     long reasoning chain with a decisive value at each step; with
//     Detours > 0 a test bed for length caps, whose responses may restate
//     a step (pure waste) and whose needed length is known per prompt
//     (Chain.NeededLen);
//   - "countdown_search" (CountdownSearchParams): countdown solved by a
//     depth-first search written out, abandoned attempts and all, so the
//     reasoning itself branches: several valid next steps, some of them
//     dead ends;
//   - "dag_search" (DAGSearchParams): a route through a layered directed
//     graph given as its edges, found by a depth-first search written
//     out, several shortest routes and dead ends among the choices.
//
// The two search tasks are DemoSamplers: pretraining draws a fresh search
// order for every demonstration, so the base policy learns the choices as
// a spread distribution.
//
// An eighth, "jsonl" (JSONLParams), reads its prompts and reference answers
// from a file and grades responses exactly, numerically or through a
// regular expression.
//
// The bundled tasks' prompts and responses use only the characters of
// Alphabet, the policy's character vocabulary; a jsonl file may hold any
// text, which a local policy can read only when it fits Alphabet
// (CheckFits says so). A task is immutable once built and safe for
// concurrent use.
package task

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
)

// Alphabet is every character a prompt or a response may contain: the
// character vocabulary of the policy (its special tokens BOS, EOS, PAD and
// SEP are not characters).
const Alphabet = "0123456789abcdefghijklmnopqrstuvwxyz +-*/=()<>,.:;|?!#_[]\n%&"

// Task is a verifiable task: what the RL loop, tree search, pretraining and
// the command line need from it.
type Task interface {
	// Name is the task's name, as given to New.
	Name() string
	// Prompt returns prompt i of a split. It is a pure function of the
	// task's parameters, seed, split and i (each index has its own random
	// stream, so indices are independent draws and a split may repeat a
	// problem), and no prompt text is in both splits.
	Prompt(split Split, seed uint64, i int) (Prompt, error)
	// ParsePrompt reads a prompt text in the task's format, for prompts
	// that come from outside (the command line, a store). A malformed
	// prompt, or one outside the task's parameters, is an error.
	ParsePrompt(text string) (Prompt, error)
	// Verify grades a response to p. It never panics, whatever the
	// response. Responses with the same non-empty Verdict.Answer get the
	// same reward, so majority voting may group them by answer.
	Verify(p Prompt, response string) Verdict
	// AnswerStart is the position in response from which on every character
	// belongs to the final answer (len(response) if the answer has not
	// begun): tree search forks only at positions before it.
	AnswerStart(p Prompt, response string) int
	// FlawedDemo returns a plausible but wrong response to p (Verify gives
	// it a reward below 1), made with the typical mistakes of the task, for
	// pretraining on partly flawed demonstrations. It fits MaxResponseLen.
	FlawedDemo(p Prompt, rng *rand.Rand) string
	// MaxPromptLen is the length of the longest prompt, in characters.
	MaxPromptLen() int
	// MaxResponseLen is the length of the longest response the task
	// accepts, in characters; longer responses are graded too_long. The
	// sampler caps generation at it.
	MaxResponseLen() int
}

// Prompt is one problem of a task.
type Prompt struct {
	// Text is what the policy reads.
	Text string
	// Demo is a correct response, "" if none is known (a parsed prompt
	// that has no solution).
	Demo string
	// problem caches the problem (a pointer) parsed from parsedText; Verify re-reads
	// Text when it is nil or Text has changed (a Prompt built by hand or
	// loaded from a store).
	problem    any
	parsedText string
}

// Verdict is the grade of one response.
type Verdict struct {
	// Reward is in [0, 1]; 1 is a correct response.
	Reward float64 `json:"reward"`
	// Reason says why the response got its reward.
	Reason Reason `json:"reason"`
	// Answer is the final answer the response gives, in a normal form, for
	// majority voting; "" when the response gives none.
	Answer string `json:"answer"`
}

// Reason names the outcome of a verification.
type Reason string

// Reasons a verifier gives. The first problem found, reading from the left,
// is the one reported; syntax comes before meaning.
const (
	Correct         Reason = "correct"          // right answer
	WrongAnswer     Reason = "wrong_answer"     // well formed, but wrong
	Empty           Reason = "empty"            // no characters at all
	TooLong         Reason = "too_long"         // longer than MaxResponseLen
	BadChar         Reason = "bad_char"         // a character outside Alphabet
	ParseError      Reason = "parse_error"      // not in the task's response format (also truncated)
	UnknownNumber   Reason = "unknown_number"   // countdown: a number that is not given
	ReusedNumber    Reason = "reused_number"    // countdown: a number used more often than given
	DivisionByZero  Reason = "division_by_zero" // countdown: x/0
	InexactDivision Reason = "inexact_division" // countdown: a division with a remainder
	Overflow        Reason = "overflow"         // countdown: a value beyond int64
	WrongStart      Reason = "wrong_start"      // path: the route does not begin at the start
	IllegalMove     Reason = "illegal_move"     // path: a node or edge not in the graph
	RevisitedNode   Reason = "revisited_node"   // path: a node visited twice
	NotAtGoal       Reason = "not_at_goal"      // path: the route ends elsewhere than the goal
	BadPrompt       Reason = "bad_prompt"       // the prompt itself does not parse
)

// Split is a part of a task's prompt space: train or eval.
type Split uint8

// The splits. Every prompt text belongs to exactly one (see SplitOf).
const (
	Train Split = iota
	Eval
)

// String returns "train" or "eval".
func (s Split) String() string {
	switch s {
	case Train:
		return "train"
	case Eval:
		return "eval"
	}
	return fmt.Sprintf("Split(%d)", uint8(s))
}

// ParseSplit reads "train" or "eval".
func ParseSplit(s string) (Split, error) {
	switch s {
	case "train":
		return Train, nil
	case "eval":
		return Eval, nil
	}
	return 0, fmt.Errorf("unknown split %q (want train or eval)", s)
}

// evalOneIn is the share of the prompt space, one in evalOneIn, that is
// held out for evaluation.
const evalOneIn = 8

// SplitOf is the split a prompt text belongs to: a hash of the text puts one
// text in evalOneIn (1/8) into Eval and the rest into Train, whatever the
// seed, so train and eval prompts are disjoint across seeds too.
func SplitOf(text string) Split {
	h := fnv.New64a()
	h.Write([]byte(text))
	if mix64(h.Sum64())%evalOneIn == 0 {
		return Eval
	}
	return Train
}

// Names lists the bundled tasks, whose prompts are generated from their
// parameters alone.
func Names() []string {
	return []string{"add", "countdown", "path", "long_add", "chain", "countdown_search", "dag_search"}
}

// AllNames lists every task New builds: the bundled ones and "jsonl".
func AllNames() []string { return append(Names(), "jsonl") }

// DefaultParams returns the default parameters of the named task, as a
// pointer to the task's Params struct (*AddParams, *CountdownParams,
// *PathParams, *LongAddParams, *ChainParams, *CountdownSearchParams, *DAGSearchParams or *JSONLParams), for a config loader to decode into (keys left out keep
// their defaults) before passing it to New.
func DefaultParams(name string) (any, error) {
	switch name {
	case "add":
		p := DefaultAddParams()
		return &p, nil
	case "countdown":
		p := DefaultCountdownParams()
		return &p, nil
	case "path":
		p := DefaultPathParams()
		return &p, nil
	case "jsonl":
		p := DefaultJSONLParams()
		return &p, nil
	case "long_add":
		p := DefaultLongAddParams()
		return &p, nil
	case "chain":
		p := DefaultChainParams()
		return &p, nil
	case "countdown_search":
		p := DefaultCountdownSearchParams()
		return &p, nil
	case "dag_search":
		p := DefaultDAGSearchParams()
		return &p, nil
	}
	return nil, unknownTask(name)
}

// New builds the named task. params is nil for the defaults, or the task's
// Params struct (AddParams, CountdownParams, PathParams, LongAddParams,
// ChainParams, CountdownSearchParams, DAGSearchParams or JSONLParams), by value or by pointer; invalid parameters
// are an error naming the field. "jsonl" reads its file here.
func New(name string, params any) (Task, error) {
	switch name {
	case "add":
		p := DefaultAddParams()
		if err := takeParams(name, params, &p); err != nil {
			return nil, err
		}
		return NewAdd(p)
	case "countdown":
		p := DefaultCountdownParams()
		if err := takeParams(name, params, &p); err != nil {
			return nil, err
		}
		return NewCountdown(p)
	case "path":
		p := DefaultPathParams()
		if err := takeParams(name, params, &p); err != nil {
			return nil, err
		}
		return NewPath(p)
	case "jsonl":
		p := DefaultJSONLParams()
		if err := takeParams(name, params, &p); err != nil {
			return nil, err
		}
		return NewJSONL(p)
	case "long_add":
		p := DefaultLongAddParams()
		if err := takeParams(name, params, &p); err != nil {
			return nil, err
		}
		return NewLongAdd(p)
	case "chain":
		p := DefaultChainParams()
		if err := takeParams(name, params, &p); err != nil {
			return nil, err
		}
		return NewChain(p)
	case "countdown_search":
		p := DefaultCountdownSearchParams()
		if err := takeParams(name, params, &p); err != nil {
			return nil, err
		}
		return NewCountdownSearch(p)
	case "dag_search":
		p := DefaultDAGSearchParams()
		if err := takeParams(name, params, &p); err != nil {
			return nil, err
		}
		return NewDAGSearch(p)
	}
	return nil, unknownTask(name)
}

// takeParams copies params (nil, P or *P) into dst.
func takeParams[P any](name string, params any, dst *P) error {
	switch v := params.(type) {
	case nil:
		return nil
	case P:
		*dst = v
		return nil
	case *P:
		if v == nil {
			return nil
		}
		*dst = *v
		return nil
	}
	return fmt.Errorf("task %s: parameters of type %T, want %T", name, params, *dst)
}

func unknownTask(name string) error {
	return fmt.Errorf("unknown task %q (want one of %s)", name, strings.Join(AllNames(), ", "))
}

// CheckFits reports an error when the task cannot be used with a local
// policy: a sequence BOS + prompt + SEP + response + EOS of the task's
// longest prompt and response does not fit in maxSeqLen positions, or (for
// a task whose texts come from a file, jsonl) a prompt or demonstration
// has a character outside Alphabet, the policy's character vocabulary.
func CheckFits(t Task, maxSeqLen int) error {
	if err := CheckAlphabet(t); err != nil {
		return err
	}
	need := t.MaxPromptLen() + t.MaxResponseLen() + 3
	if need > maxSeqLen {
		return fmt.Errorf("task %s: longest prompt (%d) + longest response (%d) + 3 special tokens = %d positions, more than the model's max sequence length %d",
			t.Name(), t.MaxPromptLen(), t.MaxResponseLen(), need, maxSeqLen)
	}
	return nil
}

// CheckAlphabet reports an error when a task's texts (those of a file,
// jsonl) have a character outside Alphabet, which a local policy cannot
// read, naming the file, line and character; nil for other tasks.
func CheckAlphabet(t Task) error {
	if c, ok := t.(alphabetChecker); ok {
		return c.checkAlphabet(Alphabet)
	}
	return nil
}

// alphabetChecker is a task whose texts are not made from Alphabet by
// construction: it reports the first one with a character outside
// alphabet.
type alphabetChecker interface {
	checkAlphabet(alphabet string) error
}

// badCharIndex returns the index of the first byte of s outside Alphabet, or
// -1.
func badCharIndex(s string) int {
	for i := 0; i < len(s); i++ {
		if !inAlphabet[s[i]] {
			return i
		}
	}
	return -1
}

var inAlphabet = func() (t [256]bool) {
	for i := 0; i < len(Alphabet); i++ {
		t[Alphabet[i]] = true
	}
	return t
}()

// screen grades what every task rejects before reading a response: an empty
// one, one longer than maxLen, one with a character outside Alphabet. ok is
// false when the response is rejected.
func screen(response string, maxLen int) (v Verdict, ok bool) {
	switch {
	case response == "":
		return Verdict{Reason: Empty}, false
	case len(response) > maxLen:
		return Verdict{Reason: TooLong}, false
	case badCharIndex(response) >= 0:
		return Verdict{Reason: BadChar}, false
	}
	return Verdict{}, true
}

// checkPromptText rejects prompt texts that are empty, too long or use
// characters outside Alphabet.
func checkPromptText(text string, maxLen int) error {
	if text == "" {
		return errors.New("empty prompt")
	}
	if len(text) > maxLen {
		return fmt.Errorf("prompt of %d characters, longer than the task's %d", len(text), maxLen)
	}
	if i := badCharIndex(text); i >= 0 {
		return fmt.Errorf("character %q at position %d is not in the alphabet", text[i], i)
	}
	return nil
}

// maxDraws bounds the problems drawn for one prompt before giving up: a
// split gets a problem in evalOneIn draws on average.
const maxDraws = 64 * evalOneIn

// drawPrompt draws problems from the random stream of (task, seed, split,
// i) until one falls into split.
func drawPrompt(name string, split Split, seed uint64, i int, draw func(*rand.Rand) (Prompt, error)) (Prompt, error) {
	if split != Train && split != Eval {
		return Prompt{}, fmt.Errorf("task %s: unknown split %d", name, split)
	}
	if i < 0 {
		return Prompt{}, fmt.Errorf("task %s: negative prompt index %d", name, i)
	}
	rng := promptRNG(name, seed, split, i)
	for range maxDraws {
		p, err := draw(rng)
		if err != nil {
			return Prompt{}, fmt.Errorf("task %s: %s prompt %d: %w", name, split, i, err)
		}
		if SplitOf(p.Text) == split {
			return p, nil
		}
	}
	return Prompt{}, fmt.Errorf("task %s: no %s prompt in %d draws for index %d: the parameters allow too few distinct problems", name, split, maxDraws, i)
}

// promptRNG is the random stream of one prompt index: a PCG keyed by the
// task, the seed, the split and the index, so prompts do not depend on each
// other or on the order they are drawn in.
func promptRNG(name string, seed uint64, split Split, i int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(mix64(seed^h.Sum64()), mix64(uint64(split)<<56^uint64(i)+0x9e3779b97f4a7c15)))
}

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// problemOf returns p's parsed problem, parsing p.Text when it is not
// cached.
func problemOf[P any](p Prompt, parse func(string) (P, error)) (P, bool) {
	if q, ok := p.problem.(P); ok && p.parsedText == p.Text {
		return q, true
	}
	q, err := parse(p.Text)
	return q, err == nil
}

// problemFrom adapts a ParsePrompt method to problemOf, for tasks whose
// demonstration is cheap to make.
func problemFrom[P any](parse func(string) (Prompt, error)) func(string) (P, error) {
	return func(text string) (P, error) {
		p, err := parse(text)
		if err != nil {
			var zero P
			return zero, err
		}
		q, ok := p.problem.(P)
		if !ok {
			return q, fmt.Errorf("prompt %q: parsed as %T", text, p.problem)
		}
		return q, nil
	}
}
