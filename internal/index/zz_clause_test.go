package index
import ("testing";"fmt";"strings")
func TestZZSplit(t *testing.T){
	_, _, qs := loadDataset(t, datasetDir("livemcpbench"))
	for i, q := range qs { if i%4==0 { fmt.Println(q.Query[:min(len(q.Query),230)]); fmt.Println("   ->", strings.Join(splitClauses(q.Query), " || ")) } }
}
