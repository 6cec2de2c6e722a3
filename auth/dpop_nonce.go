package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"
)

// nonceContext separates the MACs of DPoP nonces from any other use of the key.
const nonceContext = "mcpkit dpop nonce v1\x00"

// nonceSkew is how far in the future a nonce's issue time may be (clocks of replicas differ).
const nonceSkew = 5 * time.Second

// nonceSealer issues and checks stateless server nonces (RFC 9449 section 8): the issue time in
// seconds and an HMAC-SHA256 of it, truncated to 128 bits, base64url-encoded. Any replica with
// the key accepts a nonce until it is lifetime old.
type nonceSealer struct {
	keys     [][]byte // keys[0] seals; every key opens
	lifetime time.Duration
}

// checkNonceKeys panics, naming the option, unless key is nil or 32 bytes and each old key is 32
// bytes.
func checkNonceKeys(key []byte, old [][]byte) {
	if key != nil && len(key) != 32 {
		panic(fmt.Sprintf("auth: BearerOptions.DPoP.NonceKey must be 32 bytes, not %d", len(key)))
	}
	for i, k := range old {
		if len(k) != 32 {
			panic(fmt.Sprintf("auth: BearerOptions.DPoP.OldNonceKeys[%d] must be 32 bytes, not %d", i, len(k)))
		}
	}
}

// newNonceKeys returns the ring of checked keys, a random key first when key is nil.
func newNonceKeys(key []byte, old [][]byte) [][]byte {
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return append([][]byte{key}, old...)
}

func nonceMAC(key []byte, ts []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(nonceContext))
	m.Write(ts)
	return m.Sum(nil)[:16]
}

// issue returns a nonce issued at now.
func (n *nonceSealer) issue(now time.Time) string {
	var buf [8 + 16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(now.Unix()))
	copy(buf[8:], nonceMAC(n.keys[0], buf[:8]))
	return base64.RawURLEncoding.EncodeToString(buf[:])
}

// open reports whether nonce is one of ours and still good at now (ok), and whether it is in
// the first half of its life (fresh: no new nonce is needed yet).
func (n *nonceSealer) open(nonce string, now time.Time) (fresh, ok bool) {
	var buf [8 + 16]byte
	if base64.RawURLEncoding.DecodedLen(len(nonce)) != len(buf) {
		return false, false
	}
	if _, err := base64.RawURLEncoding.Decode(buf[:], []byte(nonce)); err != nil {
		return false, false
	}
	valid := false
	for _, k := range n.keys {
		if hmac.Equal(buf[8:], nonceMAC(k, buf[:8])) {
			valid = true
			break
		}
	}
	if !valid {
		return false, false
	}
	age := now.Sub(time.Unix(int64(binary.BigEndian.Uint64(buf[:8])), 0))
	if age < -nonceSkew || age > n.lifetime {
		return false, false
	}
	return age < n.lifetime/2, true
}
