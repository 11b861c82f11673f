package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

const wordCountType = "go_word_count"

// wordCountStep is a go_word_count step as a task document writes it. Exactly one source is given:
//
//   - path: a file; relative paths are inside the work folder of the run's sandbox (sandbox_name picks
//     one when the run deployed several), absolute paths are used as written;
//   - text: the text itself;
//   - source_key / source_url: an object in the host's object store (host.store.object.read / get).
//
// The count is scored against min_words (default 1) into metadata.verifications[verifier_id] (default:
// the step id), recorded in metadata.word_counts[<step id>], and, when store_key is given, stored as
// JSON in the host's object store under that key, with its URL recorded too.
type wordCountStep struct {
	ID             string  `json:"id"`
	Path           *string `json:"path"`
	SandboxName    string  `json:"sandbox_name"`
	Text           *string `json:"text"`
	SourceKey      *string `json:"source_key"`
	SourceURL      *string `json:"source_url"`
	MinWords       *int    `json:"min_words"`
	VerifierID     string  `json:"verifier_id"`
	StoreKey       *string `json:"store_key"`
	AllowOverwrite *bool   `json:"allow_overwrite"`
}

// parseStep reads and checks a step; its errors are sentences for the task's author.
func parseStep(raw map[string]any) (*wordCountStep, error) {
	encoded, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("the step cannot be read: %w", err)
	}
	var step wordCountStep
	if err := json.Unmarshal(encoded, &step); err != nil {
		return nil, fmt.Errorf("%s %s", stepLabel(raw), describeFieldError(err))
	}
	label := stepLabel(raw)
	var sources []string
	for name, set := range map[string]bool{
		"path": step.Path != nil, "text": step.Text != nil,
		"source_key": step.SourceKey != nil, "source_url": step.SourceURL != nil,
	} {
		if set {
			sources = append(sources, name)
		}
	}
	switch len(sources) {
	case 1:
	case 0:
		return nil, fmt.Errorf("%s needs one of path, text, source_key or source_url: what to count", label)
	default:
		sort.Strings(sources)
		return nil, fmt.Errorf("%s has %s; give only one of them", label, strings.Join(sources, " and "))
	}
	if step.Path != nil && strings.TrimSpace(*step.Path) == "" {
		return nil, fmt.Errorf("%s has an empty path", label)
	}
	if step.SourceKey != nil && *step.SourceKey == "" || step.SourceURL != nil && *step.SourceURL == "" {
		return nil, fmt.Errorf("%s names an empty object", label)
	}
	if step.SandboxName != "" && step.Path == nil {
		return nil, fmt.Errorf("%s has sandbox_name but no path; sandbox_name picks where a path is read", label)
	}
	if step.MinWords != nil && *step.MinWords < 0 {
		return nil, fmt.Errorf("%s has min_words %d; it must be 0 or more", label, *step.MinWords)
	}
	if step.StoreKey != nil && *step.StoreKey == "" {
		return nil, fmt.Errorf("%s has an empty store_key", label)
	}
	return &step, nil
}

func stepLabel(raw map[string]any) string {
	if id, ok := raw["id"].(string); ok && id != "" {
		return fmt.Sprintf("step '%s' (%s)", id, wordCountType)
	}
	return "the " + wordCountType + " step"
}

func describeFieldError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		want := "a string"
		switch typeErr.Type.Kind().String() {
		case "int":
			want = "a whole number"
		case "bool":
			want = "true or false"
		}
		return fmt.Sprintf("has %s as %s; it must be %s", typeErr.Field, typeErr.Value, want)
	}
	return "cannot be read: " + err.Error()
}

func validateWordCount(_ string, raw map[string]any) error {
	_, err := parseStep(raw)
	if err != nil {
		return agentenv.NewError(agentenv.KindInvalidValue, "%s", err)
	}
	return nil
}

