package scenarios

import (
	"encoding/json"
	"fmt"
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
// duration strings, and the fault steps' boolean modes made their Aim and
// Until (upgradeStep).
func upgradeLegacy(raw any) error {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil // not an object: the decoder says what is wrong
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
		switch n := v.(type) {
		case json.Number:
			ms, err := n.Int64()
			if err != nil {
				return fmt.Errorf("%s: want whole milliseconds, got %s", old, n)
			}
			v = (time.Duration(ms) * time.Millisecond).String()
		case float64:
			if n != float64(int64(n)) {
				return fmt.Errorf("%s: want whole milliseconds, got %g", old, n)
			}
			v = (time.Duration(n) * time.Millisecond).String()
		case string:
			if _, err := time.ParseDuration(n); err != nil {
				return fmt.Errorf("%s: bad duration %q (whole milliseconds, or a Go duration such as \"1.5s\")", old, n)
			}
		}
		obj[name] = v
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
