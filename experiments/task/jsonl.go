package task

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSONLParams are the parameters of the "jsonl" task: prompts and
// reference answers read from a file of JSON lines,
//
//	{"prompt": "12+34", "answer": "46"}
//	{"prompt": "7*6", "answer": 42, "demo": "7*6=42"}
//
// with an optional "demo" (a correct response, for pretraining; other keys
// are ignored). The answer is a string or a number.
type JSONLParams struct {
	// Path of the file, relative to the working directory (a config file
	// makes it relative to the config's directory). Required.
	Path string `yaml:"path" json:"path"`
	// Verifier grades a response: "exact" (the answer, spaces around it
	// ignored), "numeric" (a number within Tolerance of the answer) or
	// "regex" (exact, on the answer Pattern extracts). Default "exact".
	Verifier string `yaml:"verifier" json:"verifier"`
	// Tolerance of the numeric verifier: |x − answer| ≤ Tolerance ·
	// max(1, |answer|). Default 1e-6.
	Tolerance float64 `yaml:"tolerance" json:"tolerance"`
	// Pattern extracts the answer from a response: the last match's first
	// group (or the whole match without a group), e.g. `#### (\S+)` or
	// `\\boxed\{([^}]*)\}`. Required by "regex"; with "exact" or "numeric"
	// it extracts before comparing. Without it the whole response is the
	// answer.
	Pattern string `yaml:"pattern" json:"pattern"`
	// Template makes the prompt text from a line's prompt: every "{prompt}"
	// in it is replaced, e.g. "question: {prompt}\nanswer: ". Default: the
	// prompt as it is.
	Template string `yaml:"template" json:"template"`
	// MaxResponseLen is the longest response accepted, in characters.
	// Default: the longest demonstration (the answer, when there is no
	// pattern and no demo).
	MaxResponseLen int `yaml:"max_response_len" json:"max_response_len"`
}

// DefaultJSONLParams returns the defaults: the exact verifier, tolerance
// 1e-6 (for numeric), no pattern, no template. Path must be set.
func DefaultJSONLParams() JSONLParams { return JSONLParams{Verifier: "exact", Tolerance: 1e-6} }

// jsonlVerifiers lists the verifiers of the "jsonl" task.
func jsonlVerifiers() []string { return []string{"exact", "numeric", "regex"} }

// Validate reports parameters out of range, naming the field; it does not
// read the file.
func (p JSONLParams) Validate() error {
	_, err := p.verifier()
	return err
}

// verifier builds the grader the parameters describe.
func (p JSONLParams) verifier() (*verifier, error) {
	v := &verifier{kind: p.Verifier, tol: p.Tolerance}
	switch {
	case p.Path == "":
		return nil, errors.New("jsonl: path is required (the file of {\"prompt\", \"answer\"} lines)")
	case !slices.Contains(jsonlVerifiers(), p.Verifier):
		return nil, fmt.Errorf("jsonl: verifier = %q, want one of %s", p.Verifier, strings.Join(jsonlVerifiers(), ", "))
	case p.Tolerance < 0 || math.IsNaN(p.Tolerance) || math.IsInf(p.Tolerance, 0):
		return nil, fmt.Errorf("jsonl: tolerance = %g, want a finite value ≥ 0", p.Tolerance)
	case p.Verifier == "regex" && p.Pattern == "":
		return nil, errors.New("jsonl: pattern is required by the regex verifier")
	case p.Template != "" && !strings.Contains(p.Template, "{prompt}"):
		return nil, fmt.Errorf("jsonl: template = %q has no {prompt}", p.Template)
	case p.MaxResponseLen < 0:
		return nil, fmt.Errorf("jsonl: max_response_len = %d, want 0 (the longest demo) or more", p.MaxResponseLen)
	}
	if p.Pattern != "" {
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return nil, fmt.Errorf("jsonl: pattern = %q: %w", p.Pattern, err)
		}
		v.re = re
	}
	return v, nil
}

// JSONL is the "jsonl" task: the lines of a file, split into train and
// eval by a hash of the prompt text (SplitOf), as the bundled tasks are.
// Prompt i of a split visits the split's prompts in a seeded order: the
// first n indices of a split of n prompts give each of them once, the
// next n again, in another order.
//
// Texts may hold any character: a model served over an OpenAI-compatible
// API reads them as they are. A local policy reads only Alphabet, which
// CheckFits checks.
type JSONL struct {
	p      JSONLParams
	v      *verifier
	items  []*jsonlItem
	byText map[string]*jsonlItem
	splits [2][]int // indices of items, per Split

	maxPrompt, maxResponse int
}

