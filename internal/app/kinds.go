package app

// The kinds this binary builds are listed once, in internal/provider/kinds;
// importing it registers them with the config and with provider.Build.
import _ "github.com/agent-tools/agent-tools/internal/provider/kinds"
