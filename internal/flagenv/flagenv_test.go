package flagenv

import "testing"

func TestEnvName(t *testing.T) {
	for flagName, env := range map[string]string{"redis": "FEED_REDIS_URL", "bigv-threshold": "FEED_BIGV_THRESHOLD", "jwt-public-key": "FEED_JWT_PUBLIC_KEY", "addr": "FEED_ADDR"} {
		if got := Name(flagName); got != env {
			t.Errorf("Name(%q) = %q, want %q", flagName, got, env)
		}
	}
}
