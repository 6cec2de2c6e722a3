//go:build ignore

// Command sizes checks the size rules of CONTRIBUTING: no non-test Go file over 600 lines and no
// function over 80 lines under the directories given (default: core and ext).
//
//	go run scripts/sizes.go [dir...]
//
// It prints each breach as "path: N lines" or "path: func Name: N lines" and exits 1 when there is one.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	const maxFile, maxFunc = 600, 80
	roots := os.Args[1:]
	if len(roots) == 0 {
		roots = []string{"core", "ext"}
	}
	bad := 0
	for _, root := range roots {
		err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, perr := parser.ParseFile(fset, p, nil, 0)
			if perr != nil {
				return perr
			}
			if n := fset.File(f.Pos()).LineCount(); n > maxFile {
				fmt.Printf("%s: %d lines\n", p, n)
				bad++
			}
			ast.Inspect(f, func(n ast.Node) bool {
				fd, ok := n.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					return true
				}
				l := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				if l > maxFunc {
					fmt.Printf("%s: func %s: %d lines\n", p, fd.Name.Name, l)
					bad++
				}
				return false
			})
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "sizes:", err)
			os.Exit(2)
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}
