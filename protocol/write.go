package protocol

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// A temp file whose mtime is older than tmpLeftover belongs to a writer
// that died between create and rename (a live writer writes its data right
// after creating it); a writer waits at most tmpWait for another's temp file.
const (
	tmpLeftover = 10 * time.Second
	tmpWait     = 30 * time.Second
)

// WriteFileAtomic replaces path with data so that a reader sees the old file
// or the new one, never a part: write path+TempSuffix (`.heartbeat.tmp` for
// a heartbeat, as SPEC §1 says), fsync it, rename it over path, fsync the
// directory. The temp file is created exclusively, so two writers of the
// same file (a wrapper finalizing while its agent reports `paused`) take
// turns instead of truncating each other's temp file.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + TempSuffix
	f, err := createExclusive(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, werr)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The rename is durable only once the directory is synced; a failure
	// here leaves a correct file, so it is not worth failing the write.
	SyncDir(filepath.Dir(path))
	return nil
}

func createExclusive(tmp string) (*os.File, error) {
	deadline := time.Now().Add(tmpWait)
	for {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
		// Judge a leftover by the file's age, never by how long we waited:
		// under load a live writer's fsync can outlast any wait, and
		// removing its temp file would let it rename someone else's.
		if st, err := os.Stat(tmp); err == nil && time.Since(st.ModTime()) > tmpLeftover {
			os.Remove(tmp)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: another writer has held it for %s", tmp, tmpWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
