package main

// The tolerance probe: the shim between this SDK and the real CLI applies one mutation
// rule; this reports what the application was handed, classified by the harness exactly as
// for the other SDKs. Sessions and events are reached by reflection, like the rest of the
// API: CreateSession(config) or CreateSession(ctx, config), Session.On(handler),
// Destroy() or Disconnect().

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	copilot "github.com/github/copilot-sdk/go"
)

const (
	mutatedID         = "00000000-0000-4000-8000-00000000c0de"
	canaryID          = "00000000-0000-4000-8000-00000000ca9a"
	unknownField      = "compatMatrixUnknownField"
	unknownValue      = "compat_matrix_unknown_value"
	unknownCapability = "compat-matrix.unknown-capability"
)

// seen: is needle anywhere in what the application can reach from v (as JSON, and in Go's
// own rendering for unexported state)?
func seen(v any, needle string) bool {
	if v == nil {
		return false
	}
	if b, err := json.Marshal(v); err == nil && strings.Contains(string(b), needle) {
		return true
	}
	return strings.Contains(fmt.Sprintf("%+v", v), needle)
}

func describeEvent(ev any) map[string]any {
	m, _ := jsonable(ev).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	data, _ := m["data"].(map[string]any)
	d := map[string]any{
		"type": fmt.Sprint(m["type"]), "raw_type": m["type"], "id": fmt.Sprint(m["id"]),
		"data_class": fmt.Sprintf("%T", ev), "message": nil, "role": nil, "name": nil,
		"has_unknown_field": seen(ev, unknownField), "has_unknown_value": seen(ev, unknownValue),
	}
	if data != nil {
		d["message"], d["role"], d["name"] = data["message"], data["role"], data["name"]
	}
	return d
}

// approveAll fills a SessionConfig for the tolerance probe: every permission approved.
func approveAll(cfg reflect.Value) {
	if f := cfg.Elem().FieldByName("OnPermissionRequest"); f.IsValid() && f.Kind() == reflect.Func {
		f.Set((&conversation{allow: true}).permissionHandler(f.Type()))
	}
}

// createSession calls CreateSession(config) or CreateSession(ctx, config) with this
// version's SessionConfig, as fill sets it, and hands every event to handler: Session.On
// once the session exists, unless fill registered it as the config's OnEvent (v0.2.0+:
// registered before the session's first event).
func createSession(client *copilot.Client, ctx context.Context, fill func(reflect.Value), handler func(any)) (any, error) {
	m, sig := method(client, "CreateSession")
	if sig == "" {
		return nil, fmt.Errorf("agent: this version has no CreateSession")
	}
	early := "" // the handler's type, when fill registered it before the session exists
	args, bad, _ := arguments(m.Type(), ctx, func(in reflect.Type) (reflect.Value, bool) {
		if in.Kind() != reflect.Pointer || in.Elem().Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		cfg := reflect.New(in.Elem())
		fill(cfg)
		if f := cfg.Elem().FieldByName("OnEvent"); f.IsValid() && f.Kind() == reflect.Func && !f.IsNil() {
			early = f.Type().String()
		}
		return cfg, true
	})
	if bad != nil {
		return nil, fmt.Errorf("agent: cannot supply CreateSession parameter of type %s", bad)
	}
	outs := m.Call(args)
	if err, _ := outs[len(outs)-1].Interface().(error); err != nil {
		return nil, err
	}
	session := outs[0]
	if early != "" {
		report["api"].(map[string]any)["session"] = fmt.Sprintf("CreateSession %s with OnEvent(%s)", sig, early)
		return session.Interface(), nil
	}
	on := session.MethodByName("On")
	if !on.IsValid() {
		return nil, fmt.Errorf("agent: Session has no On")
	}
	ht := on.Type().In(0)
	on.Call([]reflect.Value{eventHandler(ht, handler)})
	report["api"].(map[string]any)["session"] = fmt.Sprintf("CreateSession %s + Session.On(%s)", sig, ht)
	return session.Interface(), nil
}

// eventHandler is a function of this version's event handler type ht that hands each event to handler.
func eventHandler(ht reflect.Type, handler func(any)) reflect.Value {
	return reflect.MakeFunc(ht, func(a []reflect.Value) []reflect.Value {
		handler(a[0].Interface())
		out := make([]reflect.Value, ht.NumOut())
		for i := range out {
			out[i] = reflect.Zero(ht.Out(i))
		}
		return out
	})
}

