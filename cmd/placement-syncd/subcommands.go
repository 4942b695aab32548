package main

import (
	"fmt"
	"slices"
	"strings"
)

// subcommands are the subcommands of each command that has them, in
// usage's order. db, fpga and policy accept these first words and no
// other (checkSubcommand); demo, gate and jobs check theirs in their own
// words. The exit-code test runs every one.
func subcommands() map[string][]string {
	return map[string][]string{
		"db":     {"migrate", "version", "import", "export", "verify"},
		"fpga":   {"program", "clear"},
		"demo":   {"init", "cycle"},
		"policy": {"list"},
		"gate":   {"show", "set"},
		"jobs":   {"list", "run"},
	}
}

// checkSubcommand is the usage error of command name when args do not
// start with one of its subcommands.
func checkSubcommand(name string, args []string) error {
	subs := subcommands()[name]
	list := strings.Join(subs, ", ")
	if i := strings.LastIndex(list, ", "); i >= 0 {
		list = list[:i] + " or " + list[i+2:]
	}
	switch {
	case len(args) == 0:
		return usageError{fmt.Errorf("%s: missing subcommand (%s)", name, list)}
	case !slices.Contains(subs, args[0]):
		return usageError{fmt.Errorf("%s: unknown subcommand %q (%s)", name, args[0], list)}
	}
	return nil
}
