// Package browser holds end-to-end tests of what a browser sees: the
// GraphiQL page served at / (see server/graphiql), and the HTML report
// feedload writes (see cmd/feedload/loadreport), each checked without a
// browser on every run and, with FEED_BROWSER_TEST=1, opened in headless
// Chromium through the DevTools protocol with every request for another
// host refused (.ci/browser.sh installs Chromium and runs them).
package browser
