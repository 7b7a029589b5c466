// Handshake agent for the Go module github.com/github/copilot-sdk/go. Built by the harness
// against exactly one released version (go.mod requires that version), it constructs that
// version's client pointed at the given CLI through the version's own options, runs
// start / ping / get_status / stop, and prints one report line on stdout.
//
// Usage: agent '{"cli_path": P, "step_timeout": 30, "log_level": "error", "no_login": false, "sdk_dir": D}'
// (a "rule" runs the tolerance probe instead, "probe": "session" the session probe)
//
// Only one thing differs at compile time between releases: how the CLI path is given.
// newOptions() lives in opts_cli_path.go (v0.1.x-v0.3.x: ClientOptions.CLIPath) or in
// opts_connection.go (v1.0.0-beta.8+: ClientOptions.Connection = StdioConnection{Path}),
// chosen by the build tag copilot_connection. Everything else (Start() vs Start(ctx),
// Stop() []error vs error, whether GetStatus exists, UseStdio bool vs *bool) is found by
// reflection on the built client, never by a table of versions.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	copilot "github.com/github/copilot-sdk/go"
)

const (
	prefix = "@@compat-matrix-report@@ "
	module = "github.com/github/copilot-sdk/go"
)

type config struct {
	CLIPath     string     `json:"cli_path"`
	StepTimeout float64    `json:"step_timeout"`
	LogLevel    string     `json:"log_level"`
	NoLogin     bool       `json:"no_login"`
	SDKDir      string     `json:"sdk_dir"`
	Rule        string     `json:"rule"`         // set: the tolerance probe (tolerance.go), not the handshake
	Rules       []string   `json:"rules"`        // set: the tolerance probe for a batch of rules of one kind
	EventWait   float64    `json:"event_wait"`   // tolerance: seconds to wait for the canary event
	DeadCLI     float64    `json:"dead_cli"`     // handshake: see watch.go
	Leak        float64    `json:"leak"`         // handshake: seconds to wait after Stop() for the CLI to be gone
	Probe       string     `json:"probe"`        // "session": the session probe (session.go)
	ModelURL    string     `json:"model_url"`    // session: the model stand-in's base URL
	Model       string     `json:"model"`        // session: the model the session asks for
	Tool        string     `json:"tool"`         // session: the application's tool's name
	Turns       [][]string `json:"turns"`        // session: [name, prompt] of each scripted turn
	TurnTimeout float64    `json:"turn_timeout"` // session: seconds a turn may take to reach idle
}

