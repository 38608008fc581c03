package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows long work: bars with ETA on a terminal, plain log lines
// (at most one per task every few seconds, and at the end) otherwise.
type progress struct {
	out  io.Writer
	tty  bool
	p    *mpb.Progress
	mu   sync.Mutex
	last map[string]time.Time
}

func newProgress(out io.Writer) *progress {
	f, ok := out.(*os.File)
	pr := &progress{out: out, tty: ok && isatty.IsTerminal(f.Fd()), last: map[string]time.Time{}}
	if pr.tty {
		pr.p = mpb.New(mpb.WithOutput(out), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond))
	}
	return pr
}

// bar is one bar: a named piece of work of known size.
type bar struct {
	pr    *progress
	name  string
	total int
	bar   *mpb.Bar
	start time.Time
	note  string
}

func (pr *progress) add(name string, total int) *bar {
	t := &bar{pr: pr, name: name, total: total, start: time.Now()}
	if pr.tty {
		t.bar = pr.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
			mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO), decor.Any(func(decor.Statistics) string { return t.note })),
		)
	}
	return t
}

// set moves the task to done of total and shows note beside it.
func (t *bar) set(done int, note string) {
	t.note = note
	if t.bar != nil {
		t.bar.SetCurrent(int64(done))
		return
	}
	t.pr.mu.Lock()
	defer t.pr.mu.Unlock()
	now := time.Now()
	if done < t.total && now.Sub(t.pr.last[t.name]) < 5*time.Second {
		return
	}
	t.pr.last[t.name] = now
	eta := "?"
	if done > 0 {
		eta = (time.Duration(float64(now.Sub(t.start)) * float64(t.total-done) / float64(done))).Round(time.Second).String()
	}
	fmt.Fprintf(t.pr.out, "%s: %d/%d (%.0f%%) eta %s %s\n", t.name, done, t.total, 100*float64(done)/float64(max(t.total, 1)), eta, note)
}

// abort removes an unfinished bar.
func (t *bar) abort() {
	if t.bar != nil {
		t.bar.Abort(false)
	}
}

// wait flushes the bars.
func (pr *progress) wait() {
	if pr.p != nil {
		pr.p.Wait()
	}
}
