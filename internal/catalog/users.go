package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Users (roles that can log in) live in the catalog beside relations, one
// meta entry each, so CREATE USER is durable before it is acknowledged.
// The bootstrap superuser root is not stored: it always exists, and its
// password, if any, is the server's (--password).

// RootUser is the bootstrap superuser.
const RootUser = "root"

const userPrefix = "catalog/user/"

// User is a role that can log in.
type User struct {
	Name      string
	Superuser bool `json:",omitempty"`
	// Secret is the password's SCRAM-SHA-256 verifier in Postgres's
	// rolpassword form (pgwire.SCRAMSecret); empty: no password, so no
	// login while passwords are required.
	Secret string `json:",omitempty"`
}

// users is the catalog's user registry.
type users struct {
	mu     sync.Mutex
	byName map[string]User
}

func (c *Catalog) loadUsers(ctx context.Context) error {
	c.users.byName = map[string]User{}
	entries, err := c.store.ScanMeta(ctx, userPrefix)
	if err != nil {
		return err
	}
	for _, e := range entries {
		var u User
		if err := json.Unmarshal(e.Value, &u); err != nil {
			return fmt.Errorf("catalog: corrupt entry %s: %w", e.Name, err)
		}
		c.users.byName[u.Name] = u
	}
	return nil
}

// User returns the user called name (root included).
func (c *Catalog) User(name string) (User, bool) {
	if name == RootUser {
		return User{Name: RootUser, Superuser: true}, true
	}
	c.users.mu.Lock()
	defer c.users.mu.Unlock()
	u, ok := c.users.byName[name]
	return u, ok
}

// Users returns every user, root first, then by name.
func (c *Catalog) Users() []User {
	c.users.mu.Lock()
	out := make([]User, 0, len(c.users.byName)+1)
	for _, u := range c.users.byName {
		out = append(out, u)
	}
	c.users.mu.Unlock()
	slices.SortFunc(out, func(a, b User) int { return strings.Compare(a.Name, b.Name) })
	return append([]User{{Name: RootUser, Superuser: true}}, out...)
}

// PutUser creates or replaces a user, durably.
func (c *Catalog) PutUser(ctx context.Context, u User) error {
	if u.Name == RootUser {
		return fmt.Errorf("catalog: %s is built in", RootUser)
	}
	v, err := json.Marshal(u)
	if err != nil {
		return err
	}
	c.users.mu.Lock()
	defer c.users.mu.Unlock()
	if err := c.store.PutMeta(ctx, userPrefix+u.Name, v); err != nil {
		return err
	}
	c.users.byName[u.Name] = u
	c.bumpVersion()
	return nil
}

// DropUser deletes a user, durably.
func (c *Catalog) DropUser(ctx context.Context, name string) error {
	c.users.mu.Lock()
	defer c.users.mu.Unlock()
	if err := c.store.DeleteMeta(ctx, userPrefix+name); err != nil {
		return err
	}
	delete(c.users.byName, name)
	c.bumpVersion()
	return nil
}
