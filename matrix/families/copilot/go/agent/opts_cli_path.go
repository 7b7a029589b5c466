//go:build !copilot_connection

package main

import copilot "github.com/github/copilot-sdk/go"

// v0.1.14 .. v0.3.0: the CLI path is ClientOptions.CLIPath. Up to v0.2.0 a COPILOT_CLI_PATH
// in the process environment silently overrides it; from v0.2.1 the option wins.
func newOptions(cliPath string) (*copilot.ClientOptions, map[string]any) {
	return &copilot.ClientOptions{CLIPath: cliPath}, map[string]any{
		"constructor": "cli_path", "build_tags": "",
		"call": "copilot.NewClient(&copilot.ClientOptions{CLIPath: P})",
	}
}
