package moment

// Stop is a client that stopped itself at an armed point (Process.Arm).
type Stop struct {
	Process int // the history process whose request reached the point
	Point   string
	Key     string
	Proc    Process
}
