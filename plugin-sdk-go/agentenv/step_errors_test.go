package agentenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
)

func TestAPlainErrorBecomesStepFailedWithItsChain(t *testing.T) {
	_, open := os.Open("/no/such/file")
	err := stepError(fmt.Errorf("grading: %w", fmt.Errorf("reading essays: %w", open)))
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Kind() != KindStepFailed {
		t.Fatalf("not step-failed: %v", err)
	}
	if got := rpcErr.DataString("error_type"); got != "PathError" {
		t.Fatalf("error_type %q", got)
	}
	chain := rpcErr.DataString("traceback")
	want := []string{"grading: reading essays: open /no/such/file: no such file or directory",
		"caused by: reading essays: open /no/such/file: no such file or directory",
		"  caused by: open /no/such/file: no such file or directory",
		"    caused by: no such file or directory"}
	if chain != strings.Join(want, "\n") {
		t.Fatalf("chain:\n%s", chain)
	}
	var pathErr *fs.PathError
	if !errors.As(open, &pathErr) {
		t.Fatal("os.Open did not fail with a PathError")
	}
}

func TestAStepFailedWithoutCausesSendsNoTraceback(t *testing.T) {
	err := stepError(StepFailed("ValueError", "essay is empty"))
	var rpcErr *Error
	if !errors.As(err, &rpcErr) {
		t.Fatal("not an *Error")
	}
	if _, ok := rpcErr.Data["traceback"]; ok {
		t.Fatalf("traceback sent: %v", rpcErr.Data)
	}
	if rpcErr.DataString("error_type") != "ValueError" {
		t.Fatalf("error_type %v", rpcErr.Data)
	}
}

func TestAPanickingStepFailsWithItsStackAsTraceback(t *testing.T) {
	step := &TaskStep{Type: "boom_step", Execute: func(context.Context, *StepCall) (map[string]any, error) {
		panic("the essay's scores are missing")
	}}
	_, err := executeStep(context.Background(), step, &StepCall{Type: "boom_step"})
	var rpcErr *Error
	if !errors.As(stepError(err), &rpcErr) || rpcErr.Kind() != KindStepFailed {
		t.Fatalf("not step-failed: %v", err)
	}
	if rpcErr.DataString("error_type") != "panic" || rpcErr.Message != "the essay's scores are missing" {
		t.Fatalf("type or message: %v %v", rpcErr.Message, rpcErr.Data)
	}
	traceback := rpcErr.DataString("traceback")
	if !strings.HasPrefix(traceback, "panic: the essay's scores are missing") || !strings.Contains(traceback, "step_errors_test.go") {
		t.Fatalf("traceback:\n%s", traceback)
	}
}
