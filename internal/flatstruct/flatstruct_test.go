package flatstruct

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpkit/mcpkit/internal/schema"
)

type echo struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type every struct {
	S    string
	T    string `json:"t,omitempty"`
	Z    string `json:"z,omitzero"`
	B    bool   `json:"b"`
	BE   bool   `json:"be,omitempty"`
	BZ   bool   `json:"bz,omitzero"`
	I    int    `json:"i"`
	IZ   int    `json:"iz,omitzero"`
	IE   int    `json:"ie,omitempty"`
	I8   int8   `json:"i8"`
	I16  int16  `json:"i16"`
	I32  int32  `json:"i32"`
	I64  int64  `json:"i64"`
	U    uint   `json:"u"`
	U8   uint8  `json:"u8,omitzero"`
	U16  uint16 `json:"u16"`
	U32  uint32 `json:"u32"`
	U64  uint64 `json:"u64"`
	Odd  string `json:"a name <>&\u00e9"`
	Skip string `json:"-"`
	_    int
}

type level string

type named struct {
	Level level `json:"level"`
	N     int   `json:",omitzero"`
}

type floats struct {
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	S   string  `json:"s"`
}

type withMethod struct{ A string }

func (withMethod) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

type textField struct{ T time.Time }
type durationField struct{ D time.Duration }
type embedded struct{ echo }
type stringTag struct {
	N int `json:"n,string"`
}
type caseTag struct {
	A string `json:"a,case:ignore"`
}
type quotedName struct {
	A string `json:"'a,b'"`
}
type nested struct{ E echo }
type pointer struct{ P *string }
type slice struct{ L []string }
type anyField struct{ V any }
type formatTag struct {
	B uint8 `json:"b,format:hex"`
}

// structOf returns a struct type of string fields with the tags given (go vet flags some of them
// in a declaration).
func structOf(tags ...reflect.StructTag) reflect.Type {
	var fields []reflect.StructField
	for i, tag := range tags {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[string](), Tag: tag})
	}
	return reflect.StructOf(fields)
}

func TestForRefusesWhatItCannotMirror(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[withMethod](), reflect.TypeFor[textField](), reflect.TypeFor[durationField](),
		reflect.TypeFor[embedded](), reflect.TypeFor[stringTag](), reflect.TypeFor[caseTag](),
		reflect.TypeFor[quotedName](), reflect.TypeFor[nested](),
		reflect.TypeFor[pointer](), reflect.TypeFor[slice](),
		reflect.StructOf([]reflect.StructField{{Name: "a", PkgPath: "p", Type: reflect.TypeFor[string](), Tag: `json:"a"`}}),
		reflect.TypeFor[anyField](), reflect.TypeFor[formatTag](), reflect.TypeFor[*echo](),
		structOf(`json:"x"`, `json:"x"`),                                             // a repeated name
		structOf(`json:"n,"`),                                                        // a stray comma
		structOf(`json:"n,omitzero,omitzero"`),                                       // a repeated option
		structOf(`json:"n,omitempty,"`),                                              // a trailing comma after an option
		reflect.TypeFor[struct{ a, b string }](), reflect.TypeFor[struct{ _ int }](), // no exported field
		reflect.TypeFor[string](), reflect.TypeFor[map[string]string](),
	} {
		if build(typ) != nil {
			t.Errorf("%v: got a codec, want none", typ)
		}
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[echo](), reflect.TypeFor[every](), reflect.TypeFor[named](),
		reflect.TypeFor[floats](), reflect.TypeFor[struct{}](),
	} {
		if build(typ) == nil {
			t.Errorf("%v: got no codec", typ)
		}
	}
	for _, typ := range flatTypes {
		zero := reflect.New(typ).Interface()
		if _, err := json.Marshal(zero); err != nil {
			t.Errorf("%v: json refuses the type (%v), the codec does not", typ, err)
		}
	}
	if For[floats]().Encodes() || !For[every]().Encodes() {
		t.Error("Encodes: want false for a struct with floats and true for one without")
	}
}

var flatTypes = []reflect.Type{
	reflect.TypeFor[echo](), reflect.TypeFor[every](), reflect.TypeFor[named](),
	reflect.TypeFor[floats](), reflect.TypeFor[struct{}](),
}

