// Command pocketbase is a stock PocketBase server for the openapi
// provider's interop test (internal/provider/openapi): it lives in its own
// module so that PocketBase's dependency tree never enters the main go.mod.
// Usage: pocketbase serve --http 127.0.0.1:PORT --dir DATA
package main

import (
	"log"

	"github.com/pocketbase/pocketbase"
)

func main() {
	app := pocketbase.New()
	if err := app.Start(); err != nil {
		log.Fatal(err)
	}
}
