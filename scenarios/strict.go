package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// decodeStrict decodes a JSON document into v (a pointer to a struct),
// refusing unknown fields and values of the wrong type with the field's
// JSON path ("fault.steps[1].after: ..."): encoding/json names neither.
// Where people write durations, a Go duration string ("1.5s") is taken:
// in a Duration field only that, in a time.Duration field (the fault's
// after, for, by and every: nanoseconds as a number, as scenario.json
// stores them) and in an integer field whose name ends in _ms too. A
// RunSpec's old *_ms fields and its cluster's old field names are read
// (upgradeLegacy).
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("not one JSON document: more follows the first")
	}
	if _, spec := v.(*RunSpec); spec {
		if err := upgradeLegacy(raw); err != nil {
			return err
		}
	}
	norm, err := normalize(raw, reflect.TypeOf(v).Elem(), "", "")
	if err != nil {
		return err
	}
	out, err := json.Marshal(norm)
	if err != nil {
		return err
	}
	strict := json.NewDecoder(bytes.NewReader(out))
	strict.DisallowUnknownFields()
	return strict.Decode(v)
}

var (
	durationType     = reflect.TypeFor[time.Duration]()
	specDurationType = reflect.TypeFor[Duration]()
)

// normalize checks raw against t and returns it with duration strings
// turned into the numbers t takes. name is the JSON field's name.
func normalize(raw any, t reflect.Type, path, name string) (any, error) {
	at := func(format string, args ...any) error { return atPath(path, format, args...) }
	if raw == nil {
		return nil, nil // null leaves the zero value, as encoding/json does
	}
	switch t.Kind() {
	case reflect.Pointer:
		return normalize(raw, t.Elem(), path, name)
	case reflect.Struct:
		return normalizeObject(raw, t, path)
	case reflect.Slice:
		arr, ok := raw.([]any)
		if !ok {
			return nil, at("want a list, got %s", describe(raw))
		}
		for i, val := range arr {
			nv, err := normalize(val, t.Elem(), fmt.Sprintf("%s[%d]", path, i), name)
			if err != nil {
				return nil, err
			}
			arr[i] = nv
		}
		return arr, nil
	case reflect.Map:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil, at("want an object, got %s", describe(raw))
		}
		for key, val := range obj {
			nv, err := normalize(val, t.Elem(), join(path, key), key)
			if err != nil {
				return nil, err
			}
			obj[key] = nv
		}
		return obj, nil
	case reflect.String:
		if _, ok := raw.(string); !ok {
			return nil, at("want a string, got %s", describe(raw))
		}
	case reflect.Bool:
		if _, ok := raw.(bool); !ok {
			return nil, at("want true or false, got %s", describe(raw))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return normalizeInt(raw, t, path, name)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := raw.(json.Number)
		if !ok || strings.ContainsAny(n.String(), "-.eE") {
			return nil, at("want a non-negative integer, got %s", describe(raw))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := raw.(json.Number); !ok {
			return nil, at("want a number, got %s", describe(raw))
		}
	}
	return raw, nil
}

// normalizeObject is normalize of an object for struct type t: each
// field known (by its JSON name, or that name in another case, as
// encoding/json takes it) and normalized.
func normalizeObject(raw any, t reflect.Type, path string) (any, error) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, atPath(path, "want an object, got %s", describe(raw))
	}
	fields := jsonFields(t)
	for key, val := range obj {
		f, ok := fields[key]
		if !ok {
			for n, ff := range fields {
				if strings.EqualFold(n, key) {
					f, ok = ff, true
					break
				}
			}
		}
		if !ok {
			return nil, fmt.Errorf("%s: unknown field (known here: %s)", join(path, key), strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		nv, err := normalize(val, f.Type, join(path, key), key)
		if err != nil {
			return nil, err
		}
		obj[key] = nv
	}
	return obj, nil
}

// normalizeInt is normalize of an integer: a duration string where t
// takes one (Duration, time.Duration, an _ms field), else a whole number.
func normalizeInt(raw any, t reflect.Type, path, name string) (any, error) {
	if t == specDurationType {
		s, ok := raw.(string)
		if !ok {
			return nil, atPath(path, "want a Go duration such as \"1.5s\", got %s", describe(raw))
		}
		if _, err := time.ParseDuration(s); err != nil {
			return nil, atPath(path, "bad duration %q (a Go duration such as \"1.5s\")", s)
		}
		return s, nil
	}
	if s, ok := raw.(string); ok && (t == durationType || strings.HasSuffix(name, "_ms")) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, atPath(path, "bad duration %q (a number, or a Go duration such as \"1.5s\")", s)
		}
		if t == durationType {
			return int64(d), nil
		}
		if d%time.Millisecond != 0 {
			return nil, atPath(path, "%q is not a whole number of milliseconds", s)
		}
		return d.Milliseconds(), nil
	}
	n, ok := raw.(json.Number)
	if !ok {
		return nil, atPath(path, "want an integer, got %s", describe(raw))
	}
	if _, err := n.Int64(); err != nil {
		return nil, atPath(path, "want an integer, got %s", n)
	}
	return raw, nil
}

// atPath prefixes a message with the JSON path it is about.
func atPath(path, format string, args ...any) error {
	if path == "" {
		return fmt.Errorf(format, args...)
	}
	return fmt.Errorf("%s: "+format, append([]any{path}, args...)...)
}

// jsonField is a struct field with the name encoding/json gives it.
type jsonField struct {
	name string
	reflect.StructField
}

// jsonFieldList is t's fields in their order as encoding/json sees them:
// named by their tags, embedded structs' fields inlined where they are
// embedded.
func jsonFieldList(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || !f.IsExported():
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonFieldList(f.Type)...)
		case tag != "":
			out = append(out, jsonField{tag, f})
		default:
			out = append(out, jsonField{f.Name, f})
		}
	}
	return out
}

// jsonFields maps the JSON names of t's fields to them.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range jsonFieldList(t) {
		out[f.name] = f.StructField
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe names a decoded JSON value for a message.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprintf("%t", v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}
