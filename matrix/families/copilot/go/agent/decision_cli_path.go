//go:build !copilot_connection

package main

// v0.1.14 .. v0.3.0: a permission handler answers with a struct whose Kind says it
// (permissionHandler sets it); there is no decision type.
func decision(bool) any { return nil }
