package session

import (
	"context"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"time"
)

// jdbcJar is where Debian's libpostgresql-jdbc-java puts the driver;
// `make deps` installs it.
const jdbcJar = "/usr/share/java/postgresql.jar"

// TestJDBC runs testdata/JdbcSmoke.java against the server through the
// PostgreSQL JDBC driver in its default settings (extended protocol,
// server-side prepared statements after prepareThreshold, binary results
// for some types, DatabaseMetaData catalog queries). Java and the driver
// are test dependencies: their absence fails the test, it is not skipped.
func TestJDBC(t *testing.T) {
	for _, tool := range []string{"java", "javac"} {
		if _, err := osexec.LookPath(tool); err != nil {
			t.Fatalf("%s not found (run make deps, or apt-get install default-jdk-headless): %v", tool, err)
		}
	}
	if _, err := os.Stat(jdbcJar); err != nil {
		t.Fatalf("PostgreSQL JDBC driver missing (run make deps, or apt-get install libpostgresql-jdbc-java): %v", err)
	}
	classes := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	javac := osexec.CommandContext(ctx, "javac", "-d", classes, "-cp", jdbcJar, "testdata/JdbcSmoke.java")
	if out, err := javac.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}

	p := startPlayground(t)
	host, port := hostPort(t, p)
	// Small heaps keep the JVM quick to start on a loaded CI machine.
	java := osexec.CommandContext(ctx, "java", "-Xss512k", "-Xmx128m", "-XX:TieredStopAtLevel=1",
		"-cp", classes+string(os.PathListSeparator)+jdbcJar, "JdbcSmoke", host, port)
	out, err := java.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("JdbcSmoke: %v\n%s", err, out)
	}
}
