package serve_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/rollout-rl/rollout/policy/serve"
)

// A guard in front of a handler: on loopback, requests must name this
// machine in their Host header and carry the key.
func ExampleGuard() {
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") })
	h := serve.Guard{LoopbackOnly: serve.Exposure("127.0.0.1:8000") == "", Key: "s3cret"}.Wrap(hello)
	for _, tc := range []struct{ host, auth string }{
		{"127.0.0.1:8000", "Bearer s3cret"},
		{"127.0.0.1:8000", ""},
		{"rebound.example:8000", "Bearer s3cret"},
	} {
		req := httptest.NewRequest("GET", "/v1/models", nil)
		req.Host = tc.host
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(tc.host, rec.Code)
	}
	// Output:
	// 127.0.0.1:8000 200
	// 127.0.0.1:8000 401
	// rebound.example:8000 403
}
