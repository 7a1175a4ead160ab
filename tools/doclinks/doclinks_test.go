package doclinks

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// TestRepositoryLinks checks every Markdown file of the repository.
func TestRepositoryLinks(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestReportsBrokenLinks feeds the checker a small tree with good and
// broken links, and links that are not links (code), and wants exactly the
// broken ones reported, each with its file and line.
func TestReportsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/x\n")
	write("main.go", "package main\n")
	// Line n of README.md is the n-th string below.
	write("README.md", strings.Join([]string{
		"# Title",
		"",
		"[ok](docs/guide.md#whos-there-again)",
		"[ok](docs/guide.md#step-1) [ok](main.go) ![ok](docs/pic.png)",
		"[gone](docs/missing.md)",
		"[bad anchor](docs/guide.md#nowhere)",
		"![no picture](docs/nopic.png)",
		"[self](#title) [self bad](#not-here)",
		"`[code span](nowhere.md)`",
		"```",
		"[fenced](nowhere.md)",
		"```",
		"[web](https://example.com/x.md) [mail](mailto:a@b.c) [abs](/etc/passwd)",
		"",
		"| a | b |",
		"|---|---|",
		"| [cell](docs/guide.md#step-2) | [cell bad](docs/guide.md#step-3) |",
		"",
		"[a link",
		"over two lines](docs/guide.md#who-s-there)",
		"[dir](docs) [go line](main.go#L1) [query](docs/guide.md?plain=1#step)",
		"",
	}, "\n"))
	write("docs/guide.md", "# Who's there, again?\n\n## Step\n\n## Step\n\n## Step\n\n[up](../README.md#title) [up bad](../README.md#titel)\n")
	write("docs/pic.png", "")
	write("node_modules/x/broken.md", "[skipped](nowhere.md)\n")
	write("testdata/broken.md", "[skipped](nowhere.md)\n")

	problems, err := check(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:5: [gone](docs/missing.md): no file docs/missing.md",
		"README.md:6: [bad anchor](docs/guide.md#nowhere): docs/guide.md has no heading #nowhere",
		"README.md:7: ![no picture](docs/nopic.png): no file docs/nopic.png",
		"README.md:8: [self bad](#not-here): README.md has no heading #not-here",
		"README.md:17: [cell bad](docs/guide.md#step-3): docs/guide.md has no heading #step-3",
		"README.md:19: [a link over two lines](docs/guide.md#who-s-there): docs/guide.md has no heading #who-s-there",
		"docs/guide.md:9: [up bad](../README.md#titel): README.md has no heading #titel",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlugs(t *testing.T) {
	for _, c := range []struct{ heading, slug string }{
		{"Operating: moderation", "operating-moderation"},
		{"Who sees whom: blocks, mutes and hides", "who-sees-whom-blocks-mutes-and-hides"},
		{"Where a page's CPU goes", "where-a-pages-cpu-goes"},
		{"Cost, rate and memory limits", "cost-rate-and-memory-limits"},
		{"`--max-blocks` and  two spaces", "--max-blocks-and--two-spaces"},
		{"snake_case stays", "snake_case-stays"},
		{"Café über 東京", "café-über-東京"},
	} {
		if got := slug(c.heading); got != c.slug {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.slug)
		}
	}
}

// repoRoot walks up from the working directory to the directory that
// holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// doc is a parsed Markdown file.
type doc struct {
	src     []byte
	tree    ast.Node
	anchors map[string]bool
}

func parse(path string) (*doc, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &doc{src: src, tree: md.Parser().Parse(text.NewReader(src)), anchors: map[string]bool{}}
	seen := map[string]int{}
	err = ast.Walk(d.tree, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			if s := slug(plainText(h, src)); s != "" {
				d.anchors[unique(s, seen)] = true
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return d, err
}

// unique gives a repeated slug the suffix GitHub gives it: the second
// "step" is "step-1", the third "step-2" (github-slugger's rule).
func unique(s string, seen map[string]int) string {
	orig := s
	for {
		if _, dup := seen[s]; !dup {
			break
		}
		seen[orig]++
		s = fmt.Sprintf("%s-%d", orig, seen[orig])
	}
	seen[s] = 0
	return s
}

// slug is GitHub's anchor for a heading's text: lower case, every
// character but letters, digits, marks, spaces, '-' and '_' dropped, each
// space a '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plainText is the text a node shows: its text and code, without markup.
func plainText(n ast.Node, src []byte) string {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// scheme matches a destination that names a scheme (https:, mailto:, ...).
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// check returns a line "file:line: [text](destination): what is wrong"
// for every broken relative link or image in the Markdown files under
// root, files in root-relative slash form, in the order of the files'
// paths and then of the lines.
func check(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != root && (e.Name() == "node_modules" || e.Name() == ".git" || e.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.EqualFold(filepath.Ext(p), ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	docs := map[string]*doc{}
	load := func(p string) (*doc, error) {
		if d, ok := docs[p]; ok {
			return d, nil
		}
		d, err := parse(p)
		if err != nil {
			return nil, err
		}
		docs[p] = d
		return d, nil
	}
	rel := func(p string) string {
		r, err := filepath.Rel(root, p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	var problems []string
	for _, file := range files {
		d, err := load(file)
		if err != nil {
			return nil, err
		}
		err = ast.Walk(d.tree, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			var dest []byte
			switch n := n.(type) {
			case *ast.Link:
				dest = n.Destination
			case *ast.Image:
				dest = n.Destination
			default:
				return ast.WalkContinue, nil
			}
			what, err := broken(file, string(dest), load, rel)
			if err != nil || what == "" {
				return ast.WalkContinue, err
			}
			label := "["
			if n.Kind() == ast.KindImage {
				label = "!["
			}
			problems = append(problems, fmt.Sprintf("%s:%d: %s%s](%s): %s",
				rel(file), line(n, d.src), label, strings.Join(strings.Fields(plainText(n, d.src)), " "), dest, what))
			return ast.WalkContinue, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return problems, nil
}

// broken says what is wrong with a link from file to dest, or "" when
// nothing is, or when dest is not relative (a URL, an absolute path).
func broken(file, dest string, load func(string) (*doc, error), rel func(string) string) (string, error) {
	if dest == "" || scheme.MatchString(dest) || strings.HasPrefix(dest, "/") {
		return "", nil
	}
	target, fragment, _ := strings.Cut(dest, "#")
	target, _, _ = strings.Cut(target, "?")
	path := file
	if target != "" {
		t, err := url.PathUnescape(target)
		if err != nil {
			return "the path is not valid percent-encoding", nil
		}
		path = filepath.Join(filepath.Dir(file), filepath.FromSlash(t))
		info, err := os.Stat(path)
		if err != nil {
			return "no file " + rel(path), nil
		}
		if info.IsDir() {
			return "", nil
		}
	}
	if fragment == "" || !strings.EqualFold(filepath.Ext(path), ".md") {
		return "", nil // an anchor into a non-Markdown file (main.go#L10) is not checked
	}
	anchor, err := url.PathUnescape(fragment)
	if err != nil {
		return "the #anchor is not valid percent-encoding", nil
	}
	d, err := load(path)
	if err != nil {
		return "", err
	}
	if !d.anchors[anchor] {
		return fmt.Sprintf("%s has no heading #%s", rel(path), anchor), nil
	}
	return "", nil
}

// line is the 1-based line a node starts on.
func line(n ast.Node, src []byte) int {
	pos := n.Pos()
	for p := n; pos < 0 && p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			pos = p.Lines().At(0).Start
		}
	}
	if pos < 0 {
		return 0
	}
	return bytes.Count(src[:pos], []byte("\n")) + 1
}
