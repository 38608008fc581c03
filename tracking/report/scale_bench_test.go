package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/record/recordtest"
	"github.com/rollout-rl/rollout/tracking"
)

// The synthetic store of BenchmarkScale: scaleExperiments experiments of
// scaleVariants variants × scaleSeeds seeds (1,000 runs), scaleSteps steps
// each with scaleMetrics metrics, and at every scaleGroupEvery-th step two
// groups of 5 leaves × 10 tokens: 10 M sampled tokens of groups in all.
// ROLLOUT_SCALE_RUNS sets fewer seeds for a quick try; ROLLOUT_SCALE_STORE
// names a file to keep the store in and to reuse when it exists (building
// it takes minutes).
const (
	scaleExperiments = 10
	scaleVariants    = 5
	scaleSeeds       = 20
	scaleSteps       = 1000
	scaleMetrics     = 25
	scaleGroupEvery  = 10
)

// scaleStore writes the synthetic store at path and returns its run ids
// by experiment. Log-probs and entropies are pseudo-random float32s
// (incompressible, unlike a real policy's), so the groups' size is an
// upper bound of what real runs of that many tokens take.
func scaleStore(b *testing.B, path string, seeds int) map[string][]string {
	s, err := tracking.Open(path, tracking.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	names := make([]string, scaleMetrics)
	for i := range names {
		names[i] = fmt.Sprintf("metric_%02d/mean", i)
	}
	names[0], names[1] = "eval/acc", "reward/mean"
	ids := map[string][]string{}
	x := uint64(1)
	rnd := func() float64 {
		x = x*6364136223846793005 + 1442695040888963407
		return float64(x>>11) / float64(1<<53)
	}
	for e := range scaleExperiments {
		exp := fmt.Sprintf("exp%d", e)
		variants := scaleVariantNames()
		if err := s.PutExperiment(tracking.Experiment{Name: exp, Variants: variants}); err != nil {
			b.Fatal(err)
		}
		for _, v := range variants {
			for seed := range int64(seeds) {
				id := scaleID(exp, v, seed)
				ids[exp] = append(ids[exp], id)
				if _, err := s.BeginRun(tracking.Run{ID: id, Experiment: exp, Variant: v, Seed: seed, Config: "variant: " + v + "\n", TotalSteps: scaleSteps}); err != nil {
					b.Fatal(err)
				}
				recs := make([]tracking.StepRecord, scaleSteps)
				for step := range recs {
					m := make(map[string]float64, scaleMetrics)
					for _, n := range names {
						m[n] = rnd()
					}
					recs[step] = tracking.StepRecord{Step: step, Tokens: int64(step+1) * 10, Elapsed: time.Duration(step) * time.Second, Metrics: m}
					if step%scaleGroupEvery == 0 {
						recs[step].Groups = []record.Group{randomGroup(int(seed)+step, rnd), randomGroup(int(seed)+step+1, rnd)}
					}
				}
				if err := s.CommitSteps(id, recs); err != nil {
					b.Fatal(err)
				}
				if err := s.EndRun(id, tracking.StatusFinished, ""); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	return ids
}

func scaleVariantNames() []string {
	variants := make([]string, scaleVariants)
	for v := range variants {
		variants[v] = "v" + strconv.Itoa(v)
	}
	return variants
}

func scaleID(exp, variant string, seed int64) string {
	return fmt.Sprintf("%s-%s-%d", exp, variant, seed)
}

// scaleIDs returns the run ids of scaleStore by experiment.
func scaleIDs(seeds int) map[string][]string {
	ids := map[string][]string{}
	for e := range scaleExperiments {
		exp := fmt.Sprintf("exp%d", e)
		for _, v := range scaleVariantNames() {
			for seed := range int64(seeds) {
				ids[exp] = append(ids[exp], scaleID(exp, v, seed))
			}
		}
	}
	return ids
}

// randomGroup is recordtest's flat group of 5 leaves × 10 tokens with
// random log-probs and entropies.
func randomGroup(seed int, rnd func() float64) record.Group {
	g := recordtest.Flat(seed, 5, 10)
	for i := range g.Nodes {
		for j := range g.Nodes[i].LogProbs {
			g.Nodes[i].LogProbs[j] = float32(math.Log(rnd()))
			g.Nodes[i].Entropies[j] = float32(3 * rnd())
		}
	}
	return g
}

// BenchmarkScale measures the store at scale (see scaleStore; building it
// takes minutes): its size; ls and report of one experiment, with no
// writer and while a writer holds the store (the reader's snapshot is
// copied by the writer); exporting every trajectory of one experiment and
// of all, with the peak heap; merge and compact throughput; and a
// writer's step-commit latency alone and while a reader reports in a
// loop. Run it with -benchtime 1x (each op is a whole command).
func BenchmarkScale(b *testing.B) {
	seeds := scaleSeeds
	if n, err := strconv.Atoi(os.Getenv("ROLLOUT_SCALE_RUNS")); err == nil && n > 0 {
		seeds = max(1, n/(scaleExperiments*scaleVariants))
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "scale.db")
	if keep := os.Getenv("ROLLOUT_SCALE_STORE"); keep != "" {
		path = keep
	}
	var ids map[string][]string
	if _, err := os.Stat(path); err == nil {
		ids = scaleIDs(seeds)
		b.Logf("reusing %s", path)
	} else {
		start := time.Now()
		ids = scaleStore(b, path, seeds)
		b.Logf("built %d runs × %d steps in %s", scaleExperiments*scaleVariants*seeds, scaleSteps, time.Since(start).Round(time.Second))
	}
	size := fileSize(b, path)
	b.Run("size", func(b *testing.B) {
		res, err := tracking.Check(path, tracking.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(size)/1e6, "MB")
		b.ReportMetric(float64(res.SampledTokens), "sampled-tokens")
		b.ReportMetric(float64(res.GroupBytes)/float64(res.SampledTokens), "group-B/token")
	})
	benchReads(b, path)
	var all []string
	for e := range scaleExperiments {
		all = append(all, ids[fmt.Sprintf("exp%d", e)]...)
	}
	b.Run("export-one-experiment", func(b *testing.B) { benchExport(b, path, ids["exp3"]) })
	b.Run("export-all", func(b *testing.B) { benchExport(b, path, all) })
	merged := filepath.Join(dir, "merged.db")
	b.Run("merge", func(b *testing.B) {
		b.SetBytes(size)
		for range b.N {
			os.Remove(merged)
			if _, err := tracking.Merge(merged, []string{path}, tracking.Options{NoSync: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compact", func(b *testing.B) {
		b.SetBytes(fileSize(b, merged))
		for range b.N {
			if _, _, err := tracking.Compact(merged, tracking.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	os.Remove(merged)
	b.Run("commit-alone", func(b *testing.B) { benchCommits(b, path, false) })
	b.Run("commit-with-reader", func(b *testing.B) { benchCommits(b, path, true) })
}

// benchReads runs ls and report of one experiment of the scale store,
// with no writer and while a writer holds it.
func benchReads(b *testing.B, path string) {
	reads := map[string]func(st *tracking.Store) error{
		"ls": func(st *tracking.Store) error {
			runs, err := st.Runs("exp3")
			if err == nil {
				err = WriteRuns(io.Discard, runs)
			}
			return err
		},
		"report": func(st *tracking.Store) error {
			rep, err := Build(st, "exp3", Options{Metrics: []string{"eval/acc", "reward/mean"}})
			if err == nil {
				err = rep.Write(io.Discard, FormatTable)
			}
			return err
		},
	}
	scopes := map[string]*tracking.ReadScope{"ls": {}, "report": {Runs: "exp3", Metrics: true}}
	for _, name := range []string{"ls", "report"} {
		b.Run(name, func(b *testing.B) { benchRead(b, path, scopes[name], reads[name]) })
	}
	w, err := tracking.Open(path, tracking.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"ls", "report"} {
		b.Run(name+"-during-run", func(b *testing.B) { benchRead(b, path, scopes[name], reads[name]) })
	}
	w.Close()
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// benchRead opens the store read-only with scope, reads and closes it.
func benchRead(b *testing.B, path string, scope *tracking.ReadScope, read func(*tracking.Store) error) {
	for range b.N {
		st, err := tracking.Open(path, tracking.Options{ReadOnly: true, Scope: scope})
		if err != nil {
			b.Fatal(err)
		}
		if err := read(st); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}

// benchExport exports the runs' trajectories as JSON lines to nowhere and
// reports the bytes written per op and the peak heap.
func benchExport(b *testing.B, path string, ids []string) {
	st, err := tracking.Open(path, tracking.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	peak := heapSampler()
	var n countingWriter
	b.ResetTimer()
	for range b.N {
		if err := Export(&n, st, ids, ExportTrajectories, JSONL); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(n.n)/float64(b.N)/1e6, "MB-out/op")
	b.ReportMetric(peak()/1e6, "peak-heap-MB")
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// heapSampler samples the live heap every millisecond until the returned
// function is called, which returns the peak.
func heapSampler() func() float64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() float64 { close(stop); wg.Wait(); return float64(peak.Load()) }
}

// benchCommits opens the store for writing, runs a new run of 64 flat
// groups × 16 leaves × 40 tokens and an 8 MB checkpoint a step, fsynced,
// and reports the commit latency's median, 99th percentile and maximum;
// with a reader, a goroutine reports an experiment in a loop (each time
// opening a snapshot the writer copies) meanwhile.
func benchCommits(b *testing.B, path string, reader bool) {
	s, err := tracking.Open(path, tracking.Options{KeepCheckpoints: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	exp, id := "commits", fmt.Sprintf("commit-%v-%d", reader, b.N)
	if err := s.PutExperiment(tracking.Experiment{Name: exp}); err != nil {
		b.Fatal(err)
	}
	run, err := s.BeginRun(tracking.Run{ID: id, Experiment: exp, Variant: "flat"})
	if err != nil {
		b.Fatal(err)
	}
	first := run.LastStep + 1 // a kept store's run continues
	groups := make([]record.Group, 64)
	for i := range groups {
		groups[i] = recordtest.Flat(i, 16, 40)
	}
	state := make([]byte, 8<<20)
	stop := make(chan struct{})
	var readsDone atomic.Int64
	var wg sync.WaitGroup
	if reader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				st, err := tracking.Open(path, tracking.Options{ReadOnly: true, Scope: &tracking.ReadScope{Runs: "exp3", Metrics: true}})
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := Build(st, "exp3", Options{Metrics: []string{"eval/acc"}}); err != nil {
					b.Error(err)
				}
				st.Close()
				readsDone.Add(1)
			}
		}()
	}
	const perOp = 30
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N * perOp {
		state[0] = byte(i)
		t := time.Now()
		err := s.CommitStep(id, tracking.StepRecord{Step: first + i, Tokens: int64(i+1) * 40960, Metrics: map[string]float64{"reward/mean": 0.5},
			Groups: groups, Checkpoint: []tracking.Blob{{Name: "state", Data: state}}})
		lat = append(lat, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1e3, "max-ms")
	if reader {
		b.ReportMetric(float64(readsDone.Load()), "reports")
	}
}
