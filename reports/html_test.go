package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReportPageJumpsToTheFirstAnomaly(t *testing.T) {
	dir, r := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", doubleHold(), "unsafe")
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	require.NoError(t, err)
	page := string(b)
	requireIn(t, page, `<span class="verdict invalid">invalid</span>`)
	requireIn(t, page, "expected <strong>unsafe</strong>: the result matches the expectation")
	jump := regexp.MustCompile(`<a id="first-anomaly" href="#([^"]+)">`).FindStringSubmatch(page)
	require.NotNil(t, jump, "a link to the first anomaly")
	requireIn(t, page, `<li id="`+jump[1]+`"><span class="kind">`+r.Anomalies[0].Kind+`</span>`, "its target is the first anomaly")
	require.Equal(t, len(r.Anomalies), strings.Count(page, `<li id="anomaly-`), "every anomaly listed")
	requireIn(t, page, `href="linearizability.html"`)
	requireIn(t, page, "no legal order for k")
	requireNotIn(t, page, "ZgotmplZ", "nothing the template refused to print")
	offline := strings.NewReplacer("http://www.w3.org/2000/svg", "", "http://www.w3.org/1999/xlink", "").Replace(page)
	for _, fetch := range []string{"http://", "https://", "src="} {
		requireNotIn(t, offline, fetch, "no network: the SVG namespaces aside, nothing is fetched")
	}
}

func TestReportPageOfALegalRunHasNoJump(t *testing.T) {
	dir, _ := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", legalLookAlike(), "safe")
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	require.NoError(t, err)
	requireNotIn(t, string(b), `id="first-anomaly"`)
	requireIn(t, string(b), `<span class="verdict valid">valid</span>`)
	requireIn(t, string(b), "every key (all legal)")
}

// A history whose last line a crash cut is drawn up to the cut, and the
// page says so.
func TestRerenderDrawsACutHistoryAndSaysSo(t *testing.T) {
	dir, _ := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", doubleHold(), "unsafe")
	path := filepath.Join(dir, HistoryFile)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"index":20,"time":3100000000,"type":"inv`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, HTMLFile)))

	r, err := Rerender(dir)
	require.NoError(t, err)
	require.Equal(t, "s", r.Scenario)
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	require.NoError(t, err)
	requireIn(t, string(b), "The history's last line was cut")
	requireIn(t, string(b), `class="overlap"`)
}

func TestRerenderRefusesWhatIsNotARun(t *testing.T) {
	_, err := Rerender(filepath.Join(t.TempDir(), "nope"))
	require.Error(t, err)
	_, err = Rerender(t.TempDir())
	require.ErrorContains(t, err, "is not a finished run's directory")
	dir, _ := runDir(t, t.TempDir(), "s", "20260101T000000.000Z", doubleHold(), "unsafe")
	require.NoError(t, os.WriteFile(filepath.Join(dir, HistoryFile), []byte("{\"index\":0}\nnot json\n"), 0o644))
	_, err = Rerender(dir)
	require.ErrorContains(t, err, HistoryFile)
}

func TestStoreRootOfARunDirectory(t *testing.T) {
	root := t.TempDir()
	dir, r := runDir(t, root, "s", "20260101T000000.000Z", legalLookAlike(), "safe")
	want, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	require.Equal(t, want, StoreRoot(dir, r))
	require.NoError(t, os.Symlink(filepath.Join("s", "20260101T000000.000Z"), filepath.Join(root, "latest")))
	require.Equal(t, want, StoreRoot(filepath.Join(root, "latest"), r), "store/latest resolves to its run")
	r.Scenario = "other"
	require.Equal(t, "", StoreRoot(dir, r), "not in <scenario>/<time>")
}

// requireIn is require.Contains without printing a whole page on failure.
func requireIn(t *testing.T, page, want string, msg ...any) {
	t.Helper()
	if !strings.Contains(page, want) {
		t.Fatalf("the page lacks %q %v", want, msg)
	}
}

func requireNotIn(t *testing.T, page, unwanted string, msg ...any) {
	t.Helper()
	if i := strings.Index(page, unwanted); i >= 0 {
		t.Fatalf("the page has %q at ...%s... %v", unwanted, page[max(0, i-80):min(len(page), i+80)], msg)
	}
}
