package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// protocolDoc is the page a driver's author works from.
const protocolDoc = "../docs/driver-protocol.md"

// docExamples returns the JSON values of every ```json block of the page,
// in order: a block holds one value or one per line; a block that opens
// with a field (`"lock_info":{...}`) is a fragment of an object.
func docExamples(t *testing.T) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(protocolDoc)
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(b, -1)
	require.NotEmpty(t, blocks, "no JSON examples in %s", protocolDoc)
	var out []json.RawMessage
	for _, m := range blocks {
		text := bytes.TrimSpace(m[1])
		if bytes.HasPrefix(text, []byte(`"`)) {
			text = append(append([]byte("{"), text...), '}')
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		for {
			var v json.RawMessage
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "an example of %s is not JSON:\n%s", protocolDoc, text)
			out = append(out, v)
		}
	}
	return out
}

// strict decodes v into dst, refusing any field dst does not have.
func strict(v json.RawMessage, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

// Every example on the page is a request, a reply or an event the harness
// reads or writes, with no field the code does not know and every op,
// outcome and event one it has: the page and the code cannot drift apart.
func TestProtocolDocExamplesAreWhatTheCodeSpeaks(t *testing.T) {
	seen := map[string]int{}
	for _, v := range docExamples(t) {
		var kind struct {
			Op, Outcome, Event string
			LockInfo           json.RawMessage `json:"lock_info"`
		}
		require.NoError(t, json.Unmarshal(v, &kind))
		switch {
		case kind.Op != "":
			var r Request
			require.NoError(t, strict(v, &r), "request example %s", v)
			require.Contains(t, []string{OpOpen, OpAcquire, OpRelease, OpResource, OpExtend, OpReacquire, OpDeclare}, r.Op, "%s", v)
			require.Positive(t, r.ID, "%s", v)
			seen["request "+r.Op]++
		case kind.Outcome != "":
			var r Reply
			require.NoError(t, strict(v, &r), "reply example %s", v)
			require.Contains(t, []string{OutcomeOK, OutcomeFail, OutcomeInfo}, r.Outcome, "%s", v)
			seen["reply "+r.Outcome]++
		case kind.Event != "" || kind.LockInfo != nil:
			var e Event
			require.NoError(t, strict(v, &e), "event example %s", v)
			if e.Event == "" {
				require.NotEmpty(t, e.LockInfo, "%s", v)
				e.Event = "lock_info"
			} else {
				require.Contains(t, []string{EventHello, EventRenew, EventLost, EventStopped, EventError}, e.Event, "%s", v)
			}
			seen["event "+e.Event]++
		default:
			t.Errorf("an example of %s is neither a request, a reply nor an event: %s", protocolDoc, v)
		}
	}
	for _, want := range []string{"request open", "request acquire", "request release", "request resource", "request extend", "request reacquire",
		"reply ok", "reply fail", "reply info", "event hello", "event renew", "event lost", "event stopped", "event error", "event lock_info"} {
		require.Positive(t, seen[want], "the page shows no example of %s (saw %v)", want, seen)
	}
}

// The options table names every field of open's options, with its JSON
// type, and nothing else.
func TestProtocolDocOptionsTableIsLockOptions(t *testing.T) {
	b, err := os.ReadFile(protocolDoc)
	require.NoError(t, err)
	rows := regexp.MustCompile("(?m)^ *\\| `([a-z_]+)` \\| (integer|string|boolean|object) \\|").FindAllSubmatch(b, -1)
	documented := map[string]string{}
	for _, r := range rows {
		documented[string(r[1])] = string(r[2])
	}
	code := map[string]string{}
	typ := reflect.TypeOf(LockOptions{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		kind := "string"
		switch {
		case slices.Contains([]reflect.Kind{reflect.Int, reflect.Int64}, f.Type.Kind()):
			kind = "integer"
		case f.Type.Kind() == reflect.Map:
			kind = "object"
		}
		code[name] = kind
	}
	require.Equal(t, code, documented, "the options table of %s and client.LockOptions", protocolDoc)
}
