package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// badSigner is a crypto.Signer of a key type JWS cannot use.
type badSigner struct{ *ecdsa.PrivateKey }

func (badSigner) Public() crypto.PublicKey { return "not a key" }

func TestOptionsInvalid(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := func(context.Context) (string, error) { return "x", nil }
	for _, tc := range []struct {
		want string
		opts Options
	}{
		{"Options.MaxDocumentBytes", Options{MaxDocumentBytes: -1}},
		{"Options.AuthorizeTimeout", Options{AuthorizeTimeout: -1}},
		{"Options.ClientCredentials needs Options.ClientID", Options{ClientCredentials: true, ClientSecret: "s"}},
		{"Options.ClientCredentials needs Options.ClientSecret", Options{ClientCredentials: true, ClientID: "c"}},
		{"select different grants", Options{ClientCredentials: true, ClientID: "c", ClientSecret: "s", Assertion: id}},
		{"select different grants", Options{Assertion: id, Enterprise: &Enterprise{TokenEndpoint: "https://idp/token", IDToken: id}}},
		{"Options.Enterprise needs", Options{Enterprise: &Enterprise{IDToken: id}}},
		{"Options.Enterprise needs", Options{Enterprise: &Enterprise{TokenEndpoint: "https://idp/token"}}},
		{"Options.ClientMetadataURL", Options{ClientMetadataURL: "http://example.com/client.json"}},
		{"Options.ClientMetadataURL", Options{ClientMetadataURL: "not a url"}},
		{"Options.PrivateKey", Options{PrivateKey: badSigner{k}}},
		{"Options.DPoPKey", Options{DPoPKey: badSigner{k}}},
	} {
		testutil.WantPanic(t, tc.want, func() { New(tc.opts) })
	}
	// Valid: a loopback metadata URL (for tests and local runs), negative limits.
	New(Options{ClientMetadataURL: "http://127.0.0.1:8080/client.json", MaxStepUps: -1, RefreshBefore: -1})
}

func TestOptionsDefaults(t *testing.T) {
	tr := New(Options{})
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "MaxDocumentBytes", Given: tr.opts.MaxDocumentBytes, Got: tr.maxBytes, Doc: int64(1 << 20)},
		{Option: "MaxStepUps", Given: tr.opts.MaxStepUps, Got: tr.maxSteps, Doc: 3},
		{Option: "RefreshBefore", Given: tr.opts.RefreshBefore, Got: tr.before, Doc: time.Minute},
		{Option: "AuthorizeTimeout", Given: tr.opts.AuthorizeTimeout, Got: tr.authTimeout, Doc: 5 * time.Minute},
		{Option: "HTTPClient.Timeout", Given: tr.opts.HTTPClient, Got: tr.hc.Timeout, Doc: 10 * time.Second},
		{Option: "Base", Given: tr.opts.Base, Got: tr.base, Doc: http.DefaultTransport},
		{Option: "Store", Given: tr.opts.Store, Got: tr.store != nil, Doc: true},
		{Option: "DisableDPoP", Given: tr.opts.DisableDPoP, Got: tr.dpop != nil, Doc: true},
	})
	if New(Options{DisableDPoP: true}).dpop != nil {
		t.Error("DisableDPoP set: the transport still has a DPoP key")
	}
}

func TestExpiresIn(t *testing.T) {
	for in, want := range map[string]seconds{`{"expires_in":3600}`: 3600, `{"expires_in":"60"}`: 60, `{}`: 0} {
		var tr tokenResponse
		if err := json.Unmarshal([]byte(in), &tr); err != nil || tr.ExpiresIn != want {
			t.Errorf("%s: %v %v, want %v", in, tr.ExpiresIn, err, want)
		}
	}
	var tr tokenResponse
	if err := json.Unmarshal([]byte(`{"expires_in":"soon"}`), &tr); err == nil {
		t.Error(`expires_in "soon" accepted`)
	}
}
