package main

// The session probe: one real conversation as an application holds it. The client is
// started, a session is created whose model calls go to the harness's stand-in (the
// session's own Provider option), with one tool of the application's and a permission
// handler; each scripted turn is sent and waited for until the session is idle; the session's
// history is read back, the session closed and the client stopped. The report says what each
// step did, every event the application was handed, what the permission handler was asked
// and what the tool ran; the harness classifies it. The session API is reached by reflection
// like the rest (field and method names, parameter types), never by a version's number.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	copilot "github.com/github/copilot-sdk/go"
)

const idleEvent = "session.idle"

type conversation struct {
	mu     sync.Mutex
	events []any
	ran    []string
	asked  []map[string]any
	allow  bool
	known  map[string]bool // the event types this version declares; nil when its source says none
}

func (c *conversation) onEvent(ev any) { c.mu.Lock(); c.events = append(c.events, ev); c.mu.Unlock() }

// declaredEvents reads the event types the module's source declares (SessionEventType
// constants, in the package or its generated/ and rpc/ packages): a type outside them is
// handed to the application as a plain string it has no type for, its unknown.
func declaredEvents(dir string) map[string]bool {
	if dir == "" {
		return nil
	}
	known := map[string]bool{}
	pattern := regexp.MustCompile(`SessionEventType\s*=\s*"([^"]+)"`)
	for _, sub := range []string{".", "generated", "rpc"} {
		files, _ := filepath.Glob(filepath.Join(dir, sub, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, _ := os.ReadFile(f)
			for _, m := range pattern.FindAllStringSubmatch(string(b), -1) {
				known[m[1]] = true
			}
		}
	}
	if len(known) == 0 {
		return nil
	}
	return known
}

// deref follows pointers and interfaces to the value they hold.
func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// text reads a string or *string field of a struct value, "" when it has none.
func text(v reflect.Value, name string) string {
	v = deref(v)
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return ""
	}
	f := deref(v.FieldByName(name))
	if f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}

// describe: the event's type as the application reads it, and whether this
// version knew it (a Raw... data type, or a type its source declares no constant for).
func (c *conversation) describe(ev any) map[string]any {
	v := deref(reflect.ValueOf(ev))
	kind, class := "", ""
	if v.IsValid() && v.Kind() == reflect.Struct {
		if t := v.FieldByName("Type"); t.IsValid() && t.Kind() == reflect.String {
			kind = t.String() // v0.x: a field
		} else if m := v.MethodByName("Type"); m.IsValid() && m.Type().NumIn() == 0 && m.Type().NumOut() == 1 {
			kind = fmt.Sprint(m.Call(nil)[0].Interface()) // v1.x: its data's type
		}
		if d := v.FieldByName("Data"); d.IsValid() {
			class = d.Type().String()
			if d.Kind() == reflect.Interface && !d.IsNil() {
				class = d.Elem().Type().String()
			}
		}
	}
	unknown := strings.Contains(class, "Raw") || (c.known != nil && !c.known[kind])
	return map[string]any{"type": kind, "raw_type": kind, "unknown": unknown, "data_class": class}
}

// kindOf reads a permission request's kind: a Kind field (v0.x) or a Kind() method (v1.x).
func kindOf(request reflect.Value) string {
	if m := request.MethodByName("Kind"); m.IsValid() && m.Type().NumIn() == 0 && m.Type().NumOut() == 1 {
		return fmt.Sprint(m.Call(nil)[0].Interface())
	}
	if v := deref(request); v.IsValid() && v.Kind() == reflect.Struct {
		if f := v.FieldByName("Kind"); f.IsValid() {
			return fmt.Sprint(f.Interface())
		}
	}
	return ""
}

// permissionHandler builds the application's handler of the field's type: it approves the
// application's own tool always and the CLI's tools while allow is set, answering in this
// version's result type (a struct with a Kind, or the rpc package's decisions).
func (c *conversation) permissionHandler(t reflect.Type) reflect.Value {
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		kind := kindOf(args[0])
		c.mu.Lock()
		allowed := c.allow || kind == "custom-tool"
		c.asked = append(c.asked, map[string]any{"kind": kind, "allowed": allowed})
		c.mu.Unlock()
		out := make([]reflect.Value, t.NumOut())
		for i := range out {
			rt := t.Out(i)
			out[i] = reflect.Zero(rt)
			switch rt.Kind() {
			case reflect.Struct:
				res := reflect.New(rt).Elem()
				if f := res.FieldByName("Kind"); f.IsValid() && f.Kind() == reflect.String {
					if allowed {
						f.SetString("approved")
					} else {
						f.SetString("denied-interactively-by-user")
					}
				}
				out[i] = res
			case reflect.Interface:
				if rt == errType {
					continue
				}
				if d := decision(allowed); d != nil && reflect.TypeOf(d).Implements(rt) {
					out[i] = reflect.ValueOf(d).Convert(rt)
				}
			}
		}
		return out
	})
}

