package nemesis

// ScheduleDecl declares a named schedule (a nemesis) where it is defined:
// what it does, the topologies it runs on, and how it is built from a
// scenario's parameters. NeedsOf starts from its Topology and adds what
// its faults declare.
type ScheduleDecl struct {
	Name    string
	Summary string
	// Topology is "" when any will do, else the topologies it runs on
	// (OnFailover, OnIndependent, ...).
	Topology string
	// New builds the schedule tuned by p. A schedule whose parameters
	// cannot work returns one whose Run reports why.
	New func(p Params) Nemesis
	// Takes names the parameters New reads (Params' JSON names: "after",
	// "for", "key", ...): a scenario that sets another is refused before
	// anything starts, rather than have it ignored. nil: it reads them all.
	Takes []string
}

// RegisterSchedule makes a schedule selectable by name (a scenario's
// "nemesis"). It panics on a declaration no run could use: call it from
// init, as locks.Register is called. The schedule's Run lets the workload
// start with Env.BeginWorkload once the faults that must be in effect from
// the first acquire have struck.
func RegisterSchedule(d ScheduleDecl) {
	switch {
	case d.Name == "" || d.Summary == "" || d.New == nil:
		panic("nemesis: schedule " + d.Name + ": needs a name, a summary and New")
	}
	if err := checkTopologies(d.Topology); err != nil {
		panic("nemesis: schedule " + d.Name + ": " + err.Error())
	}
	register(d.Name, d.Topology, d.Summary, d.New, d.Takes)
}

// BeginWorkload lets the workload start (Env.Begin): a schedule calls it
// once, when the faults that must be in effect from the first acquire
// have struck. A schedule that never calls it starts the workload only
// when it returns.
func (env Env) BeginWorkload() { env.begin() }
