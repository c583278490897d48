package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/dispatchtop/dispatchtop/report"
)

// Reading an answer through the guard, a session at a time, is reading it
// whole with encoding/json: a document json.Unmarshal reads is decoded to
// the same Document (whitespace folded, keys matched as it matches them,
// the last of a key given twice winning), caps far away.
func FuzzDecodeIsEncodingJSONs(f *testing.F) {
	f.Add(docBytes(f, treeSnapshot(f)))
	for _, seed := range []string{
		`{"schema": "dispatchtop/v1", "sessions": null}`,
		`{"schema": "dispatchtop/v1", "SESSIONS": [{"id": "a", "Children": [{"id": "b"}]}], "sessions": [{"id": "c"}]}`,
		`{"schema": "x", "schema": "dispatchtop/v1", "Schema": "y", "roots": ["a\"b", "\u00e9 \\ "]}`,
		"{\"schema\":\"dispatchtop/v1\",\t\"\\u0073essions\" :\n[ {\"id\" : \"s\" , \"flags\" : [ \"a\" ] } ]}",
		`{"schema": "dispatchtop/v1", "sessions": [{"id": "s", "extra": {"children": [{}], "sessions": 1}, "started": 1e21}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		wd, err := unmarshalDocument(b)
		if err != nil {
			return
		}
		sd, err := decode(bytes.NewReader(b), caps{body: 1 << 30, nodes: 1 << 30, values: 1 << 30, str: 1 << 30})
		if err != nil {
			t.Fatalf("json.Unmarshal reads it, decode does not: %v\n%q", err, b)
		}
		if !reflect.DeepEqual(wd, sd) {
			t.Fatalf("decoded differently:\n whole    %+v\n streamed %+v\n%q", wd, sd, b)
		}
	})
}

// unmarshalDocument is encoding/json's reading of a whole document, with
// Decode's check of the schema.
func unmarshalDocument(b []byte) (*report.Document, error) {
	var doc report.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Schema != report.Schema {
		return nil, errors.New("another schema")
	}
	return &doc, nil
}
