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

// error.message is "<type>: <message>", as the Rust and Python SDKs send it; data.message is the
// message alone.
func TestAStepFailedMessageNamesItsTypeAsTheOtherSDKsDo(t *testing.T) {
	failed := StepFailed("ValueError", "'min_words' must be a number, not %s", "string")
	if failed.Message != "ValueError: 'min_words' must be a number, not string" || failed.Error() != failed.Message {
		t.Fatalf("message %q", failed.Message)
	}
	if failed.DataString("message") != "'min_words' must be a number, not string" || failed.DataString("error_type") != "ValueError" {
		t.Fatalf("data %v", failed.Data)
	}
	if bare := StepFailed("LookupError", ""); bare.Message != "LookupError" || bare.DataString("message") != "" {
		t.Fatalf("without a message: %q %v", bare.Message, bare.Data)
	}
	_, open := os.Open("/no/such/file")
	var rpcErr *Error
	if !errors.As(stepError(fmt.Errorf("reading essays: %w", open)), &rpcErr) ||
		rpcErr.Message != "PathError: reading essays: open /no/such/file: no such file or directory" {
		t.Fatalf("a plain error's message: %v", rpcErr)
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
	if rpcErr.DataString("error_type") != "panic" || rpcErr.Message != "panic: the essay's scores are missing" ||
		rpcErr.DataString("message") != "the essay's scores are missing" {
		t.Fatalf("type or message: %v %v", rpcErr.Message, rpcErr.Data)
	}
	traceback := rpcErr.DataString("traceback")
	if !strings.HasPrefix(traceback, "panic: the essay's scores are missing") || !strings.Contains(traceback, "step_errors_test.go") {
		t.Fatalf("traceback:\n%s", traceback)
	}
}

func TestAnEndedCallsErrorFailsTheStepAsCallEndedError(t *testing.T) {
	host := newHost(nil, IntID(7))
	host.end()
	_, ended := host.ObjectStore().Put(context.Background(), "late.txt", []byte("late"), "text/plain", false)
	var rpcErr *Error
	if !errors.As(ended, &rpcErr) || rpcErr.Kind() != KindInvalidRequest || !errors.Is(ended, ErrCallEnded) {
		t.Fatalf("a put through an ended Host gave %#v", ended)
	}
	t.Run("as it is", func(t *testing.T) {
		if !errors.As(stepError(ended), &rpcErr) || rpcErr.Kind() != KindStepFailed {
			t.Fatalf("not step-failed: %v", rpcErr)
		}
		if rpcErr.DataString("error_type") != "CallEndedError" || rpcErr.DataString("message") != ended.Error() {
			t.Fatalf("data %v", rpcErr.Data)
		}
		if _, ok := rpcErr.Data["traceback"]; ok {
			t.Fatalf("traceback sent: %v", rpcErr.Data)
		}
	})
	t.Run("wrapped", func(t *testing.T) {
		if !errors.As(stepError(fmt.Errorf("saving the grade: %w", ended)), &rpcErr) || rpcErr.Kind() != KindStepFailed {
			t.Fatalf("not step-failed: %v", rpcErr)
		}
		want := "saving the grade: " + ended.Error()
		if rpcErr.DataString("error_type") != "CallEndedError" || rpcErr.DataString("message") != want {
			t.Fatalf("data %v", rpcErr.Data)
		}
		if chain := rpcErr.DataString("traceback"); chain != want+"\ncaused by: "+ended.Error() {
			t.Fatalf("traceback:\n%s", chain)
		}
	})
}

func TestAnotherInvalidRequestErrorIsSentAsItIs(t *testing.T) {
	refused := NewError(KindInvalidRequest, "the host refused it")
	if errors.Is(refused, ErrCallEnded) {
		t.Fatal("an invalid-request error of the host's matched ErrCallEnded")
	}
	var rpcErr *Error
	if !errors.As(stepError(refused), &rpcErr) || rpcErr != refused {
		t.Fatalf("not sent as it is: %#v", rpcErr)
	}
}

type quotaError struct{ left int }

func (q *quotaError) Error() string { return fmt.Sprintf("%d requests left", q.left) }

// What the README says a step's plain errors show as: errors.New has no type of its own ("Error"); an
// error type of the plugin's own is shown by its name, returned as it is or wrapped with %w.
func TestAPlainErrorShowsAsErrorAndAnOwnTypeByItsName(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{errors.New("x"), "Error: x"},
		{fmt.Errorf("grading: %w", errors.New("x")), "Error: grading: x"},
		{&quotaError{left: 0}, "quotaError: 0 requests left"},
		{fmt.Errorf("grading: %w", &quotaError{left: 0}), "quotaError: grading: 0 requests left"},
	}
	for _, c := range cases {
		var rpcErr *Error
		if !errors.As(stepError(c.err), &rpcErr) || rpcErr.Message != c.want {
			t.Errorf("%v: got %v, want %q", c.err, rpcErr, c.want)
		}
	}
}
