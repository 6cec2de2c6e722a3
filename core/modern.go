package core

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
)

// Envelope is what a 2026-07-28 request says about its client in params._meta. Every request
// carries its own: the server keeps nothing between requests.
type Envelope struct {
	ProtocolVersion    string
	ClientCapabilities ClientCapabilities
	// ClientInfo is nil when the client did not say.
	ClientInfo *Implementation
	// LogLevel is the threshold for log messages of this request; empty means none are sent.
	LogLevel LoggingLevel
}

// removedMethods are the methods the 2026-07-28 lifecycle dropped.
var removedMethods = map[string]bool{
	"initialize":            true,
	"ping":                  true,
	"logging/setLevel":      true,
	"resources/subscribe":   true,
	"resources/unsubscribe": true,
}

// cacheableMethods carry SEP-2549 cache hints on modern results.
var cacheableMethods = map[string]bool{
	"server/discover":          true,
	"tools/list":               true,
	"prompts/list":             true,
	"resources/list":           true,
	"resources/templates/list": true,
	"resources/read":           true,
}

// messageClaimsModern reports whether params carry the 2026-07-28 envelope claim: a _meta object with a
// non-null protocolVersion. A partial envelope still claims (and is then rejected as invalid).
func messageClaimsModern(m *jsonrpc.Message) bool {
	v := metaValue(m, metakey.ProtocolVersion)
	return len(v) > 0 && string(v) != "null"
}

func (c *Call) claimsModern() bool {
	v := c.Meta(metakey.ProtocolVersion)
	return len(v) > 0 && string(v) != "null"
}

// unsupportedVersion returns -32022 with the supported versions and the requested one.
func unsupportedVersion(requested string) *jsonrpc.Error {
	if requested == "" {
		requested = "unknown"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version",
		Data: map[string]any{"supported": supportedModern(), "requested": requested}}
}

// parseEnvelope validates the request's envelope: -32602 naming every missing or invalid key,
// then -32022 for a version the server does not serve.
func (c *Call) parseEnvelope() (*Envelope, *jsonrpc.Error) {
	env, infoStore := c.envelopeStorage()
	var bad []string
	var ok bool
	if env.ProtocolVersion, ok = envelopeString(c.Meta(metakey.ProtocolVersion), modernVersions); !ok {
		bad = append(bad, metakey.ProtocolVersion)
	}
	switch caps := c.Meta(metakey.ClientCapabilities); {
	case string(caps) == "{}":
		env.ClientCapabilities = ClientCapabilities{} // the usual envelope: nothing to decode
	case !rawObject(caps) || unmarshal(caps, &env.ClientCapabilities) != nil:
		bad = append(bad, metakey.ClientCapabilities)
	}
	if info := c.Meta(metakey.ClientInfo); len(info) > 0 {
		if !rawObject(info) {
			bad = append(bad, metakey.ClientInfo)
		} else if impl, err := clientInfoOf(info, infoStore); err != nil {
			bad = append(bad, metakey.ClientInfo)
		} else {
			env.ClientInfo = impl
		}
	}
	if lvl := c.Meta(metakey.LogLevel); len(lvl) > 0 {
		level, ok := envelopeString(lvl, nil)
		if env.LogLevel = LoggingLevel(level); !ok || !env.LogLevel.Valid() {
			bad = append(bad, metakey.LogLevel)
		}
	}
	if len(bad) > 0 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: missing or invalid `"+strings.Join(bad, "`, `")+"` in `_meta`")
	}
	if !IsModernVersion(env.ProtocolVersion) {
		return nil, unsupportedVersion(env.ProtocolVersion)
	}
	if env.ClientCapabilities == nil {
		env.ClientCapabilities = ClientCapabilities{}
	}
	return env, nil
}

// envelopeStore is the storage of a 2026-07-28 call's envelope and of the ClientInfo it names,
// allocated with the ephemeral session of a request (see modernSession).
type envelopeStore struct {
	env  Envelope
	info Implementation
}

// envelopeStorage returns where parseEnvelope decodes the envelope, and the storage for its
// ClientInfo (nil: clientInfoOf allocates it): the call's store when it has one, a new envelope
// otherwise.
func (c *Call) envelopeStorage() (*Envelope, *Implementation) {
	if c.store != nil {
		return &c.store.env, &c.store.info
	}
	return new(Envelope), nil
}

