package report

import "encoding/json"

// MarshalDocument is the document's bytes as the contract defines them
// (SPEC §4.1): encoding/json's, indented by two spaces, and a newline.
// WriteJSON and EncodeDocument stream these bytes (json_stream.go) and are
// held to them byte for byte by difference and random-tree tests; this one
// holds the document whole, so it is the definition, not the writer.
func MarshalDocument(doc Document) ([]byte, error) {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
