package locks

// Resender is a lock whose client library sends a command again when its
// reply did not come in time (go-redis's default MaxRetries, redis-py 6's
// default Retry): a first try that the node ran late and its retry then
// both reach the key, so a stall of a node longer than the call timeout
// decides a lease as much as a grant does, and faults are aimed there.
type Resender interface {
	// ResendsTimedOut reports whether this lock instance's client sends a
	// timed-out command again.
	ResendsTimedOut() bool
}

// Resends reports a registered lock whose client sends a timed-out
// command again, as it says of itself at its defaults (Behaviour, or
// Resender for a lock that says only that).
func Resends(name string) bool { return Registry.Resends(name) }
