package rank

import "fmt"

// UnmarshalText reads a field's name, so explanations (and selections
// that hold them) read back from JSON.
func (f *Field) UnmarshalText(b []byte) error {
	for i, n := range fieldNames {
		if n == string(b) {
			*f = Field(i)
			return nil
		}
	}
	return fmt.Errorf("unknown rank field %q", b)
}
