package fakepush_test

import (
	"crypto/ecdh"
	"encoding/base64"
	"testing"

	"github.com/askops/askops/internal/fakepush"
)

// RFC 8291 appendix A's message decrypts to its plaintext: Decrypt (the
// fake push service's browser side) reads the RFC, so a push it accepts
// is one a browser would read.
func TestDecryptReadsRFC8291sExample(t *testing.T) {
	d := base64.RawURLEncoding.DecodeString
	uaPriv, _ := d("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94")
	auth, _ := d("BTBZMqHH6r4Tts7J_aSIgg")
	body, _ := d("DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
	priv, err := ecdh.P256().NewPrivateKey(uaPriv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fakepush.Decrypt(body, priv, auth)
	if err != nil || string(got) != "When I grow up, I want to be a watermelon" {
		t.Fatalf("RFC 8291's example decrypts to %q, %v", got, err)
	}
}