// tool is the application's tool: it returns the text it is given, upper-cased.
func (c *conversation) tool(name string) copilot.Tool {
	t := copilot.Tool{
		Name: name,
		Parameters: map[string]any{"type": "object", "required": []string{"text"},
			"properties": map[string]any{"text": map[string]any{"type": "string"}}},
		Handler: func(inv copilot.ToolInvocation) (copilot.ToolResult, error) {
			given := ""
			if m, ok := inv.Arguments.(map[string]any); ok {
				given = fmt.Sprint(m["text"])
			}
			c.mu.Lock()
			c.ran = append(c.ran, given)
			c.mu.Unlock()
			return copilot.ToolResult{TextResultForLLM: strings.ToUpper(given), ResultType: "success"}, nil
		},
	}
	setOption(&t, "Description", "Returns the text it is given, upper-cased.")
	return t
}

// setFields sets the string fields of the struct v points to that this version has.
func setFields(v reflect.Value, fields map[string]string) {
	for name, val := range fields {
		if f := v.Elem().FieldByName(name); f.IsValid() && f.CanSet() && f.Kind() == reflect.String {
			f.SetString(val)
		}
	}
}

// fillSession sets what the conversation needs on this version's SessionConfig.
func (c *conversation) fillSession(cfg config) func(reflect.Value) {
	return func(sc reflect.Value) {
		setFields(sc, map[string]string{"Model": cfg.Model})
		if f := sc.Elem().FieldByName("Provider"); f.IsValid() && f.Kind() == reflect.Pointer {
			p := reflect.New(f.Type().Elem())
			setFields(p, map[string]string{"Type": "openai", "BaseURL": cfg.ModelURL + "/v1", "APIKey": "compat-matrix",
				"WireApi": "completions", "WireAPI": "completions"})
			f.Set(p)
		}
		if f := sc.Elem().FieldByName("Tools"); f.IsValid() && f.Type() == reflect.TypeOf([]copilot.Tool{}) {
			f.Set(reflect.ValueOf([]copilot.Tool{c.tool(cfg.Tool)}))
		}
		if f := sc.Elem().FieldByName("OnPermissionRequest"); f.IsValid() && f.Kind() == reflect.Func {
			f.Set(c.permissionHandler(f.Type()))
		}
		// As the SDK advises, where it can: an application that subscribes after
		// CreateSession returns misses the session's first events.
		if f := sc.Elem().FieldByName("OnEvent"); f.IsValid() && f.Kind() == reflect.Func {
			f.Set(eventHandler(f.Type(), c.onEvent))
		}
	}
}

