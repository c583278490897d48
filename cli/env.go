package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envPrefix leads the environment variable of a flag: --max-conns is
// DISPATCHTOP_MAX_CONNS. A service manager (systemd, a container) sets
// variables more easily than it writes a command line.
const envPrefix = "DISPATCHTOP_"

// envName is the variable that stands for a flag.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// flagsFromEnv gives every flag of cmd not set on the command line the
// value of its variable, as if it had been given: a flag beats its
// variable, which beats the config file and the defaults. A repeatable
// flag (--root, --allow-host, --ignore) takes a comma-separated list. A
// value the flag refuses is bad usage, named by its variable.
func flagsFromEnv(cmd *cobra.Command, lookup func(string) (string, bool)) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		name := envName(f.Name)
		v, ok := lookup(name)
		if !ok {
			return
		}
		values := []string{v}
		if f.Value.Type() == "stringArray" {
			values = strings.Split(v, ",")
		}
		for _, one := range values {
			if one = strings.TrimSpace(one); one == "" && len(values) > 1 {
				continue
			}
			if serr := cmd.Flags().Set(f.Name, one); serr != nil {
				err = usageError(fmt.Errorf("%s=%q: %v", name, v, serr))
				return
			}
		}
	})
	return err
}
