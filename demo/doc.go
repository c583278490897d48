// Package demo builds the simulated fleet behind `dispatchtop demo`: real
// processes (dispatchtop re-executed through wrap) on compressed time, one
// TeaParty job whose workers live in its message bus, read through the
// TeaParty source, and a Claude Code home of its own whose `claude`-like
// processes (dispatchtop re-executed as demo-claude) write their own
// session files, read through the Claude Code source (Roots, Sources).
package demo
