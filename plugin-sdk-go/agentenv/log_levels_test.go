package agentenv

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestLogSendsEachOfTheFourLevelsByConstantOrName(t *testing.T) {
	var out bytes.Buffer
	host := newHost(NewConn(strings.NewReader(""), &out, nil, Options{}), IntID(7))
	for _, level := range []string{LogDebug, LogInfo, LogWarning, LogError, "info"} {
		if err := host.Log(level, "at "+level); err != nil {
			t.Fatalf("Log(%q): %v", level, err)
		}
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"$/log","params":{"call_id":7,"level":"debug","message":"at debug"}}`,
		`{"jsonrpc":"2.0","method":"$/log","params":{"call_id":7,"level":"info","message":"at info"}}`,
		`{"jsonrpc":"2.0","method":"$/log","params":{"call_id":7,"level":"warning","message":"at warning"}}`,
		`{"jsonrpc":"2.0","method":"$/log","params":{"call_id":7,"level":"error","message":"at error"}}`,
		`{"jsonrpc":"2.0","method":"$/log","params":{"call_id":7,"level":"info","message":"at info"}}`,
	}
	if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent:\n%s", out.String())
	}
}

func TestLogRefusesAnUnknownLevelAndSendsNothing(t *testing.T) {
	var out bytes.Buffer
	host := newHost(NewConn(strings.NewReader(""), &out, nil, Options{}), IntID(7))
	for _, level := range []string{"warn", "INFO", ""} {
		err := host.Log(level, "never sent")
		var unknown *UnknownLogLevelError
		if !errors.As(err, &unknown) || unknown.Level != level {
			t.Fatalf("Log(%q) gave %v", level, err)
		}
		if want := "'" + level + "' is not a log level; $/log takes debug, info, warning or error"; err.Error() != want {
			t.Fatalf("Log(%q) said %q", level, err)
		}
	}
	if out.Len() != 0 {
		t.Fatalf("sent: %s", out.String())
	}
}
