// Package browser holds end-to-end tests of what a browser sees: the
// GraphiQL page served at / (see server/graphiql), checked over HTTP on
// every run and, with FEED_BROWSER_TEST=1, driven in headless Chromium
// through the DevTools protocol (.ci/browser.sh installs Chromium and runs
// them).
package browser
