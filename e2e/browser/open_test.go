package browser

import (
	"context"
	"slices"
	"testing"
)

// openPage starts headless Chromium with one page on about:blank, every
// request for another host sent to trap, and what the page does (its
// requests, exceptions, console, and those of every frame or worker it
// starts) recorded in log; CSP violations are collected in the page as
// window.__cspViolations, which checkOffline reads. It returns the browser
// and the page's session.
func openPage(ctx context.Context, t *testing.T, bin string, trap *offsiteTrap, log *pageLog) (*chrome, string) {
	t.Helper()
	c := startChrome(t, bin, log.event, slices.Concat(quietFlags, []string{
		"--proxy-server=http://" + trap.addr,
		"--window-size=1280,900",
	})...)
	// A frame or worker the page starts waits until its requests are
	// watched too, then runs.
	attach := func(session string, watch bool) {
		go func() {
			if watch {
				_ = c.call(ctx, session, "Network.enable", nil, nil)
			}
			_ = c.call(ctx, session, "Runtime.runIfWaitingForDebugger", nil, nil)
		}()
	}

	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	log.self, log.attach = target.TargetID, attach
	log.mu.Unlock()
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		t.Fatal(err)
	}
	s := attached.SessionID
	for _, domain := range []string{"Page.enable", "Network.enable", "Runtime.enable", "Log.enable"} {
		if err := c.call(ctx, s, domain, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.call(ctx, s, "Target.setAutoAttach", map[string]any{
		"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true,
	}, nil); err != nil {
		t.Fatal(err)
	}
	// CSP violations, as the page sees them.
	if err := c.call(ctx, s, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": `
		window.__cspViolations = [];
		document.addEventListener('securitypolicyviolation',
			e => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`}, nil); err != nil {
		t.Fatal(err)
	}
	return c, s
}
