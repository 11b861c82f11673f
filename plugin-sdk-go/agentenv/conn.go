package agentenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Notification methods both sides understand.
const (
	CancelRequestMethod = "$/cancelRequest"
	ProgressMethod      = "$/progress"
	LogMethod           = "$/log"
)

// noiseSampleBytes is how much of a noise line is kept.
const noiseSampleBytes = 200

// noiseSamplesKept is how many noise lines are kept as samples (all are counted).
const noiseSamplesKept = 5

// ErrClosed is returned by calls on a connection whose input has ended.
var ErrClosed = errors.New("the connection to the other side is closed")

// Request is one incoming request, as a handler sees it.
type Request struct {
	ID     ID
	Method string
	// Params is the params object ("{}" when the wire had none).
	Params json.RawMessage
	// Conn is the connection it came on, to call the other side while handling it.
	Conn *Conn

	// received is when the request was read: the time the host gives a step (execute's timeout_ms)
	// counts from it.
	received time.Time
}

// DecodeParams unmarshals the params into v. A mismatch is an invalid-params error naming the method.
func (r *Request) DecodeParams(v any) error {
	if err := json.Unmarshal(r.Params, v); err != nil {
		return NewError(KindInvalidParams, "the params of '%s' do not fit: %s", r.Method, describeJSONError(err))
	}
	return nil
}

// Handler answers the other side's requests.
type Handler interface {
	// HandleRequest runs on its own goroutine. ctx is cancelled when the other side sends
	// $/cancelRequest for the request, or when the connection is shut down. Return an *Error to choose
	// the error code; any other error is an internal-error.
	HandleRequest(ctx context.Context, req *Request) (any, error)
}

