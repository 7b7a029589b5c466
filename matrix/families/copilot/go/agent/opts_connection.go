//go:build copilot_connection

package main

import copilot "github.com/github/copilot-sdk/go"

// v1.0.0-beta.8 and later: ClientOptions has no CLIPath; the CLI is a StdioConnection.
func newOptions(cliPath string) (*copilot.ClientOptions, map[string]any) {
	return &copilot.ClientOptions{Connection: copilot.StdioConnection{Path: cliPath}}, map[string]any{
		"constructor": "connection", "build_tags": "copilot_connection",
		"call": "copilot.NewClient(&copilot.ClientOptions{Connection: copilot.StdioConnection{Path: P}})",
	}
}
