//go:build linux

package scanner

import "testing"

func TestNetworkMagic(t *testing.T) {
	cifs := int32(-11317950) // 0xFF534D42 where f_type is a signed 32-bit field
	tests := []struct {
		name  string
		magic uint32
		want  string
	}{
		{"NFS", 0x6969, "NFS"},
		{"SMB", 0x517B, "SMB"},
		{"CIFS", 0xFF534D42, "CIFS"},
		{"CIFS from a signed 32-bit f_type", uint32(cifs), "CIFS"},
		{"CIFS from a signed 64-bit f_type", uint32(int64(cifs)), "CIFS"},
		{"SMB2", 0xFE534D42, "SMB2"},
		{"9p", 0x01021997, "9p"},
		{"CephFS", 0x00C36400, "CephFS"},
		{"OpenAFS", 0x5346414F, "AFS"},
		{"kAFS", 0x6B414653, "AFS"},
		{"Lustre", 0x0BD00BD0, "Lustre"},
		{"ext4 is local", 0xEF53, ""},
		{"tmpfs is local", 0x01021994, ""},
		{"FUSE is decided by its subtype, not here", 0x65735546, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := networkMagic(tt.magic); got != tt.want {
				t.Errorf("networkMagic(%#x) = %q, want %q", tt.magic, got, tt.want)
			}
		})
	}
}

func TestMountinfoLine(t *testing.T) {
	tests := []struct {
		name, line, point, fstype string
		ok                        bool
	}{
		{"sshfs", "97 29 0:46 / /home/me/remote rw,nosuid,nodev,relatime shared:50 - fuse.sshfs me@host:/srv rw,user_id=1000",
			"/home/me/remote", "fuse.sshfs", true},
		{"several optional fields", "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 shared:2 - ext3 /dev/root rw",
			"/mnt/parent", "ext3", true},
		{"escaped space", `40 1 0:50 / /mnt/my\040share rw - cifs //srv/share rw`, "/mnt/my share", "cifs", true},
		{"no separator", "36 35 98:0 /mnt1 /mnt/parent rw", "", "", false},
		{"too short", "36 - ext3", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			point, fstype, ok := mountinfoLine(tt.line)
			if point != tt.point || fstype != tt.fstype || ok != tt.ok {
				t.Errorf("mountinfoLine = %q, %q, %v; want %q, %q, %v", point, fstype, ok, tt.point, tt.fstype, tt.ok)
			}
		})
	}
}

func TestNetworkFSProc(t *testing.T) {
	if got := networkFS("/proc"); got != "" {
		t.Errorf("networkFS(/proc) = %q, want local", got)
	}
}
