//go:build copilot_connection

package main

import "github.com/github/copilot-sdk/go/rpc"

// v1.0.0 and later: a permission handler answers with one of the rpc package's decisions.
func decision(allowed bool) any {
	if allowed {
		return rpc.PermissionDecisionApproveOnce{}
	}
	feedback := "compat-matrix denies it"
	return rpc.PermissionDecisionReject{Feedback: &feedback}
}
