package reports_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/client/clienttest"
	"github.com/deadbolt-lab/deadbolt/cluster/clustertest"
	"github.com/deadbolt-lab/deadbolt/reports"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// The run's client processes are this test binary (clienttest).
func TestMain(m *testing.M) { clienttest.Main(m) }

// chromium finds Debian's chromium (installed by `make test-deps`): a test
// without it skips, except under CI=true.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but chromium is needed: run make test-deps")
	}
	t.Skip("skipping: needs chromium (make test-deps installs it)")
	return ""
}

// browser is one headless Chromium for a test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // the test may run as root, which the sandbox refuses
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	_, err := chromedp.Run(ctx, chromedp.Func(func(context.Context, *chromedp.Target) error { return nil }))
	require.NoError(t, err, "start chromium")
	return ctx
}

// opened is a page as the browser showed it.
type opened struct {
	// Errors are every console error, uncaught exception and error the
	// browser logged (a resource that failed to load, say).
	Errors []string
	PNG    []byte
}

// open loads the file in a fresh tab of b, runs then on it (a nil then does
// nothing), and returns what went wrong and a full-page screenshot.
func open(t *testing.T, b context.Context, path string, then func(ctx context.Context) error) opened {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b)
	defer cancel()
	var mu sync.Mutex
	var out opened
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		out.Errors = append(out.Errors, fmt.Sprintf(format, args...))
	}
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				report("console.%s: %s", e.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			report("uncaught: %s", (&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error())
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				report("%s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
			}
		}
	}))
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	tctx, tcancel := context.WithTimeout(ctx, time.Minute)
	defer tcancel()
	_, err = chromedp.Call(tctx, cdplog.Enable, struct{}{})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(tctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady(chromedp.CSS("body"))))
	if then != nil {
		require.NoError(t, then(tctx))
	}
	// A round trip after the page ran: the events it caused came before
	// the reply, and Listen saw them in order.
	_, err = chromedp.Run(tctx, chromedp.Evaluate[bool]("true"))
	require.NoError(t, err)
	out.PNG, err = chromedp.Run(tctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	if dir := os.Getenv("DEADBOLT_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(path)+".png"), out.PNG, 0o644))
	}
	mu.Lock()
	defer mu.Unlock()
	return out
}

// blank says why a screenshot shows nothing, or "" when it shows a page:
// at least 2% of its pixels are not the background and it has some colours.
func blank(t *testing.T, shot []byte) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	bg := img.At(0, 0)
	colors := map[[3]uint32]bool{}
	inked, all := 0, 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			all++
			c := img.At(x, y)
			r, g, b, _ := c.RGBA()
			colors[[3]uint32{r >> 12, g >> 12, b >> 12}] = true
			if c != bg {
				inked++
			}
		}
	}
	switch {
	case inked*50 < all:
		return fmt.Sprintf("%d of %d pixels differ from the background", inked, all)
	case len(colors) < 4:
		return fmt.Sprintf("only %d colours", len(colors))
	}
	return ""
}

func count(ctx context.Context, selector string) (int, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", selector)))
}

// The checks themselves can fail: a page that throws, one that logs a
// console error, one whose resource is missing, and a blank one are each
// caught; a page that only logs is not.
func TestBrowserChecksCatchBrokenPages(t *testing.T) {
	b := browser(t)
	dir := t.TempDir()
	page := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>t</title></head><body>"+body+"</body></html>"), 0o644))
		return p
	}
	text := "<h1>A heading</h1><p style=\"color:#c0392b;background:#e3f4e6;font-size:40px\">" + strings.Repeat("some words in colour ", 40) + "</p>"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"throws.html", text + "<script>undefinedFunction();</script>", "undefinedFunction"},
		{"console-error.html", text + "<script>console.error('boom');</script>", "console.error: \"boom\""},
		{"missing.html", text + "<img src=\"missing.png\" alt=\"\">", "missing.png"},
	} {
		got := open(t, b, page(tc.name, tc.body), nil)
		require.NotEmpty(t, got.Errors, tc.name)
		require.Contains(t, strings.Join(got.Errors, "\n"), tc.want, tc.name)
	}
	fine := open(t, b, page("fine.html", text+"<script>console.log('fine');</script>"), nil)
	require.Empty(t, fine.Errors)
	require.Empty(t, blank(t, fine.PNG))
	empty := open(t, b, page("blank.html", ""), nil)
	require.Empty(t, empty.Errors)
	require.NotEmpty(t, blank(t, empty.PNG), "a blank page is caught")
}

// A real run of failover-simple: its report.html and the store's index.html
// open with no console error, show the timeline with the fault band and the
// red double holds, and the two plots.
func TestReportAndIndexOfARealRunOpenInChromium(t *testing.T) {
	b := browser(t)
	clustertest.RequireDocker(t)
	store := t.TempDir()
	s, err := scenarios.Get("failover-simple")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := s.Run(ctx, scenarios.RunOptions{Seed: 1, Store: store, Driver: clienttest.Command(), Log: t.Logf})
	require.NoError(t, err)
	require.Greater(t, res.Metric("double_holds"), int64(0), "failover-simple found its double holds (its expectation)")

	page := filepath.Join(store, "latest", reports.HTMLFile)
	var overlaps, faults, plots, lanes int
	var widths [2]string
	got := open(t, b, page, func(ctx context.Context) error {
		var err error
		if overlaps, err = count(ctx, "#timeline rect.overlap"); err != nil {
			return err
		}
		if faults, err = count(ctx, "#timeline rect.fault"); err != nil {
			return err
		}
		if plots, err = count(ctx, "svg.plot"); err != nil {
			return err
		}
		if lanes, err = count(ctx, "svg.lanes text"); err != nil {
			return err
		}
		// The zoom works: the timeline doubles in width.
		w := `document.getElementById("timeline").getAttribute("width")`
		if widths[0], err = chromedp.Run(ctx, chromedp.Evaluate[string](w)); err != nil {
			return err
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#zoom-in"))); err != nil {
			return err
		}
		widths[1], err = chromedp.Run(ctx, chromedp.Evaluate[string](w))
		return err
	})
	require.Empty(t, got.Errors, "report.html")
	require.Empty(t, blank(t, got.PNG), "report.html")
	require.Equal(t, 2*int(res.Metric("double_holds")), overlaps, "each double hold in red on both holders' lanes")
	require.GreaterOrEqual(t, faults, 1, "the isolation's band")
	require.Equal(t, 2, plots, "latency and throughput")
	require.Greater(t, lanes, res.Clients, "a lane per client process, and the faults and anomalies rows")
	require.NotEqual(t, widths[0], widths[1], "zoom in widened the timeline")

	var rows int
	got = open(t, b, filepath.Join(store, reports.IndexFile), func(ctx context.Context) error {
		var err error
		rows, err = count(ctx, `a[href$="/report.html"]`)
		return err
	})
	require.Empty(t, got.Errors, "index.html")
	require.Empty(t, blank(t, got.PNG), "index.html")
	require.Equal(t, 1, rows, "the run, linked")
}
