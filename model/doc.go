// Package model holds the plain data of dispatchtop: what is read from disk
// (heartbeats, registry entries, CfA state, retry counts), the classified
// node and forest, the snapshot handed to every consumer, and the updates
// that keep a consumer current (Update, with its Merge, Diff and Publish:
// the delivery guarantees of every update stream, stated once). A node's
// reason is text with one age that moves with the clock (ReasonAge),
// rendered with Node.ReasonAt; FormatAge is the one way an age is written.
// It does no IO and imports nothing of the project.
package model
