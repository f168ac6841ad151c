package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sluice-db/sluice/internal/types"
)

// SQL functions (CREATE FUNCTION … LANGUAGE SQL) live in the catalog
// beside relations, one meta entry each. A call is inlined where it is
// planned, so a view keeps what the function meant when it was created.

const functionPrefix = "catalog/function/"

// FuncArg is one parameter of a SQL function.
type FuncArg struct {
	Name string `json:",omitempty"`
	Type types.Type
}

// Function is a SQL function whose body is one expression of its
// parameters.
type Function struct {
	Name    string
	Args    []FuncArg
	Returns types.Type
	// Body is the expression's text (the SELECT list of the body).
	Body       string
	Definition string
	Owner      string `json:",omitempty"`
}

type functions struct {
	mu     sync.Mutex
	byName map[string]Function
}

func (c *Catalog) loadFunctions(ctx context.Context) error {
	c.functions.byName = map[string]Function{}
	entries, err := c.store.ScanMeta(ctx, functionPrefix)
	if err != nil {
		return err
	}
	for _, e := range entries {
		var f Function
		if err := json.Unmarshal(e.Value, &f); err != nil {
			return fmt.Errorf("catalog: corrupt entry %s: %w", e.Name, err)
		}
		c.functions.byName[f.Name] = f
	}
	return nil
}

// Function returns the SQL function called name.
func (c *Catalog) Function(name string) (Function, bool) {
	c.functions.mu.Lock()
	defer c.functions.mu.Unlock()
	f, ok := c.functions.byName[name]
	return f, ok
}

// Functions returns every SQL function, by name.
func (c *Catalog) Functions() []Function {
	c.functions.mu.Lock()
	out := make([]Function, 0, len(c.functions.byName))
	for _, f := range c.functions.byName {
		out = append(out, f)
	}
	c.functions.mu.Unlock()
	slices.SortFunc(out, func(a, b Function) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// PutFunction creates or replaces a function, durably.
func (c *Catalog) PutFunction(ctx context.Context, f Function) error {
	v, err := json.Marshal(f)
	if err != nil {
		return err
	}
	c.functions.mu.Lock()
	defer c.functions.mu.Unlock()
	if err := c.store.PutMeta(ctx, functionPrefix+f.Name, v); err != nil {
		return err
	}
	c.functions.byName[f.Name] = f
	c.bumpVersion()
	return nil
}

// DropFunction deletes a function, durably.
func (c *Catalog) DropFunction(ctx context.Context, name string) error {
	c.functions.mu.Lock()
	defer c.functions.mu.Unlock()
	if err := c.store.DeleteMeta(ctx, functionPrefix+name); err != nil {
		return err
	}
	delete(c.functions.byName, name)
	c.bumpVersion()
	return nil
}