// jsonlItem is one line of the file.
type jsonlItem struct {
	line   int
	text   string // the prompt after the template
	answer string // as written, trimmed
	num    float64
	demo   string // "" if unknown
}

// maxJSONLErrors bounds the bad lines one error lists.
const maxJSONLErrors = 10

// maxJSONLLine bounds the length of a line of a jsonl file.
const maxJSONLLine = 16 << 20

// NewJSONL reads the file of p.Path and builds the "jsonl" task. Bad lines
// are an error naming the file and line of each (the first ten).
func NewJSONL(p JSONLParams) (*JSONL, error) {
	v, err := p.verifier()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p.Path)
	if err != nil {
		return nil, fmt.Errorf("jsonl: %w", err)
	}
	defer f.Close()
	t := &JSONL{p: p, v: v, byText: make(map[string]*jsonlItem)}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxJSONLLine)
	var bad []error
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := t.add(line, n); err != nil {
			bad = append(bad, fmt.Errorf("%s:%d: %w", p.Path, n, err))
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		bad = append(bad, fmt.Errorf("%s:%d: the line is longer than %d MiB (the longest a line may be): reading stopped there", p.Path, n+1, maxJSONLLine>>20))
	} else if err != nil {
		bad = append(bad, fmt.Errorf("%s:%d: %w", p.Path, n+1, err))
	}
	if len(bad) > maxJSONLErrors {
		more := len(bad) - maxJSONLErrors
		bad = append(bad[:maxJSONLErrors], fmt.Errorf("and %d more bad lines", more))
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("jsonl: %w", errors.Join(bad...))
	}
	if len(t.items) == 0 {
		return nil, fmt.Errorf("jsonl: %s has no prompts", p.Path)
	}
	return t, t.measure()
}

