package locks

import (
	"context"
	"sync"
)

// A lock that tries more than once within one acquire (redsync's 32 tries,
// a blocking acquire that polls, Options.Retry) says when the try that
// took the key began, so that the harness counts the lease from then: the
// key was set by that try, after it began, and a grant that came a while
// after the call began (the other tries were refused) is no late yes. The
// lock only says when each try begins; the harness stamps the moment on
// its own clock and keeps the last one before the grant.

type triedKey struct{}

// WithTried returns ctx with a hook that an Acquire under it calls as each
// of its tries begins, before the try's first command is sent.
func WithTried(ctx context.Context, hook func()) context.Context {
	return context.WithValue(ctx, triedKey{}, hook)
}

// NoteTry calls the hook of WithTried, if ctx has one.
func NoteTry(ctx context.Context) {
	if hook, ok := ctx.Value(triedKey{}).(func()); ok {
		hook()
	}
}

// Rounds tells the tries of one acquire apart by the commands a library
// sends, for one that tries within a call and takes no hook of deadbolt's
// (redsync, redlock-go): a try is a round of SET NX commands, one per
// master, after which a try short of a quorum gives the key back; the
// first SET NX after any other command (or none) begins a try. An
// adapter resets it as each acquire begins and tells it each command of
// the acquire; it is safe for the library's concurrent sends.
type Rounds struct {
	mu      sync.Mutex
	inRound bool
}

// Reset forgets the commands of an earlier call.
func (r *Rounds) Reset() {
	r.mu.Lock()
	r.inRound = false
	r.mu.Unlock()
}

// Sent is told each command of the acquire under ctx, before it is sent:
// setNX when it is a try's SET NX.
func (r *Rounds) Sent(ctx context.Context, setNX bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if setNX && !r.inRound {
		NoteTry(ctx)
	}
	r.inRound = setNX
}
