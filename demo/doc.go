// Package demo builds the simulated fleet behind `dispatchtop demo`: real
// processes (dispatchtop re-executed through wrap) on compressed time.
package demo
