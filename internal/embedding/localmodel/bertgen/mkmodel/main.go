// Command mkmodel writes a model folder with random weights (bertgen): a
// stand-in for a real export when measuring what the in-process model
// costs (its vectors mean nothing).
//
//	go run ./internal/embedding/localmodel/bertgen/mkmodel -out /tmp/minilm            # MiniLM-L6 shape, 90 MB
//	go run ./internal/embedding/localmodel/bertgen/mkmodel -out /tmp/bge -layers 12 -pooling cls
//	go run ./internal/embedding/localmodel/bertgen/mkmodel -out /tmp/small -shape small
//	go run ./internal/embedding/localmodel/bertgen/mkmodel -out /tmp/minilm -words ../shared/datasets/azure-mcp/tools.jsonl
//
// -words adds the words of the files to the vocabulary (up to the shape's
// 30,522 entries), so that texts split into about as many tokens as a
// real English vocabulary gives them (the built-in one spells most words
// letter by letter), and the cost measured is a real model's.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/agent-tools/agent-tools/internal/embedding/localmodel/bertgen"
)

func main() {
	out := flag.String("out", "", "the folder to write (required)")
	shape := flag.String("shape", "minilm", "minilm (6 layers, hidden 384, 12 heads, 30,522 embeddings) or small (2 layers, hidden 64)")
	layers := flag.Int("layers", 0, "override the number of layers (bge-small: 12)")
	pooling := flag.String("pooling", "mean", "mean or cls (1_Pooling/config.json)")
	seed := flag.Uint64("seed", 1, "random seed")
	maxSeq := flag.Int("maxseq", 256, "sentence_bert_config.json's max_seq_length (all-MiniLM-L6-v2: 256, bge-small: 512; 0: no file)")
	wordsF := flag.String("words", "", "comma-separated `files` whose words join the vocabulary")
	flag.Parse()
	if *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	var extra []string
	if *wordsF != "" {
		for _, f := range strings.Split(*wordsF, ",") {
			b, err := os.ReadFile(f)
			if err != nil {
				fmt.Fprintln(os.Stderr, "mkmodel:", err)
				os.Exit(1)
			}
			extra = append(extra, strings.FieldsFunc(string(b), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })...)
		}
	}
	vocab := bertgen.VocabLimit(bertgen.MiniLM().Vocab, extra...)
	s := bertgen.MiniLM()
	if *shape == "small" {
		s = bertgen.Small(len(vocab))
	}
	if *layers > 0 {
		s.Layers = *layers
	}
	f := bertgen.Folder{Weights: bertgen.Random(s, *seed), Vocab: vocab, Pooling: *pooling, Normalize: true, MaxSeq: *maxSeq}
	if err := f.Write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "mkmodel:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d layers, hidden %d, %d heads, %s pooling, %d tokens in the vocabulary\n", *out, s.Layers, s.Hidden, s.Heads, *pooling, len(vocab))
}
