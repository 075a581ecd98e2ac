package explore

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/nemesis"
)

// The exploration's reports, in its directory.
const (
	JSONFile     = "explore.json"
	MarkdownFile = "explore.md"
	HTMLFile     = "explore.html"
)

//go:embed explore.html.tmpl
var htmlTemplate string

// writeReport writes explore.json, explore.md and explore.html.
func writeReport(rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(rep.Dir, JSONFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	Markdown(&md, rep)
	if err := os.WriteFile(filepath.Join(rep.Dir, MarkdownFile), []byte(md.String()), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(rep.Dir, HTMLFile))
	if err != nil {
		return err
	}
	defer f.Close()
	return HTML(f, rep)
}

// ReadReport reads an exploration's explore.json.
func ReadReport(dir string) (*Report, error) {
	b, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, JSONFile), err)
	}
	return &r, nil
}

// Summary says in a line what the exploration found.
func Summary(rep *Report) string {
	against := ""
	if rep.Against != "" {
		against = " against " + rep.Against
	}
	runs := 0
	for _, sc := range rep.Scenarios {
		runs += len(sc.Runs)
	}
	s := fmt.Sprintf("%s%s: %s (%s) in %s, %s, %s", rep.Lock, against, checker.Plural(len(rep.Scenarios), "scenario"), checker.Plural(runs, "run"),
		time.Duration(rep.ExploreS*float64(time.Second)).Round(time.Second), checker.Plural(len(rep.Findings), "finding"), checker.PluralAs(rep.Unknown, "run without a verdict", "runs without a verdict"))
	if rep.NotApplicable > 0 {
		s += fmt.Sprintf(", %s showed what they aimed at cannot arise for the lock", checker.Plural(rep.NotApplicable, "run"))
	}
	if rep.Undecided {
		s += ": too many runs reached no verdict to say"
	}
	return s
}

// Markdown writes the exploration as text: the findings with their files
// and replay lines, the differences, the coverage table, every scenario.
func Markdown(w io.Writer, rep *Report) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("# deadbolt explore: %s", rep.Lock)
	p("")
	p("%s.", Summary(rep))
	p("")
	p("Seed %d, started %s; generated from what %s declares: %s.", rep.Seed, rep.Started, rep.Lock, offerWords(rep.Offer))
	if rep.Refused > 0 {
		p("%s drawn the lock could not run were drawn again.", checker.Plural(rep.Refused, "scenario"))
	}
	p("")
	p("## Findings")
	p("")
	if len(rep.Findings) == 0 {
		p("None: no generated scenario broke %s%s.", rep.Lock, map[bool]string{true: " or " + rep.Against + " alone", false: ""}[rep.Against != ""])
	}
	for i, f := range rep.Findings {
		p("%d. **%s** breaks `%s`%s (run %d, %s)", i+1, f.Anomaly, f.Lock, againstWords(f.Against), f.Scenario, aimWords(f.Aim))
		p("   - anomalies: %s", kindsOf(f.Anomalies))
		if len(f.Like) > 0 {
			p("   - the same in runs %v", f.Like)
		}
		switch {
		case f.Shrink == nil:
			p("   - not shrunk (only the first findings that break the lock on every seed are)")
		case !f.Shrink.Confirmed:
			p("   - not confirmed: on seeds %v %s gave %s; not shrunk", f.Shrink.Seeds, lastTried(f.Shrink), ReplayWords(f.Shrink.Replays))
		case f.Shrink.Amplified != "":
			p("   - broke it on every seed with %s; shrunk in %s (%d candidates): %s", f.Shrink.Amplified, checker.Plural(f.Shrink.Runs, "run"), candidates(f.Shrink), ReplayWords(f.Shrink.Replays))
		default:
			p("   - shrunk in %s (%d candidates): %s", checker.Plural(f.Shrink.Runs, "run"), candidates(f.Shrink), ReplayWords(f.Shrink.Replays))
		}
		p("   - file: `%s`", f.File)
		if f.Writeup != "" {
			p("   - write-up: `%s`", f.Writeup)
		}
		p("   - replay: `%s`", f.Replay)
	}
	if rep.Against != "" {
		p("")
		p("## How %s and %s differ", rep.Lock, rep.Against)
		p("")
		if len(rep.Differences) == 0 {
			p("No scenario told them apart.")
		}
		for _, d := range rep.Differences {
			p("- run %d (%s / %s): %s", d.Scenario, d.Verdicts[0], d.Verdicts[1], d.How)
		}
	}
	p("")
	p("## Coverage: which fault struck which call")
	p("")
	p("| call | fault | family | drawn | runs | struck | runs with no strike | broke | no verdict |")
	p("|---|---|---|---|---|---|---|---|---|")
	for _, c := range rep.Coverage {
		call := c.Call
		if call == "" {
			call = "(random moments)"
		}
		p("| %s | %s | %s | %d | %d | %d | %d | %d | %d |", call, c.Fault, c.Family, c.Drawn, c.Runs, c.Struck, c.Unstruck, c.Broke, c.Unknown)
	}
	p("")
	p("## Scenarios")
	p("")
	p("| run | aim | file | verdicts |")
	p("|---|---|---|---|")
	for _, sc := range rep.Scenarios {
		var vs []string
		for _, r := range sc.Runs {
			v := r.Lock + ": " + r.Verdict
			if len(r.Anomalies) > 0 {
				v += " (" + kindsOf(r.Anomalies) + ")"
			}
			vs = append(vs, v)
		}
		if sc.Against != "" {
			vs = append(vs, rep.Against+": cannot run it")
		}
		p("| %d | %s at %s (%s) | `%s` | %s |", sc.Index, sc.Aim.Fault, callWords(sc.Aim.Call), sc.Aim.Family, sc.File, strings.Join(vs, "; "))
	}
}

