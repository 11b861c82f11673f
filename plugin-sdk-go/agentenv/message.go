package agentenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ID is a request id: an integer or a string. IDs are comparable and usable as map keys.
type ID struct {
	num   int64
	str   string
	isStr bool
}

// IntID is an integer id.
func IntID(n int64) ID { return ID{num: n} }

// StringID is a string id.
func StringID(s string) ID { return ID{str: s, isStr: true} }

// IsString reports whether the id is a string.
func (id ID) IsString() bool { return id.isStr }

// Int is the id's integer (0 for a string id).
func (id ID) Int() int64 { return id.num }

// Str is the id's string ("" for an integer id).
func (id ID) Str() string { return id.str }

// String shows the id as it is written on the wire.
func (id ID) String() string {
	if id.isStr {
		return strconv.Quote(id.str)
	}
	return strconv.FormatInt(id.num, 10)
}

// MarshalJSON writes the id as a JSON number or string.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.isStr {
		return json.Marshal(id.str)
	}
	return []byte(strconv.FormatInt(id.num, 10)), nil
}

// UnmarshalJSON reads an integer or a string; anything else (a fraction, a bool, an object) is an error.
func (id *ID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*id = StringID(s)
		return nil
	}
	n, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return fmt.Errorf("id %s is not an integer or a string", data)
	}
	*id = IntID(n)
	return nil
}

// MessageKind tells the three shapes of message apart.
type MessageKind uint8

const (
	// KindRequest has an id and a method.
	KindRequest MessageKind = iota + 1
	// KindNotification has a method and no id.
	KindNotification
	// KindResponse has an id and either a result or an error.
	KindResponse
)

// String names the kind: "request", "notification" or "response".
func (k MessageKind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "unknown"
}

// Message is one JSON-RPC 2.0 message, one line on the wire.
type Message struct {
	Kind MessageKind
	// ID is set for requests and responses.
	ID ID
	// Method is set for requests and notifications.
	Method string
	// Params is always a JSON object for requests and notifications ("{}" when the wire had none).
	Params json.RawMessage
	// Result is the success value of a response ("null" when there is nothing); nil when Error is set.
	Result json.RawMessage
	// Error is set for a failed response.
	Error *Error
}

// NoiseError says why a line is not a JSON-RPC message. Noise is counted and reported, never fatal.
type NoiseError struct {
	Reason string
}

// Error returns the reason.
func (e *NoiseError) Error() string { return e.Reason }

var emptyObject = json.RawMessage(`{}`)

// Decode reads one line (without its newline). A line that is not JSON, or JSON that is not a JSON-RPC
// 2.0 message, gives a *NoiseError.
func Decode(line []byte) (*Message, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || !json.Valid(line) {
			return nil, &NoiseError{Reason: "not JSON: " + err.Error()}
		}
		return nil, &NoiseError{Reason: "JSON, but not an object"}
	}
	if obj == nil {
		return nil, &NoiseError{Reason: "JSON, but not an object"}
	}
	var version string
	if raw, ok := obj["jsonrpc"]; !ok || json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return nil, &NoiseError{Reason: `"jsonrpc" is not "2.0"`}
	}
	var id ID
	hasID := false
	if raw, ok := obj["id"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, &NoiseError{Reason: "id is not an integer or a string"}
		}
		hasID = true
	}
	if raw, ok := obj["method"]; ok {
		var method string
		if isNull(raw) || json.Unmarshal(raw, &method) != nil {
			return nil, &NoiseError{Reason: "method is not a string"}
		}
		params := emptyObject
		if raw, ok := obj["params"]; ok && !isNull(raw) {
			if !isObject(raw) {
				return nil, &NoiseError{Reason: "params is not an object"}
			}
			params = raw
		}
		msg := &Message{Kind: KindNotification, Method: method, Params: params}
		if hasID {
			msg.Kind = KindRequest
			msg.ID = id
		}
		return msg, nil
	}
	if !hasID {
		return nil, &NoiseError{Reason: "a response without an id"}
	}
	if raw, ok := obj["error"]; ok {
		e, err := decodeError(raw)
		if err != nil {
			return nil, &NoiseError{Reason: "bad error object: " + err.Error()}
		}
		return &Message{Kind: KindResponse, ID: id, Error: e}, nil
	}
	if raw, ok := obj["result"]; ok {
		return &Message{Kind: KindResponse, ID: id, Result: raw}, nil
	}
	return nil, &NoiseError{Reason: "neither method, result nor error"}
}

func decodeError(raw json.RawMessage) (*Error, error) {
	var wire struct {
		Code    *int64          `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, err
	}
	if wire.Code == nil || wire.Message == nil {
		return nil, errors.New("an error needs a code and a message")
	}
	e := &Error{Code: *wire.Code, Message: *wire.Message}
	if isObject(wire.Data) {
		if err := json.Unmarshal(wire.Data, &e.Data); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

type wireRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *ID             `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type wireSuccess struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Result  json.RawMessage `json:"result"`
}

type wireErrorObject struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

type wireFailure struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Error   wireErrorObject `json:"error"`
}

// Encode writes the message as one compact line, newline included. Strings never hold a raw newline,
// so the line has exactly one.
func (m *Message) Encode() ([]byte, error) {
	var v any
	switch m.Kind {
	case KindRequest, KindNotification:
		params := m.Params
		if len(params) == 0 {
			params = emptyObject
		}
		w := wireRequest{JSONRPC: "2.0", Method: m.Method, Params: params}
		if m.Kind == KindRequest {
			id := m.ID
			w.ID = &id
		}
		v = w
	case KindResponse:
		if m.Error != nil {
			v = wireFailure{JSONRPC: "2.0", ID: m.ID, Error: wireErrorObject{
				Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data,
			}}
		} else {
			result := m.Result
			if len(result) == 0 {
				result = json.RawMessage("null")
			}
			v = wireSuccess{JSONRPC: "2.0", ID: m.ID, Result: result}
		}
	default:
		return nil, fmt.Errorf("cannot encode a message of kind %d", m.Kind)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Encode writes compact JSON and one trailing newline.
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// marshalParams turns a Go value into the params object of a request or notification.
func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return emptyObject, nil
	}
	if raw, ok := params.(json.RawMessage); ok {
		if isNull(raw) || len(raw) == 0 {
			return emptyObject, nil
		}
		return raw, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if isNull(raw) {
		return emptyObject, nil
	}
	if !isObject(raw) {
		return nil, fmt.Errorf("params must be a JSON object, not %.20s", raw)
	}
	return raw, nil
}
