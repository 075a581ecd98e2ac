package explore

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// drawn generates n runs for lock as Explore does: each drawn again until
// the lock can run it, counting the draws it refused.
func drawn(t *testing.T, lock string, seed uint64, n int) ([]Generated, int) {
	t.Helper()
	o, err := OfferOf(locks.Registry, lock)
	if err != nil {
		t.Fatal(err)
	}
	var out []Generated
	refused := 0
	for i := range n {
		g, refusals, err := Draw(o, seed, i, scenarios.RunOptions{})
		if err != nil {
			t.Fatalf("%s run %d: %v", lock, i, err)
		}
		refused += refusals
		out = append(out, g)
	}
	return out, refused
}

func TestTheSameSeedDrawsTheSameScenarios(t *testing.T) {
	a, _ := drawn(t, "simple", 7, 30)
	b, _ := drawn(t, "simple", 7, 30)
	c, _ := drawn(t, "simple", 8, 30)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	jc, _ := json.Marshal(c)
	if string(ja) != string(jb) {
		t.Fatal("seed 7 drew different scenarios twice")
	}
	if string(ja) == string(jc) {
		t.Fatal("seeds 7 and 8 drew the same scenarios")
	}
}

// Every lock of deadbolt's gets runs it can make (Prepare accepts them, at
// the first draw nearly always), aimed mostly at the calls that decide a
// lease, each call it offers among them.
func TestEveryDrawnScenarioRunsAndMostAimAtALeasesCalls(t *testing.T) {
	for _, lock := range locks.Names() {
		t.Run(lock, func(t *testing.T) {
			gs, refused := drawn(t, lock, 1, 120)
			if refused > len(gs)/10 {
				t.Errorf("%d of %d draws were refused by Prepare", refused, len(gs))
			}
			o, _ := OfferOf(locks.Registry, lock)
			aimed := 0
			calls := map[string]int{}
			for _, g := range gs {
				if g.Aim.Call != "" {
					aimed++
				}
				calls[g.Aim.Call]++
				if g.Scenario.Lock != lock || g.Scenario.Expect != scenarios.Unknown {
					t.Fatalf("run %d: lock %s expecting %s", g.Index, g.Scenario.Lock, g.Scenario.Expect)
				}
			}
			if aimed < len(gs)*3/4 {
				t.Errorf("only %d of %d runs aimed at a call", aimed, len(gs))
			}
			want := append(slices.Clone(o.Calls), CallAcquire, CallRelease)
			if o.Renews {
				want = append(want, CallRenew)
			}
			for _, c := range want {
				if calls[c] == 0 {
					t.Errorf("no run aimed at %s (aims: %v)", c, calls)
				}
			}
		})
	}
}

// A drawn scenario is a scenario file: written and read back, it is the
// same scenario, and Prepare takes it.
func TestADrawnScenarioIsAScenarioFile(t *testing.T) {
	gs, _ := drawn(t, "reentrant", 3, 40)
	for _, g := range gs {
		b, err := scenarios.MarshalFile(g.Scenario.Spec())
		if err != nil {
			t.Fatal(err)
		}
		f, err := scenarios.ParseFile(b)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", g.Index, err, b)
		}
		if _, err := f.Scenario.Prepare(scenarios.RunOptions{}); err != nil {
			t.Fatalf("run %d read back: %v\n%s", g.Index, err, b)
		}
	}
}

