package agentenv

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

const callTimeout = 20 * time.Second

// echoHandler answers "echo" with its params, "ask_back" by calling "echo" on the other side, and
// "block" by waiting for cancellation (reporting it on cancelled).
type echoHandler struct {
	cancelled chan struct{}
}

func (h *echoHandler) HandleRequest(ctx context.Context, req *Request) (any, error) {
	switch req.Method {
	case "echo":
		return req.Params, nil
	case "ask_back":
		var answer map[string]any
		err := req.Conn.Call(ctx, "echo", map[string]any{"from": "inside"}, &answer)
		return answer, err
	case "block":
		<-ctx.Done()
		if h.cancelled != nil {
			close(h.cancelled)
		}
		return nil, ctx.Err()
	case "panic":
		panic("boom")
	}
	return nil, NewError(KindMethodNotFound, "no method '%s'", req.Method)
}

// connPair makes two connected Conns, each with its own handler.
func connPair(t *testing.T, a, b Handler, opts Options) (*Conn, *Conn) {
	t.Helper()
	aIn, bOut := io.Pipe()
	bIn, aOut := io.Pipe()
	opts.Log = io.Discard
	ca := NewConn(aIn, aOut, a, opts)
	cb := NewConn(bIn, bOut, b, opts)
	ca.Start()
	cb.Start()
	t.Cleanup(func() {
		_ = aOut.Close()
		_ = bOut.Close()
	})
	return ca, cb
}

func withTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

func TestCallsGoBothWaysAndNest(t *testing.T) {
	a, b := connPair(t, &echoHandler{}, &echoHandler{}, Options{})
	ctx := withTimeout(t)
	var got map[string]any
	if err := a.Call(ctx, "echo", map[string]any{"x": 1.0}, &got); err != nil || got["x"] != 1.0 {
		t.Fatalf("echo: %v %v", got, err)
	}
	if err := b.Call(ctx, "ask_back", nil, &got); err != nil || got["from"] != "inside" {
		t.Fatalf("nested call: %v %v", got, err)
	}
	err := a.Call(ctx, "nope", nil, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Kind() != KindMethodNotFound || rpcErr.Code != -32601 {
		t.Fatalf("want method-not-found, got %v", err)
	}
}

// sentLines keeps what a Conn writes.
type sentLines struct {
	mu   sync.Mutex
	text strings.Builder
}

func (s *sentLines) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.Write(p)
}

func (s *sentLines) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

func TestACallWhoseContextHasEndedSendsNothing(t *testing.T) {
	in, inWriter := io.Pipe()
	t.Cleanup(func() { _ = inWriter.Close() })
	sent := &sentLines{}
	conn := NewConn(in, sent, &echoHandler{}, Options{Log: io.Discard})
	conn.Start()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, stop := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer stop()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{{"cancelled", cancelled, context.Canceled}, {"past its deadline", expired, context.DeadlineExceeded}} {
		err := conn.Call(tc.ctx, "host.store.object.put", map[string]any{"key": "a.txt"}, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: want an error wrapping %v, got %v", tc.name, tc.want, err)
		} else if want := "'host.store.object.put' was not sent: "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: the error does not start with %q: %v", tc.name, want, err)
		}
	}
	if got := sent.String(); got != "" {
		t.Fatalf("calls whose context had ended wrote:\n%s", got)
	}
}

func TestCancellingACallCancelsTheHandler(t *testing.T) {
	h := &echoHandler{cancelled: make(chan struct{})}
	a, _ := connPair(t, &echoHandler{}, h, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() { errs <- a.Call(ctx, "block", nil, nil) }()
	// Cancel only once the handler is running: a second call is answered after the first arrived.
	if err := a.Call(withTimeout(t), "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-errs:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want context.Canceled, got %v", err)
		}
	case <-time.After(callTimeout):
		t.Fatal("the cancelled call did not return")
	}
	select {
	case <-h.cancelled:
	case <-time.After(callTimeout):
		t.Fatal("the other side's handler never saw $/cancelRequest")
	}
	// The connection lives on.
	if err := a.Call(withTimeout(t), "echo", map[string]any{"k": 1}, nil); err != nil {
		t.Fatal(err)
	}
}

// rawPeer writes lines into a Conn and reads the lines it writes back.
type rawPeer struct {
	write *io.PipeWriter
	lines chan string
}

func newRawPeer(t *testing.T, handler Handler, opts Options) (*Conn, *rawPeer) {
	t.Helper()
	connIn, peerOut := io.Pipe()
	peerIn, connOut := io.Pipe()
	opts.Log = io.Discard
	conn := NewConn(connIn, connOut, handler, opts)
	conn.Start()
	peer := &rawPeer{write: peerOut, lines: make(chan string, 16)}
	go func() {
		reader := bufio.NewReaderSize(peerIn, 1<<20)
		for {
			line, err := reader.ReadString('\n')
			if err != nil {
				close(peer.lines)
				return
			}
			peer.lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	t.Cleanup(func() { _ = peerOut.Close(); _ = connOut.Close() })
	return conn, peer
}

func (p *rawPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.write, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *rawPeer) next(t *testing.T) *Message {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatal("the connection closed its output")
		}
		msg, err := Decode([]byte(line))
		if err != nil {
			t.Fatalf("the connection wrote noise %q: %v", line, err)
		}
		return msg
	case <-time.After(callTimeout):
		t.Fatal("no line from the connection")
	}
	return nil
}

