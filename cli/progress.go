package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// How often the progress shows: redrawn in place on a terminal, a plain
// line each plainEvery elsewhere (a CI log should not get one a second).
const (
	liveEvery  = time.Second
	plainEvery = 10 * time.Second
)

// status owns stderr while runs go: their log lines, and their progress
// (reports.Progress) as one line redrawn with \r on a terminal, or as
// plain lines now and then otherwise.
type status struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	width func() int // the terminal's columns, 0 when unknown
	runs  []*reports.Progress
	// feeds read each run's recorder from an index on.
	feeds map[*reports.Progress]func(from int) []history.Op
	// drawn is whether a live line is on screen now.
	drawn     bool
	lastPlain time.Time
	stop      chan struct{}
	stopped   sync.WaitGroup
}

// newStatus writes to w, with the live line only when w is a terminal, and
// redraws until close.
func newStatus(w io.Writer) *status {
	s := newStatusTo(w, false, nil)
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.tty = true
		s.width = func() int {
			cols, _, err := term.GetSize(int(f.Fd()))
			if err != nil {
				return 0
			}
			return cols
		}
	}
	s.stopped.Add(1)
	go s.loop()
	return s
}

// newStatusTo is a status without its clock, for tests that call tick.
func newStatusTo(w io.Writer, tty bool, width func() int) *status {
	if width == nil {
		width = func() int { return 0 }
	}
	return &status{w: w, tty: tty, width: width, feeds: map[*reports.Progress]func(int) []history.Op{}, stop: make(chan struct{})}
}

func (s *status) loop() {
	defer s.stopped.Done()
	t := time.NewTicker(liveEvery)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			s.tick(now)
		case <-s.stop:
			return
		}
	}
}

// close stops the redraws and leaves the terminal on a clean line.
func (s *status) close() {
	close(s.stop)
	s.stopped.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
}

// attach routes a run's log lines and progress through s.
func (s *status) attach(o *scenarios.RunOptions) {
	o.Log = s.logf
	o.Progress = s.watch
}

// logf prints one log line, above the live line when there is one.
func (s *status) logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
	fmt.Fprintf(s.w, format+"\n", args...)
	s.drawLocked()
}

// watch follows a run's workload until the returned func is called.
func (s *status) watch(l scenarios.Live) func() {
	p := reports.NewProgress(l.Scenario, l.Started, l.Time)
	p.Settle, p.Origin = l.Settle, l.Rec.At(l.Started)
	s.mu.Lock()
	s.runs = append(s.runs, p)
	s.feeds[p] = l.Rec.OpsFrom
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, r := range s.runs {
			if r == p {
				s.runs = append(s.runs[:i], s.runs[i+1:]...)
				break
			}
		}
		delete(s.feeds, p)
		s.clearLocked()
		s.drawLocked()
	}
}

// tick reads what every run recorded since the last tick and shows it.
func (s *status) tick(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.runs {
		p.Add(s.feeds[p](p.Next()))
	}
	if s.tty {
		s.clearLocked()
		s.drawAtLocked(now)
		return
	}
	if len(s.runs) == 0 || now.Sub(s.lastPlain) < plainEvery {
		return
	}
	s.lastPlain = now
	for _, p := range s.runs {
		fmt.Fprintf(s.w, "progress: %s\n", p.Line(now))
	}
}

func (s *status) drawLocked() { s.drawAtLocked(time.Now()) }

// drawAtLocked writes the live line: every running run's progress, cut
// to the terminal's width so that \r returns to its start.
func (s *status) drawAtLocked(now time.Time) {
	if !s.tty || len(s.runs) == 0 {
		return
	}
	lines := make([]string, len(s.runs))
	for i, p := range s.runs {
		lines[i] = p.Line(now)
	}
	line := strings.Join(lines, " | ")
	if w := s.width(); w > 1 && len([]rune(line)) >= w {
		line = string([]rune(line)[:w-1])
	}
	fmt.Fprint(s.w, line)
	s.drawn = true
}

// clearLocked erases the live line, if one is drawn.
func (s *status) clearLocked() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
}
