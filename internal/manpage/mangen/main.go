// Command mangen writes dispatchtop's man pages: `go run ./internal/manpage/mangen [DIR]`
// (`make man`), DIR defaulting to docs/man.
package main

import (
	"fmt"
	"os"

	"github.com/dispatchtop/dispatchtop/internal/manpage"
)

func main() {
	dir := manpage.Dir
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := manpage.Write(dir); err != nil {
		fmt.Fprintln(os.Stderr, "mangen: "+err.Error())
		os.Exit(1)
	}
}
