package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// The results of execute, as the host reads them.
type verification struct {
	Score   float64 `json:"score"`
	Results []struct {
		CriterionIndex int     `json:"criterion_index"`
		Score          float64 `json:"score"`
		Result         string  `json:"result"`
		Justification  string  `json:"justification"`
		Skipped        bool    `json:"skipped"`
	} `json:"results"`
}

type wordCount struct {
	Words    int    `json:"words"`
	Source   string `json:"source"`
	MinWords int    `json:"min_words"`
	URL      string `json:"url"`
}

type executeResult struct {
	Metadata struct {
		Verifications map[string]verification `json:"verifications"`
		WordCounts    map[string]wordCount    `json:"word_counts"`
	} `json:"metadata"`
}

func executeParams(step map[string]any, workDir string) map[string]any {
	step["type"] = wordCountType
	sandboxes := []any{}
	if workDir != "" {
		sandboxes = append(sandboxes, map[string]any{
			"sandbox_name": "box", "sandbox_id": "local-1a2b3c4d", "sandbox_type": "local",
			"sandbox_mode": "vm", "work_dir": workDir,
		})
	}
	return map[string]any{
		"type": wordCountType,
		"step": step,
		"context": map[string]any{
			"instance_id":        "@local/~/demo/count-3k2x9a0q",
			"metadata":           map[string]any{"task_id": "@local/~/demo/count"},
			"deployed_sandboxes": sandboxes,
		},
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInitializeAnswersWithTheManifestsContributions(t *testing.T) {
	h := startPlugin(t)
	result := h.initialize()
	if result.Protocol != 1 || result.Plugin.Name != pluginName || result.Plugin.Version != pluginVersion {
		t.Fatalf("initialize answered %+v", result)
	}
	want := []agentenv.Contribution{
		{Group: "task_steps", Name: "go_word_count", Type: "go_word_count", Class: "GoWordCount",
			Methods: []string{"execute", "from_dict", "validate"}},
		{Group: "cli_plugins", Name: "go-words", Type: "go-words", Class: "go-words",
			Methods: []string{"run"}, Description: "Count the words of files"},
	}
	if !reflect.DeepEqual(result.Contributions, want) {
		t.Fatalf("contributions %+v\nwant %+v", result.Contributions, want)
	}
	// The manifest declares exactly these.
	m := readManifest(t, "agent-env-plugin.toml")
	if m.name != pluginName || m.version != pluginVersion {
		t.Fatalf("the manifest says %s %s; the binary says %s %s", m.name, m.version, pluginName, pluginVersion)
	}
	declared := map[string]string{}
	for _, c := range result.Contributions {
		declared[c.Group+"."+c.Name] = c.Class
	}
	for _, s := range result.Stores {
		declared["stores."+s.Class] = string(s.Kind)
	}
	if !reflect.DeepEqual(m.provides, declared) {
		t.Fatalf("the manifest provides %v; initialize answers %v", m.provides, declared)
	}
}

func TestAHostWithNoCommonVersionGetsProtocolMismatch(t *testing.T) {
	h := startPlugin(t)
	e := h.callError("initialize", initializeParams(2, 3))
	if e.Code != -32010 || e.Kind() != agentenv.KindProtocolMismatch {
		t.Fatalf("want -32010, got %d %s", e.Code, e.Message)
	}
	if !reflect.DeepEqual(e.Data["supported"], map[string]any{"min": 1.0, "max": 1.0}) ||
		!reflect.DeepEqual(e.Data["requested"], map[string]any{"min": 2.0, "max": 3.0}) {
		t.Fatalf("data %v", e.Data)
	}
	if !strings.Contains(e.Message, pluginName) {
		t.Errorf("the message does not name the plugin: %s", e.Message)
	}
}

func TestCountsAFileInTheSandboxWorkFolder(t *testing.T) {
	work := t.TempDir()
	writeFile(t, work, "essay.txt", "Héllo,  wörld!\n\tthis is\u00a0a test\n")
	h := startPlugin(t)
	h.initialize()
	var result executeResult
	h.call("execute", executeParams(map[string]any{"id": "count", "path": "essay.txt", "min_words": 6}, work), &result)
	v := result.Metadata.Verifications["count"]
	if v.Score != 1 || len(v.Results) != 1 || v.Results[0].Score != 1 || v.Results[0].Result != "pass" {
		t.Fatalf("verification %+v", v)
	}
	if got := result.Metadata.WordCounts["count"]; got.Words != 6 || got.Source != "essay.txt" || got.MinWords != 6 {
		t.Fatalf("word count %+v", got)
	}
	// Below the minimum scores 0, under the verifier id the step names.
	h.call("execute", executeParams(map[string]any{"id": "strict", "verifier_id": "length", "path": "essay.txt", "min_words": 7}, work), &result)
	if v := result.Metadata.Verifications["length"]; v.Score != 0 || v.Results[0].Result != "fail" ||
		!strings.Contains(v.Results[0].Justification, "6 words; at least 7 expected") {
		t.Fatalf("verification %+v", v)
	}
	if result.Metadata.WordCounts["strict"].Words != 6 {
		t.Fatalf("word counts %+v", result.Metadata.WordCounts)
	}
}

func TestAStrayPrintGoesToStderrNotStdout(t *testing.T) {
	h := startPlugin(t)
	h.initialize()
	h.call("execute", executeParams(map[string]any{"id": "count", "text": "one two"}, ""), nil)
	h.call("shutdown", nil, nil)
	if code := h.exitCode(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Every stdout line was JSON-RPC (recv checks), and the step's fmt.Printf went to stderr.
	h.drained()
	if !h.stderrContains("go_word_count: the text has 2 words") {
		t.Fatalf("stderr:\n%s", h.stderr)
	}
}

func TestStepFailuresAreStepFailedWithAnErrorType(t *testing.T) {
	work := t.TempDir()
	h := startPlugin(t)
	h.initialize()
	cases := []struct {
		step      map[string]any
		workDir   string
		errorType string
		message   string
	}{
		{map[string]any{"id": "c", "path": "missing.txt"}, work, "FileNotFoundError", "no file at " + filepath.Join(work, "missing.txt")},
		{map[string]any{"id": "c", "path": "../outside.txt"}, work, "ValueError", "path '../outside.txt' leaves the work folder of sandbox 'box'"},
		{map[string]any{"id": "c", "path": "a.txt"}, "", "ValueError", "the run deployed no sandbox"},
		{map[string]any{"id": "c", "path": "a.txt", "sandbox_name": "other"}, work, "ValueError", "sandbox 'other' is not deployed in this run; it deployed box"},
		{map[string]any{"id": "c"}, work, "ValueError", "step 'c' (go_word_count) needs one of path, text, source_key or source_url"},
		{map[string]any{"id": "c", "text": "x", "min_words": "ten"}, work, "ValueError", "has min_words as string; it must be a whole number"},
		{map[string]any{"id": "c", "path": "."}, work, "IsADirectoryError", "is a folder, not a file"},
	}
	for _, c := range cases {
		e := h.callError("execute", executeParams(c.step, c.workDir))
		if e.Code != -32020 || e.Kind() != agentenv.KindStepFailed || e.DataString("error_type") != c.errorType ||
			!strings.Contains(e.DataString("message"), c.message) {
			t.Errorf("step %v: got %d %s %q; want %s containing %q", c.step, e.Code, e.DataString("error_type"), e.DataString("message"), c.errorType, c.message)
		}
	}
}

func TestValidateRefusesABadStepWithInvalidValue(t *testing.T) {
	h := startPlugin(t)
	h.initialize()
	e := h.callError("task_step.validate", map[string]any{"type": wordCountType, "step": map[string]any{"id": "c", "path": "a", "text": "b"}})
	if e.Code != -32004 || !strings.Contains(e.Message, "has path and text; give only one of them") {
		t.Fatalf("got %d %s", e.Code, e.Message)
	}
	var ok any
	h.call("task_step.validate", map[string]any{"type": wordCountType, "step": map[string]any{"id": "c", "path": "a"}}, &ok)
	if ok != nil {
		t.Fatalf("a good step validated to %v", ok)
	}
	e = h.callError("execute", map[string]any{"type": "no_such_step", "step": map[string]any{}, "context": map[string]any{}})
	if e.Code != -32602 || !strings.Contains(e.Message, "no task step of type 'no_such_step'; it has go_word_count") {
		t.Fatalf("got %d %s", e.Code, e.Message)
	}
	if e := h.callError("envs.from_dict", map[string]any{}); e.Code != -32601 {
		t.Fatalf("an unknown method: %d %s", e.Code, e.Message)
	}
}

func TestNestedHostCallsPassTheCountThroughTheObjectStore(t *testing.T) {
	h := startPlugin(t)
	h.initialize()
	id := h.request("execute", executeParams(map[string]any{
		"id": "count", "source_key": "essays/e1.txt", "store_key": "counts/e1.json", "min_words": 4,
	}, ""))
	read, params := h.expectRequest("host.store.object.read")
	if params["key"] != "essays/e1.txt" {
		t.Fatalf("read %v", params)
	}
	h.respond(read.ID, map[string]any{"data": base64.StdEncoding.EncodeToString([]byte("one two three four"))})
	put, params := h.expectRequest("host.store.object.put")
	if params["key"] != "counts/e1.json" || params["content_type"] != "application/json" || params["allow_overwrite"] != true {
		t.Fatalf("put %v", params)
	}
	data, err := base64.StdEncoding.DecodeString(params["data"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var stored wordCount
	if err := json.Unmarshal(data, &stored); err != nil || stored.Words != 4 || stored.Source != "object 'essays/e1.txt'" {
		t.Fatalf("stored %s (%v)", data, err)
	}
	h.respond(put.ID, map[string]any{"url": "cas://demo/counts/e1.json"})
	msg := h.answer(id)
	if msg.Error != nil {
		t.Fatalf("execute failed: %v", msg.Error)
	}
	var result executeResult
	if err := json.Unmarshal(msg.Result, &result); err != nil {
		t.Fatal(err)
	}
	if got := result.Metadata.WordCounts["count"]; got.URL != "cas://demo/counts/e1.json" || got.Words != 4 {
		t.Fatalf("word count %+v", got)
	}
	if result.Metadata.Verifications["count"].Score != 1 {
		t.Fatalf("verifications %+v", result.Metadata.Verifications)
	}
}

func TestAHostStoreErrorFailsTheStepWithItsKind(t *testing.T) {
	h := startPlugin(t)
	h.initialize()
	id := h.request("execute", executeParams(map[string]any{"id": "count", "source_url": "cas://demo/nothing"}, ""))
	get, params := h.expectRequest("host.store.object.get")
	if params["url"] != "cas://demo/nothing" {
		t.Fatalf("get %v", params)
	}
	h.respondError(get.ID, agentenv.NewError(agentenv.KindNotFound, "No object at cas://demo/nothing."))
	msg := h.answer(id)
	if msg.Error == nil || msg.Error.Code != -32020 || msg.Error.DataString("error_type") != "NotFoundError" ||
		!strings.Contains(msg.Error.Message, "No object at cas://demo/nothing.") {
		t.Fatalf("want step-failed NotFoundError, got %+v", msg.Error)
	}
}

func TestCancelStopsAStepWaitingOnTheHost(t *testing.T) {
	h := startPlugin(t)
	h.initialize()
	id := h.request("execute", executeParams(map[string]any{"id": "count", "source_key": "slow"}, ""))
	read, _ := h.expectRequest("host.store.object.read")
	// The host gives up on execute while the plugin waits for its read.
	h.notify("$/cancelRequest", map[string]any{"id": id})
	var sawCancel, sawAnswer bool
	for !sawCancel || !sawAnswer {
		msg := h.recv()
		switch {
		case msg.Kind == agentenv.KindNotification && msg.Method == "$/cancelRequest":
			var p struct {
				ID agentenv.ID `json:"id"`
			}
			if err := json.Unmarshal(msg.Params, &p); err != nil || p.ID != read.ID {
				t.Fatalf("the plugin cancelled %s, want its read %v", msg.Params, read.ID)
			}
			sawCancel = true
		case msg.Kind == agentenv.KindResponse && msg.ID == agentenv.IntID(id):
			if msg.Error == nil || msg.Error.Code != -32800 || msg.Error.Kind() != agentenv.KindCancelled {
				t.Fatalf("want -32800 for the cancelled execute, got %+v %s", msg.Error, msg.Result)
			}
			sawAnswer = true
		default:
			t.Fatalf("unexpected %s %q", msg.Kind, msg.Method)
		}
	}
	// A late answer to the cancelled read is dropped, and the plugin carries on.
	h.respond(read.ID, map[string]any{"data": base64.StdEncoding.EncodeToString([]byte("too late"))})
	var result executeResult
	h.call("execute", executeParams(map[string]any{"id": "again", "text": "still here"}, ""), &result)
	if result.Metadata.WordCounts["again"].Words != 2 {
		t.Fatalf("after the cancel: %+v", result)
	}
}

func TestSixteenMebibytePayloadsCrossThePipe(t *testing.T) {
	const size = 16 << 20
	text := strings.Repeat("word ", size/5) // 16 MiB of text, 3355443 words
	wantWords := size / 5
	h := startPlugin(t)
	h.initialize()
	// In a request from the host.
	var result executeResult
	h.call("execute", executeParams(map[string]any{"id": "inline", "text": text}, ""), &result)
	if got := result.Metadata.WordCounts["inline"].Words; got != wantWords {
		t.Fatalf("inline: %d words, want %d", got, wantWords)
	}
	// In the host's answer to the plugin (a 21 MiB line of base64).
	id := h.request("execute", executeParams(map[string]any{"id": "stored", "source_key": "big.txt"}, ""))
	read, _ := h.expectRequest("host.store.object.read")
	h.respond(read.ID, map[string]any{"data": base64.StdEncoding.EncodeToString([]byte(text))})
	msg := h.answer(id)
	if msg.Error != nil {
		t.Fatalf("execute failed: %v", msg.Error)
	}
	if err := json.Unmarshal(msg.Result, &result); err != nil {
		t.Fatal(err)
	}
	if got := result.Metadata.WordCounts["stored"].Words; got != wantWords {
		t.Fatalf("stored: %d words, want %d", got, wantWords)
	}
}

func TestNoiseOnTheInputIsSkipped(t *testing.T) {
	h := startPlugin(t)
	h.sendLine([]byte("this is not JSON"))
	h.sendLine([]byte(`{"jsonrpc":"1.0","id":1,"method":"x"}`))
	h.initialize()
	if !h.stderrContains("ignored a line that is not a JSON-RPC message") {
		t.Fatalf("stderr:\n%s", h.stderr)
	}
}

func TestStdinEndOfFileExits0(t *testing.T) {
	h := startPlugin(t)
	h.initialize()
	_ = h.in.Close()
	if code := h.exitCode(); code != 0 {
		t.Fatalf("exit %d after end of file; stderr:\n%s", code, h.stderr)
	}
}

func TestShutdownExits0WithoutWaitingForEndOfFile(t *testing.T) {
	h := startPlugin(t)
	h.initialize()
	var result any = "unset"
	h.call("shutdown", nil, &result)
	if result != nil {
		t.Fatalf("shutdown answered %v, want null", result)
	}
	if code := h.exitCode(); code != 0 {
		t.Fatalf("exit %d after shutdown", code)
	}
}

func TestRunByHandSaysWhatItIsAndExits2(t *testing.T) {
	cmd := exec.Command(pluginBin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	// A stdin that never ends: the plugin must exit without reading it.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinW.Close()
	cmd.Stdin = stdinR
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	stdinR.Close()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
		t.Fatalf("want exit 2, got %v", err)
	}
	want := "agentenv-go-words 0.1.0 is an agent-env plugin; agent-env starts it (try agent-env plugin show agentenv-go-words)\n"
	if stderr.String() != want || stdout.String() != "" {
		t.Fatalf("stderr %q stdout %q", stderr.String(), stdout.String())
	}
}

func TestTheManifestFlagPrintsTheManifest(t *testing.T) {
	out, err := exec.Command(pluginBin, agentenv.PrintManifestArg).Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("agent-env-plugin.toml")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(want) {
		t.Fatalf("printed:\n%s\nwant:\n%s", out, want)
	}
}

// The committed manifest is what the code registers, so the two cannot drift apart.
func TestTheCommittedManifestIsTheGeneratedOne(t *testing.T) {
	want, err := os.ReadFile("agent-env-plugin.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := newPlugin().Manifest(); got != string(want) {
		t.Fatalf("agent-env-plugin.toml is not what the code registers; regenerate it with\n"+
			"  go run . --agent-env-manifest > agent-env-plugin.toml\ngenerated:\n%s\ncommitted:\n%s", got, want)
	}
}

// An installed copy (manifest and binary in one folder of the plugins directory) starts from the
// manifest's exec, resolved against the manifest's folder as agent-env resolves it.
func TestAnInstalledCopyStartsFromItsManifest(t *testing.T) {
	folder := filepath.Join(t.TempDir(), "plugins", pluginName)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	manifestText, err := os.ReadFile("agent-env-plugin.toml")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, folder, "agent-env-plugin.toml", string(manifestText))
	binary, err := os.ReadFile(pluginBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "agentenv-go-words"), binary, 0o755); err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, filepath.Join(folder, "agent-env-plugin.toml"))
	if len(m.exec) != 1 || filepath.IsAbs(m.exec[0]) {
		t.Fatalf("exec %v: want one path relative to the manifest's folder", m.exec)
	}
	saved := pluginBin
	pluginBin = filepath.Join(folder, m.exec[0])
	defer func() { pluginBin = saved }()
	h := startPlugin(t)
	if result := h.initialize(); result.Plugin.Name != m.name {
		t.Fatalf("initialize %+v", result)
	}
}

func TestCommandModeRunsOverFds3And4(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "one two three\n")
	writeFile(t, dir, "b.txt", "four five")
	h := startCommandMode(t, strings.NewReader("six seven eight nine\n"))
	h.initialize()
	var run struct {
		ExitCode *int `json:"exit_code"`
	}
	h.call("cli.run", map[string]any{"command": "go-words", "argv": []string{"count", "a.txt", "b.txt", "-"}, "cwd": dir, "interactive": false}, &run)
	if run.ExitCode == nil || *run.ExitCode != 0 {
		t.Fatalf("exit_code %v; stderr:\n%s", run.ExitCode, h.stderr)
	}
	h.call("cli.run", map[string]any{"command": "go-words", "argv": []string{"count", "missing.txt"}, "cwd": dir}, &run)
	if *run.ExitCode != 1 {
		t.Fatalf("a missing file: exit_code %d", *run.ExitCode)
	}
	h.call("cli.run", map[string]any{"command": "go-words", "argv": []string{"frobnicate"}, "cwd": dir}, &run)
	if *run.ExitCode != 2 {
		t.Fatalf("an unknown subcommand: exit_code %d", *run.ExitCode)
	}
	h.call("shutdown", nil, nil)
	if code := h.exitCode(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	h.drained()
	// The command's output went to the terminal's stdout and stderr, not to the protocol.
	if got, want := h.stdout.String(), "3 a.txt\n2 b.txt\n4 -\n9 total\n"; got != want {
		t.Fatalf("terminal stdout %q, want %q", got, want)
	}
	for _, want := range []string{"agent-env go-words count: there is no file missing.txt", "there is no command 'frobnicate'"} {
		if !strings.Contains(h.stderr.String(), want) {
			t.Errorf("terminal stderr lacks %q:\n%s", want, h.stderr)
		}
	}
}

// manifestFields is what the tests read of agent-env-plugin.toml: a line-based reader for the flat subset the
// file uses, so the test needs no TOML library.
type manifestFields struct {
	name, version string
	exec          []string
	provides      map[string]string // "<group>.<name>" -> class
}

func readManifest(t *testing.T, path string) manifestFields {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	m := manifestFields{provides: map[string]string{}}
	table := ""
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			table = strings.Trim(line, "[]")
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: cannot read %q", path, line)
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case table == "plugin" && key == "name":
			m.name = unquote(t, value)
		case table == "plugin" && key == "version":
			m.version = unquote(t, value)
		case table == "plugin" && key == "exec":
			if err := json.Unmarshal([]byte(value), &m.exec); err != nil {
				t.Fatalf("exec %s: %v", value, err)
			}
		case strings.HasPrefix(table, "provides."):
			group := strings.TrimPrefix(table, "provides.")
			class := value
			if strings.HasPrefix(value, "{") {
				_, after, found := strings.Cut(value, "class =")
				if !found {
					t.Fatalf("%s: %s has no class", path, key)
				}
				class, _, _ = strings.Cut(strings.TrimSpace(after), ",")
			}
			m.provides[group+"."+key] = unquote(t, strings.TrimSpace(class))
		}
	}
	if err := scanner.Err(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return m
}

func unquote(t *testing.T, s string) string {
	t.Helper()
	var v string
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not a string: %s", s)
	}
	return v
}
