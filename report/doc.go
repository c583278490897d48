// Package report renders a classified snapshot for --once: the
// dispatchtop/v1 JSON document (SPEC §4.1) and the indented text tree. It
// does no IO beyond writing to the writer it is given.
//
// Where things are:
//
//	json.go            the document: its types, BuildDocument, a node's values
//	json_reference.go  MarshalDocument: the document's bytes as defined,
//	                   json.MarshalIndent of the whole document
//	json_stream.go     WriteJSON, EncodeDocument: the same bytes streamed, a
//	                   session at a time, encoded on every core (SPEC §8)
//	json_arena.go      the streaming writer's reused memory for node values
//	json_node.go       a node's members appended as encoding/json writes them
//	text.go            WriteText: the text tree
//	json_stream_test.go  the streamed bytes against the reference: fixtures,
//	                   random forests, fuzzing
package report
