// Command go_sort_cases sorts many inputs by key with sort.Sort (the Go that builds kube-scheduler,
// go1.25 for v1.35) and writes each input and the permutation sort.Sort leaves as
// tests/data/go_sort_cases.txt, which tests/test_go_sort.py compares symreach/frontends/go_sort.py with.
//
// Rerun (from the repository root):
//
//	go run tools/go_sort_cases/main.go > tests/data/go_sort_cases.txt
//
// Each line after the header is "n keys perm": keys and perm n two-character base-62 numbers each,
// perm[k] the input position of the element sort.Sort leaves at position k.
package main

import (
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"strings"
)

const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

type item struct{ key, pos int }

type byKey []item

func (s byKey) Len() int           { return len(s) }
func (s byKey) Less(i, j int) bool { return s[i].key < s[j].key }
func (s byKey) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }

func enc(x int) string { return string([]byte{digits[x/62], digits[x%62]}) }

// keys builds an input of length n of the given kind (keys below 62*62).
func keys(r *rand.Rand, kind, n int) []int {
	k := make([]int, n)
	for i := range k {
		switch kind {
		case 0: // few distinct keys
			k[i] = r.Intn(3)
		case 1: // some ties
			k[i] = r.Intn(n/4 + 1)
		case 2: // mostly distinct
			k[i] = r.Intn(3000)
		case 3: // sorted with ties
			k[i] = i / 3
		case 4: // reversed with ties
			k[i] = (n - i) / 2
		case 5: // all equal
			k[i] = 7
		case 6: // organ pipe
			k[i] = min(i, n-i)
		case 7: // sawtooth
			k[i] = i % 5
		case 8: // sorted, a few elements out of place
			k[i] = i
		case 9: // reversed, distinct
			k[i] = n - i
		case 10: // two values in blocks
			k[i] = (i / 7) % 2
		}
	}
	if kind == 8 {
		for s := 0; s < 3; s++ {
			a, b := r.Intn(n), r.Intn(n)
			k[a], k[b] = k[b], k[a]
		}
	}
	return k
}

// adversary makes distinct keys that drive sort.Sort into its heap sort fallback, after McIlroy's
// "A Killer Adversary for Quicksort": keys are fixed lazily as sort.Sort compares them, two
// unfixed ones making the first argument the smallest still free unless the second is the element
// last compared with a fixed one; keys never fixed are then the largest, in input order.
func adversary(n int) []int {
	const gas = 1 << 30
	val := make([]int, n)
	ptr := make([]int, n)
	for i := range val {
		val[i], ptr[i] = gas, i
	}
	solid, candidate := 0, -1
	sort.Sort(lessFunc{ptr, func(x, y int) bool {
		if val[x] == gas && val[y] == gas {
			z := x
			if y == candidate {
				z = y
			}
			val[z] = solid
			solid++
		}
		if val[x] == gas {
			candidate = x
		} else if val[y] == gas {
			candidate = y
		}
		return val[x] < val[y]
	}})
	for i := range val {
		if val[i] == gas {
			val[i] = solid + i
		}
	}
	return val
}

type lessFunc struct {
	ptr  []int
	less func(x, y int) bool
}

func (s lessFunc) Len() int           { return len(s.ptr) }
func (s lessFunc) Less(i, j int) bool { return s.less(s.ptr[i], s.ptr[j]) }
func (s lessFunc) Swap(i, j int)      { s.ptr[i], s.ptr[j] = s.ptr[j], s.ptr[i] }

func line(k []int) string {
	s := make([]item, len(k))
	for i := range k {
		s[i] = item{k[i], i}
	}
	sort.Sort(byKey(s))
	var ks, ps strings.Builder
	for i := range k {
		ks.WriteString(enc(k[i]))
		ps.WriteString(enc(s[i].pos))
	}
	return fmt.Sprintf("%d %s %s", len(k), ks.String(), ps.String())
}

func main() {
	r := rand.New(rand.NewSource(27))
	fmt.Printf("# sort.Sort by key, %s; n keys perm (base 62, two digits each)\n", runtime.Version())
	for n := 0; n <= 200; n++ {
		fmt.Println(line(keys(r, n%11, n)))
	}
	for c := 0; c < 330; c++ {
		n := 13 + r.Intn(40)
		fmt.Println(line(keys(r, c%11, n)))
	}
	for _, n := range []int{13, 20, 50, 64, 100, 150, 200} {
		fmt.Println(line(adversary(n)))
	}
}
