package cli

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// The docs are checked against the repository and the binary, so that
// what a reader follows exists: README.md stays short, every relative link
// resolves, every deadbolt command the README shows is one (with flags the
// command takes), architecture.md's "how to add" names files and
// registrations that exist, and the example scenario files parse.

// repoRoot is the repository's root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// maxReadmeLines is issue 28's bound: the README is a guide, not a notebook.
const maxReadmeLines = 300

func TestReadmeIsShort(t *testing.T) {
	text := readDoc(t, filepath.Join(repoRoot(t), "README.md"))
	if n := strings.Count(text, "\n"); n >= maxReadmeLines {
		t.Errorf("README.md has %d lines, want under %d: move detail to docs/guide.md or docs/reference.md", n, maxReadmeLines)
	}
}

var (
	fenced     = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	inlineCode = regexp.MustCompile("`[^`]+`")
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// prose is a document without its code blocks and code spans, where a
// bracket is no link.
func prose(text string) string {
	return inlineCode.ReplaceAllString(fenced.ReplaceAllString(text, ""), "")
}

// markdownFiles are README.md and every .md file under docs/.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestDocLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	if len(files) < 4 {
		t.Fatalf("found only %v: the docs moved?", files)
	}
	links := 0
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		for _, m := range mdLink.FindAllStringSubmatch(prose(readDoc(t, file)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file in the repository", rel, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") {
				if !anchors(readDoc(t, dest))[anchor] {
					t.Errorf("%s: link %q: no heading in %s has the anchor #%s", rel, target, filepath.Base(dest), anchor)
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative link found: the link pattern is broken")
	}
}

// anchors are the ids GitHub gives a document's headings: lower case,
// punctuation dropped, spaces as hyphens, "-1", "-2", ... on repeats.
func anchors(text string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fenced.ReplaceAllString(text, ""), -1) {
		id := slug(m[1])
		if n := seen[id]; n > 0 {
			ids[id+"-"+strconv.Itoa(n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestSlugIsGitHubs(t *testing.T) {
	for h, want := range map[string]string{
		"Running against a deployment: `--target FILE`":    "running-against-a-deployment---target-file",
		"Which server: Redis 7.0, Redis 8.0 or Valkey 8.1": "which-server-redis-70-redis-80-or-valkey-81",
		"Testing your own Go lock: dbtest":                 "testing-your-own-go-lock-dbtest",
		"How to add …":                                     "how-to-add-",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

// readmeCommand is `deadbolt NAME ...` (or bin/deadbolt) in a code span or
// block: the name, and the rest of its line.
var readmeCommand = regexp.MustCompile(`(?m)(?:^|[\s` + "`" + `(])(?:bin/)?deadbolt +([a-z][a-z-]*)([^` + "`" + `\n]*)`)

var flagInHelp = regexp.MustCompile(`(?m)^ +-([a-z][a-z0-9-]*)`)

func TestReadmeCommandsAreDeadboltsCommands(t *testing.T) {
	text := readDoc(t, filepath.Join(repoRoot(t), "README.md"))
	var code []string
	code = append(code, fenced.FindAllString(text, -1)...)
	code = append(code, inlineCode.FindAllString(fenced.ReplaceAllString(text, ""), -1)...)
	flagsOf := map[string]map[string]bool{}
	shown := 0
	for _, c := range code {
		for _, m := range readmeCommand.FindAllStringSubmatch(c, -1) {
			name, rest := m[1], m[2]
			shown++
			flags, ok := flagsOf[name]
			if !ok {
				// What the binary says: help NAME exits 0 for a command.
				var out, errOut bytes.Buffer
				if code := run(context.Background(), []string{"help", name}, &out, &errOut); code != exitOK {
					t.Errorf("README shows `deadbolt %s%s`, but deadbolt has no command %q (help exits %d: %s)", name, rest, name, code, errOut.String())
					flagsOf[name] = nil
					continue
				}
				flags = map[string]bool{}
				for _, f := range flagInHelp.FindAllStringSubmatch(out.String(), -1) {
					flags[f[1]] = true
				}
				flagsOf[name] = flags
			}
			if flags == nil {
				continue
			}
			for _, word := range strings.Fields(rest) {
				if f, ok := strings.CutPrefix(word, "--"); ok {
					f, _, _ = strings.Cut(f, "=")
					if !flags[f] {
						t.Errorf("README shows `deadbolt %s%s`: deadbolt %s has no flag --%s", name, rest, name, f)
					}
				}
			}
		}
	}
	if shown < 10 {
		t.Errorf("found %d deadbolt commands in README.md, want the CLI's examples: the pattern is broken", shown)
	}
}

// pathLike is a code span that names a file or directory of the
// repository: a slash, no spaces, no code.
var pathLike = regexp.MustCompile(`^[A-Za-z0-9_.<>-]+(/[A-Za-z0-9_.<>*-]*)+$`)

// howToAdd is architecture.md's "how to add" section.
func howToAdd(t *testing.T, root string) string {
	t.Helper()
	text := readDoc(t, filepath.Join(root, "docs", "architecture.md"))
	start := strings.Index(text, "\n## How to add")
	if start < 0 {
		t.Fatal(`docs/architecture.md has no "## How to add" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	return section
}

func TestArchitectureHowToAddNamesFilesThatExist(t *testing.T) {
	root := repoRoot(t)
	section := howToAdd(t, root)
	named := 0
	for _, span := range inlineCode.FindAllString(fenced.ReplaceAllString(section, ""), -1) {
		p := strings.Trim(span, "`")
		if !pathLike.MatchString(p) || strings.HasPrefix(p, "github.com/") {
			continue
		}
		named++
		// A placeholder (<name>, *) stands for a file to add: its
		// directory must exist.
		if i := strings.IndexAny(p, "<*"); i >= 0 {
			p = p[:strings.LastIndex(p[:i], "/")+1]
		}
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("architecture.md's \"how to add\" names %s, which does not exist", span)
		}
	}
	if named < 20 {
		t.Errorf("found %d paths in \"how to add\", want every step's files: the pattern is broken", named)
	}
}

// qualified is a code span that names a package's exported identifier:
// `nemesis.RegisterFault(FaultDecl{...})`, `locks.InDebate(name, row)`.
var qualified = regexp.MustCompile("^`([a-z]+)\\.([A-Z][A-Za-z0-9_]*)")

// registrations are what "how to add" must tell a reader to call: one per
// kind of thing added.
var registrations = []string{
	"locks.Register", "locks.InDebate", "checker.Register", "nemesis.RegisterFault",
	"nemesis.RegisterSchedule", "workloads.Register", "drivers.Register", "dbtest.Register",
}

func TestArchitectureHowToAddNamesRegistrationsThatExist(t *testing.T) {
	root := repoRoot(t)
	section := howToAdd(t, root)
	named := map[string]bool{}
	decls := map[string]map[string]bool{}
	for _, span := range inlineCode.FindAllString(fenced.ReplaceAllString(section, ""), -1) {
		m := qualified.FindStringSubmatch(span)
		if m == nil {
			continue
		}
		pkg, ident := m[1], m[2]
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			continue // not one of the repository's packages (a variable's field)
		}
		if _, ok := decls[pkg]; !ok {
			decls[pkg] = exported(t, filepath.Join(root, pkg))
		}
		named[pkg+"."+ident] = true
		if !decls[pkg][ident] {
			t.Errorf("architecture.md's \"how to add\" names %s, but package %s declares no %s", span, pkg, ident)
		}
	}
	for _, r := range registrations {
		if !named[r] {
			t.Errorf("architecture.md's \"how to add\" never names %s (as `%s(...)`): say how to register what it adds", r, r)
		}
	}
}

// exported are the exported top-level names a package's non-test files
// declare: functions, types, variables and constants.
func exported(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

var jsonBlock = regexp.MustCompile("(?ms)^```json\n(.*?)^```")

// Every scenario file the guide, the reference or architecture.md shows
// is one deadbolt reads: the field names, types and names in it are
// today's.
func TestDocScenarioExamplesParse(t *testing.T) {
	root := repoRoot(t)
	found := map[string]int{}
	for _, doc := range []string{"guide.md", "reference.md", "architecture.md"} {
		for _, m := range jsonBlock.FindAllStringSubmatch(readDoc(t, filepath.Join(root, "docs", doc)), -1) {
			if !strings.Contains(m[1], `"scenario"`) {
				continue
			}
			found[doc]++
			if _, err := scenarios.ParseFile([]byte(m[1])); err != nil {
				t.Errorf("docs/%s: an example scenario file does not parse: %v\n%s", doc, err, m[1])
			}
		}
	}
	for _, doc := range []string{"guide.md", "reference.md", "architecture.md"} {
		if found[doc] == 0 {
			t.Errorf("docs/%s shows no scenario file in a json block: the example moved, or the pattern is broken", doc)
		}
	}
}

// The reference's example is a suite file as it is: the doc says so.
func TestReferenceScenarioExampleIsASuiteFile(t *testing.T) {
	root := repoRoot(t)
	text := readDoc(t, filepath.Join(root, "docs", "reference.md"))
	m := regexp.MustCompile("A suite file, `(scenarios/suite/[a-z0-9-]+\\.json)`[^`]*(?:`[^`]*`[^`]*)*?```json\n((?s).*?)```").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("docs/reference.md has no \"A suite file, `scenarios/suite/NAME.json`\" example followed by its json block")
	}
	want := readDoc(t, filepath.Join(root, m[1]))
	if strings.TrimSpace(m[2]) != strings.TrimSpace(want) {
		t.Errorf("docs/reference.md's example is not %s as it is now: copy the file again", m[1])
	}
}
