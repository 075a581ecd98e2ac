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
	if bad := depsMatching(t, ".", "testcontainers", "docker", "moby", "go-redis"); len(bad) > 0 {
		t.Errorf("nemesis depends on %d Docker or go-redis packages, among them %s", len(bad), strings.Join(bad[:min(len(bad), 5)], ", "))
	}
}

// The fake cluster is how a team outside deadbolt tests its fault or
// workload without Docker: importing it must not bring Docker in. It
// keeps go-redis, which its nodes' clients and endpoints speak.
func TestNemesistestImportsNoDocker(t *testing.T) {
	if bad := depsMatching(t, "./nemesistest", "testcontainers", "docker", "moby"); len(bad) > 0 {
		t.Errorf("nemesistest depends on %d Docker packages, among them %s", len(bad), strings.Join(bad[:min(len(bad), 5)], ", "))
	}
}

// depsMatching lists the dependencies of pkg whose import path contains
// any of banned.
func depsMatching(t *testing.T, pkg string, banned ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list the dependencies with: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", pkg).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list -deps %s: %v: %s", pkg, err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var bad []string
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			if strings.Contains(dep, b) {
				bad = append(bad, dep)
				break
			}
		}
	}
	return bad
}
