package console_test

import (
	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/console"
)

// The console defines what it needs of the running app and does not import
// it (the app sits below); serve hands it an *app.App, and these guards,
// compiled by go vet and go test, keep the two in step.
var (
	_ console.Runtime      = (*app.App)(nil)
	_ console.LoginStarter = (*app.App)(nil)
)
