package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// APIError is an error answered in OpenAI's error shape:
//
//	{"error": {"message": …, "type": …, "param": …, "code": …}}
//
// with Status as the HTTP status code. Param names the request field at
// fault ("" when none does) and is written as null when empty; so is Code.
type APIError struct {
	Status  int
	Message string
	Type    string
	Param   string
	Code    string
}

// Error returns the message, with the parameter it names.
func (e *APIError) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s (param %s)", e.Message, e.Param)
	}
	return e.Message
}

// MarshalJSON writes the error object OpenAI's clients read.
func (e *APIError) MarshalJSON() ([]byte, error) {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	b := body{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		b.Param = &e.Param
	}
	if e.Code != "" {
		b.Code = &e.Code
	}
	return json.Marshal(struct {
		Error body `json:"error"`
	}{b})
}

// Error types and codes of the answers this server gives.
const (
	invalidRequest = "invalid_request_error"
	serverError    = "server_error"
)

// badParam is a 400 naming the request field at fault.
func badParam(param, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...), Type: invalidRequest, Param: param}
}

// writeError answers with err in OpenAI's error shape.
func writeError(w http.ResponseWriter, err *APIError) {
	writeJSON(w, err.Status, err)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = marshal(&APIError{Status: status, Message: "encode response: " + err.Error(), Type: serverError})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
