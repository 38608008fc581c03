// Package field is the typed error of a configuration setting out of
// range. Validation functions of configuration sections return it so that
// a loader can find, with errors.As, the exact key to blame and attach the
// place where that key stands (a file's line, a --set flag) without
// parsing the message.
package field

import "fmt"

// Error is a setting out of range: its dotted key, its value and what is
// wrong with it. It renders as "train.lr = -1, want > 0".
type Error struct {
	// Key is the dotted configuration key, e.g. "train.lr".
	Key string
	// Value is the value found there.
	Value any
	// Msg says what is wrong, e.g. "want > 0".
	Msg string
}

// Detail is the value and the message without the key: "-1, want > 0".
func (e *Error) Detail() string { return Show(e.Value) + ", " + e.Msg }

// Error implements error.
func (e *Error) Error() string { return e.Key + " = " + e.Detail() }

// Show renders a value as configuration errors quote it: strings quoted,
// floats in the shortest form (%g), anything else with %v.
func Show(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case float64:
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%v", v)
}
