package topology

import "fmt"

// Persistence is what a lock-service node keeps across a restart, the
// remedy antirez gives for a majority member that restarts and forgets.
type Persistence string

const (
	// PersistNone keeps nothing: a restarted node comes back empty.
	PersistNone Persistence = "none"
	// PersistEverySec appends every write to the AOF and fsyncs once a
	// second. A killed process loses nothing it acknowledged (the write is
	// in the kernel's page cache before the reply); only a lost kernel (power
	// loss, a crashed host) would lose the last second, and a container
	// fault cannot lose the kernel.
	PersistEverySec Persistence = "everysec"
	// PersistAlways fsyncs the AOF before every reply.
	PersistAlways Persistence = "always"
)

func (p Persistence) validate() error {
	switch p {
	case "", PersistNone, PersistEverySec, PersistAlways:
		return nil
	}
	return fmt.Errorf("unknown persistence %q (known: %s, %s, %s)", p, PersistNone, PersistEverySec, PersistAlways)
}
