package moment

import "context"

// Process is a client process as a fault strikes it: signals that stop,
// continue or end it, a point it stops itself at, and how much of what it
// wrote the harness has read. The client package's Process is the real
// one.
type Process interface {
	// Pause stops the process (SIGSTOP) and Resume continues it; Kill
	// ends it (SIGKILL) and returns once it is reaped.
	Pause() error
	Resume() error
	Kill()
	// Arm makes the client stop itself the next time it reaches point;
	// WaitState waits until the process is in state (such as "T").
	Arm(point string)
	WaitState(ctx context.Context, state string) error
	// Answered reports whether the reply to request id has been read;
	// Unread is how many bytes it wrote wait unread (-1: unknown).
	Answered(id int64) bool
	Unread() int
}
