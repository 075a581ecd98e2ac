package drivers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A library in another language at a version Debian packages: the package
// of that suite, fetched with apt-get download through a private apt
// configuration (the system's own sources, keyring and packages are left
// alone) and unpacked with dpkg -x into the cache, beside the system's.

// debianArchive is where a suite's packages come from: Debian's own.
const debianArchive = "http://deb.debian.org/debian"

// unpackDeb fetches pkg at version from suite's main and unpacks it under
// dir (once: a dir that has it is taken as it is). The error says what
// apt-get or dpkg said.
func unpackDeb(suite, pkg, version, dir string) error {
	done := filepath.Join(dir, ".unpacked")
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	apt := filepath.Join(dir, "apt")
	for _, d := range []string{"parts", "lists/partial", "cache/archives/partial", "debs"} {
		if err := os.MkdirAll(filepath.Join(apt, d), 0o755); err != nil {
			return err
		}
	}
	sources := fmt.Sprintf("Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n", debianArchive, suite)
	if err := os.WriteFile(filepath.Join(apt, "parts", suite+".sources"), []byte(sources), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(apt, "none.list"), nil, 0o644); err != nil {
		return err
	}
	opts := []string{
		"-o", "Dir::Etc::SourceList=" + filepath.Join(apt, "none.list"),
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(apt, "parts"),
		"-o", "Dir::State::Lists=" + filepath.Join(apt, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(apt, "cache"),
		"-o", "Debug::NoLocking=1",
	}
	if out, err := run(apt, "apt-get", append(opts, "-qq", "update")...); err != nil {
		return fmt.Errorf("apt-get update of Debian %s: %v: %s", suite, err, out)
	}
	debs := filepath.Join(apt, "debs")
	if out, err := run(debs, "apt-get", append(opts, "-qq", "download", pkg+"="+version)...); err != nil {
		return fmt.Errorf("Debian %s has no %s %s: %v: %s", suite, pkg, version, err, out)
	}
	matches, _ := filepath.Glob(filepath.Join(debs, pkg+"_*.deb"))
	if len(matches) != 1 {
		return fmt.Errorf("apt-get download of %s %s left %d packages", pkg, version, len(matches))
	}
	if out, err := run(dir, "dpkg", "-x", matches[0], filepath.Join(dir, "root")); err != nil {
		return fmt.Errorf("dpkg -x %s: %v: %s", matches[0], err, out)
	}
	return os.WriteFile(done, nil, 0o644)
}

func run(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}
