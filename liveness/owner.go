package liveness

import "github.com/dispatchtop/dispatchtop/model"

// OwnerOf is the owner of the live process pid, as the live engine records
// it when it first sees a per-turn pid alive (SPEC §3 idle): its parent and
// the parent's create time. ok is false when the probe cannot read parents,
// the pid is gone, or its parent is init (an orphan has no owner to wait
// on). The parent's create time is zero when it could not be read: the
// owner then reads unverified, never gone on that ground.
func OwnerOf(probe Probe, pid int) (model.Owner, bool) {
	pr, ok := probe.(ParentReader)
	if !ok || pid <= 0 {
		return model.Owner{}, false
	}
	ppid, err := pr.Parent(pid)
	if err != nil || ppid <= 1 {
		return model.Owner{}, false
	}
	info := probe.Lookup(ppid)
	if !info.Exists {
		return model.Owner{}, false
	}
	return model.Owner{PID: ppid, Started: info.CreateTime}, true
}
