package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Redis checks a script's commands against the caller's ACL: every command
// a lock's or a workload's script calls must be the lock user's.
func TestTheLockUserMayRunEveryCommandOfTheScripts(t *testing.T) {
	call := regexp.MustCompile(`redis\.p?call\(\s*["']([A-Za-z]+)["']`)
	var files []string
	for _, dir := range []string{"../locks/scripts", "../workloads/scripts"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.lua"))
		require.NoError(t, err)
		require.NotEmpty(t, m, dir)
		files = append(files, m...)
	}
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range call.FindAllStringSubmatch(string(b), -1) {
			seen++
			require.Contains(t, lockCommands, strings.ToLower(m[1]), "%s calls %s", f, m[1])
		}
	}
	require.Greater(t, seen, 20, "the scripts were read")
}

func TestSecretsAreRandomAndNeverEmpty(t *testing.T) {
	a, err := NewSecrets()
	require.NoError(t, err)
	b, err := NewSecrets()
	require.NoError(t, err)
	for _, s := range []Secrets{a, b} {
		pw := []string{s.Admin, s.Lock, s.Replication, s.Sentinel}
		for _, p := range pw {
			require.Len(t, p, 32)
		}
		slices.Sort(pw)
		require.Len(t, slices.Compact(pw), 4, "one password per user")
	}
	require.NotEqual(t, a, b)
}

// The default user is off and has no password to fall back on; every
// other user has its own.
func TestNodeArgsDisableTheDefaultUser(t *testing.T) {
	s := Secrets{Admin: "a", Lock: "l", Replication: "r", Sentinel: "s"}
	list := s.RedisArgs()
	args := strings.Join(list, " ")
	require.NotContains(t, args, "nopass")
	require.Contains(t, args, "--protected-mode yes")
	require.Contains(t, args, "--masteruser "+ReplicationUser+" --masterauth r")
	users := map[string]string{} // user -> its rules, then its password
	for _, u := range strings.Split(args, "--user ")[1:] {
		name, rules, _ := strings.Cut(strings.TrimSpace(u), " ")
		users[name] = rules
	}
	// The default user is the lock user under another name (for libraries
	// that send a password alone): its rights and its password, nothing more.
	require.Equal(t, strings.Replace(users[LockUser], "on ", "resetpass on ", 1), users["default"])
	for u, pass := range map[string]string{AdminUser: ">a", LockUser: ">l", ReplicationUser: ">r", SentinelUser: ">s", "default": ">l"} {
		require.Contains(t, " "+users[u], " on ", u)
		require.True(t, strings.HasSuffix(users[u], " "+pass), "%s: %s", u, users[u])
	}
	conf := strings.Join(s.SentinelConf("g"), "\n")
	require.Contains(t, conf, "user default off resetpass")
	require.NotContains(t, conf, "nopass")
	require.Contains(t, conf, "sentinel auth-user g "+SentinelUser)
	require.Contains(t, conf, "sentinel sentinel-pass s")
}
