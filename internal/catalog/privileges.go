package catalog

import "slices"

// Privileges on relations: SELECT, INSERT, UPDATE and DELETE, granted by
// the owner (or a superuser) to users or to PUBLIC (everyone).

// Public is the grantee that stands for every user.
const Public = "public"

// Privileges are the privileges GRANT ALL gives.
var Privileges = []string{"SELECT", "INSERT", "UPDATE", "DELETE"}

// OwnedBy reports whether user owns r (root owns what predates owners).
func (r *Relation) OwnedBy(user string) bool {
	return r.Owner == user || r.Owner == "" && user == RootUser
}

// Allows reports whether user holds priv on r: as its owner, or granted
// to it or to PUBLIC. Superusers are checked by the caller.
func (r *Relation) Allows(user, priv string) bool {
	return r.OwnedBy(user) || slices.Contains(r.Grants[user], priv) || slices.Contains(r.Grants[Public], priv)
}

// Grant adds privs on r to grantee, or takes them away (revoke).
func (r *Relation) Grant(grantee string, privs []string, revoke bool) {
	held := slices.Clone(r.Grants[grantee])
	for _, p := range privs {
		switch i := slices.Index(held, p); {
		case revoke && i >= 0:
			held = slices.Delete(held, i, i+1)
		case !revoke && i < 0:
			held = append(held, p)
		}
	}
	slices.Sort(held)
	grants := make(map[string][]string, len(r.Grants)+1)
	for k, v := range r.Grants {
		grants[k] = v
	}
	if len(held) == 0 {
		delete(grants, grantee)
	} else {
		grants[grantee] = held
	}
	r.Grants = grants
}
