package nemesis_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A fault written outside deadbolt imports nemesis: that must not bring in
// Docker or a Redis client. Cluster, Node and Clients are interfaces the
// run's own wiring satisfies (scenarios), and this keeps a new import from
// undoing that unnoticed.
func TestNemesisImportsNoDockerNorRedisClient(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list the dependencies with: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list -deps: %v: %s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var bad []string
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"testcontainers", "docker", "moby", "go-redis"} {
			if strings.Contains(dep, banned) {
				bad = append(bad, dep)
				break
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("nemesis depends on %d Docker or go-redis packages, among them %s", len(bad), strings.Join(bad[:min(len(bad), 5)], ", "))
	}
}