// NotificationHandler is implemented by handlers that want notifications other than $/cancelRequest
// (which the connection handles itself). It runs on the reader goroutine and must not block.
type NotificationHandler interface {
	HandleNotification(method string, params json.RawMessage)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// HandleRequest calls f.
func (f HandlerFunc) HandleRequest(ctx context.Context, req *Request) (any, error) {
	return f(ctx, req)
}

// NoiseStats counts what arrived that was not a message.
type NoiseStats struct {
	// Lines that were not JSON-RPC messages (over-long lines included).
	Lines int
	// TooLarge counts lines over the maximum message size, which were discarded.
	TooLarge int
	// Samples holds the first bytes of the first few noise lines.
	Samples []string
}

// Options tune a connection. The zero value is the protocol's defaults.
type Options struct {
	// MaxMessageBytes is the longest line accepted and sent (newline excluded); 0 means MaxMessageBytes.
	MaxMessageBytes int
	// Log receives one line per thing worth telling a human (noise received, a handler panic). nil
	// means os.Stderr.
	Log io.Writer
	// Inline names methods whose requests are handled on the reader goroutine, before the next line is
	// read, so that later requests see their effect (initialize). Their handlers must not call back.
	Inline func(method string) bool
}

// Conn is one end of a JSON-RPC connection over a pair of byte streams.
type Conn struct {
	in       io.Reader
	handler  Handler
	maxBytes int
	log      io.Writer
	inline   func(method string) bool

	writeMu sync.Mutex
	out     io.Writer // nil once closed for writing

	mu       sync.Mutex
	pending  map[ID]chan *Message
	incoming map[ID]context.CancelFunc
	noise    NoiseStats
	closeErr error

	nextID   atomic.Int64
	done     chan struct{}
	handlers sync.WaitGroup
	baseCtx  context.Context
	stopAll  context.CancelFunc
}

// NewConn makes a connection reading in and writing out. Call Start to begin reading.
func NewConn(in io.Reader, out io.Writer, handler Handler, opts Options) *Conn {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = MaxMessageBytes
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if handler == nil {
		handler = HandlerFunc(func(_ context.Context, req *Request) (any, error) {
			return nil, NewError(KindMethodNotFound, "no method '%s' here", req.Method)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Conn{
		in:       in,
		handler:  handler,
		maxBytes: opts.MaxMessageBytes,
		log:      opts.Log,
		inline:   opts.Inline,
		out:      out,
		pending:  map[ID]chan *Message{},
		incoming: map[ID]context.CancelFunc{},
		done:     make(chan struct{}),
		baseCtx:  ctx,
		stopAll:  cancel,
	}
}

// Start reads the input on its own goroutine until it ends.
func (c *Conn) Start() { go c.readLoop() }

// Done is closed when the input has ended (end of file or a read error).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the input ended (io.EOF for end of file), nil while it has not.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// Noise is what arrived so far that was not a message.
func (c *Conn) Noise() NoiseStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.noise
	n.Samples = append([]string(nil), c.noise.Samples...)
	return n
}

// Shutdown cancels every request still being handled and waits up to grace for their handlers to
// return (their answers are written if the output is still open). It reports whether all returned.
func (c *Conn) Shutdown(grace time.Duration) bool {
	c.stopAll()
	return c.WaitHandlers(grace)
}

// WaitHandlers waits up to grace for the handlers in flight to return, without cancelling them.
func (c *Conn) WaitHandlers(grace time.Duration) bool {
	finished := make(chan struct{})
	go func() {
		c.handlers.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return true
	case <-time.After(grace):
		return false
	}
}

// CloseOutput stops writing: later sends fail. It closes out when out is an io.Closer.
func (c *Conn) CloseOutput() {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if closer, ok := c.out.(io.Closer); ok {
		_ = closer.Close()
	}
	c.out = nil
}

// Call sends a request and waits for its answer, which is unmarshalled into result (unless result is
// nil). When ctx has already ended, nothing is sent and the error wraps ctx.Err(); when it ends while
// the answer is awaited, Call sends $/cancelRequest and returns an error wrapping ctx.Err(). An error
// answer is returned as *Error.
func (c *Conn) Call(ctx context.Context, method string, params any, result any) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("'%s' was not sent: the context it was called with had already ended: %w", method, err)
	}
	raw, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("cannot encode the params of '%s': %w", method, err)
	}
	id := IntID(c.nextID.Add(1))
	answer := make(chan *Message, 1)
	c.mu.Lock()
	if c.closeErr != nil {
		c.mu.Unlock()
		return fmt.Errorf("cannot call '%s': %w", method, ErrClosed)
	}
	c.pending[id] = answer
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.send(&Message{Kind: KindRequest, ID: id, Method: method, Params: raw}); err != nil {
		forget()
		return err
	}
	var msg *Message
	select {
	case msg = <-answer:
	case <-ctx.Done():
		forget()
		_ = c.Notify(CancelRequestMethod, map[string]any{"id": id})
		return fmt.Errorf("the call to '%s' was cancelled: %w", method, ctx.Err())
	case <-c.done:
		select {
		case msg = <-answer:
		default:
			forget()
			return fmt.Errorf("no answer to '%s': %w", method, ErrClosed)
		}
	}
	if msg.Error != nil {
		return msg.Error
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(msg.Result, result); err != nil {
		return fmt.Errorf("the answer to '%s' does not fit: %s", method, describeJSONError(err))
	}
	return nil
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("cannot encode the params of '%s': %w", method, err)
	}
	return c.send(&Message{Kind: KindNotification, Method: method, Params: raw})
}

