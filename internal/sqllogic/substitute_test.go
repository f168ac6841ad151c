package sqllogic

import "testing"

func TestSubstitution(t *testing.T) {
	t.Setenv("SLT_SUBST_NAME", "env")
	var off substitution
	if got, err := off.expand("SELECT $1, $SLT_SUBST_NAME", "f", "db"); err != nil || got != "SELECT $1, $SLT_SUBST_NAME" {
		t.Errorf("off: %q, %v", got, err)
	}
	off.bind("v", "42")
	// With substitution off only let variables expand.
	if got, _ := off.expand("SELECT $v, ${v}, $1, $$x$$, $SLT_SUBST_NAME", "f", "db"); got != "SELECT 42, 42, $1, $$x$$, $SLT_SUBST_NAME" {
		t.Errorf("let only: %q", got)
	}
	on := substitution{on: true}
	defer on.close()
	got, err := on.expand(`$SLT_SUBST_NAME ${SLT_SUBST_NAME} ${SLT_SUBST_MISSING:dflt} $__DATABASE__ \$1 $1`, "f", "db")
	if err != nil || got != "env env dflt db $1 $1" {
		t.Errorf("on: %q, %v", got, err)
	}
	if _, err := on.expand("$SLT_SUBST_MISSING", "f", "db"); err == nil {
		t.Error("undefined variable expanded without error")
	}
	dir, err := on.expand("$__TEST_DIR__", "f", "db")
	if err != nil || dir == "" || dir == "$__TEST_DIR__" {
		t.Errorf("test dir: %q, %v", dir, err)
	}
}
