package explore

import (
	"slices"
	"testing"
)

func TestSortVersionsOrdersSemanticVersionsOldestFirst(t *testing.T) {
	got := SortVersions([]string{"v4.10.0", "v4.4.1", "v4.0.3", "v4.0.4", "v4.4.1"})
	if !slices.Equal(got, []string{"v4.0.3", "v4.0.4", "v4.4.1", "v4.10.0"}) {
		t.Errorf("got %v", got)
	}
	if got := SortVersions([]string{"6.1.0", "4.3.4"}); !slices.Equal(got, []string{"4.3.4", "6.1.0"}) {
		t.Errorf("Debian's versions: got %v", got)
	}
}

// A version is affected when any seed broke it, unaffected only when every
// seed passed; the first fixed version is the first unaffected one after
// the first affected one, and a later break is a regression.
func TestFirstAffectedAndFirstFixed(t *testing.T) {
	runs := func(vs ...string) []Run {
		var out []Run
		for _, v := range vs {
			out = append(out, Run{Verdict: v})
		}
		return out
	}
	vr := func(v string, rs []Run) VersionResult {
		return VersionResult{Version: v, Verdict: versionVerdict(rs), Runs: rs}
	}
	vs := []VersionResult{
		vr("v1", runs("valid", "valid")),
		vr("v2", runs("valid", "invalid")),
		vr("v3", runs("unknown", "valid")),
		vr("v4", runs("valid", "valid")),
		vr("v5", runs("invalid", "invalid")),
	}
	if vs[2].Verdict != "unknown" {
		t.Fatalf("v3: %s", vs[2].Verdict)
	}
	a, f, again := firstAffected(vs)
	if a != "v2" || f != "v4" || !slices.Equal(again, []string{"v5"}) {
		t.Errorf("affected %s fixed %s again %v", a, f, again)
	}
	a, f, _ = firstAffected(vs[:1])
	if a != "" || f != "" {
		t.Errorf("nothing broke: affected %q fixed %q", a, f)
	}
}

// The line names what was tried: a break in the oldest version tried is
// not called its first.
func TestBisectSummarySaysWhatWasTried(t *testing.T) {
	vr := func(v, verdict string) VersionResult { return VersionResult{Version: v, Verdict: verdict} }
	cases := []struct {
		vs   []VersionResult
		want string
	}{
		{[]VersionResult{vr("v1", "affected"), vr("v2", "unaffected")}, "redsync: affected from the oldest version tried (v1), first fixed v2 (2 versions tried)"},
		{[]VersionResult{vr("v1", "unaffected"), vr("v2", "affected"), vr("v3", "affected")}, "redsync: first affected v2; no later version tried is fixed (3 versions tried)"},
		{[]VersionResult{vr("v1", "unaffected"), vr("v2", "unaffected")}, "redsync: no version of 2 versions broke"},
	}
	for _, c := range cases {
		b := &Bisection{Library: "redsync", Versions: c.vs}
		b.FirstAffected, b.FirstFixed, b.Again = firstAffected(c.vs)
		if got := BisectSummary(b); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
