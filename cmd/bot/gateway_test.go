package main

import (
	"testing"

	"github.com/askops/askops/config"
)

// The gateway takes the tokens the config validated: each with its name,
// value and scopes.
func TestGatewayTokensTakeTheConfiguredTokens(t *testing.T) {
	c := config.APIConfig{Tokens: []config.APIToken{
		{Name: "laptop-ana", Token: "ana-token-value", Scopes: []string{"ask"}},
		{Name: "console", Token: "s3cret-console-token-value", Scopes: []string{"ask", "decide"}},
	}}
	if _, err := gatewayTokens(c); err != nil {
		t.Errorf("gateway refuses the validated tokens: %v", err)
	}
	c.Tokens[1].Scopes = []string{"admin"}
	if _, err := gatewayTokens(c); err == nil {
		t.Error("gateway took a token with an unknown scope")
	}
}
