//go:build !unix

package claudecode

// openDirFd holds no directory open here: records are opened by path.
func openDirFd(string) (int, bool) { return -1, false }

func closeFd(int) {}