// memberValues are the values the decode corpus puts in members.
var memberValues = []string{
	`""`, `"hello"`, `"a\nb\t\"c\"\\"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"é😀"`, "\"\xff\"",
	`"<>&\u2028"`, `"\u0000"`, `"x\/y"`, `null`, `true`, `false`,
	`0`, `-0`, `1`, `-1`, `42`, `127`, `128`, `-128`, `-129`, `255`, `256`, `65535`, `65536`,
	`2147483647`, `2147483648`, `-2147483649`, `4294967295`, `4294967296`,
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
	`18446744073709551615`, `18446744073709551616`, `1.0`, `1.5`, `-2.25`, `1e2`, `1E-2`, `3.4e38`,
	`3.5e38`, `1e309`, `4.9e-324`, `1e-400`, `"1"`, `{}`, `{"a":1}`, `[]`, `[1,"x"]`,
	`{"a":1,"a":2}`, `01`, `1.`, `tru`, `"unterminated`,
}

// memberNames are the names the decode corpus uses: every field's, case variants, unknown ones.
var memberNames = []string{
	"text", "Text", "TEXT", "S", "s", "t", "z", "b", "be", "bz", "i", "iz", "ie", "i8", "i16", "i32",
	"i64", "u", "u8", "u16", "u32", "u64", "a name <>&é", "-", "x", "level", "N", "f32",
	"f64", "unknown", `te\u0078t`,
}

// decodeCorpus returns object texts over memberNames and memberValues: one member of each pair,
// then objects of several members (repeats included) with varied spacing, and broken texts.
func decodeCorpus(r *rand.Rand) []string {
	var out []string
	for _, n := range memberNames {
		for _, v := range memberValues {
			out = append(out, `{"`+n+`":`+v+`}`)
		}
	}
	spaces := []string{"", " ", "\n\t", "\r\n  "}
	for range 4000 {
		var b strings.Builder
		sp := func() string { return spaces[r.IntN(len(spaces))] }
		b.WriteString(sp() + "{")
		for i := range r.IntN(6) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(sp() + `"` + memberNames[r.IntN(len(memberNames))] + `"` + sp() + ":" + sp())
			b.WriteString(memberValues[r.IntN(len(memberValues))] + sp())
		}
		b.WriteString("}" + sp())
		out = append(out, b.String())
	}
	return append(out, ``, `{`, `}`, `[]`, `null`, `{} {}`, `{"text":"a",}`, `{,}`, `{"text"}`,
		`{"text":"a" "b":1}`, `{"text":"a"}x`, `"text"`)
}

// TestDecodeMatchesJSON compares the codec with json.Unmarshal on every text of the corpus, for
// every flat type: where the codec settles a text, Unmarshal accepts it and produces the same
// value; and the codec settles the usual valid text.
func TestDecodeMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	corpus := decodeCorpus(r)
	for _, typ := range flatTypes {
		c := build(typ)
		settled, accepted := 0, 0
		for _, text := range corpus {
			want := reflect.New(typ)
			werr := json.Unmarshal([]byte(text), want.Interface())
			got := reflect.New(typ)
			ok := c.decode([]byte(text), got.UnsafePointer())
			if werr == nil {
				accepted++
			}
			if !ok {
				continue
			}
			settled++
			if werr != nil {
				t.Fatalf("%v: %s: the codec settled a text json refuses (%v)", typ, text, werr)
			}
			if !reflect.DeepEqual(got.Elem().Interface(), want.Elem().Interface()) {
				t.Fatalf("%v: %s: got %+v, want %+v", typ, text, got.Elem().Interface(), want.Elem().Interface())
			}
		}
		if settled < accepted/2 {
			t.Errorf("%v: the codec settled %d of the %d texts json accepts", typ, settled, accepted)
		}
		t.Logf("%v: %d texts, json accepts %d, the codec settles %d", typ, len(corpus), accepted, settled)
	}
}

func TestDecodeUsual(t *testing.T) {
	var e echo
	if !For[echo]().Decode([]byte(`{"text":"hello"}`), &e) || e.Text != "hello" {
		t.Fatalf("got %+v", e)
	}
	if For[echo]().Decode([]byte(`{"text":"a","text":"b"}`), &e) {
		t.Fatal("a repeated name was settled")
	}
	var zero Codec[echo]
	if zero.Decode([]byte(`{}`), &e) {
		t.Fatal("the zero Codec settled a text")
	}
}

