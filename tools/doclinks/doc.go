// Package doclinks holds a test that checks the repository's Markdown:
// every relative link and image of every *.md file must name a file that
// exists and, with a #fragment into a Markdown file, a heading of that file
// (by GitHub's anchor rules). It runs with go test ./...; the package has
// no code of its own.
package doclinks
