//go:build ignore

// Command apicount counts the exported identifiers of a package directory: its exported top-level
// names (types, functions, constants, variables) and the exported methods of its exported types,
// test files left out. Exported struct fields are counted apart.
//
//	go run scripts/apicount.go core
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/apicount.go DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		panic(err)
	}
	var top, methods, fields int
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv != nil {
						t := d.Recv.List[0].Type
						if s, ok := t.(*ast.StarExpr); ok {
							t = s.X
						}
						if ix, ok := t.(*ast.IndexExpr); ok {
							t = ix.X
						}
						if id, ok := t.(*ast.Ident); ok && id.IsExported() {
							methods++
						}
						continue
					}
					top++
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								top++
								if st, ok := s.Type.(*ast.StructType); ok {
									for _, fl := range st.Fields.List {
										for _, n := range fl.Names {
											if n.IsExported() {
												fields++
											}
										}
									}
								}
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									top++
								}
							}
						}
					}
				}
			}
		}
	}
	fmt.Printf("%s: %d exported identifiers (%d top-level, %d methods; %d exported struct fields)\n", dir, top+methods, top, methods, fields)
}
