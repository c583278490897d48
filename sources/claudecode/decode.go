package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// A record is decoded field by field: a field of an unexpected type (a
// pid written as text, a time as ISO where milliseconds were) is a
// problem naming the file and the field, and the rest of the record is
// still read. Claude Code's formats are not a published interface; one
// changed field must not hide a running session.

// readRecord reads the JSON object at path into v (a pointer to a struct
// whose fields are pointers or json.RawMessage, named by json tags). The
// file missing (removed since listed) is no problem; unreadable, or not
// an object, is one.
func (r *reader) readRecord(path string, v any) ([]byte, protocol.Info, bool) {
	return r.readRecordAt(noDir, path, path, v)
}

// readRecordAt is readRecord of the record name of the directory d held
// open, whose path is path.
func (r *reader) readRecordAt(d recordDir, name, path string, v any) ([]byte, protocol.Info, bool) {
	return r.readDecodedAt(d, name, path, func(b []byte) error { return r.decodeFields(path, b, v) })
}

// decodeFields decodes the object b into v field by field, each field's
// type error a problem of path; an error when b is no JSON object.
func (r *reader) decodeFields(path string, b []byte, v any) error {
	if decodeFast(b, v) {
		return nil
	}
	return r.decodePlain(path, b, v)
}

// decodePlain is decodeFields' definition: the object's fields one by one.
func (r *reader) decodePlain(path string, b []byte, v any) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	if obj == nil {
		return errors.New("null, not an object")
	}
	rv := reflect.ValueOf(v).Elem()
	rt := rv.Type()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		raw, ok := obj[name]
		if !ok || name == "" || string(raw) == "null" {
			continue
		}
		target := reflect.New(rt.Field(i).Type)
		if err := json.Unmarshal(raw, target.Interface()); err != nil {
			r.problem(path, "read %s: %s: %v", path, name, typeError(err))
			continue
		}
		rv.Field(i).Set(target.Elem())
	}
	return nil
}

// typeError says what a field held, without Go's type names.
func typeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("a JSON %s where this reader knows another type: ignored", te.Value)
	}
	return err.Error()
}
