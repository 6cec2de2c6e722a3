// Package testutil holds helpers shared by the tests of the kit. It is
// internal: nothing here is part of the public API, and it may change
// whenever the tests need it to.
//
// The helpers fall into a few groups:
//
//   - Schema checks. [ValidateDef] and [CheckDef] validate a JSON wire
//     message against one definition of the official MCP JSON schema for a
//     protocol version (for example "InitializeResult" of "2025-11-25").
//     The official schema files are not vendored into the repository; they
//     are expected in a folder named shared/spec beside the repository
//     checkout, laid out as <version>/schema.json, or in the folder named
//     by the MCPKIT_SPEC_DIR environment variable. When they cannot be
//     found, tests that need them are skipped rather than failed.
//
//   - Server-Sent Events. [SSEReader] parses an SSE stream (for example the
//     body of a live HTTP response) into [Event] values one at a time,
//     returning each event as soon as its terminating blank line arrives,
//     and reporting comment lines so that tests can observe keepalives.
//
// Further helpers for building requests and for driving a server from a
// small client are expected to join this package; keep names generic so
// that they sit well together.
package testutil
