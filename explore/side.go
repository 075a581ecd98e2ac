package explore

import (
	"maps"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// A side is one of the two locks an exploration tells apart: a lock, and
// the knobs of its library it runs with. The same library version with
// other settings is another side (--against LOCK --against-option
// max_retries=-1), so that a team sees what its setting changes. A side is
// named by its label: the lock, then its knobs in braces.

// Label names lock run with knobs: "redsync@v4.18.1 {max_retries=-1}",
// or the lock alone without knobs.
func Label(lock string, knobs map[string]string) string {
	if len(knobs) == 0 {
		return lock
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(knobs)) {
		kv = append(kv, k+"="+knobs[k])
	}
	return lock + " {" + strings.Join(kv, " ") + "}"
}

// sideOf reads a label back: the lock, and its knobs (nil for none).
func sideOf(label string) (lock string, knobs map[string]string) {
	lock, rest, ok := strings.Cut(label, " {")
	if !ok {
		return label, nil
	}
	knobs = map[string]string{}
	for _, kv := range strings.Fields(strings.TrimSuffix(rest, "}")) {
		k, v, _ := strings.Cut(kv, "=")
		knobs[k] = v
	}
	return lock, knobs
}

// on is s run by the side label names: its lock, with its knobs.
func on(s scenarios.Scenario, label string) scenarios.Scenario {
	lock, knobs := sideOf(label)
	s.Lock = lock
	s.LockOptions.Library = maps.Clone(knobs)
	return s
}
