// Package demo builds the simulated fleet behind `dispatchtop demo`: real
// processes (dispatchtop re-executed through wrap) on compressed time, and
// one TeaParty job whose workers live in its message bus, read through the
// TeaParty source (Roots, Sources).
package demo
