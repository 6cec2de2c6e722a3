package schema

import (
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// quickCases are schemas the quick check covers, each with instances it must settle itself
// (quick: true) and instances it must leave to the full validator (quick: false: invalid ones,
// and those it does not decide exactly).
var quickCases = []struct {
	schema    string
	instances map[string]bool
}{
	{`{"type":"object"}`, map[string]bool{`{}`: true, `{"a":[1,{"b":null}]}`: true, `[]`: false, `"x"`: false, `null`: false}},
	{`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`, map[string]bool{
		`{"a":1}`: true, `{"a":-7,"b":"x"}`: true, `{"a":1.0}`: false, `{"a":1e2}`: false, `{"a":"1"}`: false,
		`{"b":"x"}`: false, `{"a":1,"c":2}`: false, `{"a":null}`: false, `{"a":1,"b":5}`: false,
		`{"\u0061":1}`: false /* an escaped name: left to the full validator */, `{"A":1}`: false, `{"a":123456789012345678901234567890}`: false,
	}},
	{`{"type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMaximum":10}}}`, map[string]bool{
		`{"n":0}`: true, `{"n":9}`: true, `{"n":9.5}`: true, `{"n":10}`: false, `{"n":-1}`: false,
		`{"n":-0.0000001}`: false, `{"n":0.0}`: false, `{"n":1e1}`: false, `{"n":9.99999999999}`: false,
	}},
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":-5,"maximum":9223372036854775807}}}`, map[string]bool{
		`{"n":-5}`: true, `{"n":9223372036854775807}`: true, `{"n":-6}`: false, `{"n":9223372036854775808}`: false,
	}},
	{`{"type":"object","properties":{"n":{"exclusiveMinimum":2.5,"maximum":2.75}}}`, map[string]bool{
		`{"n":2.6}`: true, `{"n":2.5}`: false, `{"n":3}`: false, `{"n":"s"}`: true, `{"n":2.75}`: false,
	}},
	{`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-zé]+$"}}}`, map[string]bool{
		`{"s":"ab"}`: true, `{"s":"éé"}`: true, `{"s":"\u00e9\u00e9\u00e9"}`: true, `{"s":"a"}`: false,
		`{"s":"abcd"}`: false, `{"s":"aB"}`: false, `{"s":"\u0041b"}`: false,
	}},
	{`{"type":"object","properties":{"e":{"enum":["x","y",true,null,3]},"c":{"const":"k"}}}`, map[string]bool{
		`{"e":"x"}`: true, `{"e":"\u0079"}`: true, `{"e":true}`: true, `{"e":null}`: true, `{"e":3}`: true,
		`{"e":"z"}`: false, `{"e":false}`: false, `{"e":4}`: false, `{"e":3.0}`: false, `{"e":{}}`: false,
		`{"e":["x"]}`: false, `{"c":"k"}`: true, `{"c":"K"}`: false,
	}},
	{`{"type":"object","properties":{"l":{"type":["null","array"],"items":{"type":"string"},"minItems":1,"maxItems":2}}}`, map[string]bool{
		`{"l":null}`: true, `{"l":["a"]}`: true, `{"l":["a","b"]}`: true, `{"l":[]}`: false,
		`{"l":["a","b","c"]}`: false, `{"l":[1]}`: false, `{"l":"a"}`: false,
	}},
	{`{"type":"object","additionalProperties":{"type":"integer"},"minProperties":1,"maxProperties":2}`, map[string]bool{
		`{"a":1}`: true, `{"a":1,"b":2}`: true, `{}`: false, `{"a":1,"b":2,"c":3}`: false, `{"a":"x"}`: false,
	}},
	{`{"type":"object","properties":{"t":true,"f":false},"required":["t","z"]}`, map[string]bool{
		`{"t":[],"z":1}`: true, `{"t":1}`: false, `{"t":1,"z":1,"f":0}`: false,
	}},
	{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"T","format":"x","x-extra":{"type":"string"},"properties":{"d":{"description":"d","default":1,"examples":[1],"type":"boolean"}}}`, map[string]bool{
		`{"d":false}`: true, `{"d":0}`: false,
	}},
}

// TestQuickSchemaAgreesWithFullValidator: whenever the quick check accepts a value, the full
// validator does too; and the quick check settles the valid values it covers by itself.
func TestQuickSchemaAgreesWithFullValidator(t *testing.T) {
	for _, tc := range quickCases {
		q := CompileQuick([]byte(tc.schema), false)
		if q == nil {
			t.Fatalf("schema %s: no quick check", tc.schema)
		}
		full, err := Compile("input", []byte(tc.schema), false)
		if err != nil {
			t.Fatalf("schema %s: %v", tc.schema, err)
		}
		for inst, wantQuick := range tc.instances {
			got := q.Valid([]byte(inst))
			if got && Validate(full, []byte(inst)) != "" {
				t.Errorf("schema %s: quick check accepts %s, which the full validator refuses", tc.schema, inst)
			}
			if got != wantQuick {
				t.Errorf("schema %s, instance %s: quick check says %v, want %v", tc.schema, inst, got, wantQuick)
			}
		}
	}
}

// TestQuickSchemaLeavesOtherKeywords: a schema with a keyword the quick check does not implement
// (or format as an assertion) gets no quick check, so the full validator alone decides.
func TestQuickSchemaLeavesOtherKeywords(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`,
		`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`,
		`{"type":"object","properties":{"a":{"allOf":[{"type":"string"}]}}}`,
		`{"type":"object","properties":{"a":{"not":{"type":"string"}}}}`,
		`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`,
		`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`,
		`{"type":"object","propertyNames":{"maxLength":3}}`,
		`{"type":"object","dependentRequired":{"a":["b"]}}`,
		`{"type":"object","unevaluatedProperties":false}`,
		`{"type":"object","properties":{"a":{"type":"array","prefixItems":[{"type":"string"}]}}}`,
		`{"type":"object","properties":{"a":{"type":"array","contains":{"type":"string"}}}}`,
		`{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}`,
		`{"type":"object","properties":{"a":{"multipleOf":0.5}}}`,
		`{"type":"object","properties":{"a":{"enum":[{"k":1}]}}}`,
		`{"type":"object","properties":{"a":{"enum":[1.5]}}}`,
		`{"type":"object","properties":{"a":{"enum":["x"],"const":"x"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"type":"object","properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`,
	} {
		if q := CompileQuick([]byte(s), false); q != nil {
			t.Errorf("schema %s has a quick check", s)
		}
	}
	if q := CompileQuick([]byte(`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`), true); q != nil {
		t.Error("an asserted format has a quick check")
	}
}

