// Package all registers every lock: the base algorithms, the known-broken
// variants and the third-party adapters. Import it for its side effect
// wherever a lock is chosen by name.
package all

import (
	_ "github.com/deadbolt-lab/deadbolt/locks"
	_ "github.com/deadbolt-lab/deadbolt/locks/adapters"
	_ "github.com/deadbolt-lab/deadbolt/locks/broken"
)
