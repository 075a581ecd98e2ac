package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/drivers"
	"github.com/deadbolt-lab/deadbolt/internal/suggest"
	"github.com/deadbolt-lab/deadbolt/locks"
	"github.com/deadbolt-lab/deadbolt/nemesis"
	"github.com/deadbolt-lab/deadbolt/workloads"
)

// A scenario file is the scenario.json schema (RunSpec): the CI suite's
// scenarios are such files (suite/), and a stored run's scenario.json is
// one, so that replaying a run is running its file. What a run derives
// is optional in a file: the seed (drawn when absent), the checkers (the
// workload's), reentrant (the lock's), the driver's command line (deadbolt's
// own client when absent) and the expectation (the known-results table's,
// known.json, when absent).

// File is a scenario file read and checked.
type File struct {
	Scenario Scenario
	// Seed is the file's seed (a stored run's); nil when it gives none.
	Seed *uint64
	// Driver is the driver command line the file records when it is
	// neither deadbolt's own client nor a shipped driver (driver_name):
	// what `--driver` gave that run.
	Driver []string
	// Target: the run went against an existing deployment (`--target`).
	Target bool
}

// ReadFile reads and checks a scenario file.
func ReadFile(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	f, err := ParseFile(b)
	if err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// ParseFile reads a scenario file's bytes. Unknown fields, values of the
// wrong type, unknown names (lock, workload, nemesis, fault, target,
// topology, driver) and bad durations are refused, with the field's path.
// The lock is checked against deadbolt's own locks only when the file
// names no driver: a driver's locks are known from its hello (Prepare).
func ParseFile(b []byte) (File, error) {
	var r RunSpec
	if err := decodeStrict(b, &r); err != nil {
		return File{}, err
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(b, &present); err != nil {
		return File{}, err
	}
	f := File{Target: r.Target != nil}
	if _, ok := present["seed"]; ok {
		f.Seed = &r.Seed
	}
	// The driver a run recorded is a command for the command line to
	// name again (Driver), unless deadbolt chose it itself: its own
	// client, a shipped driver (driver_name), the driver it builds for a
	// library at a version (the lock names it).
	if len(r.Driver) > 0 && r.Scenario.Driver == "" && !client.IsOwn(r.Driver) && !drivers.IsVersioned(r.Lock) {
		f.Driver = r.Driver
	}
	if _, ok := present["expect"]; !ok {
		r.Expect = Expected(r.Name, r.Lock)
	}
	if err := checkSpec(r, f.Driver == nil); err != nil {
		return f, err
	}
	f.Scenario = r.Scenario
	return f, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._@-]*$`)

// checkSpec judges each field alone; what fields say together is
// Prepare's to judge. ownLocks: the lock is one of deadbolt's own.
func checkSpec(r RunSpec, ownLocks bool) error {
	if err := checkLocks(r, ownLocks); err != nil {
		return err
	}
	return checkShape(r)
}

// bad is a spec's field refused, with its path.
func bad(path, format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{path}, args...)...)
}

// checkLocks judges the name, the expectation and what runs the clients:
// the driver, the lock and the locks mixed in.
func checkLocks(r RunSpec, ownLocks bool) error {
	if !nameRE.MatchString(r.Name) {
		return bad("scenario", "want a name of lower-case letters, digits and . _ @ - (it names the run's directory), got %q", r.Name)
	}
	switch r.Expect {
	case Safe, Unsafe, Unknown:
	default:
		return bad("expect", "unknown expectation %q (known: %s, %s, %s)", r.Expect, Safe, Unsafe, Unknown)
	}
	if r.Scenario.Driver != "" {
		if _, err := drivers.Get(r.Scenario.Driver); err != nil {
			return bad("driver_name", "%v", err)
		}
		ownLocks = false
	}
	if r.Lock == "" {
		return bad("lock", "missing (see: deadbolt locks)")
	}
	if drivers.IsVersioned(r.Lock) {
		if _, _, err := drivers.SplitVersioned(r.Lock); err != nil {
			return bad("lock", "%v", err)
		}
		ownLocks = false // the built driver's hello says (Prepare)
	}
	if ownLocks {
		if err := locks.Registry.Lookup(r.Lock); err != nil {
			return bad("lock", "%v", err)
		}
		if r.Reentrant && !locks.Registry.Reentrant(r.Lock) {
			return bad("reentrant", "lock %s does not re-enter", r.Lock)
		}
	}
	for i, m := range r.Mix {
		path := fmt.Sprintf("mix[%d]", i)
		switch {
		case m.Clients < 1:
			return bad(path+".clients", "a lock mixed in needs at least one client, got %d", m.Clients)
		case m.Lock == "":
			return bad(path+".lock", "missing (see: deadbolt locks)")
		case drivers.IsVersioned(m.Lock):
			if _, _, err := drivers.SplitVersioned(m.Lock); err != nil {
				return bad(path+".lock", "%v", err)
			}
		}
	}
	return nil
}

// checkShape judges the workload, the nemesis and the cluster, and the
// run's numbers.
func checkShape(r RunSpec) error {
	kind, err := workloads.Get(r.Workload)
	if err != nil {
		return bad("workload", "%v", err)
	}
	if r.Checkers != nil && !slices.Equal(r.Checkers, kind.Judges()) {
		return bad("checkers", "workload %s is judged by %v, not %v", kind.Name, kind.Judges(), r.Checkers)
	}
	if !slices.Contains(nemesis.Names(), r.Nemesis) {
		return bad("nemesis", "unknown nemesis %q (known: %s)%s", r.Nemesis, strings.Join(nemesis.Names(), ", "), suggest.Hint(r.Nemesis, nemesis.Names()))
	}
	if err := nemesis.CheckTakes(r.Nemesis, r.Fault); err != nil {
		return fmt.Errorf("fault.%w", err)
	}
	if err := checkFault(r.Fault); err != nil {
		return err
	}
	if err := r.Cluster.Validate(); err != nil {
		return bad("cluster", "%v", err)
	}
	for i, k := range r.Keys {
		if k == "" {
			return bad(fmt.Sprintf("keys[%d]", i), "empty key")
		}
	}
	if r.Clients < 1 || r.Clients > MaxClients {
		return bad("clients", "want 1 to %d (each client is a process), got %d", MaxClients, r.Clients)
	}
	for _, d := range []struct {
		path     string
		d, least Duration
	}{{"ttl", r.TTL, msDuration}, {"time", r.Time, msDuration}, {"hold_min", r.HoldMin, 0}, {"hold_max", r.HoldMax, r.HoldMin},
		{"pause", r.Pause, 0}, {"settle", r.Settle, 0}, {"run_on", r.RunOn, 0}} {
		if d.d < d.least {
			return bad(d.path, "want at least %s, got %s", d.least, d.d)
		}
	}
	if r.Time.D() > MaxTime {
		return bad("time", "want at most %s, got %s", MaxTime, r.Time)
	}
	if r.MinAcquires < 0 {
		return bad("min_acquires", "must not be negative, got %d", r.MinAcquires)
	}
	return nil
}

// checkFault judges the nemesis parameters, each step with its path.
func checkFault(p nemesis.Params) error {
	for i, name := range p.Faults {
		if !slices.Contains(nemesis.Faults(), name) {
			return fmt.Errorf("fault.faults[%d]: unknown fault %q (see: deadbolt faults)%s", i, name, suggest.Hint(name, nemesis.Faults()))
		}
	}
	for i, st := range p.Steps {
		path := fmt.Sprintf("fault.steps[%d]", i)
		if !slices.Contains(nemesis.Faults(), st.Fault) {
			return fmt.Errorf("%s.fault: unknown fault %q (see: deadbolt faults)%s", path, st.Fault, suggest.Hint(st.Fault, nemesis.Faults()))
		}
		if st.Target != "" {
			if err := nemesis.CheckSelector(st.Target); err != nil {
				return fmt.Errorf("%s.target: %w", path, err)
			}
		}
		if d, _ := nemesis.FaultOf(st.Fault); st.By < 0 && !d.SignedBy {
			return fmt.Errorf("%s.by: must not be negative for %s, got %s", path, st.Fault, st.By)
		}
		if err := st.Validate(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("fault: %w", err)
	}
	return nil
}

// msDuration is the shortest TTL and fault phase: clients are told the
// TTL in milliseconds.
const msDuration = Duration(time.Millisecond)

// Spec is the scenario as a file says it: what it runs, without what a
// run derives (seed, driver command, checkers), its defaults made plain.
// The matrix writes its cells with it.
func (s Scenario) Spec() RunSpec {
	s.Workload, s.Settle, s.MinAcquires, s.Finding = s.WorkloadName(), Duration(s.settle()), s.minAcquires(), false
	return RunSpec{Scenario: s}
}

// spec is the run's description, written to scenario.json.
func (s Scenario) spec(seed uint64, driver client.Command, kind workloads.Kind, reentrant bool) RunSpec {
	r := s.Spec()
	r.Seed, r.Cluster, r.Workload, r.Checkers, r.Reentrant = seed, s.Cluster.Defaults(), kind.Name, kind.Judges(), reentrant
	r.Driver = append([]string{driver.Path}, driver.Args...)
	return r
}

// MarshalFile writes r as a scenario file for people to read and edit:
// fields in the schema's order, durations as Go duration strings ("1.5s"),
// the nested ones too, which the reader takes back, the cluster's unset
// fields (the topology's defaults) left out (topology.Spec omits them), and
// without the fields named in drop (a suite file drops "seed" and what a
// run derives).
func MarshalFile(r RunSpec, drop ...string) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	for _, k := range drop {
		delete(raw, k)
	}
	humanize(raw, reflect.TypeFor[RunSpec](), "")
	out := []byte("{")
	for _, f := range jsonFieldList(reflect.TypeFor[RunSpec]()) {
		key := f.name
		v, ok := raw[key]
		if !ok {
			continue
		}
		kb, _ := json.Marshal(key)
		vb, err := json.MarshalIndent(v, "  ", "  ")
		if err != nil {
			return nil, err
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(append(out, "\n  "...), kb...), ": "...), vb...)
	}
	return append(out, "\n}\n"...), nil
}

// humanize turns the numbers of duration fields into duration strings,
// in place.
func humanize(raw any, t reflect.Type, name string) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := raw.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return v
		}
		fields := jsonFields(t)
		for k, val := range v {
			if f, ok := fields[k]; ok {
				v[k] = humanize(val, f.Type, k)
			}
		}
	case []any:
		if t.Kind() == reflect.Slice {
			for i := range v {
				v[i] = humanize(v[i], t.Elem(), name)
			}
		}
	case float64:
		switch {
		case t == durationType:
			return time.Duration(v).String()
		case strings.HasSuffix(name, "_ms") && t.Kind() == reflect.Int64:
			return (time.Duration(v) * time.Millisecond).String()
		}
	}
	return raw
}
