package scenarios

import (
	"embed"
	"fmt"
	"path"
	"strings"
)

// The registered scenarios are files, in the scenario.json schema,
// embedded so that the binary lists and runs them anywhere: suite/<name>.json
// are the failures of the Redlock debate, findings/<name>.json the bugs
// of real lock libraries, each reproduced at the versions it affects and
// passing at the version that fixed it (known.json has both). Adding one
// is adding a file (and its expectations to known.json); each
// directory's NOTES.md says why its scenarios are built as they are.
//
//go:embed suite/*.json findings/*.json
var suiteFiles embed.FS

func init() {
	for _, dir := range []string{"suite", "findings"} {
		entries, err := suiteFiles.ReadDir(dir)
		if err != nil {
			panic(err)
		}
		for _, e := range entries {
			b, err := suiteFiles.ReadFile(path.Join(dir, e.Name()))
			if err != nil {
				panic(err)
			}
			f, err := ParseFile(b)
			if err != nil {
				panic(fmt.Sprintf("scenarios: %s/%s: %v", dir, e.Name(), err))
			}
			if want := strings.TrimSuffix(e.Name(), ".json"); f.Scenario.Name != want {
				panic(fmt.Sprintf("scenarios: %s/%s names scenario %q: a scenario file is named after its scenario", dir, e.Name(), f.Scenario.Name))
			}
			if f.Seed != nil || f.Driver != nil || f.Target {
				panic(fmt.Sprintf("scenarios: %s/%s records a run (seed, driver command or target): a registered scenario is drawn anew each run", dir, e.Name()))
			}
			f.Scenario.Finding = dir == "findings"
			register(f.Scenario)
		}
	}
}