// randomString draws a string of the characters that matter to quoting.
func randomString(r *rand.Rand) string {
	parts := []string{"a", "hello", " ", "\"", "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f",
		"\x7f", "<", ">", "&", "é", "😀", "\u2028", "\u2029", "\ufffd", "\xff", "\xed\xa0\x80", "\xc3"}
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// randomValue fills a value of a flat type with strings of randomString and integers at and
// near their bounds.
func randomValue(r *rand.Rand, typ reflect.Type) reflect.Value {
	v := reflect.New(typ)
	for i := range typ.NumField() {
		f := v.Elem().Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(randomString(r))
		case reflect.Bool:
			f.SetBool(r.IntN(2) == 1)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			bits := f.Type().Bits()
			x := []int64{0, 1, -1, r.Int64(), math.MinInt64, math.MaxInt64}[r.IntN(6)]
			f.SetInt(x << (64 - bits) >> (64 - bits))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			bits := f.Type().Bits()
			x := []uint64{0, 1, r.Uint64(), math.MaxUint64}[r.IntN(4)]
			f.SetUint(x << (64 - bits) >> (64 - bits))
		case reflect.Float32, reflect.Float64:
			f.SetFloat(r.NormFloat64())
		}
	}
	return v
}

// TestAppendMatchesJSON compares the codec with json.Marshal on random values of every flat
// type: where the codec settles a value, Marshal gives the same bytes; and the codec settles
// every value Marshal accepts of a type it encodes.
func TestAppendMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range flatTypes {
		c := build(typ)
		for range 5000 {
			v := randomValue(r, typ)
			want, werr := json.Marshal(v.Interface())
			got, ok := c.appendChecked([]byte("prefix"), v.UnsafePointer())
			if !ok {
				if werr == nil && c.encodes {
					t.Fatalf("%v: %+v: the codec refused a value json encodes as %s", typ, v.Elem().Interface(), want)
				}
				if string(got) != "prefix" {
					t.Fatalf("%v: a refused value left %q", typ, got)
				}
				continue
			}
			if werr != nil {
				t.Fatalf("%v: %+v: the codec settled a value json refuses (%v)", typ, v.Elem().Interface(), werr)
			}
			if !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Fatalf("%v: %+v:\n got %s\nwant prefix%s", typ, v.Elem().Interface(), got, want)
			}
		}
	}
}

// appendChecked is append as Codec.Append calls it (never for a type with floats).
func (c *codec) appendChecked(dst []byte, p unsafe.Pointer) ([]byte, bool) {
	if !c.encodes {
		return dst, false
	}
	return c.append(dst, p)
}

