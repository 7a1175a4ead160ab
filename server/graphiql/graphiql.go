// Package graphiql serves the GraphiQL IDE from files embedded in the
// binary: the page, its start script, and GraphiQL, React and ReactDOM as
// published on npm (see README.md and update.sh). The page loads
// nothing from any other origin, so it works on a machine with no internet,
// and its Content-Security-Policy makes the browser refuse anything else.
//
// A Handler serves the page and its assets at one path (the server mounts it
// at /): a request whose query names an asset (?asset=NAME&v=VERSION) gets
// that file, any other request gets the page. Asset URLs carry a hash of the
// content, so they are cached for a year and a new build is never served
// stale files.
//
// Why not a library: Go packages that serve GraphiQL (gqlgen's playground
// among them) load it from a CDN, which fails offline and under a strict
// CSP. This is the npm release itself, embedded, plus the page around it.
package graphiql

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
)

//go:embed page.html start.js dist/*.js dist/*.css dist/SHA256SUMS
var files embed.FS

// AssetParam is the query parameter naming an asset.
const AssetParam = "asset"

// CSP is the page's Content-Security-Policy: scripts, styles and requests
// only from its own origin; fonts and images only from data: URLs (the
// stylesheet inlines its fonts). GraphiQL and its libraries inject <style>
// elements, hence 'unsafe-inline' for styles.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"font-src data:; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Config says what the page talks to.
type Config struct {
	// Title is the page title.
	Title string
	// Endpoint is the GraphQL endpoint, resolved against the page's URL
	// (e.g. "/query").
	Endpoint string
	// StoragePrefix prefixes the keys GraphiQL keeps in localStorage.
	StoragePrefix string
	// Path is where the Handler is mounted; asset URLs are Path+"?asset=...".
	// Default "/".
	Path string
}

// Handler serves the GraphiQL page and its assets.
type Handler struct {
	page   []byte
	assets map[string]*asset
}

// asset is one embedded file.
type asset struct {
	body        []byte
	contentType string
	version     string // hex prefix of the body's SHA-256

	gzipOnce sync.Once
	gzipped  []byte // nil when compression does not pay
}

var pageTemplate = template.Must(template.ParseFS(files, "page.html"))

// New builds the page for cfg.
func New(cfg Config) *Handler {
	if cfg.Path == "" {
		cfg.Path = "/"
	}
	h := &Handler{assets: map[string]*asset{}}
	urls := map[string]string{}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (path.Ext(p) != ".js" && path.Ext(p) != ".css") {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		a := &asset{body: body, contentType: contentType(p), version: hex.EncodeToString(sum[:6])}
		name := path.Base(p)
		h.assets[name] = a
		urls[name] = cfg.Path + "?" + url.Values{AssetParam: {name}, "v": {a.version}}.Encode()
		return nil
	})
	if err != nil {
		panic("graphiql: embedded files: " + err.Error())
	}
	var buf bytes.Buffer
	err = pageTemplate.Execute(&buf, map[string]any{
		"Title":         cfg.Title,
		"Endpoint":      cfg.Endpoint,
		"StoragePrefix": cfg.StoragePrefix,
		"Assets":        urls,
	})
	if err != nil {
		panic("graphiql: page template: " + err.Error())
	}
	h.page = buf.Bytes()
	return h
}

// IsAsset reports whether r asks for an asset rather than the page.
func IsAsset(r *http.Request) bool {
	return r.URL.Query().Has(AssetParam)
}

// ServeHTTP serves the asset r names, or else the page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if IsAsset(r) {
		h.serveAsset(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	// The page names the current assets' versions: always revalidate it.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(h.page)
}

func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, ok := h.assets[q.Get(AssetParam)]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Vary", "Accept-Encoding")
	if q.Get("v") == a.version {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		// An old or missing version: serve what we have, but let no cache
		// keep it under that URL.
		hd.Set("Cache-Control", "no-cache")
	}
	body, etag := a.body, `"`+a.version+`"`
	if acceptsGzip(r) {
		if gz := a.gzip(); gz != nil {
			body, etag = gz, `"`+a.version+`-gz"`
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("ETag", etag)
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(body)
}

// gzip compresses the asset once, on first demand; GraphiQL's script
// shrinks to about a quarter.
func (a *asset) gzip() []byte {
	a.gzipOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		if buf.Len() < len(a.body)*9/10 {
			a.gzipped = buf.Bytes()
		}
	})
	return a.gzipped
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0"
		}
	}
	return false
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "application/octet-stream"
}
