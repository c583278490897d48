// Package treegen writes synthetic dispatch trees for benchmarks and tests.
package treegen