// sendTurn sends one message and waits until the session is idle: SendAndWait where the
// version has it (with a timeout parameter, or a context's deadline), else Send and the
// application's own wait for session.idle.
func (c *conversation) sendTurn(session reflect.Value, ctx context.Context, prompt string, wait time.Duration) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	supply := func(in reflect.Type) (reflect.Value, bool) {
		switch {
		case in == reflect.TypeOf(time.Duration(0)):
			return reflect.ValueOf(wait), true
		case in.Kind() == reflect.Struct && in.Name() == "MessageOptions":
			opts := reflect.New(in)
			setFields(opts, map[string]string{"Prompt": prompt})
			return opts.Elem(), true
		}
		return reflect.Value{}, false
	}
	api := report["api"].(map[string]any)
	if m := session.MethodByName("SendAndWait"); m.IsValid() {
		api["turn"] = "Session.SendAndWait " + m.Type().String()
		args, bad, _ := arguments(m.Type(), ctx, supply)
		if bad != nil {
			return nil, fmt.Errorf("agent: cannot supply SendAndWait parameter of type %s", bad)
		}
		return results(m.Call(args))
	}
	m := session.MethodByName("Send")
	api["turn"] = "Session.Send " + m.Type().String() + ", then the first session.idle"
	c.mu.Lock()
	seen := len(c.events)
	c.mu.Unlock()
	args, bad, _ := arguments(m.Type(), ctx, supply)
	if bad != nil {
		return nil, fmt.Errorf("agent: cannot supply Send parameter of type %s", bad)
	}
	if _, err := results(m.Call(args)); err != nil {
		return nil, err
	}
	for ctx.Err() == nil {
		c.mu.Lock()
		var last any
		idle := false
		for _, ev := range c.events[seen:] {
			switch c.describe(ev)["type"] {
			case idleEvent:
				idle = true
			case "assistant.message":
				last = ev
			}
		}
		c.mu.Unlock()
		if idle {
			return last, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("no %s within %.0fs: %w", idleEvent, wait.Seconds(), ctx.Err())
}

// results turns a method's results into (value, error).
func results(outs []reflect.Value) (any, error) {
	var val any
	var err error
	for _, o := range outs {
		if o.Type() == errType {
			if !o.IsNil() {
				err = o.Interface().(error)
			}
		} else {
			val = o.Interface()
		}
	}
	return val, err
}

func sessionProbe(client *copilot.Client, cfg config, timeout time.Duration) {
	observed := map[string]any{"turns": []map[string]any{}, "live": []map[string]any{}, "history": nil}
	report["observed"] = observed
	report["loop_errors"] = []string{}
	c := &conversation{allow: true, known: declaredEvents(cfg.SDKDir)}
	report["api"].(map[string]any)["permission"] = "OnPermissionRequest of the field's own type: Kind approved | denied-interactively-by-user, or rpc.PermissionDecisionApproveOnce | Reject"
	turnWait := time.Duration(cfg.TurnTimeout * float64(time.Second))
	if turnWait <= 0 {
		turnWait = 45 * time.Second
	}
	startM, _ := method(client, "Start")
	_, started := call("start", timeout, func(ctx context.Context) (any, error) { return invoke(startM, ctx, "") })
	defer func() {
		c.mu.Lock()
		live := []map[string]any{}
		for _, ev := range c.events {
			live = append(live, c.describe(ev))
		}
		c.mu.Unlock()
		observed["live"] = live
		stopM, _ := method(client, "Stop")
		call("stop", timeout, func(ctx context.Context) (any, error) { return invoke(stopM, ctx, "") })
		leak := cfg.Leak
		if leak <= 0 {
			leak = 5
		}
		report["after_stop"] = watchGone(time.Duration(leak * float64(time.Second)))
	}()
	if !started {
		return
	}
	if _, sig := method(client, "CreateSession"); sig == "" {
		report["not_applicable"] = "this version has no CreateSession"
		return
	}
	res, ok := call("create_session", timeout, func(ctx context.Context) (any, error) {
		return createSession(client, ctx, c.fillSession(cfg), c.onEvent)
	})
	if !ok {
		return
	}
	session := reflect.ValueOf(res)
	for _, t := range cfg.Turns {
		name, prompt := t[0], t[1]
		c.mu.Lock()
		c.allow = name != "denied"
		ran, asked, seen := len(c.ran), len(c.asked), len(c.events)
		c.mu.Unlock()
		msg, ok := call("turn:"+name, turnWait+5*time.Second, func(ctx context.Context) (any, error) {
			return c.sendTurn(session, ctx, prompt, turnWait)
		})
		steps := report["steps"].([]*step)
		c.mu.Lock()
		idle := false
		for _, ev := range c.events[seen:] {
			idle = idle || c.describe(ev)["type"] == idleEvent
		}
		turn := map[string]any{"name": name, "ok": ok, "seconds": steps[len(steps)-1].Seconds, "reply": nil,
			"tool_ran": append([]string{}, c.ran[ran:]...), "asked": append([]map[string]any{}, c.asked[asked:]...),
			"idle": idle}
		c.mu.Unlock()
		if ev := deref(reflect.ValueOf(msg)); ev.IsValid() && ev.Kind() == reflect.Struct {
			turn["reply"] = text(ev.FieldByName("Data"), "Content")
		}
		observed["turns"] = append(observed["turns"].([]map[string]any), turn)
		if !ok {
			break
		}
	}
	if m, name := historyMethod(session); m.IsValid() {
		report["api"].(map[string]any)["history"] = fmt.Sprintf("Session.%s %s", name, m.Type())
		res, ok := call("get_history", timeout, func(ctx context.Context) (any, error) { return invoke(m, ctx, "") })
		if v := reflect.ValueOf(res); ok && v.IsValid() && v.Kind() == reflect.Slice {
			history := []map[string]any{}
			for i := 0; i < v.Len(); i++ {
				history = append(history, c.describe(v.Index(i).Interface()))
			}
			observed["history"] = history
		}
	}
	closeSession(session, timeout)
}
