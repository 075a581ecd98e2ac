package moment

// Caught is a client held at a moment: its session has recorded the event
// and waits, lease in hand, until Let. A fault that strikes in between
// strikes at the moment by construction, not by winning a race with the
// client's next request.
type Caught struct {
	Slot    int
	Process int // the history process that reached the moment
	Proc    Process
	Lease   string
	// Let lets the client go on; calling it again does nothing.
	Let func()
}