func (c *Conn) send(msg *Message) error {
	line, err := msg.Encode()
	if err != nil {
		return fmt.Errorf("cannot encode a message: %w", err)
	}
	if size := len(line) - 1; size > c.maxBytes {
		return NewError(KindMessageTooLarge,
			"the message is %d bytes, over the %d-byte maximum message size; pass large data by file path",
			size, c.maxBytes)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.out == nil {
		return fmt.Errorf("cannot send: %w", ErrClosed)
	}
	if _, err := c.out.Write(line); err != nil {
		c.out = nil
		return fmt.Errorf("cannot write to the other side: %w", err)
	}
	return nil
}

func (c *Conn) readLoop() {
	reader := bufio.NewReaderSize(c.in, 256*1024)
	for {
		line, tooLarge, err := readLine(reader, c.maxBytes)
		switch {
		case tooLarge:
			c.tooLarge(line)
		case len(bytes.TrimSpace(line)) > 0:
			c.handleLine(line)
		}
		if err != nil {
			c.markClosed(err)
			return
		}
	}
}

// readLine reads one line without its "\n" (and a "\r" before it). A line longer than max is read to its
// end and discarded: tooLarge is true and line holds only its first bytes. err is io.EOF at the end.
func readLine(reader *bufio.Reader, max int) (line []byte, tooLarge bool, err error) {
	const headBytes = 4096
	total := 0
	for {
		chunk, readErr := reader.ReadSlice('\n')
		total += len(chunk)
		if !tooLarge {
			line = append(line, chunk...)
			if total > max+2 { // over the limit even after "\r\n" is taken off
				tooLarge = true
				line = line[:min(len(line), headBytes):min(len(line), headBytes)]
			}
		}
		if readErr == bufio.ErrBufferFull {
			continue
		}
		err = readErr
		break
	}
	if tooLarge {
		return line, true, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) > max {
		if len(line) > headBytes {
			line = line[:headBytes]
		}
		return line, true, err
	}
	return line, false, err
}

func (c *Conn) handleLine(line []byte) {
	msg, err := Decode(line)
	if err != nil {
		c.recordNoise(line, false)
		return
	}
	switch msg.Kind {
	case KindResponse:
		c.mu.Lock()
		waiter, ok := c.pending[msg.ID]
		delete(c.pending, msg.ID)
		c.mu.Unlock()
		if ok {
			waiter <- msg
		}
		// A late answer to a call that was cancelled is dropped.
	case KindNotification:
		if msg.Method == CancelRequestMethod {
			var p struct {
				ID ID `json:"id"`
			}
			if json.Unmarshal(msg.Params, &p) == nil {
				c.mu.Lock()
				cancel, ok := c.incoming[p.ID]
				c.mu.Unlock()
				if ok {
					cancel()
				}
			}
			return
		}
		if nh, ok := c.handler.(NotificationHandler); ok {
			nh.HandleNotification(msg.Method, msg.Params)
		}
	case KindRequest:
		ctx, cancel := context.WithCancel(c.baseCtx)
		c.mu.Lock()
		c.incoming[msg.ID] = cancel
		c.mu.Unlock()
		c.handlers.Add(1)
		req := &Request{ID: msg.ID, Method: msg.Method, Params: msg.Params, Conn: c, received: time.Now()}
		if c.inline != nil && c.inline(msg.Method) {
			c.runHandler(ctx, cancel, req)
		} else {
			go c.runHandler(ctx, cancel, req)
		}
	}
}

func (c *Conn) runHandler(ctx context.Context, cancel context.CancelFunc, req *Request) {
	defer c.handlers.Done()
	result, err := c.callHandler(ctx, req)
	c.mu.Lock()
	delete(c.incoming, req.ID)
	c.mu.Unlock()
	cancelled := ctx.Err() != nil
	cancel()
	reply := &Message{Kind: KindResponse, ID: req.ID}
	if err != nil {
		reply.Error = asRPCError(err, req.Method, cancelled)
	} else if raw, encErr := json.Marshal(result); encErr != nil {
		reply.Error = NewError(KindInternalError, "cannot encode the answer to '%s': %s", req.Method, encErr)
	} else {
		reply.Result = raw
	}
	sendErr := c.send(reply)
	var rpcErr *Error
	if errors.As(sendErr, &rpcErr) && rpcErr.Kind() == KindMessageTooLarge {
		_ = c.send(&Message{Kind: KindResponse, ID: req.ID, Error: NewError(KindMessageTooLarge,
			"the answer to '%s' is over the %d-byte maximum message size; pass large data by file path",
			req.Method, c.maxBytes)})
	}
}

func (c *Conn) callHandler(ctx context.Context, req *Request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(c.log, "agentenv: the handler of '%s' panicked: %v\n%s", req.Method, p, debug.Stack())
			result, err = nil, NewError(KindInternalError, "the plugin failed handling '%s': %v", req.Method, p)
		}
	}()
	return c.handler.HandleRequest(ctx, req)
}

