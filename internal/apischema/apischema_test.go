package apischema_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/internal/apischema"
)

const doc = `{
  "openapi": "3.1.0",
  "paths": {
    "/v1/things": {"get": {"responses": {
      "200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/List"}}}},
      "default": {"$ref": "#/components/responses/Error"}
    }}},
    "/v1/raw": {"get": {"responses": {
      "200": {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}}}}
    }}}
  },
  "components": {
    "responses": {"Error": {"content": {"application/json": {"schema": {
      "type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}}}}},
    "schemas": {
      "List": {"type": "object", "required": ["count", "things"], "properties": {
        "count": {"type": "integer"},
        "things": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}},
        "extra": {"type": "object"}
      }},
      "Thing": {"type": "object", "required": ["name", "tags", "parts"], "properties": {
        "name": {"type": "string"},
        "state": {"type": "string", "enum": ["on", "off"]},
        "score": {"type": "number"},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "parts": {"type": "array", "items": {"type": "object", "required": ["bits"], "properties": {
          "bits": {"type": "array", "items": {"type": "integer"}}
        }}},
        "any": {},
        "broken": {"$ref": "#/components/schemas/Nowhere"}
      }}
    }
  }
}`

func TestCheck(t *testing.T) {
	c, err := apischema.New([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.Response("GET", "/v1/things", 200)
	if err != nil {
		t.Fatal(err)
	}
	const thing = `{"name":"a","tags":[],"parts":[]}`
	for _, tt := range []struct {
		name, body string
		want       []string // substrings of the problems, in order; none for a good body
	}{
		{"good, empty lists", `{"count":0,"things":[]}`, nil},
		{"good thing", `{"count":1,"things":[{"name":"a","state":"on","score":0.5,"ok":true,"tags":["x"],"notes":[],"parts":[{"bits":[1,2]}],"any":null}]}`, nil},
		{"null list", `{"count":0,"things":null}`, []string{"$.things (schema List.things): null, want an array"}},
		{"missing list", `{"count":0}`, []string{`$ (schema List): required "things" is missing`}},
		{"null optional list", `{"count":1,"things":[{"name":"a","tags":[],"parts":[],"notes":null}]}`, []string{"$.things[0].notes (schema Thing.notes): null, want an array"}},
		{"null nested list", `{"count":1,"things":[{"name":"a","tags":[],"parts":[{"bits":null}]}]}`, []string{"$.things[0].parts[0].bits (schema Thing.parts[].bits): null, want an array"}},
		{"unknown field", `{"count":0,"things":[],"cuont":1}`, []string{`"cuont" is not in the schema`}},
		{"free object", `{"count":0,"things":[],"extra":{"anything":[null]}}`, nil},
		{"not integer", `{"count":1.5,"things":[]}`, []string{"the number 1.5, want integer"}},
		{"wrong types", `{"count":"1","things":[{"name":1,"ok":"yes","score":"x","tags":[],"parts":[]}]}`,
			[]string{`$.count (schema List.count): the string "1", want integer`, "$.things[0].name (schema Thing.name): the number 1, want a string",
				`$.things[0].ok (schema Thing.ok): the string "yes", want a boolean`, `$.things[0].score (schema Thing.score): the string "x", want number`}},
		{"enum", `{"count":1,"things":[{"name":"a","state":"dim","tags":[],"parts":[]}]}`, []string{"dim is not one of [on off]"}},
		{"bad reference", `{"count":1,"things":[{"name":"a","tags":[],"parts":[],"broken":1}]}`, []string{"the reference #/components/schemas/Nowhere does not resolve"}},
		{"not an object", `[]`, []string{"$ (schema List): an array, want an object"}},
		{"not JSON", `{`, []string{"not JSON"}},
		{"good thing list", `{"count":1,"things":[` + thing + `]}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Check(list, []byte(tt.body))
			if len(got) != len(tt.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d: %q, want %q in it", i, got[i], tt.want[i])
				}
			}
		})
	}

	// The required arrays, as checks name them, and what the checks met.
	want := []string{"List.things", "Thing.parts", "Thing.parts[].bits", "Thing.tags"}
	if diff := cmp.Diff(want, c.RequiredArrays()); diff != "" {
		t.Errorf("required arrays (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		key         string
		held, empty int
	}{
		{"List.things", 12, 4}, {"Thing.tags", 7, 6}, {"Thing.parts[].bits", 2, 0}, {"Thing.notes", 0, 0},
	} {
		if held, empty := c.Seen(tt.key); held != tt.held || empty != tt.empty {
			t.Errorf("Seen(%s) = %d held, %d empty; want %d, %d", tt.key, held, empty, tt.held, tt.empty)
		}
	}

	// A bare array of a component, as the CLI prints some lists.
	thingSchema, err := c.Component("Thing")
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Check(apischema.ArrayOf(thingSchema), []byte(`[`+thing+`,{"name":"b","tags":null,"parts":[]}]`)); len(p) != 1 || !strings.Contains(p[0], "$[1].tags (schema Thing.tags): null, want an array") {
		t.Errorf("array of Thing: %q", p)
	}
	raw, err := c.Response("GET", "/v1/raw", 200)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Check(raw, []byte(`null`)); len(p) != 1 || !strings.Contains(p[0], "null, want an array") {
		t.Errorf("null for an array answer: %q", p)
	}
	errSchema, err := c.Response("GET", "/v1/things", 404)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Check(errSchema, []byte(`{"error":"gone"}`)); len(p) != 0 {
		t.Errorf("default response: %q", p)
	}
}

func TestLookupErrors(t *testing.T) {
	c, err := apischema.New([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		err  func() error
		want string
	}{
		{"no path", func() error { _, err := c.Response("GET", "/v1/nothing", 200); return err }, "has no GET /v1/nothing"},
		{"no method", func() error { _, err := c.Response("POST", "/v1/things", 200); return err }, "has no POST /v1/things"},
		{"no status", func() error { _, err := c.Response("GET", "/v1/raw", 500); return err }, "no JSON schema for GET /v1/raw answering 500"},
		{"no component", func() error { _, err := c.Component("Nothing"); return err }, "has no schema Nothing"},
		{"bad document", func() error { _, err := apischema.New([]byte(`{`)); return err }, "reading the OpenAPI document"},
	} {
		if err := tt.err(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	if slices.Contains(c.RequiredArrays(), "Thing.notes") {
		t.Error("an optional array is listed as required")
	}
}
