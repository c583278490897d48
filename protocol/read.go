package protocol

import (
	"errors"
	"fmt"
	"io"
)

// MaxDocumentSize caps the read of a single-document file (heartbeat, CfA
// state, blocked sentinel, retry count, resume marker); a larger file is a
// problem, never a reason to hold its whole content.
const MaxDocumentSize = 1 << 20

// ErrTooLarge is the cause of a read refused for the size of the file
// (errors.Is).
var ErrTooLarge = errors.New("file too large")

// ReadFile reads a file of the contract whole, up to limit bytes, opened as
// OpenReader opens it: a FIFO or a device planted there is refused, never
// waited on. More than limit bytes is an error that wraps ErrTooLarge.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, _, err := OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("read %s: %w: over %d bytes", path, ErrTooLarge, limit)
	}
	return b, nil
}
