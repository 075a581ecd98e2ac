package conformance

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// T is what the suite needs of a test: go test's *testing.T (Testing), or
// a Recorder for `deadbolt conformance`. A failed require stops the step
// (FailNow), as in go test.
type T interface {
	require.TestingT
	Helper()
	Name() string
	Failed() bool
	Cleanup(func())
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	// Run runs f as a named step and reports whether it passed.
	Run(name string, f func(T)) bool
}

// Testing adapts go test's T.
func Testing(t *testing.T) T { return testingT{t} }

type testingT struct{ *testing.T }

func (t testingT) Run(name string, f func(T)) bool {
	return t.T.Run(name, func(t *testing.T) { f(testingT{t}) })
}

// Recorder runs the suite outside go test and keeps every step's outcome.
type Recorder struct {
	name    string
	step    string // the step's path of names, as the report shows it
	mu      sync.Mutex
	failed  bool
	errs    []string
	logs    []string
	cleanup []func()
	// Steps are the outcomes of Run's steps, in order, subtests included.
	Steps *[]Step
}

// Step is one named rule of the suite and what went wrong, if anything.
type Step struct {
	Name   string
	Passed bool
	// Errors are the failed checks' messages (testify's, with the rule's
	// own words); Logs what the step logged (the driver's stderr on failure).
	Errors []string
	Logs   []string
}

// NewRecorder is the root of a suite's run.
func NewRecorder(name string) *Recorder { return &Recorder{name: name, Steps: &[]Step{}} }

func (r *Recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.errs = append(r.errs, readable(fmt.Sprintf(format, args...)))
}

// readable keeps what a driver's author needs of a testify failure (what
// was expected, what came, the rule's words), without the Go stack trace
// and test name.
func readable(msg string) string {
	var keep []string
	trace := false
	for _, l := range strings.Split(msg, "\n") {
		field := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(field, "Error Trace:"):
			trace = true
			continue
		case strings.HasPrefix(field, "Test:"):
			trace = false
			continue
		case strings.HasPrefix(field, "Error:"), strings.HasPrefix(field, "Messages:"):
			trace = false
		}
		if !trace && field != "" {
			keep = append(keep, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(keep, "\n")
}

// FailNow ends the step's goroutine, as testing.T's does.
func (r *Recorder) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *Recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.FailNow()
}

func (r *Recorder) Helper()      {}
func (r *Recorder) Name() string { return r.name }

func (r *Recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *Recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanup = append(r.cleanup, f)
}

func (r *Recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

// Run runs f on a goroutine of its own (FailNow ends it), then its
// cleanups, last first, and records the step.
func (r *Recorder) Run(name string, f func(T)) bool {
	sub := &Recorder{name: r.name + "/" + strings.ReplaceAll(name, " ", "_"), step: name, Steps: r.Steps}
	if r.step != "" {
		sub.step = r.step + "/" + name
	}
	at := len(*r.Steps)
	*r.Steps = append(*r.Steps, Step{Name: sub.step})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(sub)
	}()
	<-done
	sub.Finish()
	s := &(*r.Steps)[at]
	s.Passed, s.Errors, s.Logs = !sub.Failed(), sub.errs, sub.logs
	if !s.Passed {
		r.Errorf("%s failed", name)
	}
	return s.Passed
}

// Finish runs the cleanups registered on r, last first.
func (r *Recorder) Finish() {
	r.mu.Lock()
	fs := r.cleanup
	r.cleanup = nil
	r.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		done := make(chan struct{})
		go func() { // a cleanup's FailNow ends only its goroutine
			defer close(done)
			fs[i]()
		}()
		<-done
	}
}
