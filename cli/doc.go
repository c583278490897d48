// Package cli wires the command line (cobra) to the engine, the actions and
// the ui. main.go only calls Execute.
package cli