// asRPCError turns a handler's error into the error object sent back.
func asRPCError(err error, method string, cancelled bool) *Error {
	var rpcErr *Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	if cancelled || errors.Is(err, context.Canceled) {
		return NewError(KindCancelled, "'%s' was cancelled", method)
	}
	return NewError(KindInternalError, "%s", err.Error())
}

func (c *Conn) tooLarge(head []byte) {
	c.recordNoise(head, true)
	text := string(head)
	id, ok := sniffID(text)
	if !ok {
		return
	}
	message := fmt.Sprintf("a message over the %d-byte maximum message size was discarded; pass large data by file path", c.maxBytes)
	if strings.Contains(text, `"method"`) {
		_ = c.send(&Message{Kind: KindResponse, ID: id, Error: NewError(KindMessageTooLarge, "%s", message)})
		return
	}
	c.mu.Lock()
	waiter, found := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if found {
		waiter <- &Message{Kind: KindResponse, ID: id, Error: NewError(KindMessageTooLarge, "%s", message)}
	}
}

// sniffID finds "id":<integer or string> near the start of a truncated message.
func sniffID(text string) (ID, bool) {
	at := strings.Index(text, `"id"`)
	if at < 0 {
		return ID{}, false
	}
	rest := strings.TrimLeft(text[at+4:], " \t")
	rest, found := strings.CutPrefix(rest, ":")
	if !found {
		return ID{}, false
	}
	rest = strings.TrimLeft(rest, " \t")
	if s, isStr := strings.CutPrefix(rest, `"`); isStr {
		end := strings.IndexByte(s, '"')
		if end < 0 {
			return ID{}, false
		}
		return StringID(s[:end]), true
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '-' })
	if end < 0 {
		end = len(rest)
	}
	var id ID
	if id.UnmarshalJSON([]byte(rest[:end])) != nil {
		return ID{}, false
	}
	return id, true
}

func (c *Conn) recordNoise(line []byte, tooLarge bool) {
	sample := sampleOf(line)
	c.mu.Lock()
	c.noise.Lines++
	if tooLarge {
		c.noise.TooLarge++
	}
	if len(c.noise.Samples) < noiseSamplesKept {
		c.noise.Samples = append(c.noise.Samples, sample)
	}
	c.mu.Unlock()
	if tooLarge {
		fmt.Fprintf(c.log, "agentenv: discarded a message over the %d-byte maximum message size (it began %q)\n", c.maxBytes, sample)
	} else {
		fmt.Fprintf(c.log, "agentenv: ignored a line that is not a JSON-RPC message: %q\n", sample)
	}
}

// sampleOf is the first bytes of a line, cut at a character boundary.
func sampleOf(line []byte) string {
	if len(line) <= noiseSampleBytes {
		return string(line)
	}
	end := noiseSampleBytes
	for end > noiseSampleBytes-utf8.UTFMax && !utf8.Valid(line[:end]) {
		end--
	}
	return string(line[:end])
}

func (c *Conn) markClosed(err error) {
	c.mu.Lock()
	if c.closeErr == nil {
		c.closeErr = err
	}
	c.mu.Unlock()
	close(c.done)
}

// describeJSONError makes encoding/json's errors read as a sentence about the field at fault.
func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field != "" {
			return fmt.Sprintf("'%s' must be %s, not %s", typeErr.Field, jsonTypeName(typeErr.Type.Kind().String()), typeErr.Value)
		}
		return fmt.Sprintf("expected %s, got %s", jsonTypeName(typeErr.Type.Kind().String()), typeErr.Value)
	}
	return err.Error()
}

func jsonTypeName(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	case "ptr":
		return "a value"
	}
	return "a " + goKind
}
