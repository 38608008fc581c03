package tracking

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func designText(seeds string, checks string) string {
	return "{\"experiment\": \"e\", \"seeds\": " + seeds + ", \"design\": {\"alpha\": 0.05, \"checks\": " + checks + "}}"
}

// A designed experiment's design is fixed: the same design again keeps
// its first recording; another is refused, naming the key, and the store
// is left as it was; a design without checks may grow (more seeds).
func TestPutDesigned(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	exp := Experiment{Name: "e", Config: "x: 1\n", Variants: []string{"a"}, Configs: map[string]string{"a": "lr: 1\n"}}
	checked := designText("[1, 2]", `[{"variant": "a", "metric": "eval/acc", "at": "final", "want": "higher"}]`)
	if err := s.PutDesigned(exp, DesignRecord{Hash: "h1", Text: checked, Checks: 1}); err != nil {
		t.Fatal(err)
	}
	first, err := s.Design("e")
	if err != nil || first.Hash != "h1" || first.Recorded.IsZero() || first.Experiment != "e" {
		t.Fatalf("Design = %+v, %v", first, err)
	}
	if err := s.PutDesigned(exp, DesignRecord{Hash: "h1", Text: checked, Checks: 1}); err != nil {
		t.Fatalf("the same design again: %v", err)
	}
	if again, _ := s.Design("e"); !again.Recorded.Equal(first.Recorded) {
		t.Errorf("the same design again moved its recording time: %v, then %v", first.Recorded, again.Recorded)
	}

	before, _ := s.dump()
	changed := designText("[1, 2, 3]", `[{"variant": "a", "metric": "eval/acc", "at": "final", "want": "higher"}]`)
	exp2 := exp
	exp2.Configs = map[string]string{"a": "lr: 1\n", "b": "lr: 2\n"}
	exp2.Variants = []string{"a", "b"}
	err = s.PutDesigned(exp2, DesignRecord{Hash: "h2", Text: changed, Checks: 1})
	var conflict *DesignConflictError
	if !errors.As(err, &conflict) || conflict.Recorded != "h1" || conflict.Given != "h2" {
		t.Fatalf("another design: %v, want a *DesignConflictError", err)
	}
	if !strings.Contains(err.Error(), "seeds[2] is (absent) in the store, 3 now") {
		t.Errorf("the refusal does not name the key: %v", err)
	}
	if after, _ := s.dump(); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused design wrote to the store")
	}

	// Undesigned (no checks): more seeds replace the record, as more seeds
	// extend an experiment.
	u := Experiment{Name: "u", Variants: []string{"a"}, Configs: map[string]string{"a": "lr: 1\n"}}
	if err := s.PutDesigned(u, DesignRecord{Hash: "u1", Text: designText("[1]", "[]")}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutDesigned(u, DesignRecord{Hash: "u2", Text: designText("[1, 2]", "[]")}); err != nil {
		t.Fatalf("more seeds of an undesigned experiment: %v", err)
	}
	if d, _ := s.Design("u"); d.Hash != "u2" {
		t.Errorf("design of u = %s, want u2", d.Hash)
	}
	// ... but checks declared after its runs are another design.
	if err := s.PutDesigned(u, DesignRecord{Hash: "u3", Text: designText("[1, 2]", `[{"variant": "a"}]`), Checks: 1}); !errors.As(err, &conflict) {
		t.Errorf("checks declared for a recorded experiment: %v, want a *DesignConflictError", err)
	}
	// A design recorded by an earlier build that reads as today's through
	// Canonical is the same design: kept as recorded.
	canon := DesignRecord{Hash: "h1-today", Text: checked + " ", Checks: 1, Canonical: func(text string) (string, error) { return text + " ", nil }}
	if err := s.PutDesigned(exp, canon); err != nil {
		t.Errorf("the same design in today's form: %v", err)
	}
	if again, _ := s.Design("e"); again.Hash != "h1" || !again.Recorded.Equal(first.Recorded) {
		t.Errorf("the same design in today's form replaced the record: %+v", again)
	}
	if _, err := s.Design("none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Design of an experiment without one: %v, want ErrNotFound", err)
	}
}

// Merging copies design records, keeps the earlier of two recordings of
// the same design and refuses two designs of one designed experiment.
func TestMergeDesigns(t *testing.T) {
	dst, _ := newStore(t, Options{NoSync: true})
	src, _ := newStore(t, Options{NoSync: true})
	exp := Experiment{Name: "e", Variants: []string{"a"}, Configs: map[string]string{"a": "lr: 1\n"}}
	text := designText("[1]", `[{"variant": "a"}]`)
	if err := src.PutDesigned(exp, DesignRecord{Hash: "h1", Text: text, Checks: 1}); err != nil {
		t.Fatal(err)
	}
	if err := dst.PutDesigned(exp, DesignRecord{Hash: "h1", Text: text, Checks: 1}); err != nil {
		t.Fatal(err)
	}
	want, _ := src.Design("e")
	if _, err := dst.MergeFrom(src); err != nil {
		t.Fatal(err)
	}
	if got, _ := dst.Design("e"); !got.Recorded.Equal(want.Recorded) {
		t.Errorf("merged recording time %v, want the earlier %v", got.Recorded, want.Recorded)
	}
	other, _ := newStore(t, Options{NoSync: true})
	if err := other.PutDesigned(exp, DesignRecord{Hash: "h9", Text: designText("[2]", `[{"variant": "a"}]`), Checks: 1}); err != nil {
		t.Fatal(err)
	}
	var conflict *DesignConflictError
	if _, err := dst.MergeFrom(other); !errors.As(err, &conflict) {
		t.Errorf("merging another design: %v, want a *DesignConflictError", err)
	}
	fresh, _ := newStore(t, Options{NoSync: true})
	if _, err := fresh.MergeFrom(src); err != nil {
		t.Fatal(err)
	}
	if got, err := fresh.Design("e"); err != nil || got.Hash != "h1" {
		t.Errorf("design copied into a fresh store: %+v, %v", got, err)
	}
}
