package topology

import (
	"os/exec"
	"strings"
	"testing"
)

// topology is the vocabulary that a fault, a scenario file and the fake
// cluster share without Docker or a Redis client: it imports the standard
// library alone, and this keeps a new import from undoing that unnoticed.
func TestTopologyImportsOnlyTheStandardLibrary(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list the dependencies with: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list -deps: %v: %s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var other []string
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/deadbolt-lab/deadbolt/topology" {
			other = append(other, dep)
		}
	}
	if len(other) > 0 {
		t.Errorf("topology depends on %d packages outside the standard library: %s", len(other), strings.Join(other, ", "))
	}
}
