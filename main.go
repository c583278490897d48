// Command dispatchtop is a terminal dashboard for live dispatch trees.
package main

import (
	"os"

	"github.com/dispatchtop/dispatchtop/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
