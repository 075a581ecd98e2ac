package workloads_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/nemesis/nemesistest"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// A workload defined outside the package, as a Go user adds one: it takes
// the first key it is given every time, holds it for the session's work
// time and touches no resource.
type firstKey struct{ key string }

func (w firstKey) Setup(context.Context, *workloads.Harness) error { return nil }
func (w firstKey) Final(context.Context, *workloads.Harness) error { return nil }
func (w firstKey) Next(*workloads.Session) string                  { return w.key }
func (w firstKey) Critical(_ context.Context, s *workloads.Session, l *workloads.Lease) {
	s.Hold(s.Work(), l)
}

func init() {
	workloads.Register(workloads.Kind{
		Name:      "first-key",
		Summary:   "every client locks the first key, holds it for a random time and releases: all contention on one key",
		Checkers:  []string{"fencing"},
		NeedsKeys: true,
		New:       func(c workloads.Config) workloads.Workload { return firstKey{key: c.Keys[0]} },
	})
}

// A checker registered from outside, after every workload registered, to
// run in every workload's runs: the workloads find it when asked.
type neverFlags struct{}

func (neverFlags) Check(*checker.Input) checker.Result {
	return checker.Result{Verdict: checker.Valid, Applicable: true, Metrics: map[string]int64{}}
}

func init() {
	checker.RegisterScoped("test-every-workload", "TEST: judges nothing, in every workload", checker.EveryWorkload,
		func(checker.Options) checker.Checker { return neverFlags{} })
}

func TestACheckerRegisteredLaterJudgesEveryWorkload(t *testing.T) {
	for _, name := range workloads.Names() {
		k, err := workloads.Get(name)
		require.NoError(t, err)
		require.Contains(t, k.Judges(), "test-every-workload", name)
		require.NotContains(t, k.Checkers, "test-every-workload", "%s: Checkers are the workload's own", name)
		require.Equal(t, checker.DefaultCheckers(), k.Judges()[:len(checker.DefaultCheckers())], "%s: the lock service's checkers come first", name)
	}
	require.NotContains(t, checker.DefaultCheckers(), "test-every-workload", "a history checked with no checker named runs only the lock service's")
}

func TestAWorkloadRegisteredOutsideIsFoundWithItsCheckers(t *testing.T) {
	require.Contains(t, workloads.Names(), "first-key")
	k, err := workloads.Get("first-key")
	require.NoError(t, err)
	require.True(t, k.NeedsKeys)
	require.Equal(t, []string{"fencing"}, k.Checkers, "its own, as registered")
	require.Subset(t, k.Judges(), checker.DefaultCheckers())
	require.Contains(t, k.Judges(), "fencing")
	require.Contains(t, k.Judges(), "uses", "every workload judges what the lock's answers led to")
	w := k.New(workloads.Config{Shape: workloads.Shape{Keys: []string{"k7", "k8"}}})
	require.Equal(t, firstKey{key: "k7"}, w)

	_, err = workloads.Get("first-kye")
	require.ErrorContains(t, err, `did you mean "first-key"`)
}

// The workload from outside runs as the built-in ones do: real client
// processes lock the first key over a real Redis, and the checkers it
// declared judge the history valid under a correct lock.
func TestAWorkloadRegisteredOutsideRuns(t *testing.T) {
	c := nemesistest.StartWith(t, nemesistest.Options{Topology: cluster.Independent, Masters: 1})
	rec := history.NewRecorder(nil)
	cfg := workloads.Config{
		Shape: workloads.Shape{Clients: 3, Keys: []string{"a", "b"}, TTL: workloads.Duration(2 * time.Second), HoldMin: workloads.Duration(5 * time.Millisecond), HoldMax: workloads.Duration(20 * time.Millisecond), Pause: workloads.Duration(5 * time.Millisecond)},
		Seed:  1, Lock: "simple", Endpoints: c.Endpoints(), Driver: clienttest.Command(), Rec: rec,
	}
	r, err := workloads.NewRunner("first-key", cfg)
	require.NoError(t, err)
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- r.Run(context.Background(), stop) }()
	granted := func() bool {
		n := 0
		for _, op := range rec.Ops() {
			if op.F == history.Acquire && op.Type == history.OK && op.Process >= 0 {
				n++
			}
		}
		return n >= 10
	}
	require.Eventually(t, granted, time.Minute, 10*time.Millisecond, "ten grants")
	close(stop)
	require.NoError(t, <-done)

	ops := rec.Ops()
	for _, op := range ops {
		if op.F == history.Acquire && op.Process >= 0 {
			require.Equal(t, "a", op.Key, "every client locks the first key")
		}
	}
	k, err := workloads.Get("first-key")
	require.NoError(t, err)
	rep := checker.Check(ops, checker.Options{Checkers: k.Judges()})
	require.Equal(t, checker.Valid, rep.Verdict, rep.Reason)
	ran := map[string]bool{}
	for _, res := range rep.Checks {
		ran[res.Checker] = true
	}
	for _, name := range k.Judges() {
		require.True(t, ran[name], "checker %s judged the run", name)
	}
}

// A kind no run could use is refused at its registration.
func TestRegisterRefusesWhatNoRunCouldUse(t *testing.T) {
	build := func(workloads.Config) workloads.Workload { return firstKey{} }
	for name, k := range map[string]workloads.Kind{
		"duplicate":       {Name: "mutex", Summary: "again", New: build},
		"unknown checker": {Name: "w1", Summary: "x", Checkers: []string{"no-such-checker"}, New: build},
		"no New":          {Name: "w2", Summary: "x"},
	} {
		require.Panics(t, func() { workloads.Register(k) }, name)
	}
}

// A workload's fenced counterpart is a workload whose resource checks the
// tokens: the matrix runs it for a lock that hands them out.
func TestFencedAsNamesAWorkloadJudgedByItsTokens(t *testing.T) {
	found := false
	for _, name := range workloads.Names() {
		k, _ := workloads.Get(name)
		if k.FencedAs == "" {
			continue
		}
		found = true
		f, err := workloads.Get(k.FencedAs)
		require.NoError(t, err, name)
		require.Contains(t, f.Checkers, "fencing", name)
		require.Equal(t, k.Resource, f.Resource, name)
	}
	require.True(t, found, "the counter has a fenced counterpart")
}