type errInfo struct {
	Type      string `json:"type"`
	Module    string `json:"module"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
	Timeout   bool   `json:"timeout"`
	Source    string `json:"source,omitempty"`
}

type step struct {
	Name    string   `json:"name"`
	OK      bool     `json:"ok"`
	Seconds float64  `json:"seconds"`
	Error   *errInfo `json:"error,omitempty"`
	Result  any      `json:"result,omitempty"`
	Skipped string   `json:"skipped,omitempty"`
}

var report = map[string]any{
	"schema": 1, "sdk_name": module, "sdk_version": "", "steps": []*step{},
	"declared": map[string]any{}, "api": map[string]any{}, "warnings": []string{},
	"negotiated_protocol": nil, "observed_cli_version": nil, "launched": []string{},
}

func note(msg string) { fmt.Fprintf(os.Stderr, "[agent] %s\n", msg) }

func addStep(s *step) { report["steps"] = append(report["steps"].([]*step), s) }

func errorInfo(err error) *errInfo {
	t := reflect.TypeOf(err)
	info := &errInfo{Type: fmt.Sprintf("%T", err), Message: err.Error()}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil {
		info.Module = t.PkgPath()
	}
	// The chain of wrapped errors stands in for a traceback.
	var chain []string
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		chain = append(chain, fmt.Sprintf("%T: %v", e, e))
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			chain = append(chain, fmt.Sprintf("%T: %v", e, e))
		}
	}
	info.Traceback = strings.Join(chain, "\n")
	return info
}

type panicErr struct {
	val   any
	stack string
}

func (p *panicErr) Error() string { return fmt.Sprint(p.val) }

// call runs one SDK call under our deadline. ctx is handed to the SDK where the method
// takes one and cancelled only when we give up (the SDK has no deadline of its own here).
func call(name string, timeout time.Duration, fn func(ctx context.Context) (any, error)) (any, bool) {
	note("step " + name)
	s := &step{Name: name}
	addStep(s)
	// The context must outlive the step: v0.1.21-v0.1.32 start the CLI with
	// exec.CommandContext(ctx) using Start's ctx, so cancelling it kills the CLI. It is
	// cancelled only when we give up on the step (harness deadline).
	ctx, cancel := context.WithCancel(context.Background())
	cancels = append(cancels, cancel) // released only when the agent exits
	type outcome struct {
		res any
		err error
	}
	done := make(chan outcome, 1)
	t0 := time.Now()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{nil, &panicErr{r, string(debug.Stack())}}
			}
		}()
		res, err := fn(ctx)
		done <- outcome{res, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var tick <-chan time.Time
	if watch != nil && name != "stop" && name != "force_stop" { // there the CLI is meant to exit
		ticker := time.NewTicker(250 * time.Millisecond)
		defer ticker.Stop()
		tick = ticker.C
	}
	for {
		select {
		case <-tick:
			if watch.poll() {
				s.Seconds = round(time.Since(t0).Seconds())
				s.Error = watch.failure(name)
				cancel()
				return nil, false
			}
			continue
		case o := <-done:
			s.Seconds = round(time.Since(t0).Seconds())
			if o.err != nil {
				s.Error = errorInfo(o.err)
				if p, ok := o.err.(*panicErr); ok {
					s.Error.Type, s.Error.Traceback = "panic", p.stack
				}
				if errors.Is(o.err, context.DeadlineExceeded) {
					s.Error.Timeout, s.Error.Source = true, "sdk"
				}
				return o.res, false
			}
			s.OK, s.Result = true, jsonable(o.res)
			return o.res, true
		case <-timer.C:
			s.Seconds = round(time.Since(t0).Seconds())
			s.Error = &errInfo{Type: "TimeoutError", Timeout: true, Source: "harness",
				Message: fmt.Sprintf("%s did not settle within %.0fs (harness deadline)", name, timeout.Seconds())}
			cancel() // tell the SDK we gave up; the goroutine is abandoned
			return nil, false
		}
	}
}

var cancels []context.CancelFunc

func round(x float64) float64 { return float64(int64(x*10000+0.5)) / 10000 }

func jsonable(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// method returns the client's exported method by name and a human signature, or invalid.
func method(client any, name string) (reflect.Value, string) {
	m := reflect.ValueOf(client).MethodByName(name)
	if !m.IsValid() {
		return m, ""
	}
	return m, m.Type().String()
}

var ctxType = reflect.TypeOf((*context.Context)(nil)).Elem()
var errType = reflect.TypeOf((*error)(nil)).Elem()

// arguments builds the arguments of a method of type mt: ctx for a context parameter, other's
// value for the rest. The type (and index) of a parameter neither can supply, else nil.
func arguments(mt reflect.Type, ctx context.Context, other func(reflect.Type) (reflect.Value, bool)) ([]reflect.Value, reflect.Type, int) {
	args := make([]reflect.Value, mt.NumIn())
	for i := range args {
		in := mt.In(i)
		if in == ctxType {
			args[i] = reflect.ValueOf(ctx)
		} else if v, ok := other(in); ok {
			args[i] = v
		} else {
			return nil, in, i
		}
	}
	return args, nil, 0
}

// invoke calls m with ctx for context parameters and msg for string parameters, and turns
// the results into (value, error): a trailing error, or a []error (v0.1.14-v0.1.20 Stop).
func invoke(m reflect.Value, ctx context.Context, msg string) (any, error) {
	args, bad, at := arguments(m.Type(), ctx, func(in reflect.Type) (reflect.Value, bool) {
		if in.Kind() == reflect.String {
			return reflect.ValueOf(msg).Convert(in), true
		}
		return reflect.Value{}, false
	})
	if bad != nil {
		return nil, fmt.Errorf("agent: cannot supply parameter %d of type %s", at, bad)
	}
	outs := m.Call(args)
	var val any
	var err error
	for _, o := range outs {
		switch {
		case o.Type() == errType:
			if !o.IsNil() {
				err = o.Interface().(error)
			}
		case o.Kind() == reflect.Slice && o.Type().Elem() == errType:
			errs := o.Interface().([]error)
			if len(errs) > 0 {
				err = &stopErrors{errs}
			}
		default:
			val = o.Interface()
		}
	}
	return val, err
}

type stopErrors struct{ errs []error }

func (s *stopErrors) Error() string {
	parts := make([]string, len(s.errs))
	for i, e := range s.errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}
func (s *stopErrors) Unwrap() []error { return s.errs }

// setOption sets a ClientOptions field by name if this version has it (string, bool, *bool).
func setOption(opts any, name string, val any) bool {
	f := reflect.ValueOf(opts).Elem().FieldByName(name)
	if !f.IsValid() || !f.CanSet() {
		return false
	}
	switch v := val.(type) {
	case string:
		if f.Kind() == reflect.String {
			f.SetString(v)
			return true
		}
	case bool:
		if f.Kind() == reflect.Bool {
			f.SetBool(v)
			return true
		}
		if f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Bool {
			b := reflect.New(f.Type().Elem())
			b.Elem().SetBool(v)
			f.Set(b)
			return true
		}
	}
	return false
}

// private reads an unexported field of the client (read-only observation).
func private(client any, name string) (reflect.Value, bool) {
	v := reflect.ValueOf(client)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() {
		return f, false
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), true
}

func sdkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == module {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return ""
}

// declared reads the protocol window from the module's own source (sdk_dir from the harness:
// `go list -m -f '{{.Dir}}' github.com/github/copilot-sdk/go`). Constants cannot be reached
// by reflection and SdkProtocolVersion was renamed SDKProtocolVersion in v1.0.0.
func declared(dir string) map[string]any {
	d := map[string]any{"bundled_cli": false}
	if dir == "" {
		return d
	}
	read := func(f string) string { b, _ := os.ReadFile(filepath.Join(dir, f)); return string(b) }
	if m := regexp.MustCompile(`(?:Sdk|SDK)ProtocolVersion = (\d+)`).FindStringSubmatch(read("sdk_protocol_version.go")); m != nil {
		d["SDK_PROTOCOL_VERSION"], _ = strconv.Atoi(m[1])
	}
	client := read("client.go")
	if m := regexp.MustCompile(`const minProtocolVersion = (\d+)`).FindStringSubmatch(client); m != nil {
		d["MIN_PROTOCOL_VERSION"], _ = strconv.Atoi(m[1])
	}
	d["exact_match"] = strings.Contains(client, "!= expectedVersion")
	d["sends_connect"] = strings.Contains(client, `"connect"`)
	_, err := os.Stat(filepath.Join(dir, "embeddedcli"))
	d["embeddedcli_package"] = err == nil // opt-in bundling via cmd/bundler; nothing bundled by default
	return d
}

func main() {
	// Old releases fmt.Printf JSON-RPC read errors to stdout: keep stdout for the report.
	out := os.Stdout
	os.Stdout = os.Stderr
	defer func() {
		if r := recover(); r != nil {
			report["harness_error"] = fmt.Sprintf("agent failed: %v\n%s", r, debug.Stack())
		}
		b, err := json.Marshal(report)
		if err != nil {
			b, _ = json.Marshal(map[string]any{"schema": 1, "steps": []any{}, "harness_error": err.Error()})
		}
		fmt.Fprintf(out, "\n%s%s\n", prefix, b)
		os.Exit(0) // a start() that never settled leaves goroutines behind
	}()
	run()
}

func run() {
	var cfg config
	if len(os.Args) > 1 {
		if err := json.Unmarshal([]byte(os.Args[1]), &cfg); err != nil {
			report["harness_error"] = "bad config: " + err.Error()
			return
		}
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = 30
	}
	timeout := time.Duration(cfg.StepTimeout * float64(time.Second))
	if cfg.DeadCLI > 0 && cfg.Rule == "" && len(cfg.Rules) == 0 {
		watch = &cliWatch{grace: time.Duration(cfg.DeadCLI * float64(time.Second)), seen: map[int]string{}}
	}
	names := []string{}
	for _, kv := range os.Environ() {
		names = append(names, strings.SplitN(kv, "=", 2)[0])
	}
	sort.Strings(names)
	report["env_names"] = names
	report["sdk_version"] = sdkVersion()
	report["declared"] = declared(cfg.SDKDir)

	// The harness built this binary against the version: the SDK is linked in, so the
	// import step every agent reports has nothing left that could fail.
	addStep(&step{Name: "import", OK: true, Result: "linked at build time"})

	// construct: the only statically typed call; newOptions is per build tag.
	note("step construct")
	t0 := time.Now()
	opts, api := newOptions(cfg.CLIPath)
	set := []string{}
	if setOption(opts, "UseStdio", true) {
		set = append(set, "UseStdio")
	}
	if cfg.LogLevel != "" && setOption(opts, "LogLevel", cfg.LogLevel) {
		set = append(set, "LogLevel")
	}
	if cfg.NoLogin && setOption(opts, "UseLoggedInUser", false) {
		set = append(set, "UseLoggedInUser")
	}
	api["options_set"] = set
	report["api"] = api
	var client *copilot.Client
	cs := &step{Name: "construct"}
	addStep(cs)
	func() {
		defer func() {
			if r := recover(); r != nil { // NewClient panics on invalid option combinations
				cs.Error = &errInfo{Type: "panic", Message: fmt.Sprint(r), Traceback: string(debug.Stack())}
			}
		}()
		client = copilot.NewClient(opts)
		cs.OK = client != nil
	}()
	cs.Seconds = round(time.Since(t0).Seconds())
	if client == nil {
		return
	}
	methods := map[string]string{}
	for _, n := range []string{"Start", "Stop", "ForceStop", "Ping", "GetStatus"} {
		if _, sig := method(client, n); sig != "" {
			methods[n] = sig
		}
	}
	api["methods"] = methods
	if v, ok := private(client, "cliPath"); ok && v.Kind() == reflect.String {
		api["effective_cli_path"] = v.String() // v1.0.x
	} else if v, ok := private(client, "options"); ok {
		api["effective_cli_path"] = v.FieldByName("CLIPath").String() // v0.x (COPILOT_CLI_PATH wins up to v0.2.0)
	}

	if cfg.Rule != "" || len(cfg.Rules) > 0 {
		tolerance(client, cfg, timeout)
		return
	}
	if cfg.Probe == "session" {
		sessionProbe(client, cfg, timeout)
		return
	}
	startM, _ := method(client, "Start")
	_, started := call("start", timeout, func(ctx context.Context) (any, error) { return invoke(startM, ctx, "") })
	if p, ok := private(client, "process"); ok && !p.IsNil() {
		if args, ok := p.Elem().FieldByName("Args").Interface().([]string); ok {
			report["launched"] = []string{strings.Join(args, " ")}
		}
	}
	if started {
		pingM, _ := method(client, "Ping")
		res, ok := call("ping", timeout, func(ctx context.Context) (any, error) { return invoke(pingM, ctx, "compat-matrix") })
		var pingProto any
		if ok && res != nil {
			if pv := reflect.ValueOf(res).Elem().FieldByName("ProtocolVersion"); pv.IsValid() && !pv.IsNil() {
				pingProto = int(pv.Elem().Int())
			}
		}
		report["ping_protocol"] = pingProto
		// v0.1.32+ keep what they negotiated (unexported); earlier ones required ping == SdkProtocolVersion.
		if v, ok := private(client, "negotiatedProtocolVersion"); ok && v.Int() > 0 {
			report["negotiated_protocol"], report["negotiated_source"] = int(v.Int()), "client.negotiatedProtocolVersion"
		} else if pingProto != nil {
			report["negotiated_protocol"], report["negotiated_source"] = pingProto, "ping.protocolVersion (exact match enforced by Start)"
		}
		if statusM, sig := method(client, "GetStatus"); sig != "" {
			res, ok := call("get_status", timeout, func(ctx context.Context) (any, error) { return invoke(statusM, ctx, "") })
			if ok && res != nil {
				if v := reflect.ValueOf(res).Elem().FieldByName("Version"); v.IsValid() {
					report["observed_cli_version"] = v.String()
				}
			}
		} else {
			addStep(&step{Name: "get_status", OK: true, Skipped: "no GetStatus in this version"})
		}
	}
	// Always stop: before v0.1.28 a failed Start leaves the CLI running.
	stopM, _ := method(client, "Stop")
	_, stopped := call("stop", timeout, func(ctx context.Context) (any, error) { return invoke(stopM, ctx, "") })
	if !started {
		report["stop_after_failed_start"] = true
	}
	if !stopped {
		if fsM, sig := method(client, "ForceStop"); sig != "" {
			call("force_stop", timeout, func(ctx context.Context) (any, error) { return invoke(fsM, ctx, "") })
		}
	}
	// An application lives on after Stop(): what the SDK started must go by itself.
	leak := cfg.Leak
	if leak <= 0 {
		leak = 5
	}
	report["after_stop"] = watchGone(time.Duration(leak * float64(time.Second)))
}