func tolerance(client *copilot.Client, cfg config, timeout time.Duration) {
	observed := map[string]any{}
	report["observed"] = observed
	report["loop_errors"] = []string{}
	// cfg.Rules: a batch (one client; connection rules observed together, each session rule on
	// a session of its own, in this order, as the shim assigns them); cfg.Rule: one rule alone.
	rules := cfg.Rules
	if len(rules) == 0 {
		rules = []string{cfg.Rule}
	}
	startM, _ := method(client, "Start")
	_, started := call("start", timeout, func(ctx context.Context) (any, error) { return invoke(startM, ctx, "") })
	defer func() {
		stopM, _ := method(client, "Stop")
		call("stop", timeout, func(ctx context.Context) (any, error) { return invoke(stopM, ctx, "") })
	}()
	if !started {
		return
	}
	pingM, _ := method(client, "Ping")
	if strings.HasPrefix(rules[0], "result.") || strings.HasPrefix(rules[0], "notification.") ||
		strings.HasPrefix(rules[0], "request.") {
		res, _ := call("ping", timeout, func(ctx context.Context) (any, error) { return invoke(pingM, ctx, "compat-matrix") })
		observed["ping_unknown_field"] = seen(res, unknownField)
		if statusM, sig := method(client, "GetStatus"); sig != "" {
			res, _ := call("get_status", timeout, func(ctx context.Context) (any, error) { return invoke(statusM, ctx, "") })
			observed["status_unknown_field"] = seen(res, unknownField)
		}
		observed["client_has_unknown_capability"] = seen(reflect.ValueOf(client).Elem().Interface(), unknownCapability)
		observed["client_has_unknown_value"] = seen(reflect.ValueOf(client).Elem().Interface(), unknownValue)
		// A notification or request injected after the handshake lands (and is answered).
		wait := 500 * time.Millisecond
		for _, rule := range rules {
			if strings.HasPrefix(rule, "request.") {
				wait = time.Second
			}
		}
		time.Sleep(wait)
		return
	}
	if len(cfg.Rules) == 0 {
		sessionRule(client, pingM, rules[0], observed, cfg, timeout)
		return
	}
	batch := map[string]any{}
	report["batch"] = batch
	for _, rule := range rules {
		mark := len(report["steps"].([]*step))
		own := map[string]any{}
		sessionRule(client, pingM, rule, own, cfg, timeout)
		steps := report["steps"].([]*step)
		batch[rule] = map[string]any{"steps": append([]*step{}, steps[mark:]...), "observed": own,
			"loop_errors": []string{}}
	}
}

// sessionRule runs one session-scoped rule's steps on a session of its own.
func sessionRule(client *copilot.Client, pingM reflect.Value, rule string, observed map[string]any, cfg config,
	timeout time.Duration) {
	var mu sync.Mutex
	var events []any
	res, ok := call("create_session", timeout, func(ctx context.Context) (any, error) {
		return createSession(client, ctx, approveAll, func(ev any) { mu.Lock(); events = append(events, ev); mu.Unlock() })
	})
	if !ok {
		return
	}
	if strings.HasPrefix(rule, "history.") {
		readHistory(reflect.ValueOf(res), observed, timeout)
		call("ping", timeout, func(ctx context.Context) (any, error) { return invoke(pingM, ctx, "compat-matrix") })
		closeSession(reflect.ValueOf(res), timeout)
		return
	}
	wait := cfg.EventWait
	if wait <= 0 {
		wait = 6
	}
	deadline := time.Now().Add(time.Duration(wait * float64(time.Second)))
	var described []map[string]any
	for {
		mu.Lock()
		described = described[:0]
		for _, ev := range events {
			described = append(described, describeEvent(ev))
		}
		mu.Unlock()
		canary := false
		for _, d := range described {
			canary = canary || d["id"] == canaryID
		}
		if canary || time.Now().After(deadline) {
			observed["canary"] = canary
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(described) > 20 {
		described = described[len(described)-20:]
	}
	observed["events"] = described
	observed["mutated"] = nil
	for _, d := range described {
		if d["id"] == mutatedID {
			observed["mutated"] = d
		}
	}
	call("ping", timeout, func(ctx context.Context) (any, error) { return invoke(pingM, ctx, "compat-matrix") })
	closeSession(reflect.ValueOf(res), timeout)
}

func closeSession(session reflect.Value, timeout time.Duration) {
	for _, name := range []string{"Disconnect", "Destroy"} {
		if m := session.MethodByName(name); m.IsValid() {
			call("close_session", timeout, func(ctx context.Context) (any, error) { return invoke(m, ctx, "") })
			return
		}
	}
}

// readHistory reads the session's stored events back, as an application replaying a session
// does (GetEvents(ctx) from v1.0.0-beta.8, GetMessages(ctx) from v0.1.21, GetMessages() before),
// and describes what it was handed.
func readHistory(session reflect.Value, observed map[string]any, timeout time.Duration) {
	m, name := historyMethod(session)
	if !m.IsValid() {
		report["not_applicable"] = "this version cannot read a session's events back"
		return
	}
	report["api"].(map[string]any)["history"] = fmt.Sprintf("Session.%s %s", name, m.Type())
	res, ok := call("get_history", timeout, func(ctx context.Context) (any, error) { return invoke(m, ctx, "") })
	if !ok {
		return
	}
	var described []map[string]any
	if v := reflect.ValueOf(res); v.IsValid() && v.Kind() == reflect.Slice {
		for i := 0; i < v.Len(); i++ {
			described = append(described, describeEvent(v.Index(i).Interface()))
		}
	}
	observed["canary"] = false
	observed["mutated"] = nil
	for _, d := range described {
		if d["id"] == canaryID {
			observed["canary"] = true
		}
		if d["id"] == mutatedID {
			observed["mutated"] = d
		}
	}
	if len(described) > 20 {
		described = described[len(described)-20:]
	}
	observed["events"] = described
}

// historyMethod: GetEvents(ctx) from v1.0.0-beta.8, GetMessages(ctx) from v0.1.21,
// GetMessages() before; invalid when the version has none.
func historyMethod(session reflect.Value) (reflect.Value, string) {
	for _, name := range []string{"GetEvents", "GetMessages"} {
		if m := session.MethodByName(name); m.IsValid() {
			return m, name
		}
	}
	return reflect.Value{}, ""
}