// envelopeString decodes a _meta value that must be a JSON string, as json.Unmarshal into a string
// would (a quick path for the envelope's strings: no decoder, and the text of a value in known
// is shared rather than allocated).
func envelopeString(raw []byte, known []string) (string, bool) {
	if jsontext.Value(raw).Kind() != '"' || len(raw) < 2 {
		return "", false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
		for _, k := range known {
			if string(inner) == k {
				return k, true
			}
		}
	}
	b, err := jsontext.AppendUnquote(nil, raw)
	return string(b), err == nil
}

// classify applies the lifecycle rules before the handler runs: the era lock of the session, the
// methods the modern lifecycle removed, and the envelope. It returns the error answering the
// call, or nil.
func (c *Call) classify() *jsonrpc.Error {
	ss := c.session
	ss.mu.Lock()
	era := ss.era
	ss.mu.Unlock()
	claim := c.claimsModern()
	if era == eraLegacy {
		if claim {
			return jsonrpc.InvalidRequest("Invalid Request: the session already negotiated the legacy lifecycle via `initialize`")
		}
		return nil
	}
	if !claim && era != eraModern {
		return nil // a legacy request on a connection that has not chosen yet
	}
	if removedMethods[c.msg.Method] {
		return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %s is not part of the modern lifecycle (SEP-2575)", c.msg.Method))
	}
	if !claim && c.msg.Method == "server/discover" && era != eraModern {
		return nil
	}
	env, err := c.parseEnvelope()
	if err != nil {
		return err
	}
	c.modern = env
	return nil
}

// lockModern locks an undecided connection to the modern lifecycle after a successful modern
// request (or server/discover).
func (c *Call) lockModern() {
	ss := c.session
	ss.mu.Lock()
	if ss.era == eraNone && !ss.ephemeral {
		ss.era = eraModern
	}
	ss.mu.Unlock()
}

// Modern returns the request's 2026-07-28 envelope, or nil on the legacy lifecycle.
func (c *Call) Modern() *Envelope { return c.modern }

// RequireClientCapability returns nil when the client declared the capability at path (from
// the request's envelope, or the session's initialize), and otherwise the -32021 error naming
// it in data.requiredCapabilities, e.g. RequireClientCapability("sampling") or
// RequireClientCapability("elicitation", "url").
func (c *Call) RequireClientCapability(path ...string) error {
	if c.ClientCapabilities().Has(path...) {
		return nil
	}
	return MissingCapabilities(nestedCapability(path))
}

// MissingCapabilities returns the -32021 error with the given requiredCapabilities object.
func MissingCapabilities(required map[string]any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMissingRequiredClientCapability, Message: "Missing required client capability",
		Data: map[string]any{"requiredCapabilities": required}}
}

func nestedCapability(path []string) map[string]any {
	out := map[string]any{}
	cur := out
	for i, p := range path {
		next := map[string]any{}
		cur[p] = next
		if i < len(path)-1 {
			cur = next
		}
	}
	return out
}

// discoverResult is the result of server/discover.
type discoverResult struct {
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitzero"`
	Meta              Meta               `json:"_meta,omitzero"`
}

func handleDiscover(c *Call) (any, error) {
	s := c.session.server
	return discoverResult{
		SupportedVersions: supportedModern(),
		Capabilities:      c.session.modernCapabilities(),
		Instructions:      s.opts.Instructions,
	}, nil
}

// modernCapabilities are the capabilities a 2026-07-28 client is told about: the change
// notification flags (listChanged, subscribe) only where the transport can deliver them.
func (ss *Session) modernCapabilities() ServerCapabilities {
	caps := ss.server.Capabilities()
	if ss.changeNotifications {
		return caps
	}
	if caps.Tools != nil {
		caps.Tools = &ListChangedCapability{}
	}
	if caps.Prompts != nil {
		caps.Prompts = &ListChangedCapability{}
	}
	if caps.Resources != nil {
		caps.Resources = &ResourcesCapability{}
	}
	return caps
}

// stampModern adds what the 2026-07-28 lifecycle requires on a result: resultType (default
// "complete"), the server's identity in _meta, and cache hints on complete results of cacheable
// methods. Members the result already has are kept: a handler's own ttlMs or cacheScope wins.
func (c *Call) stampModern(result []byte) []byte {
	return c.appendStamped(make([]byte, 0, len(result)+c.stampRoom()), result)
}

// stampRoom is about how many bytes stamping adds to a result.
func (c *Call) stampRoom() int {
	return 96 + len(metakey.ServerInfo) + len(c.session.server.serverInfoJSON())
}

