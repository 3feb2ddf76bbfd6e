package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaserConfig is the part of GoReleaser's v2 schema that
// .goreleaser.yaml uses; decoding with KnownFields catches a misspelt key.
// `goreleaser check` is the full check (CONTRIBUTING.md): GoReleaser is not
// a dependency of this module.
type goreleaserConfig struct {
	Version     int    `yaml:"version"`
	ProjectName string `yaml:"project_name"`
	Before      struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Builds []struct {
		ID           string   `yaml:"id"`
		Main         string   `yaml:"main"`
		Binary       string   `yaml:"binary"`
		Env          []string `yaml:"env"`
		Flags        []string `yaml:"flags"`
		Ldflags      []string `yaml:"ldflags"`
		Goos         []string `yaml:"goos"`
		Goarch       []string `yaml:"goarch"`
		ModTimestamp string   `yaml:"mod_timestamp"`
	} `yaml:"builds"`
	Archives []struct {
		ID              string   `yaml:"id"`
		IDs             []string `yaml:"ids"`
		NameTemplate    string   `yaml:"name_template"`
		Formats         []string `yaml:"formats"`
		FormatOverrides []struct {
			Goos    string   `yaml:"goos"`
			Formats []string `yaml:"formats"`
		} `yaml:"format_overrides"`
		Files []string `yaml:"files"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
	Snapshot struct {
		VersionTemplate string `yaml:"version_template"`
	} `yaml:"snapshot"`
	Changelog struct {
		Use  string `yaml:"use"`
		Sort string `yaml:"sort"`
	} `yaml:"changelog"`
}

// The release config builds the command for linux, darwin and windows on
// amd64 and arm64, zips the Windows archives, and ships files that exist.
func TestGoReleaserConfig(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c goreleaserConfig
	if err := dec.Decode(&c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if c.Version != 2 || len(c.Builds) != 1 || len(c.Archives) != 1 {
		t.Fatalf("want version 2, one build, one archive: %+v", c)
	}
	b := c.Builds[0]
	if filepath.Clean(b.Main) != filepath.Join("cmd", "agent-tools") || b.Binary != "agent-tools" || !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build: %+v", b)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(b.Goos, goos) {
			t.Errorf("no %s build", goos)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(b.Goarch, arch) {
			t.Errorf("no %s build", arch)
		}
	}
	a := c.Archives[0]
	if !slices.Contains(a.IDs, b.ID) || len(a.FormatOverrides) != 1 || a.FormatOverrides[0].Goos != "windows" || !slices.Equal(a.FormatOverrides[0].Formats, []string{"zip"}) {
		t.Errorf("archive: %+v", a)
	}
	for _, f := range a.Files {
		if m, err := filepath.Glob(filepath.Join(root, f)); err != nil || len(m) == 0 {
			t.Errorf("archive file %q matches nothing (%v)", f, err)
		}
	}
}
