package main

import (
	_ "embed"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// docSource is doc.go, whose package comment is the command reference:
// go doc prints it, and so does rollout help reference.
//
//go:embed doc.go
var docSource string

// reference is the package documentation of doc.go as plain text, 80
// columns wide (headings as "# Heading", code indented by a tab), rendered
// once per process.
var reference = sync.OnceValue(renderReference)

// renderReference renders the package comment of doc.go.
func renderReference() string {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", docSource, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil || f.Doc == nil {
		// doc.go is compiled into the program: it parses (a test checks).
		return "rollout: the reference in doc.go does not parse\n"
	}
	var p comment.Parser
	var pr comment.Printer
	return string(pr.Text(p.Parse(f.Doc.Text())))
}

// overview is what rollout --help says before the list of commands: the
// reference's first paragraph and where to read the rest.
func overview() string {
	first, _, _ := strings.Cut(reference(), "\n\n")
	return first + "\n\n" + `"rollout help reference" prints the full reference of the commands, flags and
metrics (as "go doc ./cmd/rollout" does); experiments/config/README.md describes
the configs.`
}

// newReferenceTopic is the help topic "reference": rollout help reference
// (or rollout reference) prints the whole command reference.
func newReferenceTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "reference",
		Short: "The full reference: every command, its flags and output, the metrics (go doc ./cmd/rollout)",
		Long:  reference(),
	}
}
