package replay

import "encoding/json"

// decodeDetail reads the parts of a record's detail replay needs; a
// detail of another shape says nothing more.
func decodeDetail(raw json.RawMessage, d *detail) error {
	return json.Unmarshal(raw, d)
}
