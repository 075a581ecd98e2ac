package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// SuiteRun is one scenario of a suite for the JUnit file: its results, or
// the error that left it without any.
type SuiteRun struct {
	Name    string
	Results *Results
	Err     error
}

// The JUnit XML schema as CI systems read it (Jenkins, GitLab, GitHub
// actions' reporters): one testsuite, one testcase per scenario.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitSkipped marks a case neither passed nor failed: a lock nobody has
// judged under the failure (CI systems show it apart from both).
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes the suite as JUnit XML. A verdict that contradicts its
// expectation is a failure; an unknown verdict, an unhealthy cluster or a
// run that reached no verdict is an error (the run could not tell). A run
// of a lock nobody has judged under its failure is skipped, with its
// verdict in the message. Each carries the reason and the first anomaly of
// each kind.
func WriteJUnit(w io.Writer, runs []SuiteRun, started time.Time, took time.Duration) error {
	suite := junitSuite{Name: "deadbolt scenarios", Tests: len(runs), Time: fmt.Sprintf("%.3f", took.Seconds()),
		Timestamp: started.UTC().Format("2006-01-02T15:04:05")}
	for _, run := range runs {
		c := junitCase{Name: run.Name, Classname: "deadbolt.scenario"}
		r := run.Results
		switch {
		case run.Err != nil:
			c.Error = &junitProblem{Message: "no verdict: " + run.Err.Error(), Type: "no-verdict", Text: run.Err.Error()}
		case r == nil:
			c.Error = &junitProblem{Message: "no verdict", Type: "no-verdict"}
		default:
			c.Time = fmt.Sprintf("%.3f", r.DurationS)
			c.SystemOut = fmt.Sprintf("lock %s, server %s, workload %s, nemesis %s, seed %d: verdict %s, expected %s.\n%s\nreport: %s/%s\nre-run: %s\n",
				r.Lock, orNone(r.Server.String()), r.Workload, r.Nemesis, r.Seed, r.Verdict, r.Expected, r.Reason, r.Dir, HTMLFile, RerunCommand(r))
			text := r.Reason
			if ev := FirstOfEach(r, 5); len(ev) > 0 {
				text += "\n" + strings.Join(ev, "\n")
			}
			msg := fmt.Sprintf("verdict %s, expected %s: %s", r.Verdict, r.Expected, r.Reason)
			switch {
			case r.Undecided():
				c.Error = &junitProblem{Message: msg, Type: "unknown", Text: text}
			case r.Unjudged():
				c.Skipped = &junitSkipped{Message: fmt.Sprintf("not judged: nobody has judged lock %s under this failure yet; verdict %s: %s", r.Lock, r.Verdict, r.Reason)}
			case !r.Matches:
				c.Failure = &junitProblem{Message: msg, Type: "contradicts-expectation", Text: text}
			case r.Health != "ok":
				msg = "the cluster failed its final health check: " + r.Health
				c.Error = &junitProblem{Message: msg, Type: "unhealthy", Text: msg}
			}
		}
		if c.Failure != nil {
			suite.Failures++
		}
		if c.Error != nil {
			suite.Errors++
		}
		if c.Skipped != nil {
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
	}
	return encodeJUnit(w, suite)
}

// encodeJUnit writes one suite as a JUnit document.
func encodeJUnit(w io.Writer, suite junitSuite) error {
	doc := junitSuites{Name: suite.Name, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
