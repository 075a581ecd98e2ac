package scenarios

import (
	"embed"
	"fmt"
	"path"
	"strings"
)

// The registered scenarios are files: suite/<name>.json, in the
// scenario.json schema, embedded so that the binary lists and runs them
// anywhere. Adding one is adding a file (and its expectation to
// known.json); suite/NOTES.md says why the existing ones are built as
// they are.
//
//go:embed suite/*.json
var suiteFiles embed.FS

func init() {
	entries, err := suiteFiles.ReadDir("suite")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := suiteFiles.ReadFile(path.Join("suite", e.Name()))
		if err != nil {
			panic(err)
		}
		f, err := ParseFile(b)
		if err != nil {
			panic(fmt.Sprintf("scenarios: suite/%s: %v", e.Name(), err))
		}
		if want := strings.TrimSuffix(e.Name(), ".json"); f.Scenario.Name != want {
			panic(fmt.Sprintf("scenarios: suite/%s names scenario %q: a suite file is named after its scenario", e.Name(), f.Scenario.Name))
		}
		if f.Seed != nil || f.Driver != nil || f.Target {
			panic(fmt.Sprintf("scenarios: suite/%s records a run (seed, driver command or target): a suite scenario is drawn anew each run", e.Name()))
		}
		register(f.Scenario)
	}
}
