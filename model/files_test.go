package model

import (
	"testing"
	"unsafe"
)

// TestCfaStateFitsItsSizeClass: nearly every node holds a CfaState (SPEC
// §8's budget), and few files name what older writers also wrote: those
// fields are behind CfaState.CfaLegacy. It was 136 bytes, in the 144-byte
// size class; it is 72, in the 80-byte one.
func TestCfaStateFitsItsSizeClass(t *testing.T) {
	const sizeClass = 80
	if got := unsafe.Sizeof(CfaState{}); got > sizeClass {
		t.Errorf("a CfaState is %d bytes, past the %d-byte size class", got, sizeClass)
	}
}
