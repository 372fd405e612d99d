// Command go_unicode_tables writes the Unicode tables Go's regexp/syntax, strconv.IsPrint and
// strings.TrimSpace read (package unicode of the Go that builds kube-scheduler) as the text
// file symreach/frontends/go_unicode.txt, which dra_cel_re2 and dra_cel_values load.
//
// Rerun (from the repository root, with the Go that builds the scheduler, go1.25 for v1.35):
//
//	go run tools/go_unicode_tables/main.go > symreach/frontends/go_unicode.txt
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"unicode"
)

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ranges writes a table as Go holds it: lo-hi:stride in hex (hi and stride left out when trivial).
func ranges(t *unicode.RangeTable) string {
	var parts []string
	add := func(lo, hi, stride uint32) {
		s := fmt.Sprintf("%x", lo)
		if hi != lo {
			s += fmt.Sprintf("-%x", hi)
			if stride != 1 {
				s += fmt.Sprintf(":%x", stride)
			}
		}
		parts = append(parts, s)
	}
	for _, r := range t.R16 {
		add(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range t.R32 {
		add(r.Lo, r.Hi, r.Stride)
	}
	return strings.Join(parts, " ")
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// orbit is the simple case folding orbit of r (unicode.SimpleFold's cycle), ascending.
func orbit(r rune) []rune {
	out := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// orbits writes every orbit of two or more runes once; runs of pairs {x, x+delta} with x
// stepping by stride are written lo-hi:stride+delta, larger orbits as a,b,c.
func orbits() string {
	var pairs [][2]rune
	var parts []string
	for r := rune(0); r <= unicode.MaxRune; r++ {
		o := orbit(r)
		if len(o) < 2 || o[0] != r {
			continue
		}
		if len(o) == 2 {
			pairs = append(pairs, [2]rune{o[0], o[1] - o[0]})
			continue
		}
		var s []string
		for _, x := range o {
			s = append(s, fmt.Sprintf("%x", x))
		}
		parts = append(parts, strings.Join(s, ","))
	}
	for i := 0; i < len(pairs); {
		j, stride := i+1, rune(0)
		if j < len(pairs) && pairs[j][1] == pairs[i][1] {
			stride = pairs[j][0] - pairs[i][0]
			for j < len(pairs) && pairs[j][1] == pairs[i][1] && pairs[j][0]-pairs[j-1][0] == stride {
				j++
			}
		}
		lo, hi, delta := pairs[i][0], pairs[j-1][0], pairs[i][1]
		if j-i == 1 {
			parts = append(parts, fmt.Sprintf("%x+%x", lo, delta))
		} else {
			parts = append(parts, fmt.Sprintf("%x-%x:%x+%x", lo, hi, stride, delta))
		}
		i = j
	}
	return strings.Join(parts, " ")
}

func main() {
	leaves := []string{}
	for _, k := range sortedKeys(unicode.Categories) {
		if len(k) == 2 && k != "LC" {
			leaves = append(leaves, k)
		}
	}
	fmt.Printf("# package unicode of %s (Unicode %s): the tables Go's regexp/syntax (\\p{..}, (?i)),\n", runtime.Version(), unicode.Version)
	fmt.Println("# strconv.IsPrint and strings.TrimSpace read. Generated, do not edit:")
	fmt.Println("#   go run tools/go_unicode_tables/main.go > symreach/frontends/go_unicode.txt")
	fmt.Println("# lines: version; category NAME ranges (hex lo-hi:stride); complement NAME (the runes no")
	fmt.Println("# category holds); union NAME its categories; table NAME: a union's or Cn's own ranges, as Go")
	fmt.Println("# holds them (regexp/syntax appends a table range by range);")
	fmt.Println("# fold NAME ranges (unicode.FoldCategory/FoldScript); script NAME ranges; alias NAME CATEGORY;")
	fmt.Println("# space ranges (unicode.White_Space); orbits: simple folding orbits (lo-hi:stride+delta pairs, a,b,c)")
	fmt.Printf("version %s\n", unicode.Version)
	for _, k := range leaves {
		if k != "Cn" {
			fmt.Printf("category %s %s\n", k, ranges(unicode.Categories[k]))
		}
	}
	// Cn (unassigned) is every rune no other category holds, checked rune for rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		other := false
		for _, leaf := range leaves {
			other = other || leaf != "Cn" && unicode.Is(unicode.Categories[leaf], r)
		}
		if other == unicode.Is(unicode.Cn, r) {
			fail("Cn is not the complement of the other categories at %U", r)
		}
	}
	fmt.Println("complement Cn")
	fmt.Printf("table Cn %s\n", ranges(unicode.Cn))
	for _, k := range sortedKeys(unicode.Categories) {
		if len(k) == 2 && k != "LC" {
			continue
		}
		var parts []string
		for _, leaf := range leaves {
			if leaf == k[:1] || k == "LC" && strings.Contains("LuLlLt", leaf) || len(k) == 1 && leaf[:1] == k {
				parts = append(parts, leaf)
			}
		}
		// the union must be the table itself, rune for rune
		for r := rune(0); r <= unicode.MaxRune; r++ {
			in := false
			for _, leaf := range parts {
				in = in || unicode.Is(unicode.Categories[leaf], r)
			}
			if in != unicode.Is(unicode.Categories[k], r) {
				fail("category %s is not the union of %v at %U", k, parts, r)
			}
		}
		fmt.Printf("union %s %s\n", k, strings.Join(parts, " "))
		fmt.Printf("table %s %s\n", k, ranges(unicode.Categories[k]))
	}
	for _, k := range sortedKeys(unicode.FoldCategory) {
		fmt.Printf("fold %s %s\n", k, ranges(unicode.FoldCategory[k]))
	}
	for _, k := range sortedKeys(unicode.FoldScript) {
		fmt.Printf("fold %s %s\n", k, ranges(unicode.FoldScript[k]))
	}
	for _, k := range sortedKeys(unicode.Scripts) {
		fmt.Printf("script %s %s\n", k, ranges(unicode.Scripts[k]))
	}
	for _, k := range sortedKeys(unicode.CategoryAliases) {
		fmt.Printf("alias %s %s\n", k, unicode.CategoryAliases[k])
	}
	fmt.Printf("space %s\n", ranges(unicode.White_Space))
	fmt.Printf("orbits %s\n", orbits())
}
