// Package report renders a classified snapshot for --once: the
// dispatchtop/v1 JSON document (SPEC §4.1) and the indented text tree. It
// does no IO beyond writing to the writer it is given.
package report
