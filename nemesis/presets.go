package nemesis

import "time"

// The schedules of the first scenarios, each now a one-step plan: a fault
// from the catalogue, a target selector and a moment. A preset is one
// registry line.
func init() {
	preset("isolate-primary", "sentinel",
		"cut the master off from its replicas and Sentinels (clients still reach it) until Sentinel promotes a replica, then heal",
		func(p Params) Step {
			return Step{Fault: "isolate-primary", Target: "primary", After: or(p.After, 3*time.Second), For: or(p.For, 8*time.Second)}
		})
	preset("kill-primary", "sentinel",
		"SIGKILL the master, let Sentinel promote a replica, restart the old master (empty: no persistence)",
		func(p Params) Step {
			return Step{Fault: "kill", Target: "primary", After: or(p.After, 3*time.Second), For: or(p.For, 8*time.Second)}
		})
	preset("kill-minority", "independent",
		"SIGKILL a minority of the independent masters and restart them (empty) only after the lease TTL has passed",
		func(p Params) Step {
			return Step{Fault: "kill", Target: "minority", After: or(p.After, 3*time.Second), For: or(p.For, time.Second), OutlastTTL: true}
		})
}

// preset registers a named schedule that runs one step built from the
// scenario's parameters.
func preset(name, topology, summary string, step func(Params) Step) {
	register(name, topology, summary, func(p Params) Nemesis { return &Plan{Steps: []Step{step(p)}} })
}