func TestAppendAny(t *testing.T) {
	c := For[echo]()
	e := &echo{Text: "hi"}
	if got, ok := c.AppendAny(nil, e); !ok || string(got) != `{"text":"hi"}` {
		t.Fatalf("*echo: got %s %v", got, ok)
	}
	for _, v := range []any{echo{Text: "hi"}, (*echo)(nil), nil, &every{}, map[string]string{}} {
		if _, ok := c.AppendAny(nil, v); ok {
			t.Errorf("%T: settled, want left to json", v)
		}
	}
	if _, ok := For[floats]().Append(nil, &floats{}); ok {
		t.Error("a struct with floats was encoded")
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"text":"hello"}`, `{"S":"a","i":-3,"u8":255,"b":true}`, `{"f64":1.5}`,
		`{"f32":1,"f64":-2.5e3,"s":"x"}`, `{"level":"info","N":3}`, `{}`} {
		f.Add(s)
	}
	// The strict decoder of each type under its derived schema: what it settles, the full
	// validator accepts.
	type strictOf struct {
		required uint64
		compiled *validator.Schema
	}
	stricts := make([]strictOf, len(flatTypes))
	for i, typ := range flatTypes {
		sch, err := schema.ForType(typ)
		if err != nil {
			f.Fatal(err)
		}
		required, ok := build(typ).admits(sch)
		compiled, err := schema.Compile("input", sch, false)
		if !ok || err != nil {
			f.Fatalf("%v: %s: taken %v, %v", typ, sch, ok, err)
		}
		stricts[i] = strictOf{required, compiled}
	}
	f.Fuzz(func(t *testing.T, text string) {
		for i, typ := range flatTypes {
			want := reflect.New(typ)
			werr := json.Unmarshal([]byte(text), want.Interface())
			got := reflect.New(typ)
			if !build(typ).decode([]byte(text), got.UnsafePointer()) {
				continue
			}
			if werr != nil || !reflect.DeepEqual(got.Elem().Interface(), want.Elem().Interface()) {
				t.Fatalf("%v: %q: codec %+v, json %+v (%v)", typ, text, got.Elem().Interface(), want.Elem().Interface(), werr)
			}
			strict := reflect.New(typ)
			seen, ok := build(typ).decodeWith([]byte(text), strict.UnsafePointer(), true)
			if !ok || seen&stricts[i].required != stricts[i].required {
				continue
			}
			if !reflect.DeepEqual(strict.Elem().Interface(), want.Elem().Interface()) {
				t.Fatalf("%v: %q: strict %+v, json %+v", typ, text, strict.Elem().Interface(), want.Elem().Interface())
			}
			if msg := schema.Validate(stricts[i].compiled, []byte(text)); msg != "" {
				t.Fatalf("%v: %q: settled strictly, but the derived schema refuses it: %s", typ, text, msg)
			}
		}
	})
}

func BenchmarkEcho(b *testing.B) {
	c := For[echo]()
	in := []byte(`{"text":"hello"}`)
	b.Run("decode/codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var e echo
			c.Decode(in, &e)
		}
	})
	b.Run("decode/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var e echo
			_ = json.Unmarshal(in, &e)
		}
	})
	e := &echo{Text: "hello"}
	buf := make([]byte, 0, 64)
	b.Run("encode/codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = c.Append(buf[:0], e)
		}
	})
	b.Run("encode/json", func(b *testing.B) {
		b.ReportAllocs()
		w := bytes.NewBuffer(buf)
		for b.Loop() {
			w.Reset()
			_ = json.MarshalWrite(w, e)
		}
	})
}

// TestSatisfies checks the claim of Satisfies: for the schemas derived from flat types, which it
// trusts, the full validator accepts every encoding of random values; and a schema that asserts
// more than the types is not trusted.
func TestSatisfies(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	check := func(typ reflect.Type, c *codec, sch []byte) {
		compiled, err := schema.Compile("output", sch, false)
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			v := randomValue(r, typ)
			enc, ok := c.append(nil, v.UnsafePointer())
			if !ok {
				continue
			}
			if msg := schema.Validate(compiled, enc); msg != "" {
				t.Fatalf("%v: %s: the trusted schema %s refuses it: %s", typ, enc, sch, msg)
			}
		}
	}
	derived := func(v any) []byte {
		b, err := schema.ForType(reflect.TypeOf(v))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, v := range []any{echo{}, every{}, named{}, struct{}{}} {
		typ := reflect.TypeOf(v)
		c := build(typ)
		sch := derived(v)
		if !c.satisfies(sch) {
			t.Errorf("%v: the derived schema %s is not trusted", typ, sch)
			continue
		}
		check(typ, c, sch)
	}
	echoCodec := For[echo]()
	for _, sch := range []string{
		`{"type":"object","properties":{"text":{"type":"string","maxLength":3}}}`,
		`{"type":"object","properties":{"text":{"type":"string","pattern":"^a"}}}`,
		`{"type":"object","properties":{"text":{"enum":["a"]}}}`,
		`{"type":"object","properties":{"text":{"type":"integer"}}}`,
		`{"type":"object","properties":{"text":true}}`,
		`{"type":"object","properties":{"text":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"text":{"type":"string"},"more":{"type":"string"}}}`,
		`{"type":"object","properties":{}}`,
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["other"]}`,
		`{"type":"object","properties":{"text":{"type":"string"}},"minProperties":2}`,
		`{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"text":{"type":"string"}}}`,
		`{"type":"object","properties":{"text":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string"}}}`,
		`{"type":"array"}`, `true`, `{"type":"object","properties":{"text":{"type":"string"}},"type":"object"}`,
	} {
		if echoCodec.Satisfies([]byte(sch)) {
			t.Errorf("%s: trusted", sch)
		}
	}
	type small struct {
		N int8   `json:"n"`
		T string `json:"t,omitempty"`
	}
	sc := For[small]()
	for sch, want := range map[string]bool{
		`{"type":"object","properties":{"n":{"type":"integer","minimum":-128,"maximum":127},"t":{"type":"string"}},"required":["n"]}`:            true,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"type":"integer"},"t":{"type":"string"}}}`: true,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":-127},"t":{"type":"string"}}}`:                                           false,
		`{"type":"object","properties":{"n":{"type":"integer","maximum":100},"t":{"type":"string"}}}`:                                            false,
		`{"type":"object","properties":{"n":{"type":"integer"},"t":{"type":"string"}},"required":["n","t"]}`:                                     false,
	} {
		if got := sc.Satisfies([]byte(sch)); got != want {
			t.Errorf("%s: Satisfies %v, want %v", sch, got, want)
		}
	}
	if For[floats]().Satisfies(derived(floats{})) {
		t.Error("a type the codec does not encode was trusted")
	}
}

