package tracking

import (
	"strings"
	"testing"
	"time"
)

// Load samples append per run, travel in snapshots and with merged runs.
func TestLoads(t *testing.T) {
	src, _ := newStore(t, Options{NoSync: true})
	addRun(t, src, "e", "r1", "flat", 1)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, l := range []LoadSample{{At: at, Event: "start", Load1: 1.5, CPUs: 2}, {At: at.Add(time.Minute), Event: "end", Load1: 2.5, CPUs: 2}} {
		if err := src.PutLoad("r1", l); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := src.Loads("r1"); err != nil || len(got) != 2 || got[1].Load1 != 2.5 || got[0].Event != "start" {
		t.Fatalf("loads %+v, %v", got, err)
	}
	if got, err := src.Loads("nosuch"); err != nil || len(got) != 0 {
		t.Errorf("loads of a run without any: %+v, %v", got, err)
	}
	if err := src.PutLoad("nosuch", LoadSample{}); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("a load of an unknown run: %v", err)
	}
	if err := src.EndRun("r1", StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	dst, _ := newStore(t, Options{NoSync: true})
	if _, err := dst.MergeFrom(src); err != nil {
		t.Fatal(err)
	}
	if got, err := dst.Loads("r1"); err != nil || len(got) != 2 || !got[0].At.Equal(at) {
		t.Errorf("merged loads %+v, %v", got, err)
	}
}