func executeWordCount(ctx context.Context, call *agentenv.StepCall) (map[string]any, error) {
	step, err := parseStep(call.Step)
	if err != nil {
		return nil, agentenv.StepFailed("ValueError", "%s", err)
	}
	words, source, err := step.count(ctx, call)
	if err != nil {
		return nil, err
	}
	minWords := 1
	if step.MinWords != nil {
		minWords = *step.MinWords
	}
	score, result := 0.0, "fail"
	if words >= minWords {
		score, result = 1.0, "pass"
	}
	record := map[string]any{"words": words, "source": source, "min_words": minWords}
	if step.StoreKey != nil {
		url, err := step.store(ctx, call.Host, record)
		if err != nil {
			return nil, err
		}
		record["url"] = url
	}
	// Printing is safe: the SDK has pointed fd 1 at stderr, so this is a log line for humans.
	fmt.Printf("%s: %s has %d words (at least %d expected)\n", wordCountType, source, words, minWords)
	verifierID := firstNonEmpty(step.VerifierID, step.ID, wordCountType)
	return map[string]any{
		"verifications": map[string]any{
			verifierID: map[string]any{
				"score": score,
				"results": []any{map[string]any{
					"criterion_index": 0,
					"score":           score,
					"result":          result,
					"justification":   fmt.Sprintf("%s has %d words; at least %d expected", source, words, minWords),
					"skipped":         false,
				}},
			},
		},
		"word_counts": map[string]any{firstNonEmpty(step.ID, verifierID): record},
	}, nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// count counts the words of the step's source and names it for messages.
func (s *wordCountStep) count(ctx context.Context, call *agentenv.StepCall) (int, string, error) {
	switch {
	case s.Text != nil:
		words, err := countWords(contextReader{ctx, strings.NewReader(*s.Text)})
		return words, "the text", cancelledOr(err, nil)
	case s.SourceKey != nil:
		data, err := call.Host.ObjectStore().Read(ctx, *s.SourceKey)
		source := fmt.Sprintf("object '%s'", *s.SourceKey)
		if err != nil {
			return 0, source, hostError(err, "cannot read %s from the host's object store", source)
		}
		words, err := countWords(contextReader{ctx, bytes.NewReader(data)})
		return words, source, cancelledOr(err, nil)
	case s.SourceURL != nil:
		data, err := call.Host.ObjectStore().Get(ctx, *s.SourceURL)
		source := *s.SourceURL
		if err != nil {
			return 0, source, hostError(err, "cannot read %s from the host's object store", source)
		}
		words, err := countWords(contextReader{ctx, bytes.NewReader(data)})
		return words, source, cancelledOr(err, nil)
	}
	path, err := s.resolvePath(call.Context.DeployedSandboxes)
	if err != nil {
		return 0, *s.Path, err
	}
	source := *s.Path
	info, err := os.Stat(path)
	if err == nil && info.IsDir() {
		return 0, source, agentenv.StepFailed("IsADirectoryError", "%s is a folder, not a file", path)
	}
	file, err := os.Open(path)
	if err != nil {
		return 0, source, fileError(err, path)
	}
	defer file.Close()
	words, err := countWords(contextReader{ctx, file})
	return words, source, cancelledOr(err, func(e error) error { return fileError(e, path) })
}

// resolvePath finds the file a path names: inside the work folder of the run's sandbox when relative.
func (s *wordCountStep) resolvePath(sandboxes []agentenv.Sandbox) (string, error) {
	path := *s.Path
	if filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	sandbox, err := pickSandbox(sandboxes, s.SandboxName, path)
	if err != nil {
		return "", err
	}
	if sandbox.WorkDir == "" {
		return "", agentenv.StepFailed("ValueError",
			"sandbox '%s' (%s) has no work folder on this machine; %s reads files of local sandboxes only",
			sandbox.Name, sandbox.Type, wordCountType)
	}
	joined := filepath.Join(sandbox.WorkDir, path)
	rel, err := filepath.Rel(sandbox.WorkDir, joined)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", agentenv.StepFailed("ValueError", "path '%s' leaves the work folder of sandbox '%s'", path, sandbox.Name)
	}
	return joined, nil
}

func pickSandbox(sandboxes []agentenv.Sandbox, name, path string) (agentenv.Sandbox, error) {
	names := make([]string, len(sandboxes))
	for i, sb := range sandboxes {
		if name != "" && sb.Name == name {
			return sb, nil
		}
		names[i] = sb.Name
	}
	switch {
	case name != "" && len(sandboxes) == 0:
		return agentenv.Sandbox{}, agentenv.StepFailed("ValueError",
			"sandbox '%s' is not deployed in this run; it deployed none", name)
	case name != "":
		return agentenv.Sandbox{}, agentenv.StepFailed("ValueError",
			"sandbox '%s' is not deployed in this run; it deployed %s", name, strings.Join(names, ", "))
	case len(sandboxes) == 1:
		return sandboxes[0], nil
	case len(sandboxes) == 0:
		return agentenv.Sandbox{}, agentenv.StepFailed("ValueError",
			"path '%s' is relative, and the run deployed no sandbox to read it in; deploy one first (deploy_sandbox) or give an absolute path", path)
	}
	return agentenv.Sandbox{}, agentenv.StepFailed("ValueError",
		"path '%s' is relative, and the run deployed %d sandboxes (%s); name one with sandbox_name",
		path, len(sandboxes), strings.Join(names, ", "))
}

// store puts the count, as JSON, in the host's object store and returns its URL.
func (s *wordCountStep) store(ctx context.Context, host *agentenv.Host, record map[string]any) (string, error) {
	body, err := json.Marshal(record)
	if err != nil {
		return "", err
	}
	overwrite := s.AllowOverwrite == nil || *s.AllowOverwrite
	url, err := host.ObjectStore().Put(ctx, *s.StoreKey, body, "application/json", overwrite)
	if err != nil {
		return "", hostError(err, "cannot store the count under '%s' in the host's object store", *s.StoreKey)
	}
	return url, nil
}

// hostError turns a failed host call into the step's error. Cancellation stays cancellation.
func hostError(err error, format string, args ...any) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	errorType := "StoreError"
	var rpcErr *agentenv.Error
	if errors.As(err, &rpcErr) {
		switch rpcErr.Kind() {
		case agentenv.KindNotFound:
			errorType = "NotFoundError"
		case agentenv.KindAlreadyExists:
			errorType = "AlreadyExistsError"
		case agentenv.KindForeignURL:
			errorType = "ForeignURLError"
		}
	}
	return agentenv.StepFailed(errorType, "%s: %s", fmt.Sprintf(format, args...), err)
}

func fileError(err error, path string) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return agentenv.StepFailed("FileNotFoundError", "no file at %s", path)
	case errors.Is(err, os.ErrPermission):
		return agentenv.StepFailed("PermissionError", "cannot read %s: permission denied", path)
	}
	return agentenv.StepFailed("OSError", "cannot read %s: %s", path, err)
}

// cancelledOr passes cancellation through and maps other errors with other (nil: unchanged).
func cancelledOr(err error, other func(error) error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || other == nil {
		return err
	}
	return other(err)
}

// contextReader stops reading once ctx is done, so a cancelled step stops counting.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
