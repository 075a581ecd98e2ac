package reports

import (
	"fmt"
	"strings"
)

// RerunCommand is the command line that runs r again: `deadbolt` and the
// arguments results.json records (Results.Rerun), each quoted as a POSIX
// shell needs it. Results written before the arguments were recorded
// give what they know: the scenario, the seed, the server and the driver.
func RerunCommand(r *Results) string {
	args := r.Rerun
	if len(args) == 0 {
		args = []string{"run", r.Scenario, "--seed", fmt.Sprint(r.Seed)}
		if r.Server.Flag() != "" {
			args = append(args, "--server", r.Server.Name)
		}
		if r.Driver != "" {
			args = append(args, "--driver", r.Driver)
		}
	}
	return "deadbolt " + ShellJoin(args)
}

// ShellJoin joins args into one command line a POSIX shell splits back
// into them (and so does client.ParseCommand, shlex).
func ShellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// ShellQuote is s as one shell word: as it is when no character in it is
// special to a shell, in single quotes otherwise (a single quote inside
// closes them, adds an escaped one and opens them again).
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	// A leading = is zsh's command lookup (=ls).
	if !strings.HasPrefix(s, "=") && strings.IndexFunc(s, func(r rune) bool { return !shellSafe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe: r means nothing to a shell anywhere in a word.
func shellSafe(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("@%+=:,./_-", r)
}