// TestStrict checks the claim of Strict: for the schema derived from each flat type, which it
// takes, whatever it settles (of the decode corpus, and of the encodings of random values with
// a member dropped, nulled or added) the json package decodes to the same value and the full
// validator accepts; and it settles the encoding of every random value the json package
// encodes.
func TestStrict(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	corpus := decodeCorpus(r)
	for _, v := range []any{echo{}, every{}, named{}, floats{}, struct{}{}} {
		typ := reflect.TypeOf(v)
		c := build(typ)
		sch, err := schema.ForType(typ)
		if err != nil {
			t.Fatal(err)
		}
		required, ok := c.admits(sch)
		if !ok {
			t.Errorf("%v: the derived schema %s is not taken", typ, sch)
			continue
		}
		compiled, err := schema.Compile("input", sch, false)
		if err != nil {
			t.Fatal(err)
		}
		decode := func(text string) (reflect.Value, bool) {
			got := reflect.New(typ)
			seen, ok := c.decodeWith([]byte(text), got.UnsafePointer(), true)
			return got, ok && seen&required == required
		}
		texts := slices.Clone(corpus)
		for range 1000 {
			enc, err := json.Marshal(randomValue(r, typ).Interface())
			if err != nil {
				continue // invalid UTF-8, which the json package refuses to encode
			}
			if _, ok := decode(string(enc)); !ok {
				t.Fatalf("%v: %s: the encoding of a value was not settled", typ, enc)
			}
			texts = append(texts, string(enc))
			var members map[string]jsontext.Value
			if err := json.Unmarshal(enc, &members); err != nil {
				t.Fatal(err)
			}
			for name := range members {
				drop := maps.Clone(members)
				delete(drop, name)
				null := maps.Clone(members)
				null[name] = jsontext.Value(`null`)
				for _, m := range []map[string]jsontext.Value{drop, null} {
					b, _ := json.Marshal(m)
					texts = append(texts, string(b))
				}
				break
			}
			texts = append(texts, strings.Replace(string(enc), "{", `{"unknown":1,`, 1))
		}
		settled := 0
		for _, text := range texts {
			got, ok := decode(text)
			if !ok {
				continue
			}
			settled++
			want := reflect.New(typ)
			if err := json.Unmarshal([]byte(text), want.Interface()); err != nil || !reflect.DeepEqual(got.Elem().Interface(), want.Elem().Interface()) {
				t.Fatalf("%v: %s: strict %+v, json %+v (%v)", typ, text, got.Elem().Interface(), want.Elem().Interface(), err)
			}
			if msg := schema.Validate(compiled, []byte(text)); msg != "" {
				t.Fatalf("%v: %s: settled, but the schema %s refuses it: %s", typ, text, sch, msg)
			}
		}
		t.Logf("%v: %d texts, %d settled", typ, len(texts), settled)
	}
}

// TestStrictUsual: the usual arguments are settled, and what the derived schema refuses (or a
// schema that asserts more than the types) is not.
func TestStrictUsual(t *testing.T) {
	sch, err := schema.ForType(reflect.TypeFor[echo]())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := For[echo]().Strict(sch)
	if !ok {
		t.Fatalf("the derived schema %s is not taken", sch)
	}
	for text, want := range map[string]bool{
		`{"text":"hello"}`: true, ` { "text" : "a\nb" } `: true,
		`{}`: false, `{"text":null}`: false, `{"text":"a","x":1}`: false, `{"text":1}`: false,
		`{"text":"a","text":"b"}`: false, `{"Text":"a"}`: false, `[]`: false, `null`: false,
	} {
		var e echo
		if got := s.Decode([]byte(text), &e); got != want {
			t.Errorf("%s: settled %v, want %v", text, got, want)
		}
	}
	var zero Strict[echo]
	var e echo
	if zero.Decode([]byte(`{"text":"a"}`), &e) {
		t.Error("the zero Strict settled a text")
	}
	for _, sch := range []string{
		`{"type":"object","properties":{"text":{"type":"string","maxLength":3}}}`,
		`{"type":"object","properties":{"text":{"type":"string","pattern":"^a"}}}`,
		`{"type":"object","properties":{"text":{"enum":["a"]}}}`,
		`{"type":"object","properties":{"text":{"type":"integer"}}}`,
		`{"type":"object","properties":{"text":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"text":{"type":"string"},"more":{"type":"string"}}}`,
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["other"]}`,
		`{"type":"object","properties":{"text":{"type":"string"}},"minProperties":2}`,
		`{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"text":{"type":"string"}}}`,
		`{"type":"array"}`, `true`,
	} {
		if _, ok := For[echo]().Strict([]byte(sch)); ok {
			t.Errorf("%s: taken", sch)
		}
	}
	if _, ok := (Codec[pointer]{}).Strict(sch); ok {
		t.Error("the zero Codec made a Strict")
	}
}
