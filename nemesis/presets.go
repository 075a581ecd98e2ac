package nemesis

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The named schedules of the scenarios, each a one-step plan: a fault from
// the catalogue, a target selector and a moment, built from the
// scenario's parameters. A preset is one registry line.
func init() {
	nodeTakes := []string{"after", "for"}
	clientTakes := []string{"after", "for", "key", "on", "client", "until"}
	preset("isolate-primary", OnFailover, nodeTakes,
		"cut the master off from its replicas and Sentinels, or a cluster's slot master from the other nodes (clients still reach it), until a replica is promoted, then heal",
		func(p Params) (Step, error) {
			return Step{Fault: "isolate-primary", Target: "primary", After: or(p.After, 3*time.Second), For: or(p.For, 8*time.Second), Until: UntilFailover}, nil
		})
	preset("kill-primary", OnFailover, nodeTakes,
		"SIGKILL the master (a cluster's slot master), let a replica be promoted, restart the old master (empty: no persistence)",
		func(p Params) (Step, error) {
			return Step{Fault: "kill", Target: "primary", After: or(p.After, 3*time.Second), For: or(p.For, 8*time.Second), Until: UntilFailover}, nil
		})
	preset("kill-minority", OnIndependent, nodeTakes,
		"SIGKILL a minority of the independent masters and restart them (empty) only after the lease TTL has passed",
		func(p Params) (Step, error) {
			return Step{Fault: "kill", Target: "minority", After: or(p.After, 3*time.Second), For: or(p.For, time.Second), TTLs: 1}, nil
		})
	preset("pause-client", "", clientTakes,
		"SIGSTOP a client process (the holder of a key the moment it holds it, or a named client) for twice the TTL, then SIGCONT: "+
			"a stop-the-world pause that freezes the lock's own timers with it",
		func(p Params) (Step, error) { return pauseLong(clientStep("pause-client", p)), nil })
	preset("crash-client", "", clientTakes,
		"SIGKILL a client process (the holder of a key the moment it holds it, or a named client): it never releases, "+
			"and a fresh process takes its place",
		func(p Params) (Step, error) { return clientStep("crash-client", p), nil })
	preset("pause-at", "", append(slices.Clone(clientTakes), "point"),
		"stop a client inside the lock at a named point (such as between GET and DEL) for twice the TTL, then resume it",
		func(p Params) (Step, error) {
			s, err := pointStep("pause-client", p)
			return pauseLong(s), err
		})
	preset("crash-at", "", append(slices.Clone(clientTakes), "point"),
		"stop a client inside the lock at a named point (such as between SETNX and EXPIRE) and kill it there",
		func(p Params) (Step, error) { return pointStep("crash-client", p) })
	for _, f := range []string{"pause-in-acquire", "pause-in-release", "pause-in-extend", "crash-in-acquire", "crash-in-release"} {
		summary, _ := FaultSummary(f)
		preset(f, "", append(slices.Clone(clientTakes), "strikes"), summary+"; fresh requests (of the holder of a key, or of a named client) until one lands where it harms, at most `strikes`",
			func(p Params) (Step, error) {
				s := clientStep(f, p)
				s.Strikes = p.Strikes
				if strings.HasPrefix(f, "pause-") {
					s = pauseLong(s)
				}
				return s, nil
			})
	}
}

// preset registers a named schedule that runs one step built from the
// scenario's parameters.
func preset(name, topology string, takes []string, summary string, step func(Params) (Step, error)) {
	RegisterSchedule(ScheduleDecl{Name: name, Topology: topology, Summary: summary, Takes: takes, New: func(p Params) Nemesis {
		s, err := step(p)
		if err != nil {
			return invalid{err}
		}
		return &Plan{Steps: []Step{s}}
	}})
}

// clientStep aims fault at the holder of p.Key (shown by p.On; client slot
// p.Client's hold when p.Client > 0), or else at client slot p.Client.
func clientStep(fault string, p Params) Step {
	s := Step{Fault: fault, Target: "client:" + strconv.Itoa(p.Client), After: p.After, For: p.For, Until: p.Until}
	if p.Key != "" {
		s.Target, s.Key, s.On = "holder", p.Key, p.On
		if p.Client > 0 {
			s.Target = "holder:" + strconv.Itoa(p.Client)
		}
	}
	return s
}

// pauseLong makes a pause with no length of its own last twice the TTL,
// so that the holder's lease surely runs out while it sleeps.
func pauseLong(s Step) Step {
	if s.For == 0 {
		s.TTLs = 2
	}
	return s
}

// pointStep is clientStep struck where the client stops itself at p.Point.
func pointStep(fault string, p Params) (Step, error) {
	if p.Point == "" {
		return Step{}, errors.New(fault + " at a point needs the point (such as after-get)")
	}
	s := clientStep(fault, p)
	s.Point = p.Point
	return s, nil
}

// invalid is a schedule whose parameters cannot work; New reports why.
type invalid struct{ err error }

func (invalid) Span(time.Duration) time.Duration { return 0 }
func (n invalid) Run(context.Context, Env) error { return n.err }
func (n invalid) validate() error                { return n.err }
