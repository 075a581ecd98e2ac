package locks_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

var testKnobs = locks.Knobs{
	{Name: "max_retries", Kind: locks.KnobInt, Default: "3", Summary: "sends of a failed command more"},
	{Name: "read_timeout", Kind: locks.KnobDuration, Default: "3s", From: locks.FromTimeout, Summary: "wait for a reply"},
	{Name: "tries", Kind: locks.KnobInt, Default: "32", From: locks.FromTries, Summary: "acquire attempts"},
	{Name: "socket_timeout", Kind: locks.KnobDuration, Default: "none", Nullable: true, Summary: "redis-py's"},
	{Name: "mode", Kind: locks.KnobChoice, Choices: []string{"a", "b"}, Default: "a", Summary: "a choice"},
}

func TestKnobsResolveDefaultsThenSceneThenUser(t *testing.T) {
	s, err := testKnobs.Resolve(nil, locks.Options{})
	require.NoError(t, err)
	require.Equal(t, locks.Settings{"max_retries": "3", "read_timeout": "3s", "tries": "32", "socket_timeout": "none", "mode": "a"}, s)
	require.Empty(t, s.Changed(testKnobs), "the library's defaults differ from nothing")

	// A scenario's own options speak to the knobs that take them.
	s, err = testKnobs.Resolve(nil, locks.Options{Timeout: 500 * time.Millisecond, Retries: 2})
	require.NoError(t, err)
	require.Equal(t, 500*time.Millisecond, s.Duration("read_timeout"))
	require.Equal(t, 3, s.Int("tries"), "tries are retries + 1")
	require.Equal(t, []string{"read_timeout=500ms", "tries=3"}, s.Changed(testKnobs))

	// The user's own knobs win, in canonical form.
	s, err = testKnobs.Resolve(map[string]string{"read_timeout": "0.2s", "max_retries": "-1", "socket_timeout": "1500ms"}, locks.Options{Timeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, "200ms", s["read_timeout"])
	require.Equal(t, -1, s.Int("max_retries"))
	require.Equal(t, 1500*time.Millisecond, s.Duration("socket_timeout"))
	require.True(t, (locks.Settings{"socket_timeout": "none"}).IsNone("socket_timeout"))
	s, err = testKnobs.Resolve(map[string]string{"read_timeout": "-1"}, locks.Options{})
	require.NoError(t, err)
	require.Equal(t, "-1", s["read_timeout"], "an integer is the library's own number, kept as written")
	require.Equal(t, time.Duration(-1), s.Duration("read_timeout"))
}

func TestKnobsRefuseWhatTheyDoNotTake(t *testing.T) {
	for _, c := range []struct {
		given map[string]string
		want  string
	}{
		{map[string]string{"max_retrys": "0"}, `unknown lock option "max_retrys" (known: max_retries, read_timeout, tries, socket_timeout, mode); did you mean "max_retries"?`},
		{map[string]string{"max_retries": "three"}, `lock option max_retries: "three" is no value of max_retries (it takes a whole number)`},
		{map[string]string{"read_timeout": "none"}, "lock option read_timeout: none is no value of read_timeout (it takes a duration such as 200ms)"},
		{map[string]string{"read_timeout": "soon"}, `it takes a duration such as 200ms`},
		{map[string]string{"mode": "c"}, "it takes one of a, b"},
	} {
		_, err := testKnobs.Resolve(c.given, locks.Options{})
		require.ErrorContains(t, err, c.want, "%v", c.given)
	}
	_, err := locks.Knobs(nil).Resolve(map[string]string{"x": "1"}, locks.Options{})
	require.ErrorContains(t, err, "this lock takes no options")
	require.NoError(t, testKnobs.Check())
	require.Error(t, locks.Knobs{{Name: "a", Kind: locks.KnobInt, Default: "x"}}.Check(), "a default of another kind")
	require.Error(t, locks.Knobs{{Name: "a", Kind: locks.KnobInt, Default: "1", From: "ttl"}}.Check(), "an unknown from")
	require.Error(t, locks.Knobs{{Name: "a", Kind: locks.KnobInt, Default: "1"}, {Name: "a", Kind: locks.KnobInt, Default: "1"}}.Check())
}

// knobbed is the simple lock over a client whose behaviour its settings
// decide, as a library adapter's does.
type knobbed struct {
	locks.Lock
	s locks.Settings
}

func (k knobbed) Behaviour() locks.Behaviour {
	return locks.Behaviour{Client: "test", CallTimeoutMS: locks.Millis(k.s.Duration("read_timeout")), Retries: k.s.Int("max_retries"), Resends: k.s.Int("max_retries") > 0}
}

func TestADeclarationFollowsTheKnobs(t *testing.T) {
	locks.Register("test-knobbed", "TEST: the simple lock with a client of settings", func(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
		l, err := locks.New("simple", e, locks.Options{TTL: o.TTL})
		return knobbed{l, o.Settings}, err
	})
	locks.RegisterKnobs("test-knobbed", testKnobs)

	d := locks.Declare("test-knobbed")
	require.Equal(t, testKnobs, d.Options)
	require.True(t, d.Resends)
	require.EqualValues(t, 3000, d.CallTimeoutMS)
	require.Empty(t, d.Settings)

	d, err := locks.DeclareWith("test-knobbed", locks.Options{Knobs: map[string]string{"max_retries": "0"}, Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	require.False(t, d.Resends, "max_retries=0 sends a command once")
	require.EqualValues(t, 200, d.CallTimeoutMS, "the scenario's timeout_ms is the client's read timeout")
	require.Equal(t, []string{"max_retries=0", "read_timeout=200ms"}, d.Settings)
	require.False(t, locks.RegistryWith(locks.Options{Knobs: map[string]string{"max_retries": "0"}}).Resends("test-knobbed"))
	require.True(t, locks.Registry.Resends("test-knobbed"))

	_, err = locks.DeclareWith("test-knobbed", locks.Options{Knobs: map[string]string{"nosuch": "1"}})
	require.ErrorContains(t, err, `lock test-knobbed: unknown lock option "nosuch" (known: max_retries`)
	_, err = locks.New("simple", endpoints.Unreachable(1), locks.Options{Knobs: map[string]string{"max_retries": "0"}})
	require.ErrorContains(t, err, "lock simple: unknown lock option \"max_retries\": this lock takes no options")

	// deadbolt's own locks say their call timeout, and never resend.
	d = locks.Declare("simple")
	require.EqualValues(t, 500, d.CallTimeoutMS)
	require.False(t, d.Resends)
	require.Empty(t, d.Options)
}