func TestNoiseIsCountedAndTheConnectionLives(t *testing.T) {
	conn, peer := newRawPeer(t, &echoHandler{}, Options{})
	peer.send(t, "DEBUG: hello")
	peer.send(t, `{"not":"rpc"}`)
	peer.send(t, "")
	peer.send(t, `{"jsonrpc":"2.0","id":"a","method":"echo","params":{"v":1}}`)
	msg := peer.next(t)
	if msg.ID != StringID("a") || msg.Error != nil || string(msg.Result) != `{"v":1}` {
		t.Fatalf("answer %+v", msg)
	}
	noise := conn.Noise()
	if noise.Lines != 2 || noise.Samples[0] != "DEBUG: hello" || noise.TooLarge != 0 {
		t.Fatalf("noise %+v", noise)
	}
}

func TestAnOversizedLineIsRefusedAndTheNextIsRead(t *testing.T) {
	conn, peer := newRawPeer(t, &echoHandler{}, Options{MaxMessageBytes: 1024})
	big := strings.Repeat("x", 5000)
	peer.send(t, `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"big":"`+big+`"}}`)
	msg := peer.next(t)
	if msg.ID != IntID(7) || msg.Error == nil || msg.Error.Code != -32009 || msg.Error.Kind() != KindMessageTooLarge {
		t.Fatalf("want -32009 for id 7, got %+v", msg)
	}
	peer.send(t, `{"jsonrpc":"2.0","id":8,"method":"echo","params":{"small":1}}`)
	if msg := peer.next(t); msg.ID != IntID(8) || msg.Error != nil {
		t.Fatalf("the line after the oversized one: %+v", msg)
	}
	if noise := conn.Noise(); noise.TooLarge != 1 || noise.Lines != 1 {
		t.Fatalf("noise %+v", noise)
	}
	// Sending over the limit fails before anything is written.
	err := conn.Call(withTimeout(t), "echo", map[string]any{"big": big}, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Kind() != KindMessageTooLarge {
		t.Fatalf("want message-too-large, got %v", err)
	}
}

func TestALineOfExactlyTheMaximumIsAccepted(t *testing.T) {
	const max = 4096
	_, peer := newRawPeer(t, &echoHandler{}, Options{MaxMessageBytes: max})
	head := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"p":"`
	tail := `"}}`
	line := head + strings.Repeat("y", max-len(head)-len(tail)) + tail
	peer.send(t, line)
	if msg := peer.next(t); msg.Error != nil {
		t.Fatalf("a %d-byte line was refused: %v", len(line), msg.Error)
	}
	peer.send(t, head+strings.Repeat("y", max-len(head)-len(tail)+1)+tail)
	if msg := peer.next(t); msg.Error == nil || msg.Error.Kind() != KindMessageTooLarge {
		t.Fatalf("a %d-byte line was accepted", max+1)
	}
}

func TestSixteenMebibytesCrossBothWays(t *testing.T) {
	a, _ := connPair(t, &echoHandler{}, &echoHandler{}, Options{})
	payload := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB
	var got struct {
		P string `json:"p"`
	}
	if err := a.Call(withTimeout(t), "echo", map[string]string{"p": payload}, &got); err != nil {
		t.Fatal(err)
	}
	if got.P != payload {
		t.Fatalf("the payload came back with %d bytes, want %d", len(got.P), len(payload))
	}
}

func TestEndOfInputFailsPendingCalls(t *testing.T) {
	conn, peer := newRawPeer(t, nil, Options{})
	errs := make(chan error, 1)
	go func() { errs <- conn.Call(context.Background(), "execute", nil, nil) }()
	if msg := peer.next(t); msg.Method != "execute" {
		t.Fatalf("sent %+v", msg)
	}
	_ = peer.write.Close()
	select {
	case err := <-errs:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("want ErrClosed, got %v", err)
		}
	case <-time.After(callTimeout):
		t.Fatal("the pending call did not fail when the input ended")
	}
	<-conn.Done()
	if !errors.Is(conn.Err(), io.EOF) {
		t.Fatalf("close reason %v", conn.Err())
	}
}

func TestAPanickingHandlerIsAnInternalError(t *testing.T) {
	a, _ := connPair(t, nil, &echoHandler{}, Options{})
	err := a.Call(withTimeout(t), "panic", nil, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Kind() != KindInternalError || !strings.Contains(rpcErr.Message, "boom") {
		t.Fatalf("want internal-error naming the panic, got %v", err)
	}
}

func TestALateAnswerIsDropped(t *testing.T) {
	conn, peer := newRawPeer(t, &echoHandler{}, Options{})
	peer.send(t, `{"jsonrpc":"2.0","id":99,"result":{"late":true}}`)
	peer.send(t, `{"jsonrpc":"2.0","id":1,"method":"echo"}`)
	if msg := peer.next(t); msg.ID != IntID(1) || string(msg.Result) != `{}` {
		t.Fatalf("answer %+v", msg)
	}
	if conn.Noise().Lines != 0 {
		t.Fatal("a late answer counted as noise")
	}
}

func TestParamsMustBeAnObject(t *testing.T) {
	if _, err := marshalParams([]int{1}); err == nil {
		t.Fatal("a list was accepted as params")
	}
	raw, err := marshalParams(nil)
	if err != nil || string(raw) != "{}" {
		t.Fatalf("nil params: %s %v", raw, err)
	}
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		t.Fatal("not JSON")
	}
}