func callWords(c string) string {
	if c == "" {
		return "random moments"
	}
	return c
}

// ReplayWords says what each lock gave: "lock invalid 3/3; other valid 3/3".
func ReplayWords(r map[string]string) string {
	var parts []string
	for _, l := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, l+" "+r[l])
	}
	return strings.Join(parts, "; ")
}

// offerWords says what a lock declared.
func offerWords(o Offer) string {
	var places []string
	for _, p := range o.Places {
		places = append(places, p.String())
	}
	parts := []string{"runs on " + strings.Join(places, ", ")}
	if len(o.Calls) > 0 {
		parts = append(parts, "offers "+strings.Join(o.Calls, " and "))
	}
	for _, c := range []struct {
		on   bool
		says string
	}{{o.Renews, "renews its leases itself"}, {o.Reentrant, "re-enters"}, {o.Queues, "queues waiters"}, {o.Fencing, "hands out fencing tokens"},
		{o.Resends, "its client sends a timed-out command again"}} {
		if c.on {
			parts = append(parts, c.says)
		}
	}
	if len(o.Points) > 0 {
		parts = append(parts, "stops at "+strings.Join(o.Points, ", "))
	}
	return strings.Join(parts, "; ")
}

// HTML writes explore.html: one self-contained page of the same, each run
// linked to its report.html.
func HTML(w io.Writer, rep *Report) error {
	t, err := template.New("explore").Funcs(template.FuncMap{
		"summary": Summary, "kinds": kindsOf, "aim": aimWords, "call": callWords, "replays": ReplayWords,
		"offer": offerWords, "report": func(dir string) string { return filepath.ToSlash(filepath.Join(dir, "report.html")) },
		"rel": func(path string) string {
			if r, err := filepath.Rel(rep.Dir, path); err == nil && !strings.HasPrefix(r, "..") {
				return filepath.ToSlash(r)
			}
			return path
		},
	}).Parse(htmlTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, rep)
}

// stepWhen says when a step strikes and for how long.
func stepWhen(st nemesis.Step, ttl time.Duration, first bool) string {
	var parts []string
	if st.Key != "" && strings.HasPrefix(st.Target, "holder") {
		on := st.On
		if on == "" {
			on = "acquire"
		}
		parts = append(parts, fmt.Sprintf(" the moment it holds it (at its %s)", on))
	}
	if st.WaitKey != "" {
		if st.Aim != nemesis.AimNone {
			parts = append(parts, fmt.Sprintf(", then client %d's acquire of %s under it", st.WaitSlot, st.WaitKey))
		} else {
			parts = append(parts, fmt.Sprintf(" once client %d holds %s", st.WaitSlot, st.WaitKey))
		}
	}
	if st.Point != "" {
		parts = append(parts, " stopped at the lock's point "+st.Point)
	}
	switch {
	case st.After > 0 && first:
		parts = append(parts, fmt.Sprintf(", %s into the fault phase", st.After))
	case st.After > 0:
		parts = append(parts, fmt.Sprintf(", %s after the previous step struck", st.After))
	}
	if d := st.For + time.Duration(st.TTLs)*ttl; d > 0 {
		parts = append(parts, fmt.Sprintf(", for %s", d))
	}
	if st.By != 0 {
		parts = append(parts, fmt.Sprintf(", by %s", st.By))
	}
	switch st.Until {
	case nemesis.UntilHandoff:
		parts = append(parts, ", ending only once another client is granted the key")
	case nemesis.UntilFailover:
		parts = append(parts, ", held until another node is master")
	}
	if st.Strikes > 0 {
		parts = append(parts, fmt.Sprintf(", up to %d requests in a row", st.Strikes))
	}
	return strings.Join(parts, "")
}

// lastTried names what an unconfirmed finding's replays are of: the
// scenario as generated, or the last stronger version tried.
func lastTried(sh *Shrunk) string {
	if n := len(sh.Trials); n > 1 {
		return "the scenario with " + sh.Trials[n-1].Change
	}
	return "the scenario as generated"
}

// candidates is how many simpler scenarios a confirmed shrink tried: the
// trials after the one that confirmed it (the scenario as generated, or
// the stronger version kept).
func candidates(sh *Shrunk) int {
	for i, t := range sh.Trials {
		if t.Kept {
			return len(sh.Trials) - i - 1
		}
	}
	return 0
}
