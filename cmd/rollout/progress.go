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
// otherwise: a bar's line when it starts, then at most one every few
// seconds, one when it completes, and one when it stops short; never the
// same count twice.
type progress struct {
	out io.Writer
	tty bool
	p   *mpb.Progress
	mu  sync.Mutex // orders plain lines
}

// plainEvery is the least time between two plain lines of one bar, but
// for its last.
const plainEvery = 5 * time.Second

func newProgress(out io.Writer) *progress {
	f, ok := out.(*os.File)
	pr := &progress{out: out, tty: ok && isatty.IsTerminal(f.Fd())}
	if pr.tty {
		pr.p = mpb.New(mpb.WithOutput(out), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond))
	}
	return pr
}

// log prints a line: above the bars on a terminal.
func (pr *progress) log(format string, args ...any) {
	line := fmt.Sprintf(format+"\n", args...)
	if pr.p != nil {
		if _, err := pr.p.Write([]byte(line)); err == nil {
			return
		}
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	io.WriteString(pr.out, line)
}

// logNow prints a line at once, past the bars on a terminal: for a
// process about to exit, which the bars' next refresh would not reach.
func (pr *progress) logNow(format string, args ...any) {
	line := fmt.Sprintf(format+"\n", args...)
	if pr.tty {
		line = "\n" + line
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	io.WriteString(pr.out, line)
}

// bar is one bar: a named piece of work of known size.
type bar struct {
	pr    *progress
	name  string
	total int
	bar   *mpb.Bar
	start time.Time

	mu      sync.Mutex // guards the fields below (mpb reads note as it renders)
	note    string
	printed int       // the count of the last plain line, −1 before the first
	at      time.Time // when it was printed
	ended   bool
}

func (pr *progress) add(name string, total int) *bar {
	t := &bar{pr: pr, name: name, total: total, start: time.Now(), printed: -1}
	if pr.tty {
		t.bar = pr.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
			mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO), decor.Any(func(decor.Statistics) string { return t.getNote() })),
		)
	}
	return t
}

func (t *bar) getNote() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.note
}

// set moves the bar to done of total and shows note beside it.
func (t *bar) set(done int, note string) {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return
	}
	t.note = note
	t.mu.Unlock()
	if t.bar != nil {
		t.bar.SetCurrent(int64(done))
		return
	}
	t.mu.Lock()
	now := time.Now()
	if done == t.printed || done < t.total && t.printed >= 0 && now.Sub(t.at) < plainEvery {
		t.mu.Unlock()
		return
	}
	t.printed, t.at = done, now
	t.mu.Unlock()
	eta := "?"
	if done > 0 {
		eta = (time.Duration(float64(now.Sub(t.start)) * float64(t.total-done) / float64(done))).Round(time.Second).String()
	}
	t.pr.mu.Lock()
	defer t.pr.mu.Unlock()
	fmt.Fprintf(t.pr.out, "%s: %d/%d (%.0f%%) eta %s%s\n", t.name, done, t.total, 100*float64(done)/float64(max(t.total, 1)), eta, note)
}

// stop ends an unfinished bar where it is, saying why (e.g. "stopped at
// step 3"): on a terminal the bar stays, with why beside it; otherwise one
// line says it. Later calls of set and stop do nothing.
func (t *bar) stop(why string) {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return
	}
	t.ended, t.note = true, " "+why
	t.mu.Unlock()
	if t.bar != nil {
		t.bar.Abort(false)
		return
	}
	t.pr.mu.Lock()
	defer t.pr.mu.Unlock()
	fmt.Fprintf(t.pr.out, "%s: %s\n", t.name, why)
}

// abort ends an unfinished bar where it is, without a word.
func (t *bar) abort() {
	t.mu.Lock()
	ended := t.ended
	t.ended = true
	t.mu.Unlock()
	if !ended && t.bar != nil {
		t.bar.Abort(false)
	}
}

// wait flushes the bars; every bar must have completed or stopped.
func (pr *progress) wait() {
	if pr.p != nil {
		pr.p.Wait()
	}
}
