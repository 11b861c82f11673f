package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

const commandName = "go-words"

const usage = `Usage: agent-env go-words count FILE...

Count the words of each FILE (runs of characters between white space, as wc -w counts them).
A relative FILE is relative to the current folder; - reads standard input.
`

// runCommand runs `agent-env go-words ...` in command mode: its output goes to the terminal.
func runCommand(ctx context.Context, inv *agentenv.Invocation) int {
	args := inv.Argv
	if len(args) == 0 {
		fmt.Fprint(inv.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(inv.Stdout, usage)
		return 0
	case "count":
		return runCount(ctx, inv, args[1:])
	}
	fmt.Fprintf(inv.Stderr, "agent-env go-words: there is no command '%s'; the command is count (see agent-env go-words --help)\n", args[0])
	return 2
}

func runCount(ctx context.Context, inv *agentenv.Invocation, files []string) int {
	if len(files) == 0 {
		fmt.Fprint(inv.Stderr, "agent-env go-words count: name at least one FILE\n\n"+usage)
		return 2
	}
	status, total := 0, 0
	for _, name := range files {
		words, err := countFile(ctx, inv, name)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return 130
			}
			fmt.Fprintf(inv.Stderr, "agent-env go-words count: %s\n", err)
			status = 1
			continue
		}
		total += words
		fmt.Fprintf(inv.Stdout, "%d %s\n", words, name)
	}
	if len(files) > 1 {
		fmt.Fprintf(inv.Stdout, "%d total\n", total)
	}
	return status
}

func countFile(ctx context.Context, inv *agentenv.Invocation, name string) (int, error) {
	if name == "-" {
		return countWords(contextReader{ctx, inv.Stdin})
	}
	path := name
	if !filepath.IsAbs(path) && inv.Cwd != "" {
		path = filepath.Join(inv.Cwd, path)
	}
	file, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("there is no file %s", name)
		}
		return 0, fmt.Errorf("cannot read %s: %w", name, errors.Unwrap(err))
	}
	defer file.Close()
	info, err := file.Stat()
	if err == nil && info.IsDir() {
		return 0, fmt.Errorf("%s is a folder, not a file", name)
	}
	words, err := countWords(contextReader{ctx, file})
	if err != nil && !errors.Is(err, context.Canceled) {
		return 0, fmt.Errorf("cannot read %s: %w", name, err)
	}
	return words, err
}
