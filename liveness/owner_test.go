package liveness

import (
	"os"
	"os/exec"
	"testing"
)

// SPEC §3 idle: the owner of a live pid is its parent, with the parent's
// create time — read through the system probe, and through the probes the
// live engine wraps it in.
func TestOwnerOfIsTheParentAndItsCreateTime(t *testing.T) {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	self := SystemProbe{}.Lookup(os.Getpid())
	pinned, _, release := PinProcesses(SystemProbe{})
	t.Cleanup(release)
	for name, probe := range map[string]Probe{
		"system":  SystemProbe{},
		"caching": NewCachingProbe(SystemProbe{}, 0),
		"pinned":  NewCachingProbe(pinned, 0),
	} {
		t.Run(name, func(t *testing.T) {
			owner, ok := OwnerOf(probe, child.Process.Pid)
			if !ok || owner.PID != os.Getpid() || !owner.Started.Equal(self.CreateTime) {
				t.Errorf("owner %+v (ok %v), want pid %d created %s", owner, ok, os.Getpid(), self.CreateTime)
			}
		})
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	if owner, ok := OwnerOf(SystemProbe{}, child.Process.Pid); ok {
		t.Errorf("a gone pid has owner %+v, want none", owner)
	}
	if _, ok := OwnerOf(newFakeProbe(), os.Getpid()); ok {
		t.Error("a probe that cannot read parents gave an owner")
	}
}

func TestParentFieldCountsAfterTheCommandName(t *testing.T) {
	tests := []struct {
		stat string
		want int
		bad  bool
	}{
		{"42 (sleep) S 7 42 42 0 -1", 7, false},
		{"42 (a) b) (c) R 1234 42 42", 1234, false},
		{"42 (sleep) S", 0, true},
		{"42 sleep S 7", 0, true},
	}
	for _, tc := range tests {
		got, err := parentField([]byte(tc.stat))
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("parentField(%q) = %d, %v; want %d (error %v)", tc.stat, got, err, tc.want, tc.bad)
		}
	}
}