// The generator reads no scenario file, neither a finding nor a suite
// file: the files that draw scenarios call nothing of package scenarios
// that reads the registered ones (Get, Names, CISuite, Cell, Expected,
// ...) or a file (ReadFile, ParseFile), only its types and Prepare.
func TestTheGeneratorReadsNoScenarioFile(t *testing.T) {
	allowed := map[string]bool{"Scenario": true, "Duration": true, "Unknown": true, "RunOptions": true}
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || !slices.Contains(generatorFiles, name) {
			continue
		}
		checked++
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "scenarios" && !allowed[sel.Sel.Name] {
				t.Errorf("%s: the generator uses scenarios.%s", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
				t.Errorf("%s: the generator uses os.%s", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked != len(generatorFiles) {
		t.Fatalf("checked %d of the generator's files %v", checked, generatorFiles)
	}
	if _, err := os.Stat("generate.go"); err != nil {
		t.Fatal(err)
	}
}

// Against a deployment of the user's (--target), the generator draws only
// faults on clients and their links, which such a deployment takes, and
// every run locks keys of its own.
func TestAgainstATargetOnlyClientAndLinkFaultsAndKeysOfItsOwn(t *testing.T) {
	o, err := OfferOf(locks.Registry, "simple")
	if err != nil {
		t.Fatal(err)
	}
	o.Target = true
	target := endpoints.Unreachable(1)
	target.Resource = "unreachable-9:6379"
	target.Addresses[target.Resource] = "127.0.0.1:1"
	for i := range 60 {
		g, _, err := Draw(o, 4, i, scenarios.RunOptions{Target: &target})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range g.Scenario.Fault.Steps {
			d, _ := nemesis.FaultOf(st.Fault)
			if !d.Effects.OnClients {
				t.Errorf("run %d strikes %s, a node fault, on a deployment", i, st.Fault)
			}
			if st.Key != "" && !strings.HasPrefix(st.Key, fmt.Sprintf("explore-4-%03d-", i)) {
				t.Errorf("run %d aims at key %s, not one of its own", i, st.Key)
			}
		}
		for _, k := range g.Scenario.Keys {
			if !strings.HasPrefix(k, fmt.Sprintf("explore-4-%03d-", i)) {
				t.Errorf("run %d locks key %s, not one of its own", i, k)
			}
		}
	}
}

// With a second lock, a scenario it cannot run is drawn again: the
// reentrant lock's re-entry is one the simple lock does not offer, so
// those draws give way to ones both run, and every scenario kept for both
// runs on both.
func TestADrawTheSecondLockCannotRunIsDrawnAgain(t *testing.T) {
	e, err := New(Options{Lock: "reentrant", Against: "simple", Runs: 60, Seed: 2, Parallel: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for i, g := range e.Generated() {
		if e.rep.Scenarios[i].Against != "" {
			refused++
			continue
		}
		s := g.Scenario
		s.Lock = "simple"
		if _, err := s.Prepare(scenarios.RunOptions{}); err != nil {
			t.Errorf("run %d, kept for both, does not run on simple: %v", i, err)
		}
	}
	if refused > len(e.Generated())/10 {
		t.Errorf("%d of %d runs the second lock cannot run", refused, len(e.Generated()))
	}
}

// A lock whose client sends a timed-out command again gets node stalls
// past its call timeout while clients ask several times as often as one
// that does not: the first try, run when the node wakes, and the retry
// both reach the key. Every seed of three draws some in 40 runs.
func TestALockThatResendsGetsStallsWhileItAsks(t *testing.T) {
	stalls := func(resends bool, seed uint64) int {
		d := locks.Declare("simple")
		d.Resends = resends
		o, err := OfferOf(locks.Declared{Driver: "d", Locks: []string{"simple"}, Info: map[string]locks.Declaration{"simple": d}}, "simple")
		if err != nil {
			t.Fatal(err)
		}
		if o.Resends != resends {
			t.Fatalf("the offer's Resends is %v, declared %v", o.Resends, resends)
		}
		n := 0
		for i := range 40 {
			g, _, err := Draw(o, seed, i, scenarios.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if g.Aim.Family != "node-while-asking" {
				continue
			}
			fd, _ := nemesis.FaultOf(g.Aim.Fault)
			if fd.Effects.KeepsKeys && g.Scenario.Fault.Steps[0].For > 500*time.Millisecond {
				n++
			}
		}
		return n
	}
	with, without := 0, 0
	for seed := uint64(1); seed <= 3; seed++ {
		w := stalls(true, seed)
		if w < 4 {
			t.Errorf("seed %d: %d stalls past the timeout while asking in 40 runs of a lock that resends", seed, w)
		}
		with += w
		without += stalls(false, seed)
	}
	t.Logf("stalls while asking in 120 runs: %d for a lock that resends, %d for one that does not", with, without)
	if with < 2*without || with == 0 {
		t.Errorf("%d stalls for a lock that resends against %d for one that does not", with, without)
	}
}
