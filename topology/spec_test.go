package topology

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A spec without a down-after waits for the failover of the default one,
// not of none.
func TestFailoverWithinUsesTheDefaultDownAfter(t *testing.T) {
	require.Equal(t, FailoverWithin(Sentinel, time.Second), Spec{Topology: Sentinel}.FailoverWithin())
	require.Equal(t, FailoverWithin(Cluster, 2*time.Second), Spec{Topology: Cluster}.FailoverWithin())
	require.Zero(t, Spec{Topology: Independent}.FailoverWithin(), "independent masters have no failover")
}

func TestBadReplicationSettingsAreRejected(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: -1}}, "min-replicas-to-write must be 0 (off) or more, got -1"},
		{Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: -2}}, "min-replicas-max-lag must be 1 s or more, got -2"},
		{Spec{Topology: Sentinel, Replication: Replication{MinReplicasMaxLag: 1}}, "min-replicas-max-lag 1 without min-replicas-to-write"},
		{Spec{Topology: Sentinel, Replicas: 2, Replication: Replication{MinReplicasToWrite: 3}}, "min-replicas-to-write 3, and each master has 2 replica(s): every write would be refused"},
		{Spec{Topology: Independent, Masters: 1, Replication: Replication{MinReplicasToWrite: 1}}, "each master has 0 replica(s)"},
		{Spec{Topology: Sentinel, Replication: Replication{ReplDisklessSync: "maybe"}}, `repl-diskless-sync must be yes or no, got "maybe"`},
	} {
		require.ErrorContains(t, c.spec.Validate(), c.want, "%+v", c.spec.Replication)
	}
	require.NoError(t, Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: 2, MinReplicasMaxLag: 1}}.Validate())
}

// scenario.json records the settings under their redis.conf names, and
// only the ones set.
func TestReplicationIsRecordedInTheSpecJSON(t *testing.T) {
	b, err := json.Marshal(Spec{Topology: Sentinel, Replication: Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1}})
	require.NoError(t, err)
	require.Contains(t, string(b), `"min_replicas_to_write":1,"min_replicas_max_lag":1`)
	require.NotContains(t, string(b), "repl_diskless_sync")
	b, err = json.Marshal(Spec{Topology: Sentinel})
	require.NoError(t, err)
	require.NotContains(t, string(b), "min_replicas")
	var back Spec
	require.NoError(t, json.Unmarshal([]byte(`{"topology":"sentinel","min_replicas_to_write":1,"min_replicas_max_lag":1}`), &back))
	require.Equal(t, Replication{MinReplicasToWrite: 1, MinReplicasMaxLag: 1}, back.Replication)
}

// A spec is what a scenario file's "cluster" object holds: every field named
// in snake_case, durations written as Go duration strings, and unset
// fields left out.
func TestSpecJSONIsSnakeCaseWithDurationStrings(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	var check func(reflect.Type)
	check = func(st reflect.Type) {
		for i := range st.NumField() {
			f := st.Field(i)
			if f.Anonymous {
				check(f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			require.Regexp(t, snake, name, "Spec.%s", f.Name)
			if f.Type.Kind() == reflect.Int64 {
				require.Equal(t, reflect.TypeFor[Duration](), f.Type, "Spec.%s: a duration is a Duration", f.Name)
			}
		}
	}
	check(reflect.TypeFor[Spec]())

	b, err := json.Marshal(Spec{Topology: Sentinel, DownAfter: Duration(3 * time.Second), LinkFaults: true})
	require.NoError(t, err)
	require.JSONEq(t, `{"topology": "sentinel", "down_after": "3s", "link_faults": true}`, string(b))
	var back Spec
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, Spec{Topology: Sentinel, DownAfter: Duration(3 * time.Second), LinkFaults: true}, back)
	require.ErrorContains(t, json.Unmarshal([]byte(`{"down_after": 3000000000}`), &back), `want a Go duration such as "1.5s"`)
}
