package tracking

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	const rev = "53680c4ab7e1f00d9a6c3e1b2d4f5a6b7c8d9e0f"
	clean := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}
	dirty := []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"a source tree without a commit (-buildvcs=false, a linked worktree)", "(devel)", nil, "(devel)"},
		{"no module version", "", nil, "(devel)"},
		{"a module release installed without a commit", "v1.2.0", nil, "v1.2.0"},
		{"a commit, clean", "(devel)", clean, "53680c4ab7e1"},
		{"a commit with changes", "(devel)", dirty, "53680c4ab7e1+dirty"},
		{"Go 1.24's pseudo-version names the commit", "v0.0.0-20261204005800-53680c4ab7e1+dirty", dirty, "53680c4ab7e1+dirty"},
		{"a release and its commit", "v1.2.0", clean, "v1.2.0 53680c4ab7e1"},
		{"a short revision", "(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}, "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/rollout-rl/rollout", Version: tc.version}, Settings: tc.settings}
			if got := Version(bi); got != tc.want {
				t.Errorf("Version(%q, %v) = %q, want %q", tc.version, tc.settings, got, tc.want)
			}
		})
	}
}

// A program built in a git repository records its commit, and
// BuildVersion, which runs record as Run.Version and reports quote, shows
// it, "+dirty" once the tree has changes. It builds a small program that
// prints BuildVersion in a fresh repository, with the module's go.sum and
// this module through a replace directive (no downloads when the module
// cache holds what the module builds with).
func TestBuildVersionStampsTheCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module stamp\n\ngo 1.26\n\nrequire github.com/rollout-rl/rollout v0.0.0\n\nreplace github.com/rollout-rl/rollout => " + root + "\n",
		"go.sum":  string(sum),
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/rollout-rl/rollout/tracking\"\n)\n\nfunc main() { fmt.Print(tracking.BuildVersion()) }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		// -mod=mod completes the build list from the replaced module's
		// go.mod; GOFLAGS in the environment (kept, for the build cache)
		// replace the go env file's, and -buildvcs on the command line
		// overrides both.
		cmd.Env = append(os.Environ(), strings.TrimSpace("GOFLAGS=-mod=mod "+os.Getenv("GOFLAGS")), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	bin := filepath.Join(t.TempDir(), "stamp") // outside the repository: an untracked file is a change too
	run("git", "init", "-q")
	// A first build settles go.mod and go.sum (-mod=mod), so that the
	// commit holds them as the builds below leave them.
	run("go", "build", "-buildvcs=false", "-o", bin, ".")
	run("git", "add", "-A")
	run("git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "stamp")
	commit := run("git", "rev-parse", "HEAD")[:12]
	run("go", "build", "-buildvcs=true", "-o", bin, ".")
	if got := run(bin); got != commit {
		t.Errorf("built at commit %s (clean): BuildVersion %q, want %q", commit, got, commit)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(files["main.go"]+"\n// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("go", "build", "-buildvcs=true", "-o", bin, ".")
	if got := run(bin); got != commit+"+dirty" {
		t.Errorf("built at commit %s with changes: BuildVersion %q, want %q", commit, got, commit+"+dirty")
	}
}