// add reads one line into the task.
func (t *JSONL) add(line []byte, n int) error {
	var raw struct {
		Prompt json.RawMessage `json:"prompt"`
		Answer json.RawMessage `json:"answer"`
		Demo   json.RawMessage `json:"demo"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return jsonLineError(line, err)
	}
	prompt, err := jsonText("prompt", raw.Prompt, false)
	if err != nil {
		return err
	}
	answer, err := jsonText("answer", raw.Answer, true)
	if err != nil {
		return err
	}
	if prompt == "" {
		return errors.New("prompt is empty")
	}
	it := &jsonlItem{line: n, text: prompt, answer: strings.TrimSpace(answer)}
	if t.p.Template != "" {
		it.text = strings.ReplaceAll(t.p.Template, "{prompt}", prompt)
	}
	if it.answer == "" {
		return errors.New("answer is empty")
	}
	if t.v.kind == "numeric" {
		x, ok := parseNumber(it.answer)
		if !ok {
			return fmt.Errorf("answer %q is not a number (verifier numeric)", it.answer)
		}
		it.num = x
	}
	if raw.Demo != nil && string(raw.Demo) != "null" {
		if it.demo, err = jsonText("demo", raw.Demo, false); err != nil {
			return err
		}
		if g := t.v.grade(it, it.demo); g.Reward != 1 {
			return fmt.Errorf("demo %q is graded %s against answer %q", it.demo, g.Reason, it.answer)
		}
	} else if t.v.re == nil {
		it.demo = it.answer
	}
	if prev, ok := t.byText[it.text]; ok {
		if prev.answer != it.answer {
			return fmt.Errorf("prompt %q repeats line %d with another answer (%q, not %q)", it.text, prev.line, it.answer, prev.answer)
		}
		return nil // a duplicate: keep the first
	}
	t.byText[it.text] = it
	s := SplitOf(it.text)
	t.splits[s] = append(t.splits[s], len(t.items))
	t.items = append(t.items, it)
	return nil
}

// jsonLineError says, in the file's terms, why a line is not a JSON
// object (encoding/json's errors name Go types).
func jsonLineError(line []byte, err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("not valid JSON: %s (at byte %d)", syn.Error(), syn.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("a JSON %s, want an object {\"prompt\": ..., \"answer\": ...}", typ.Value)
	}
	return fmt.Errorf("not a JSON object {\"prompt\": ..., \"answer\": ...} (%d bytes)", len(line))
}

// jsonText reads a string field (or, with numbers, a number written as
// in the file).
func jsonText(key string, raw json.RawMessage, numbers bool) (string, error) {
	if raw == nil || string(raw) == "null" {
		return "", fmt.Errorf("%s is missing", key)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	if numbers {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err == nil {
			return n.String(), nil
		}
		return "", fmt.Errorf("%s is %s, want a string or a number", key, raw)
	}
	return "", fmt.Errorf("%s is %s, want a string", key, raw)
}

// measure sets the longest prompt and response.
func (t *JSONL) measure() error {
	for _, it := range t.items {
		t.maxPrompt = max(t.maxPrompt, utf8.RuneCountInString(it.text))
		t.maxResponse = max(t.maxResponse, utf8.RuneCountInString(it.demo))
	}
	if t.p.MaxResponseLen > 0 {
		t.maxResponse = t.p.MaxResponseLen
	} else if t.maxResponse == 0 {
		return fmt.Errorf("jsonl: %s: set max_response_len: no line has a demo to measure responses by (with a pattern, the answer alone is not a response)", t.p.Path)
	}
	return nil
}

// Name returns "jsonl".
func (t *JSONL) Name() string { return "jsonl" }

// Params returns the task's parameters.
func (t *JSONL) Params() JSONLParams { return t.p }

// Len is the number of distinct prompts of a split.
func (t *JSONL) Len(split Split) int {
	if split != Train && split != Eval {
		return 0
	}
	return len(t.splits[split])
}

// MaxPromptLen is the longest prompt text, in characters.
func (t *JSONL) MaxPromptLen() int { return t.maxPrompt }

// MaxResponseLen is max_response_len, or the longest demonstration.
func (t *JSONL) MaxResponseLen() int { return t.maxResponse }

// Prompt returns prompt i of a split: the split's prompt at position
// i mod n of a seeded permutation, a new one every n indices.
func (t *JSONL) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	if split != Train && split != Eval {
		return Prompt{}, fmt.Errorf("task jsonl: unknown split %d", split)
	}
	if i < 0 {
		return Prompt{}, fmt.Errorf("task jsonl: negative prompt index %d", i)
	}
	idx := t.splits[split]
	if len(idx) == 0 {
		return Prompt{}, fmt.Errorf("task jsonl: %s has no %s prompts: the hash split puts one prompt in %d into eval and none of its %d falls into %s",
			t.p.Path, split, evalOneIn, len(t.items), split)
	}
	n := uint64(len(idx))
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	key := mix64(seed ^ h.Sum64() ^ uint64(split)<<56 ^ mix64(uint64(i)/n+0x9e3779b97f4a7c15))
	return t.prompt(t.items[idx[permute(uint64(i)%n, n, key)]]), nil
}

func (t *JSONL) prompt(it *jsonlItem) Prompt {
	return Prompt{Text: it.text, Demo: it.demo, problem: it, parsedText: it.text}
}

// permute maps j in [0, n) to [0, n), a bijection chosen by key: a
// four-round Feistel network over the smallest even number of bits that
// holds n, walking the cycle until the value falls below n.
func permute(j, n, key uint64) uint64 {
	if n <= 1 {
		return 0
	}
	b := max(2, bits.Len64(n-1))
	b += b & 1
	half := uint(b / 2)
	mask := uint64(1)<<half - 1
	for {
		l, r := j>>half, j&mask
		for round := uint64(0); round < 4; round++ {
			l, r = r, l^(mix64(r^key+round*0x9e3779b97f4a7c15)&mask)
		}
		j = l<<half | r
		if j < n {
			return j
		}
	}
}

// ParsePrompt looks a prompt text (after the template) up in the file.
func (t *JSONL) ParsePrompt(text string) (Prompt, error) {
	it, err := t.lookup(text)
	if err != nil {
		return Prompt{}, err
	}
	return t.prompt(it), nil
}

func (t *JSONL) lookup(text string) (*jsonlItem, error) {
	it, ok := t.byText[text]
	if !ok {
		return nil, fmt.Errorf("jsonl prompt %q is not in %s", text, t.p.Path)
	}
	return it, nil
}

// Verify grades a response with the task's verifier. Responses may hold
// any character.
func (t *JSONL) Verify(p Prompt, response string) Verdict {
	it, ok := problemOf(p, t.lookup)
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	switch {
	case response == "":
		return Verdict{Reason: Empty}
	case utf8.RuneCountInString(response) > t.maxResponse:
		return Verdict{Reason: TooLong}
	}
	return t.v.grade(it, response)
}

// AnswerStart is 0 without a pattern (the whole response is the answer);
// with one, where the answer the last match extracts begins, or the end of
// the response when nothing matches yet. It counts characters.
func (t *JSONL) AnswerStart(_ Prompt, response string) int {
	_, at, _ := t.v.extract(response)
	return utf8.RuneCountInString(response[:at])
}

// FlawedDemo changes one character of the demonstration's answer (a digit
// into another digit) so that the verifier rejects it; "" when there is no
// demonstration or no change is rejected.
func (t *JSONL) FlawedDemo(p Prompt, rng *rand.Rand) string {
	it, ok := problemOf(p, t.lookup)
	if !ok || it.demo == "" {
		return ""
	}
	_, at, ok := t.v.extract(it.demo)
	if !ok {
		return ""
	}
	head, tail := it.demo[:at], []rune(it.demo[at:])
	if len(tail) == 0 {
		return ""
	}
	for range 16 {
		w := append([]rune(nil), tail...)
		k := rng.IntN(len(w))
		if w[k] >= '0' && w[k] <= '9' {
			w[k] = '0' + (w[k]-'0'+1+rune(rng.IntN(9)))%10
		} else {
			w[k] = rune(Alphabet[rng.IntN(len(Alphabet))])
		}
		if s := head + string(w); t.Verify(p, s).Reward < 1 {
			return s
		}
	}
	return ""
}

// checkAlphabet reports the first prompt or demonstration with a
// character outside alphabet.
func (t *JSONL) checkAlphabet(alphabet string) error {
	for _, it := range t.items {
		for _, f := range []struct{ name, text string }{{"prompt", it.text}, {"demo", it.demo}} {
			for i, r := range []rune(f.text) {
				if !strings.ContainsRune(alphabet, r) {
					return fmt.Errorf("task jsonl: %s:%d: the %s has the character %q (position %d), outside the local policy's character alphabet %q: "+
						"this data works with a model served over an OpenAI-compatible API, or with a local policy once its text fits the alphabet",
						t.p.Path, it.line, f.name, r, i, alphabet)
				}
			}
		}
	}
	return nil
}

// verifier grades a response against a line's answer.
type verifier struct {
	kind string // exact, numeric or regex
	tol  float64
	re   *regexp.Regexp // nil: the whole response is the answer
}

// extract returns the answer a response gives and the byte offset where
// it starts; ok is false when the pattern does not match (at is then
// len(response)).
func (v *verifier) extract(response string) (ans string, at int, ok bool) {
	if v.re == nil {
		return response, 0, true
	}
	all := v.re.FindAllStringSubmatchIndex(response, -1)
	if len(all) == 0 {
		return "", len(response), false
	}
	m := all[len(all)-1]
	lo, hi := m[0], m[1]
	if len(m) >= 4 && m[2] >= 0 {
		lo, hi = m[2], m[3]
	}
	return response[lo:hi], lo, true
}

// grade compares the answer the response gives with the line's.
func (v *verifier) grade(it *jsonlItem, response string) Verdict {
	ans, _, ok := v.extract(response)
	if !ok {
		return Verdict{Reason: ParseError}
	}
	ans = strings.TrimSpace(ans)
	if ans == "" {
		return Verdict{Reason: ParseError}
	}
	if v.kind == "numeric" {
		x, ok := parseNumber(ans)
		if !ok {
			return Verdict{Reason: ParseError}
		}
		norm := strconv.FormatFloat(x, 'g', -1, 64)
		if math.Abs(x-it.num) <= v.tol*math.Max(1, math.Abs(it.num)) {
			return Verdict{Reward: 1, Reason: Correct, Answer: norm}
		}
		return Verdict{Reason: WrongAnswer, Answer: norm}
	}
	if ans == it.answer {
		return Verdict{Reward: 1, Reason: Correct, Answer: ans}
	}
	return Verdict{Reason: WrongAnswer, Answer: ans}
}

// parseNumber reads a finite decimal number, with optional thousands
// commas ("1,234.5") and a leading sign.
func parseNumber(s string) (float64, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || (c == '-' || c == '+')) {
			return 0, false
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, false
	}
	return x, true
}
