package core

// Protocol versions the kit speaks.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	// Version20260728 is the stateless lifecycle: no initialize, a per-request _meta envelope.
	Version20260728 = "2026-07-28"

	// LatestHandshakeVersion is what initialize counter-offers for a version it does not speak.
	LatestHandshakeVersion = Version20251125
)

// handshakeVersions are the versions initialize can negotiate, newest first.
var handshakeVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// modernVersions are the versions of the per-request envelope.
var modernVersions = []string{Version20260728}

// supportedModern returns a copy of the versions served through the per-request _meta envelope.
func supportedModern() []string { return append([]string(nil), modernVersions...) }

// IsHandshakeVersion reports whether v can be negotiated by initialize.
func IsHandshakeVersion(v string) bool { return contains(handshakeVersions, v) }

// IsModernVersion reports whether v is served through the per-request envelope.
func IsModernVersion(v string) bool { return contains(modernVersions, v) }

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// negotiate picks the version initialize answers with: the client's own when it is a handshake
// version, else the pin, else the latest handshake version.
func negotiate(requested, pin string) string {
	if IsHandshakeVersion(requested) {
		return requested
	}
	if pin != "" {
		return pin
	}
	return LatestHandshakeVersion
}
