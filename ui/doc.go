// Package ui is the Bubble Tea program: it shows the engine's snapshots and
// asks the recovery engine to act, always through commands.
package ui