type quickProbeInner struct {
	X float64 `json:"x"`
	Y *int    `json:"y,omitempty"`
}

type quickProbe struct {
	A   int                `json:"a"`
	B   string             `json:"b" jsonschema:"the b"`
	C   []string           `json:"c,omitempty"`
	D   map[string]int     `json:"d"`
	E   *quickProbeInner   `json:"e"`
	F   quickProbeInner    `json:"f"`
	G   bool               `json:"g,omitzero"`
	H   any                `json:"h"`
	T   time.Time          `json:"t"`
	U   uint8              `json:"u"`
	Arr [2]int             `json:"arr"`
	M   map[string][]int64 `json:"m,omitempty"`
}

// TestQuickSchemaCoversDerivedSchemas: the schemas AddTool derives from Go types get a quick
// check, and it settles a valid value of the type.
func TestQuickSchemaCoversDerivedSchemas(t *testing.T) {
	schema, err := For[quickProbe]()
	if err != nil {
		t.Fatal(err)
	}
	q := CompileQuick(schema, false)
	if q == nil {
		t.Fatalf("derived schema %s has no quick check", schema)
	}
	y := 3
	v, err := jsonv2.Marshal(quickProbe{A: 1, B: "b", C: []string{"x"}, D: map[string]int{"k": 1}, E: &quickProbeInner{X: 1.5, Y: &y},
		H: []any{1, "x"}, T: time.Unix(0, 0).UTC(), U: 255, Arr: [2]int{1, 2}, M: map[string][]int64{"z": {1}}})
	if err != nil {
		t.Fatal(err)
	}
	if !q.Valid(v) {
		t.Fatalf("quick check refuses %s against %s", v, schema)
	}
	if bad := strings.Replace(string(v), `"u":255`, `"u":256`, 1); q.Valid([]byte(bad)) {
		t.Fatalf("quick check accepts %s", bad)
	}
}

// FuzzQuickSchema: for any instance, an acceptance by the quick check is one by the full
// validator, for every schema of quickCases.
func FuzzQuickSchema(f *testing.F) {
	type pair struct {
		quick *Quick
		full  string
	}
	var schemas []pair
	for _, tc := range quickCases {
		for inst := range tc.instances {
			f.Add([]byte(inst))
		}
		schemas = append(schemas, pair{CompileQuick([]byte(tc.schema), false), tc.schema})
	}
	f.Fuzz(func(t *testing.T, inst []byte) {
		if !jsontext.Value(inst).IsValid() {
			return
		}
		for _, s := range schemas {
			if !s.quick.Valid(inst) {
				continue
			}
			full, err := Compile("input", []byte(s.full), false)
			if err != nil {
				t.Fatal(err)
			}
			if msg := Validate(full, inst); msg != "" {
				t.Fatalf("schema %s: quick check accepts %s; full validator: %s", s.full, inst, msg)
			}
		}
	})
}

// BenchmarkArgumentsCheck compares the two ways tools/call checks valid arguments against the
// schema derived from a struct: the one-pass check, and the full validator on a decoded tree.
func BenchmarkArgumentsCheck(b *testing.B) {
	schema, err := For[quickProbe]()
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"a":1,"b":"b","c":["x"],"d":{"k":1},"e":{"x":1.5,"y":3},"f":{"x":0},"h":[1,"x"],"t":"1970-01-01T00:00:00Z","u":255,"arr":[1,2]}`)
	q := CompileQuick(schema, false)
	full, err := Compile("input", schema, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("quick", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !q.Valid(args) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if msg := Validate(full, args); msg != "" {
				b.Fatal(msg)
			}
		}
	})
}

// TestQuickKeepsNoValue: once it is done with a value, a checker keeps no reference to it (a
// pooled checker must not keep a large body alive), and the next value is checked as if the
// checker were new.
func TestQuickKeepsNoValue(t *testing.T) {
	q := CompileQuick([]byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`), false)
	if q == nil {
		t.Fatal("no quick check for the schema")
	}
	qc := new(quickChecker)
	for _, v := range []string{`{"a":"x"}`, `{"a":"x"`, `[1,`} {
		qc.valid(q, []byte(v))
		if qc.data != nil {
			t.Fatalf("%s: the idle checker keeps the value", v)
		}
		if qc.valid(q, []byte(`{"b":"x"}`)) || !qc.valid(q, []byte(`{"a":"y"}`)) {
			t.Fatalf("%s: a checker decided the next values wrongly", v)
		}
	}
}
