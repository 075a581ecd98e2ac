package reports

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// IndexFile is the store's list of every run, at the store's root.
const IndexFile = "index.html"

// RunDirTime is the layout of a run directory's name (store/<scenario>/<time>).
const RunDirTime = "20060102T150405.000Z"

// indexMu serializes rebuilds within a process: runs of one suite finish
// at once, and a rebuild that listed the store before another run wrote
// its results must not land last.
var indexMu sync.Mutex

// indexPage is what templates/index.html shows.
type indexPage struct {
	Runs []indexRow
	// Unjudged counts runs of a lock nobody has judged under their
	// failure: neither passes nor failures.
	Pass, Fail, Unjudged int
	// Unfinished counts run directories without results.json (a run
	// interrupted or still going); Unreadable names those whose
	// results.json could not be read.
	Unfinished int
	Unreadable []string
	// Attention lists, newest first, the runs a reader opens the page for:
	// those whose verdict missed the expectation or is unknown.
	Attention []indexRow
}

type indexRow struct {
	R      *Results
	Path   string // relative to the store's root, with slashes
	Time   string
	Damage string
	HTML   bool
	when   time.Time
}

// WriteIndex rebuilds root/index.html from every run in the store:
// root/<scenario>/<time>/results.json.
func WriteIndex(root string) error {
	indexMu.Lock()
	defer indexMu.Unlock()
	page, err := scanStore(root)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "index.html", page); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(root, IndexFile), b.Bytes())
}

// storedRun is one run's directory in a store: <scenario>/<time>.
type storedRun struct {
	Rel  string // relative to the store's root
	When time.Time
}

// runDirs lists the store's run directories.
func runDirs(root string) ([]storedRun, error) {
	scenarios, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []storedRun
	for _, sc := range scenarios {
		// store/latest is a link to a run listed under its scenario.
		if !sc.IsDir() {
			continue
		}
		runs, err := os.ReadDir(filepath.Join(root, sc.Name()))
		if err != nil {
			return nil, err
		}
		for _, run := range runs {
			when, err := time.Parse(RunDirTime, run.Name())
			if !run.IsDir() || err != nil {
				continue // not a run directory (store/bench's files, say)
			}
			out = append(out, storedRun{Rel: filepath.Join(sc.Name(), run.Name()), When: when})
		}
	}
	return out, nil
}

func scanStore(root string) (indexPage, error) {
	var page indexPage
	dirs, err := runDirs(root)
	if err != nil {
		return page, err
	}
	for _, rd := range dirs {
		rel, when := rd.Rel, rd.When
		dir := filepath.Join(root, rel)
		r, err := ReadResults(filepath.Join(dir, ResultsFile))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			page.Unfinished++
			continue
		case err != nil:
			page.Unreadable = append(page.Unreadable, filepath.ToSlash(rel))
			continue
		}
		_, herr := os.Stat(filepath.Join(dir, HTMLFile))
		page.Runs = append(page.Runs, indexRow{R: r, Path: filepath.ToSlash(rel), Time: when.Format("2006-01-02 15:04:05"),
			Damage: Damage(r), HTML: herr == nil, when: when})
		switch r.Outcome() {
		case "PASS":
			page.Pass++
		case "FAIL":
			page.Fail++
		default:
			page.Unjudged++
		}
	}
	sort.SliceStable(page.Runs, func(i, j int) bool {
		a, b := page.Runs[i], page.Runs[j]
		if !a.when.Equal(b.when) {
			return a.when.After(b.when)
		}
		return a.Path < b.Path
	})
	for _, row := range page.Runs {
		if row.R.Outcome() == "FAIL" || row.R.Verdict == string(checker.Unknown) {
			page.Attention = append(page.Attention, row)
		}
	}
	return page, nil
}
