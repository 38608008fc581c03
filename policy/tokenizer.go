package policy

import (
	"fmt"
	"strings"
)

// Special token ids. They occupy the first ids of every vocabulary.
const (
	PAD = 0 // padding, never attended to and never predicted
	BOS = 1 // beginning of sequence
	EOS = 2 // end of sequence: a response ends when it is sampled
	SEP = 3 // separates the prompt from the response
)

// DefaultAlphabet is the characters of the default 64-token vocabulary, after
// the four special tokens: digits, lowercase letters and the punctuation
// the bundled tasks write.
const DefaultAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz +-*/=()<>,.:;|?!#_[]\n%&"

// Tokenizer is a character-level tokenizer: one token per character of its
// alphabet, after the special tokens PAD, BOS, EOS and SEP.
type Tokenizer struct {
	alphabet []rune
	ids      map[rune]int
}

// NewTokenizer returns a tokenizer over the given characters, which must be
// distinct.
func NewTokenizer(alphabet string) (*Tokenizer, error) {
	t := &Tokenizer{ids: make(map[rune]int)}
	for _, r := range alphabet {
		if _, dup := t.ids[r]; dup {
			return nil, fmt.Errorf("tokenizer alphabet: character %q appears twice", r)
		}
		t.ids[r] = len(t.alphabet) + 4
		t.alphabet = append(t.alphabet, r)
	}
	return t, nil
}

// DefaultTokenizer returns the tokenizer over DefaultAlphabet (64 tokens).
func DefaultTokenizer() *Tokenizer {
	t, err := NewTokenizer(DefaultAlphabet)
	if err != nil {
		panic(err) // DefaultAlphabet is a constant with distinct characters
	}
	return t
}

// VocabSize is the number of token ids: 4 special tokens and the alphabet.
func (t *Tokenizer) VocabSize() int { return len(t.alphabet) + 4 }

// Alphabet returns the characters of the vocabulary, in id order.
func (t *Tokenizer) Alphabet() string { return string(t.alphabet) }

// Encode maps each character of s to its id. A character outside the
// alphabet is an error naming it and its position.
func (t *Tokenizer) Encode(s string) ([]int, error) {
	ids := make([]int, 0, len(s))
	pos := 0
	for _, r := range s {
		id, ok := t.ids[r]
		if !ok {
			return nil, fmt.Errorf("encode: unknown character %q at position %d", r, pos)
		}
		ids = append(ids, id)
		pos++
	}
	return ids, nil
}

// Decode maps ids back to text. Special tokens are written as <pad>, <bos>,
// <eos> and <sep>; an id outside the vocabulary is an error.
func (t *Tokenizer) Decode(ids []int) (string, error) {
	var b strings.Builder
	for i, id := range ids {
		switch {
		case id == PAD:
			b.WriteString("<pad>")
		case id == BOS:
			b.WriteString("<bos>")
		case id == EOS:
			b.WriteString("<eos>")
		case id == SEP:
			b.WriteString("<sep>")
		case id >= 4 && id < t.VocabSize():
			b.WriteRune(t.alphabet[id-4])
		default:
			return "", fmt.Errorf("decode: token id %d at position %d is outside the vocabulary of %d", id, i, t.VocabSize())
		}
	}
	return b.String(), nil
}

// DisplayText is the text of tokens for people to read, as `rollout sample`
// and `rollout trees` print a rollout tree: Decode's text, with a final EOS
// left out (a node's finish reason says it) and an id outside the
// vocabulary written as <id N> instead of failing.
func (t *Tokenizer) DisplayText(ids []int) string {
	if n := len(ids); n > 0 && ids[n-1] == EOS {
		ids = ids[:n-1]
	}
	var b strings.Builder
	for _, id := range ids {
		s, err := t.Decode([]int{id})
		if err != nil {
			s = fmt.Sprintf("<id %d>", id)
		}
		b.WriteString(s)
	}
	return b.String()
}

// EncodePrompt returns BOS, the prompt's characters and SEP: the tokens a
// response is sampled after.
func (t *Tokenizer) EncodePrompt(prompt string) ([]int, error) {
	ids, err := t.Encode(prompt)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ids)+2)
	out = append(out, BOS)
	out = append(out, ids...)
	return append(out, SEP), nil
}

// ResponseText is the text of a sampled response as a verifier reads it:
// the characters up to the first EOS (which ends it). Any other special
// token (PAD, BOS, SEP), or an id outside the vocabulary, becomes NUL, a
// character no task accepts, so a response that contains one is graded as
// malformed rather than silently shortened.
func (t *Tokenizer) ResponseText(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		switch {
		case id == EOS:
			return b.String()
		case id >= 4 && id < t.VocabSize():
			b.WriteRune(t.alphabet[id-4])
		default:
			b.WriteByte(0)
		}
	}
	return b.String()
}
