package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-tools/agent-tools/internal/index"
)

// sharedDataset finds shared/datasets/<name> beside the repository, or skips.
func sharedDataset(t testing.TB, name string) dataset {
	t.Helper()
	for _, root := range []string{os.Getenv("AGENT_TOOLS_DATASETS"), "../../../shared/datasets", "../../shared/datasets"} {
		if root == "" {
			continue
		}
		dir := filepath.Join(root, name)
		if _, err := os.Stat(filepath.Join(dir, "tools.jsonl")); err != nil {
			continue
		}
		ds, err := loadDataset(filepath.Join(dir, "tools.jsonl"), filepath.Join(dir, "queries.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		ds.name = name
		return ds
	}
	t.Skip("data set not found (set AGENT_TOOLS_DATASETS to the shared/datasets directory)")
	return dataset{}
}

// TestCalibratedFusionNeverWorse: on both shared data sets, with a model
// that knows nothing (pseudo-random vectors per text), the fusion at the
// self-check's weight is no worse than the lexical ranking alone (R@1, R@5
// and MRR within 0.005), where the fusion at the default weight loses most
// of it. (`go run ./bench/retrieval --embed fake|URL` shows the same for
// the lexicon-in-disguise fake and for real models.)
func TestCalibratedFusionNeverWorse(t *testing.T) {
	if testing.Short() {
		t.Skip("data sets: not in -short")
	}
	for _, name := range []string{"livemcpbench", "azure-mcp"} {
		ds := sharedDataset(t, name)
		cfg := index.DefaultConfig()
		ks := []int{1, 5}
		lex := evaluate(ds, cfg, ks, nil)
		for _, model := range []string{"noise"} {
			sem, _, closeSem, err := semanticFactory(model, model, "")
			if err != nil {
				t.Fatal(err)
			}
			cal := evaluateWith(ds, cfg, ks, sem, stageCalibrated)
			fixed := evaluateWith(ds, cfg, ks, sem, stageFixed)
			closeSem()
			if cal.Stage.SelfCheck == nil {
				t.Fatalf("%s %s: no self-check ran", name, model)
			}
			t.Logf("%s, %s model: lexical R@1 %.3f R@5 %.3f MRR %.3f; default fusion %.3f %.3f %.3f; calibrated (weight %g) %.3f %.3f %.3f",
				name, model, lex.Recall[1], lex.Recall[5], lex.MRR, fixed.Recall[1], fixed.Recall[5], fixed.MRR,
				cal.Stage.Weight, cal.Recall[1], cal.Recall[5], cal.MRR)
			const tol = 0.005
			if cal.Recall[1] < lex.Recall[1]-tol || cal.Recall[5] < lex.Recall[5]-tol || cal.MRR < lex.MRR-tol {
				t.Errorf("%s, %s model: calibrated fusion is worse than lexical alone", name, model)
			}
			if model == "noise" && fixed.Recall[5] >= lex.Recall[5] {
				t.Errorf("%s: noise fused at the default weight does not hurt (R@5 %.3f vs %.3f): the test proves nothing", name, fixed.Recall[5], lex.Recall[5])
			}
		}
	}
}

// BenchmarkCalibratedFusion reports, per data set, the calibrated fusion's
// R@5 and MRR with the noise model beside the lexical ones (custom
// metrics), so a regression shows in benchstat.
func BenchmarkCalibratedFusion(b *testing.B) {
	for _, name := range []string{"livemcpbench", "azure-mcp"} {
		b.Run(name, func(b *testing.B) {
			ds := sharedDataset(b, name)
			cfg := index.DefaultConfig()
			sem, _, closeSem, err := semanticFactory("noise", "noise", "")
			if err != nil {
				b.Fatal(err)
			}
			defer closeSem()
			var lex, cal report
			for b.Loop() {
				lex = evaluate(ds, cfg, []int{1, 5}, nil)
				cal = evaluateWith(ds, cfg, []int{1, 5}, sem, stageCalibrated)
			}
			b.ReportMetric(lex.Recall[5], "lexical-R@5")
			b.ReportMetric(cal.Recall[5], "calibrated-R@5")
			b.ReportMetric(lex.MRR, "lexical-MRR")
			b.ReportMetric(cal.MRR, "calibrated-MRR")
		})
	}
}
