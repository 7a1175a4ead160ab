package extension

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// CostCache keeps the complexity of the operations priced lately, by
// operation (the parsed document gqlgen's query cache hands out again for
// the same query text) and variable values: clients send the same few
// operations with the same few page sizes, and pricing one walks its whole
// selection set, building every field's arguments. An operation whose
// variables are not all scalars, or long, is priced every time. Safe for
// concurrent use; a nil *CostCache keeps nothing.
type CostCache struct {
	c *lru.Cache[costCacheKey, int]
}

type costCacheKey struct {
	op   *ast.OperationDefinition
	vars string // varsKey
}

// maxVarsKey bounds a cached operation's variables, as varsKey spells them:
// the cache holds at most size of them.
const maxVarsKey = 256

// NewCostCache returns a cache of the complexity of size operations.
func NewCostCache(size int) *CostCache {
	c, err := lru.New[costCacheKey, int](size)
	if err != nil {
		panic(err) // size <= 0: a programming error
	}
	return &CostCache{c: c}
}

// complexity is complexity.Calculate of op, from the cache when it was
// priced with the same variables.
func (cc *CostCache) complexity(ctx context.Context, es graphql.ExecutableSchema, op *graphql.OperationContext) int {
	if cc == nil {
		return complexity.Calculate(ctx, es, op.Operation, op.Variables)
	}
	vars, ok := varsKey(op.Operation, op.Variables)
	if !ok {
		return complexity.Calculate(ctx, es, op.Operation, op.Variables)
	}
	k := costCacheKey{op: op.Operation, vars: vars}
	if n, ok := cc.c.Get(k); ok {
		return n
	}
	n := complexity.Calculate(ctx, es, op.Operation, op.Variables)
	cc.c.Add(k, n)
	return n
}

// varsKey spells the values of op's variables, in the order op defines
// them, so that two sets of values have the same key only when they are
// the same: false when one is not a scalar, or the key would be longer
// than maxVarsKey.
func varsKey(op *ast.OperationDefinition, vars map[string]any) (string, bool) {
	if len(op.VariableDefinitions) == 0 {
		return "", true
	}
	var b strings.Builder
	for _, d := range op.VariableDefinitions {
		v, ok := vars[d.Variable]
		if !ok {
			b.WriteByte('-') // absent
			continue
		}
		switch v := v.(type) {
		case nil:
			b.WriteByte('0')
		case bool:
			b.WriteString(strconv.FormatBool(v)[:1])
		case int64:
			b.WriteByte('i')
			b.WriteString(strconv.FormatInt(v, 10))
			b.WriteByte(';')
		case int:
			b.WriteByte('i')
			b.WriteString(strconv.Itoa(v))
			b.WriteByte(';')
		case float64:
			b.WriteByte('f')
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			b.WriteByte(';')
		case json.Number:
			b.WriteByte('n')
			b.WriteString(string(v))
			b.WriteByte(';')
		case string:
			b.WriteByte('s')
			b.WriteString(strconv.Itoa(len(v)))
			b.WriteByte(':')
			b.WriteString(v)
		default:
			return "", false
		}
		if b.Len() > maxVarsKey {
			return "", false
		}
	}
	return b.String(), true
}
