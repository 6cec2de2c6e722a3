package core

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitzero"`
	Meta            Meta               `json:"_meta,omitzero"`
}

func handleInitialize(c *Call) (any, error) {
	if c.session.Initialized() {
		// Whatever its params, a second initialize is a lifecycle error (checked again below,
		// under the lock, for two racing initializes).
		return nil, jsonrpc.InvalidRequest("Invalid Request: Server already initialized")
	}
	if !rawObject(c.msg.Params) {
		return nil, jsonrpc.InvalidParams("Invalid params")
	}
	var p struct {
		ProtocolVersion jsontext.Value `json:"protocolVersion"`
		Capabilities    jsontext.Value `json:"capabilities"`
		ClientInfo      jsontext.Value `json:"clientInfo"`
	}
	if unmarshal(c.msg.Params, &p) != nil {
		return nil, jsonrpc.InvalidParams("Invalid params")
	}
	if limit := c.session.server.opts.MaxClientInfoBytes; limit > 0 && len(p.Capabilities)+len(p.ClientInfo) > limit {
		return nil, jsonrpc.InvalidParams("clientInfo and capabilities exceed " + strconv.Itoa(limit) + " bytes (MaxClientInfoBytes)")
	}
	var requested string
	if p.ProtocolVersion.Kind() != '"' || unmarshal(p.ProtocolVersion, &requested) != nil {
		return nil, jsonrpc.InvalidParams("Missing or invalid protocolVersion")
	}
	var caps ClientCapabilities
	if !rawObject(p.Capabilities) || unmarshal(p.Capabilities, &caps) != nil {
		return nil, jsonrpc.InvalidParams("Missing or invalid capabilities")
	}
	var info Implementation
	if !rawObject(p.ClientInfo) || unmarshal(p.ClientInfo, &info) != nil || info.Name == "" || info.Version == "" {
		return nil, jsonrpc.InvalidParams("Missing or invalid clientInfo")
	}
	if caps == nil {
		caps = ClientCapabilities{}
	}

	s := c.session.server
	version := negotiate(requested, s.opts.ProtocolVersion)
	ss := c.session
	ss.mu.Lock()
	if ss.initialized {
		ss.mu.Unlock()
		return nil, jsonrpc.InvalidRequest("Invalid Request: Server already initialized")
	}
	if ss.era == eraModern {
		ss.mu.Unlock()
		return nil, jsonrpc.InvalidRequest("Invalid Request: the session already uses the 2026-07-28 lifecycle")
	}
	ss.initialized = true
	ss.era = eraLegacy
	ss.version = version
	ss.clientInfo = &info
	ss.clientCaps = caps
	if ss.principal == "" {
		ss.principal, _ = PrincipalFrom(c.ctx) // whose session it is, for FilterChanged
	}
	ss.mu.Unlock()
	if e := ss.persist(c.ctx); e != nil {
		return nil, e
	}

	return InitializeResult{
		ProtocolVersion: version,
		Capabilities:    s.legacyCapabilities(s.Capabilities()),
		ServerInfo:      implementationFor(s.impl, version),
		Instructions:    instructionsFor(s.opts.Instructions, version),
	}, nil
}

// implementationFor drops the serverInfo members a version does not know: description and icons
// before 2025-11-25, title and websiteUrl before 2025-06-18.
func implementationFor(impl Implementation, version string) Implementation {
	if version <= Version20250618 {
		impl.Description = ""
		impl.Icons = nil
	}
	if version <= Version20250326 {
		impl.Title = ""
		impl.WebsiteURL = ""
	}
	return impl
}

// instructionsFor drops instructions for 2024-11-05, which has no such member.
func instructionsFor(instructions, version string) string {
	if version == Version20241105 {
		return ""
	}
	return instructions
}

func handleSetLevel(c *Call) (any, error) {
	var p struct {
		Level jsontext.Value `json:"level"`
	}
	if err := objectParams(c, &p); err != nil {
		return nil, err
	}
	var level LoggingLevel
	if p.Level.Kind() != '"' || unmarshal(p.Level, &level) != nil || !level.Valid() {
		shown := string(level)
		if p.Level.Kind() != '"' {
			shown = string(p.Level) // not a string: show the JSON as sent
		}
		return nil, jsonrpc.InvalidParams("Invalid log level " + shown)
	}
	c.session.mu.Lock()
	c.session.logLevel = level
	c.session.mu.Unlock()
	if e := c.session.persist(c.ctx); e != nil {
		return nil, e
	}
	return emptyResult{}, nil
}
