package teaparty

// What a read lists of a home is kept for the next while the dirs listed
// are as they were: a commit into one bus lists nothing. A dir's stamp is
// its identity and mtime, which every entry made, removed or renamed in it
// moves; a listing made within racyWindow of the dir's mtime is not
// trusted (a second change in the same tick of a coarse clock would leave
// the mtime as it was), and the next read lists the dir again.

import (
	"os"
	"time"
)

// racyWindow is how old a dir's mtime must be, when the dir is listed,
// for the listing to be kept: coarser than any filesystem's mtime tick
// (FAT's 2 s).
const racyWindow = 2 * time.Second

// dirStamp is a dir as a read saw it before listing it.
type dirStamp struct {
	path string
	fi   os.FileInfo // nil: the dir was not there
	racy bool        // listed too soon after its mtime to be kept
}

// stampDir is the stamp of the dir at path, taken at listedAt, before the
// dir is listed.
func stampDir(path string, listedAt time.Time) dirStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return dirStamp{path: path}
	}
	return dirStamp{path: path, fi: fi, racy: listedAt.Sub(fi.ModTime()) < racyWindow}
}

// still reports whether the dir is as its stamp says: the same dir, its
// mtime unmoved (or still absent), and the listing not racy.
func (d dirStamp) still() bool {
	if d.racy {
		return false
	}
	fi, err := os.Stat(d.path)
	if d.fi == nil {
		return err != nil
	}
	return err == nil && os.SameFile(fi, d.fi) && fi.ModTime().Equal(d.fi.ModTime())
}

// allStill reports whether every dir stamped is as it was.
func allStill(stamps []dirStamp) bool {
	for _, d := range stamps {
		if !d.still() {
			return false
		}
	}
	return true
}
