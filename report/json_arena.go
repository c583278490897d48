package report

// The arena of the streaming writer (json_stream.go), a speed measure: a
// session's node values held in slices reused from session to session.

// nodeArena holds the nodes of one session as it is written, and the values
// they point to, in slices reused from session to session: boxing each
// value on its own was ten allocations a node, garbage as soon as its
// session was written. Memory it hands out is valid until the next reset;
// a nil arena allocates each value on the heap, for a document kept whole.
type nodeArena struct {
	strs   []string
	ints   []int
	floats []float64
	cfas   []CfaJSON
	fields []FieldJSON
	nodes  []NodeJSON
}

func (a *nodeArena) reset() {
	a.strs, a.ints, a.floats, a.cfas, a.fields, a.nodes = a.strs[:0], a.ints[:0], a.floats[:0], a.cfas[:0], a.fields[:0], a.nodes[:0]
}

// box returns a pointer to a copy of v, held in *slab. A slab that grows
// leaves the values handed out in the array they were in, unchanged.
func box[T any](a *nodeArena, slab *[]T, v T) *T {
	if a == nil {
		p := new(T) // not &v, which would put every v on the heap
		*p = v
		return p
	}
	*slab = append(*slab, v)
	return &(*slab)[len(*slab)-1]
}

// fieldsOf is an empty list with room for k fields.
func (a *nodeArena) fieldsOf(k int) []FieldJSON {
	if a == nil {
		return make([]FieldJSON, 0, k)
	}
	if cap(a.fields)-len(a.fields) < k {
		// A new slab: the fields handed out stay where they are.
		a.fields = make([]FieldJSON, 0, max(2*cap(a.fields), k, 16))
	}
	n := len(a.fields)
	a.fields = a.fields[:n+k]
	return a.fields[n : n : n+k]
}

// children is an empty list with room for k nodes (never nil: a leaf's
// children are [], not null).
func (a *nodeArena) children(k int) []NodeJSON {
	if a == nil {
		return make([]NodeJSON, 0, k)
	}
	if a.nodes == nil || cap(a.nodes)-len(a.nodes) < k {
		// A new slab: the nodes handed out stay where they are.
		a.nodes = make([]NodeJSON, 0, max(2*cap(a.nodes), k, 16))
	}
	n := len(a.nodes)
	a.nodes = a.nodes[:n+k]
	return a.nodes[n : n : n+k]
}

func stringsOf(a *nodeArena) *[]string {
	if a == nil {
		return nil
	}
	return &a.strs
}

func cfasOf(a *nodeArena) *[]CfaJSON {
	if a == nil {
		return nil
	}
	return &a.cfas
}

func intsOf(a *nodeArena) *[]int {
	if a == nil {
		return nil
	}
	return &a.ints
}

func floatsOf(a *nodeArena) *[]float64 {
	if a == nil {
		return nil
	}
	return &a.floats
}
