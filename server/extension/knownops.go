package extension

import (
	"encoding/json"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/feedd/feedd/client/persisted"
)

// OtherOperation is the label of every operation whose name is not known.
const OtherOperation = "(other)"

// maxLearnedOps bounds the operation names learned from persisted query
// registrations, well under the metrics registry's label slots.
const maxLearnedOps = 200

// KnownOps are the operation names metrics and logs label operations
// with: those of the client's persisted operations (client/persisted)
// and of an allow-list (--persisted-only), plus up to maxLearnedOps names
// learned from persisted query registrations of signed-in viewers. Any
// other name is labelled OtherOperation, so a caller cannot fill the label
// slots with names of its own. With dev auth on (development only), every
// name is known.
type KnownOps struct {
	all     bool
	mu      sync.RWMutex
	names   map[string]bool
	learned int
}

func NewKnownOps(all bool, allowList map[string]string) *KnownOps {
	k := &KnownOps{all: all, names: map[string]bool{}}
	var ops map[string]string
	if err := json.Unmarshal(persisted.JSON, &ops); err == nil {
		k.addTexts(ops)
	}
	k.addTexts(allowList)
	return k
}

func (k *KnownOps) addTexts(byHash map[string]string) {
	for _, q := range byHash {
		doc, err := parser.ParseQuery(&ast.Source{Input: q})
		if err != nil {
			continue
		}
		for _, op := range doc.Operations {
			if op.Name != "" {
				k.names[op.Name] = true
			}
		}
	}
}

// Label is name if it is known, else OtherOperation; "" stays "".
func (k *KnownOps) Label(name string) string {
	if name == "" || k == nil || k.all {
		return name
	}
	k.mu.RLock()
	ok := k.names[name]
	k.mu.RUnlock()
	if ok {
		return name
	}
	return OtherOperation
}

// learn makes name known, while fewer than maxLearnedOps were learned.
func (k *KnownOps) learn(name string) {
	if name == "" || k == nil || k.all {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.names[name] && k.learned < maxLearnedOps {
		k.names[name] = true
		k.learned++
	}
}