// appendStamped appends result to dst (which must not overlap it) with the members stampModern
// adds. A result that is not an object is appended as it is.
func (c *Call) appendStamped(dst, result []byte) []byte {
	var st stampScan
	if !st.scan(result) {
		return append(dst, result...)
	}
	s := c.session.server
	dst = append(dst, '{')
	if !st.hasType {
		dst = append(dst, `"resultType":"complete",`...)
	}
	if s.cacheable(c.msg.Method) && !st.inputRequired {
		if !st.hasTTL {
			dst = append(dst, `"ttlMs":`...)
			dst = strconv.AppendInt(dst, s.opts.CacheTTLMs, 10)
			dst = append(dst, ',')
		}
		if !st.hasScope {
			dst = append(dst, `"cacheScope":`...)
			dst = appendString(dst, s.cacheScope())
			dst = append(dst, ',')
		}
	}
	info := s.serverInfoJSON()
	switch {
	case st.metaOther, st.hasInfo:
		return append(dst, result[1:]...)
	case st.metaOpen < 0:
		dst = appendServerInfo(dst, info)
		if bytes.IndexByte(result[1:], '"') >= 0 { // the result has members of its own
			dst = append(dst, ',')
		}
		return append(dst, result[1:]...)
	}
	dst = append(dst, result[1:st.metaOpen]...)
	dst = append(dst, `"`+metakey.ServerInfo+`":`...)
	dst = append(dst, info...)
	if rest := bytes.TrimLeft(result[st.metaOpen:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, result[st.metaOpen:]...)
}

// appendServerInfo appends a _meta member holding only the server's identity.
func appendServerInfo(dst, info []byte) []byte {
	dst = append(dst, `"_meta":{"`+metakey.ServerInfo+`":`...)
	dst = append(dst, info...)
	return append(dst, '}')
}

// stampScan is what stampModern learns from the top-level members of a result.
type stampScan struct {
	hasType, hasTTL, hasScope, hasInfo, inputRequired, metaOther bool
	metaOpen                                                     int // offset just after the '{' of an object _meta, -1 without one
}

// scan reads the members of result; false means it is not an object it can stamp.
func (st *stampScan) scan(result []byte) bool {
	st.metaOpen = -1
	sd := stampDecoders.Get().(*stampDecoder)
	defer sd.release()
	sd.r.Reset(result)
	dec := &sd.d
	dec.Reset(&sd.r)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadValue() // the quoted name: compared as is, no string made
		if err != nil || !st.member(dec, memberName(name)) {
			return false
		}
	}
	return true
}

// member reads the value of one top-level member.
func (st *stampScan) member(dec *jsontext.Decoder, name string) bool {
	switch name {
	case "resultType":
		st.hasType = true
		v, err := dec.ReadValue()
		st.inputRequired = string(v) == `"input_required"`
		return err == nil
	case "ttlMs":
		st.hasTTL = true
	case "cacheScope":
		st.hasScope = true
	case "_meta":
		if dec.PeekKind() == '{' {
			return st.meta(dec)
		}
		st.metaOther = true // null or not an object: left as the handler made it
	}
	return dec.SkipValue() == nil
}

// meta reads an object _meta, noting where it opens and whether it names the server already.
func (st *stampScan) meta(dec *jsontext.Decoder) bool {
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	st.metaOpen = int(dec.InputOffset())
	for dec.PeekKind() == '"' {
		key, err := dec.ReadValue()
		if err != nil {
			return false
		}
		st.hasInfo = st.hasInfo || memberName(key) == metakey.ServerInfo
		if err := dec.SkipValue(); err != nil {
			return false
		}
	}
	_, err := dec.ReadToken()
	return err == nil
}

// stampedNames are the member names stampModern looks for.
var stampedNames = [...]string{"resultType", "ttlMs", "cacheScope", "_meta", metakey.ServerInfo}

// stampDecoder is a reusable reader for stampModern.
type stampDecoder struct {
	r bytes.Reader
	d jsontext.Decoder
}

var stampDecoders = sync.Pool{New: func() any { return new(stampDecoder) }}

func (sd *stampDecoder) release() {
	sd.r.Reset(nil) // do not keep the result alive in the pool
	sd.d.Reset(&sd.r)
	stampDecoders.Put(sd)
}

// memberName returns the name of a quoted member name as read: the bytes between the quotes,
// converted only when the name is one stampModern looks for (escaped spellings are unquoted).
func memberName(raw jsontext.Value) string {
	if bytes.IndexByte(raw, '\\') >= 0 {
		if u, err := jsontext.AppendUnquote(nil, raw); err == nil {
			return string(u)
		}
		return ""
	}
	for _, name := range stampedNames {
		if string(raw[1:len(raw)-1]) == name { // compared without allocating
			return name
		}
	}
	return ""
}
