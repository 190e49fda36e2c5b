package httpapi

import (
	"errors"
	"net/http"
)

// Code is a stable error code in API error responses.
type Code string

// The error codes, mapped to HTTP statuses by [Code.Status]. Add new codes
// at the end; never rename one.
const (
	CodeInvalid         Code = "invalid"      // the request is malformed or fails validation
	CodeUnauthorized    Code = "unauthorized" // missing or wrong bearer token
	CodeNotFound        Code = "not_found"    // no such route or object
	CodeMethod          Code = "method_not_allowed"
	CodeTooLarge        Code = "too_large"        // the body exceeds the limit
	CodeNotConfigured   Code = "not_configured"   // the part behind the endpoint is not set up
	CodeInternal        Code = "internal"         // a bug or an unexpected failure
	CodeUnavailable     Code = "unavailable"      // a dependency (LLM, store) cannot be reached
	CodeBadReply        Code = "bad_reply"        // a dependency answered with something unusable
	CodeConflict        Code = "conflict"         // the object exists already (a taken session ID)
	CodeBudgetExhausted Code = "budget_exhausted" // the session has no iteration left
	CodeForbidden       Code = "forbidden"        // refused Host or cross-origin request
)

// Status returns the HTTP status of c.
func (c Code) Status() int {
	switch c {
	case CodeInvalid:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeNotFound:
		return http.StatusNotFound
	case CodeMethod:
		return http.StatusMethodNotAllowed
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeNotConfigured:
		return http.StatusNotImplemented
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeBadReply:
		return http.StatusBadGateway
	case CodeConflict, CodeBudgetExhausted:
		return http.StatusConflict
	case CodeForbidden:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// Error is an API error: a code and a message for people.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf builds an *Error.
func errorf(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

// errorBody is the one error shape every endpoint answers with.
type errorBody struct {
	Error *Error `json:"error"`
}

// asAPIError maps any error to an *Error; unknown errors are internal.
func asAPIError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}
