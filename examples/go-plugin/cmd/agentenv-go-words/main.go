// Command agentenv-go-words is an agent-env plugin written in Go with the standard library only.
//
// It contributes the task step go_word_count (count the words of a file in a sandbox's work folder, of
// inline text, or of an object in the host's object store; score the count against a minimum; store the
// count in the host's object store), the CLI command `agent-env go-words count FILE...`, and an object
// store, GoFileObjectStore, that keeps objects as files under a folder.
package main

import (
	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// The package name and version. agent-env-plugin.toml beside this file is what the binary prints with
// --agent-env-manifest; a test keeps the two equal (regenerate it with go run . --agent-env-manifest).
const (
	pluginName    = "agentenv-go-words"
	pluginVersion = "0.1.0"
)

func newPlugin() *agentenv.Plugin {
	p := agentenv.NewPlugin(pluginName, pluginVersion)
	p.Description = "Counts words: a task step that scores a text against a minimum, and the go-words command"
	p.Requires = map[string]string{"agentenv-framework": ">=0.1.0"}
	p.AddTaskStep(agentenv.TaskStep{
		Type:     wordCountType,
		Class:    "GoWordCount",
		Execute:  executeWordCount,
		Validate: validateWordCount,
	})
	p.AddCommand(agentenv.Command{
		Name:        commandName,
		Class:       commandName,
		Description: "Count the words of files",
		Run:         runCommand,
	})
	p.AddObjectStore(agentenv.StoreClass[agentenv.ObjectStore]{
		Class:        fileStoreClass,
		ConfigKeys:   []string{"root", "bucket"},
		RequiredKeys: []string{"root"},
		Open:         openFileStore,
	})
	return p
}

func main() {
	newPlugin().Main()
}
