package drivers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFromGoModNamesTheLibrariesAModuleRequires(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write(`module example.com/app

go 1.22

require (
	github.com/go-redsync/redsync/v4 v4.0.3
	github.com/zeromicro/go-zero v1.3.1
	github.com/redis/go-redis/v9 v9.5.0
)

replace github.com/zeromicro/go-zero => github.com/zeromicro/go-zero v1.3.2
`)
	got, err := FromGoMod(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"gozero@v1.3.2", "redsync@v4.0.3"}) {
		t.Errorf("got %v", got)
	}
	// A replace that names the version it replaces replaces that one only.
	p = write(`module example.com/app

go 1.22

require (
	github.com/bsm/redislock v0.9.4
	github.com/go-redsync/redsync/v4 v4.0.3
)

replace github.com/bsm/redislock v0.9.4 => github.com/bsm/redislock v0.10.0

replace github.com/go-redsync/redsync/v4 v4.0.4 => github.com/go-redsync/redsync/v4 v4.18.1
`)
	got, err = FromGoMod(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"bsm@v0.10.0", "redsync@v4.0.3"}) {
		t.Errorf("versioned replaces: got %v", got)
	}
	p = write("module example.com/app\n\ngo 1.22\n\nrequire github.com/redis/go-redis/v9 v9.5.0\n")
	if _, err := FromGoMod(p); err == nil || !strings.Contains(err.Error(), "requires none of the lock libraries") {
		t.Errorf("a module with no lock library: %v", err)
	}
	p = write("module example.com/app\n\ngo 1.22\n\nrequire github.com/bsm/redislock v0.9.4\n\nreplace github.com/bsm/redislock => ../redislock\n")
	if _, err := FromGoMod(p); err == nil || !strings.Contains(err.Error(), "no version of bsm") {
		t.Errorf("a library replaced by a directory: %v", err)
	}
}
