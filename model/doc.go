// Package model holds the plain data of dispatchtop: what is read from disk
// (heartbeats, registry entries, CfA state, retry counts), the classified
// node and forest, and the snapshot handed to every consumer. It does no IO
// and imports nothing of the project.
package model
