package scenarios

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// legacyDurations are the names the spec's durations had before they were
// Go duration strings: whole milliseconds, or (in files) a duration
// string under the old name. Runs stored then still read.
var legacyDurations = map[string]string{
	"ttl_ms": "ttl", "hold_min_ms": "hold_min", "hold_max_ms": "hold_max", "pause_ms": "pause",
	"time_ms": "time", "settle_ms": "settle", "run_on_ms": "run_on",
}

// upgradeLegacy turns a decoded spec of the old format into the new, in
// place: the *_ms fields renamed, their numbers of milliseconds made
// duration strings, the cluster's Go field names made its JSON names
// (upgradeCluster), and the fault steps' boolean modes made their Aim and
// Until (upgradeStep).
func upgradeLegacy(raw any) error {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil // not an object: the decoder says what is wrong
	}
	if c, ok := obj["cluster"].(map[string]any); ok {
		if err := upgradeCluster(c); err != nil {
			return fmt.Errorf("cluster.%w", err)
		}
	}
	if fault, ok := obj["fault"].(map[string]any); ok {
		// A schedule's own handoff flag is its until, as a step's is.
		if err := upgradeStep(fault); err != nil {
			return fmt.Errorf("fault.%w", err)
		}
		steps, _ := fault["steps"].([]any)
		for i, st := range steps {
			if step, ok := st.(map[string]any); ok {
				if err := upgradeStep(step); err != nil {
					return fmt.Errorf("fault.steps[%d].%w", i, err)
				}
			}
		}
	}
	for old, name := range legacyDurations {
		v, ok := obj[old]
		if !ok {
			continue
		}
		if _, both := obj[name]; both {
			return fmt.Errorf("%s: the old name of %s, which is given too", old, name)
		}
		delete(obj, old)
		d, err := legacyDuration(v, time.Millisecond, "milliseconds")
		if err != nil {
			return fmt.Errorf("%s: %w", old, err)
		}
		obj[name] = d
	}
	return nil
}

// legacyDuration is an old duration as today's duration string: a whole
// number of unit (units names it), or a Go duration string as it is.
// Anything else is left for the decoder to refuse.
func legacyDuration(v any, unit time.Duration, units string) (any, error) {
	switch n := v.(type) {
	case json.Number:
		whole, err := n.Int64()
		if err != nil {
			return nil, fmt.Errorf("want whole %s, got %s", units, n)
		}
		return (time.Duration(whole) * unit).String(), nil
	case float64:
		if n != float64(int64(n)) {
			return nil, fmt.Errorf("want whole %s, got %g", units, n)
		}
		return (time.Duration(n) * unit).String(), nil
	case string:
		if _, err := time.ParseDuration(n); err != nil {
			return nil, fmt.Errorf("bad duration %q (whole %s, or a Go duration such as \"1.5s\")", n, units)
		}
	}
	return v, nil
}

// legacyClusterFields are the cluster's fields under the names they had
// before they had JSON names: their Go names, which encoding/json matched
// in any case ("Topology", "topology"), with DownAfter a time.Duration,
// nanoseconds in scenario.json and a Go duration string in files.
var legacyClusterFields = map[string]string{
	"Topology": "topology", "Masters": "masters", "Replicas": "replicas", "Sentinels": "sentinels",
	"Quorum": "quorum", "DownAfter": "down_after", "PrimaryKey": "primary_key", "Resource": "resource",
	"Persistence": "persistence", "LinkFaults": "link_faults", "ClockFaults": "clock_faults",
	"TLS": "tls", "Image": "image",
}

// upgradeCluster gives a cluster object's fields of the old names their
// new ones, DownAfter's nanoseconds made a duration string. A field given
// under both names is refused, whatever the two say.
func upgradeCluster(c map[string]any) error {
	for _, key := range slices.Sorted(maps.Keys(c)) {
		v := c[key]
		name := ""
		for old, now := range legacyClusterFields {
			if strings.EqualFold(key, old) {
				name = now
				break
			}
		}
		if name == "" || key == name {
			continue // a field of today's name, or unknown: the decoder judges it
		}
		if _, both := c[name]; both {
			return fmt.Errorf("%s: the old name of %s, which is given too", key, name)
		}
		if name == "down_after" {
			var err error
			if v, err = legacyDuration(v, time.Nanosecond, "nanoseconds"); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
		delete(c, key)
		c[name] = v
	}
	return nil
}

// upgradeStep makes a step's old booleans its modes: under (with asked)
// the grant it aims at, handoff or failover what ends its fault.
func upgradeStep(step map[string]any) error {
	flag := func(name string) (bool, error) {
		v, ok := step[name]
		if !ok {
			return false, nil
		}
		b, ok := v.(bool)
		if !ok {
			return false, fmt.Errorf("%s: want true or false, got %v", name, v)
		}
		delete(step, name)
		return b, nil
	}
	var on [4]bool
	for i, name := range []string{"under", "asked", "handoff", "failover"} {
		var err error
		if on[i], err = flag(name); err != nil {
			return err
		}
	}
	under, asked, handoff, failover := on[0], on[1], on[2], on[3]
	set := func(key, value string) error {
		if _, both := step[key]; both {
			return fmt.Errorf("%s: given with the old fields it replaces", key)
		}
		step[key] = value
		return nil
	}
	switch {
	case asked && !under:
		return fmt.Errorf("asked: takes an acquire under the fault, and needs under")
	case handoff && failover:
		return fmt.Errorf("handoff: a fault ends at a handoff or at a failover, not both")
	}
	var err error
	switch {
	case asked:
		err = set("aim", "asked")
	case under:
		err = set("aim", "grant")
	}
	switch {
	case err != nil:
	case handoff:
		err = set("until", "handoff")
	case failover:
		err = set("until", "failover")
	}
	return err
}
