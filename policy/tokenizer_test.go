package policy

import (
	"strings"
	"testing"
)

func TestTokenizerRoundTrip(t *testing.T) {
	tok := DefaultTokenizer()
	if tok.VocabSize() != 64 {
		t.Fatalf("vocab size %d, want 64", tok.VocabSize())
	}
	for _, s := range []string{"", "123+456=579", "a>b: c d|e\n", DefaultAlphabet} {
		ids, err := tok.Encode(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		back, err := tok.Decode(ids)
		if err != nil || back != s {
			t.Fatalf("%q: decoded %q, %v", s, back, err)
		}
	}
	ids, _ := tok.EncodePrompt("1+2")
	if s, _ := tok.Decode(append(ids, EOS)); s != "<bos>1+2<sep><eos>" {
		t.Fatalf("prompt tokens decode to %q", s)
	}
}

func TestTokenizerErrors(t *testing.T) {
	tok := DefaultTokenizer()
	_, err := tok.Encode("12+Z4")
	if err == nil || !strings.Contains(err.Error(), `'Z'`) || !strings.Contains(err.Error(), "position 3") {
		t.Fatalf("unknown character: %v", err)
	}
	if _, err := tok.Decode([]int{5, 64}); err == nil || !strings.Contains(err.Error(), "64") {
		t.Fatalf("out-of-range id: %v", err)
	}
	if _, err := NewTokenizer("abca"); err == nil {
		t.Fatal("duplicate character accepted")
	}
}
