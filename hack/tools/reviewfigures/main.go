// Command reviewfigures prints the figures of the snapshot engine that the review of the series
// is judged by: lines of code, exported identifiers, methods and fields, the longest functions,
// and the largest patches of the series.
//
//	go run ./hack/tools/reviewfigures <engine package dir> <patches dir>
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type sized struct {
	name  string
	lines int
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: reviewfigures <engine package dir> <patches dir>")
		os.Exit(2)
	}
	if err := engine(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := patches(os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// engine prints the figures of the Go files of dir, without tests.
func engine(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	lines, exported, methods, fields := 0, []string{}, 0, 0
	var funcs []sized
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return err
		}
		lines += fset.File(file.Pos()).LineCount()
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				body := 0
				if d.Body != nil {
					body = fset.Position(d.Body.End()).Line - fset.Position(d.Body.Pos()).Line - 1
				}
				funcs = append(funcs, sized{filepath.Base(f) + ":" + d.Name.Name, body})
				switch {
				case d.Name.IsExported() && d.Recv != nil:
					methods++
				case d.Name.IsExported():
					exported = append(exported, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						exported = append(exported, s.Name.Name)
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								for _, n := range field.Names {
									if n.IsExported() {
										fields++
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								exported = append(exported, n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].lines > funcs[j].lines })
	fmt.Printf("engine %s (without tests)\n", dir)
	fmt.Printf("  lines                          %d\n", lines)
	fmt.Printf("  exported identifiers           %d: %s\n", len(exported), strings.Join(exported, " "))
	fmt.Printf("  exported methods, fields       %d, %d\n", methods, fields)
	for _, f := range funcs[:min(3, len(funcs))] {
		fmt.Printf("  longest function body          %d %s\n", f.lines, f.name)
	}
	return nil
}

// patches prints the largest patches of dir by added lines.
func patches(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		return err
	}
	var sizes []sized
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		added := 0
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 1<<26)
		for s.Scan() {
			if l := s.Text(); strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++ ") {
				added++
			}
		}
		f.Close()
		if err := s.Err(); err != nil {
			return err
		}
		sizes = append(sizes, sized{filepath.Base(p), added})
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i].lines > sizes[j].lines })
	fmt.Printf("series %s: %d patches\n", dir, len(sizes))
	for _, s := range sizes[:min(4, len(sizes))] {
		fmt.Printf("  %6d added lines  %s\n", s.lines, s.name)
	}
	return nil
}
