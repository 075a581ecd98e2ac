package history

import "golang.org/x/sys/unix"

// MonoNow reads CLOCK_MONOTONIC, the clock every process on a Linux host
// shares (and the one Go's own monotonic time uses): a client process stamps
// its events with it and the recorder places them on the history's clock.
func MonoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("CLOCK_MONOTONIC unreadable: " + err.Error())
	}
	return ts.Nano()
}
