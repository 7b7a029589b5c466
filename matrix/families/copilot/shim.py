"""A transparent JSON-RPC relay between an SDK and the real CLI, that records every message
and can mutate what goes to the SDK.

Runs as a standalone script (stdlib only; the SDK starts it as "the CLI"):

    python shim.py CONFIG.json -- REAL_CLI_ARGV...

CONFIG: {"transcript": path, "rule": rule id or null}. With no rule the bytes are relayed
unchanged (frames are parsed only to record them), so the shim is invisible. The harness
also imports this module for the rule catalogue and the framing, which the tests check.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["CONTROLS", "CONTROL_DESCRIPTIONS", "RULES", "Batch", "Frame", "Mutator", "Rule", "control_of", "encode",
           "read_frame"]

Message = dict[str, Any]


@dataclass(frozen=True)
class Rule:
    id: str
    category: str
    description: str
    needs_session: bool = False


RULES: dict[str, Rule] = {r.id: r for r in (
    Rule("result.extra-field", "result",
         "An unknown field in the connect, ping and status.get results."),
    Rule("result.capabilities", "result",
         "An unknown capabilities list added to the handshake result."),
    Rule("result.unknown-enum-value", "result",
         "An unknown value in an enum list of the handshake result (connect's taskKinds)."),
    Rule("notification.unknown-method", "notification",
         "A notification with a method the SDK has never heard of, right after the handshake."),
    Rule("event.unknown-type", "event",
         "A session.event of a type no SDK knows, injected into a real session.", needs_session=True),
    Rule("event.extra-field", "event",
         "A known session event carrying an unknown field in its data.", needs_session=True),
    Rule("event.unknown-enum-value", "event",
         "A known session event whose enum field holds a value the SDK does not name.", needs_session=True),
    Rule("field.type-change", "event",
         "An optional field of a known event arriving with another JSON type.", needs_session=True),
    Rule("history.unknown-type", "history",
         "A session's stored events read back (session.getMessages) with an event of a type no SDK knows among "
         "them, as after a newer CLI wrote it.", needs_session=True),
    Rule("history.unknown-enum-value", "history",
         "A session's stored events read back with a known event whose enum field holds a value the SDK does not "
         "name.", needs_session=True),
    Rule("history.extra-field", "history",
         "A session's stored events read back with a known event carrying an unknown field.", needs_session=True),
    Rule("request.unknown-method", "request",
         "A JSON-RPC request (with an id) from the CLI for a method no SDK knows, right after the handshake: the "
         "SDK must answer it (method not found, -32601), or the CLI waits for an answer forever."),
)}

# Each rule's control: the same steps with nothing mutated (the well-formed events still sent),
# run first against the same CLI. A rule is judged only where its control passes: a CLI whose
# own unmutated traffic the SDK already cannot handle says nothing about the mutation.
CONTROLS: dict[str, str] = {"result": "result.control", "notification": "result.control",
                            "request": "result.control", "event": "event.control", "history": "history.control"}
CONTROL_DESCRIPTIONS: dict[str, str] = {
    "result.control": "The handshake, ping and status calls with nothing mutated or injected.",
    "event.control": "A real session with only the well-formed event the event rules send after the mutated one.",
    "history.control": "A session's stored events read back with only the well-formed event the history rules "
                       "append after the mutated one.",
}


def control_of(rule: str) -> str:
    """The control a rule is judged against."""
    return CONTROLS[RULES[rule].category]


HANDSHAKE_METHODS = ("connect", "ping")
RESULT_METHODS = ("connect", "ping", "status.get")
ENUM_LISTS = ("taskKinds",)  # enum-valued lists the CLI sends in its handshake result
UNKNOWN_FIELD = "compatMatrixUnknownField"
UNKNOWN_CAPABILITY = "compat-matrix.unknown-capability"
UNKNOWN_METHOD = "compatMatrix.unknownNotification"
UNKNOWN_REQUEST = "compatMatrix.unknownRequest"
# An integer: SDKs that number their own requests with UUID strings look an id up among their
# pending requests before taking a message as a request from the other side.
INJECTED_REQUEST_ID = 7341
HISTORY_METHOD = "session.getMessages"
UNKNOWN_EVENT_TYPE = "compat_matrix.unknown_event"
UNKNOWN_ENUM_VALUE = "compat_matrix_unknown_value"
MUTATED_EVENT_ID = "00000000-0000-4000-8000-00000000c0de"
CANARY_EVENT_ID = "00000000-0000-4000-8000-00000000ca9a"
EVENT_DELAY = 1.0


@dataclass(frozen=True)
class Frame:
    raw: bytes  # the whole frame as received, headers included
    body: bytes

    def message(self) -> Message | None:
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


def read_frame(stream: IO[bytes]) -> Frame | None:
    """One Content-Length framed message, or None at end of stream."""
    head = b""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        head += line
        text = line.strip()
        if not text:
            if length is None:
                continue  # stray blank line between frames
            break
        name, _, value = text.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = stream.read(length)
    return Frame(head + body, body)


def encode(message: Message) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body


class Mutator:
    """Decides, per message from the CLI, what the SDK receives instead (or in addition)."""

    def __init__(self, rule: str | None) -> None:
        if rule is not None and rule not in RULES and rule not in CONTROL_DESCRIPTIONS:
            raise ValueError(f"unknown rule {rule!r}; valid: {', '.join([*RULES, *CONTROL_DESCRIPTIONS])}")
        self.rule = rule
        self.methods: dict[Any, str] = {}  # request id -> method, from the SDK's requests
        self.injected = False
        self.applied: list[str] = []
        self.later: list[tuple[float, Message]] = []  # (delay seconds, message) to send later

    def seen_request(self, msg: Message) -> None:
        if "method" in msg and "id" in msg:
            self.methods[msg["id"]] = str(msg["method"])

    def is_answer_to_injected(self, msg: Message) -> bool:
        """The SDK's answer to the request we sent in the CLI's name: ours to record, not the
        CLI's to receive (it never sent that request)."""
        return (self.rule == "request.unknown-method" and self.injected and msg.get("id") == INJECTED_REQUEST_ID
                and "method" not in msg and ("result" in msg or "error" in msg))

    def to_sdk(self, msg: Message) -> list[Message] | None:
        """Messages to send instead of ``msg``; None to relay it unchanged."""
        rule = self.rule
        if rule is None or rule == "result.control":
            return None
        method = self.methods.get(msg.get("id")) if "result" in msg else None
        if rule in CONTROL_DESCRIPTIONS:
            return self._control(msg, rule, method)
        result = msg.get("result")
        if rule == "result.extra-field" and method in RESULT_METHODS and isinstance(result, dict):
            self.applied.append(f"{method}: +{UNKNOWN_FIELD}")
            return [{**msg, "result": {**result, UNKNOWN_FIELD: {"nested": [1, "two", None]}}}]
        if rule == "result.capabilities" and method in HANDSHAKE_METHODS and isinstance(result, dict):
            caps = [*(result.get("capabilities") or []), UNKNOWN_CAPABILITY]
            self.applied.append(f"{method}: capabilities={caps}")
            return [{**msg, "result": {**result, "capabilities": caps}}]
        if rule == "result.unknown-enum-value" and method in HANDSHAKE_METHODS and isinstance(result, dict):
            enums = {k: v for k, v in result.items() if k in ENUM_LISTS and isinstance(v, list)}
            if not enums:
                return None  # this CLI's handshake result has no enum to extend
            self.applied.append(f"{method}: {', '.join(enums)} += {UNKNOWN_ENUM_VALUE}")
            return [{**msg, "result": {**result, **{k: [*v, UNKNOWN_ENUM_VALUE] for k, v in enums.items()}}}]
        if rule == "notification.unknown-method" and method in HANDSHAKE_METHODS and not self.injected:
            self.injected = True
            self.applied.append(f"after {method}: {UNKNOWN_METHOD}")
            return [msg, {"jsonrpc": "2.0", "method": UNKNOWN_METHOD, "params": {"value": 1}}]
        if rule == "request.unknown-method" and method in HANDSHAKE_METHODS and not self.injected:
            self.injected = True
            self.applied.append(f"after {method}: request {UNKNOWN_REQUEST} (id {INJECTED_REQUEST_ID})")
            return [msg, {"jsonrpc": "2.0", "id": INJECTED_REQUEST_ID, "method": UNKNOWN_REQUEST,
                          "params": {"value": 1}}]
        if RULES[rule].category == "history":
            return self._history(msg, rule, method)
        if RULES[rule].needs_session:
            return self._event(msg, rule, method)
        return None

    def _control(self, msg: Message, rule: str, method: str | None) -> list[Message] | None:
        """The well-formed event a rule sends after its mutated one, alone."""
        result = msg.get("result")
        if rule == "history.control":
            if method != HISTORY_METHOD or not isinstance(result, dict) or not isinstance(result.get("events"), list):
                return None
            self.applied.append(f"{HISTORY_METHOD}: +canary only")
            return [{**msg, "result": {**result, "events": [*result["events"], canary("")["event"]]}}]
        if method == "session.create" and isinstance(result, dict) and not self.injected:
            session_id = result.get("sessionId")
            if session_id is None:
                return None
            self.injected = True
            self.applied.append("after session.create: canary only")
            self.later = [(EVENT_DELAY + 0.5, _note(canary(str(session_id))))]
        return None

    def _history(self, msg: Message, rule: str, method: str | None) -> list[Message] | None:
        """The stored events the CLI returns get the mutated event, then a well-formed one."""
        result = msg.get("result")
        if method != HISTORY_METHOD or not isinstance(result, dict) or not isinstance(result.get("events"), list):
            return None
        mutated = self.event_for(rule.replace("history.", "event.", 1), "")["event"]
        self.applied.append(f"{HISTORY_METHOD}: +{mutated['type']} event, +canary")
        events = [*result["events"], mutated, canary("")["event"]]
        return [{**msg, "result": {**result, "events": events}}]

    def _event(self, msg: Message, rule: str, method: str | None) -> list[Message] | None:
        """After session.create's result, schedule the mutated event and then a canary (a
        well-formed event every generation delivers). The delay matters: 0.1.x SDKs register
        the session only after the result arrives."""
        if method == "session.create" and isinstance(msg.get("result"), dict) and not self.injected:
            session_id = msg["result"].get("sessionId")
            if session_id is None:
                return None
            self.injected = True
            event = self.event_for(rule, str(session_id))
            self.applied.append(f"after session.create: session.event {event['event']['type']}")
            self.later = [(EVENT_DELAY, _note(event)), (EVENT_DELAY + 0.5, _note(canary(str(session_id))))]
        return None

    @staticmethod
    def event_for(rule: str, session_id: str) -> Message:
        base: Message = {"id": MUTATED_EVENT_ID, "timestamp": "2026-01-01T00:00:00.000Z", "parentId": None}
        if rule == "event.unknown-type":
            event = {**base, "type": UNKNOWN_EVENT_TYPE, "data": {"compatMatrixProbe": 1}}
        elif rule == "event.extra-field":
            event = {**base, "type": "session.info", UNKNOWN_FIELD: True,
                     "data": {"infoType": "compat-matrix", "message": "extra-field", UNKNOWN_FIELD: {"n": 1}}}
        elif rule == "event.unknown-enum-value":
            event = {**base, "type": "system.message", "data": {"content": "enum", "role": UNKNOWN_ENUM_VALUE}}
        elif rule == "field.type-change":
            event = {**base, "type": "system.message", "data": {"content": "type-change", "role": "system",
                                                                 "name": 42}}
        else:
            raise ValueError(rule)
        return {"sessionId": session_id, "event": event}


class Batch:
    """Every rule of one kind through one relay, so that one CLI start serves them all (issue 31).
    Connection-scoped rules (result, notification, request) are applied together to the one
    connection; session-scoped ones (event, history) each to its own session, the n-th session
    the application creates getting the n-th rule (the agent creates them in the same order).
    The harness accepts a rule's verdict from a batch only where it is a clean pass, and
    measures the others alone: a batch never decides a failure."""

    def __init__(self, rules: list[str]) -> None:
        kinds = {RULES[r].needs_session for r in rules if r in RULES}
        if len(kinds) != 1 or len(rules) != len(set(rules)):
            raise ValueError(f"a batch is distinct rules of one scope (connection or session), not {rules!r}")
        self.rules = rules
        self.rule = None  # entries are tagged per rule (``owner``), not with one rule for the relay
        self.mutators = {r: Mutator(r) for r in rules}
        self.session_rules = [r for r in rules if RULES[r].needs_session]
        self.sessions: dict[str, str] = {}  # session id -> its rule
        self.asked: dict[Any, str] = {}  # request id -> the session id it names
        self.applied: list[tuple[str, str]] = []  # (rule, what was applied)
        self.later: list[tuple[float, Message]] = []

    def seen_request(self, msg: Message) -> None:
        for m in self.mutators.values():
            m.seen_request(msg)
        params = msg.get("params")
        if "id" in msg and isinstance(params, dict) and isinstance(params.get("sessionId"), str):
            self.asked[msg["id"]] = params["sessionId"]

    def is_answer_to_injected(self, msg: Message) -> bool:
        return any(m.is_answer_to_injected(msg) for m in self.mutators.values())

    def owner(self, msg: Message) -> str | None:
        """The rule a message belongs to: that of the session it names (or answers for)."""
        params = msg.get("params")
        result = msg.get("result")
        for value in (params.get("sessionId") if isinstance(params, dict) else None,
                      result.get("sessionId") if isinstance(result, dict) else None, self.asked.get(msg.get("id"))):
            if isinstance(value, str) and value in self.sessions:
                return self.sessions[value]
        return None

    def to_sdk(self, msg: Message) -> list[Message] | None:
        if self.session_rules:
            return self._session(msg)
        out: list[Message] | None = None
        for rule, m in self.mutators.items():  # each rule's change applied to what the one before sent
            current = out if out is not None else [msg]
            changed = False
            nxt: list[Message] = []
            for one in current:
                got = self._through(rule, m, one)
                changed = changed or got is not None
                nxt.extend(got if got is not None else [one])
            if changed:
                out = nxt
        return out

    def _session(self, msg: Message) -> list[Message] | None:
        result = msg.get("result")
        first = self.mutators[self.session_rules[0]]
        if (first.methods.get(msg.get("id")) == "session.create" and isinstance(result, dict)
                and isinstance(result.get("sessionId"), str) and result["sessionId"] not in self.sessions):
            unassigned = [r for r in self.session_rules if r not in self.sessions.values()]
            if not unassigned:
                return None  # more sessions than rules: the rest relayed unchanged
            self.sessions[result["sessionId"]] = unassigned[0]
        rule = self.owner(msg)
        return None if rule is None else self._through(rule, self.mutators[rule], msg)

    def _through(self, rule: str, m: Mutator, msg: Message) -> list[Message] | None:
        before = len(m.applied)
        out = m.to_sdk(msg)
        self.applied.extend((rule, text) for text in m.applied[before:])
        self.later.extend(m.later)
        m.later = []
        return out


def canary(session_id: str) -> Message:
    return {"sessionId": session_id, "event": {
        "id": CANARY_EVENT_ID, "timestamp": "2026-01-01T00:00:00.000Z", "parentId": None,
        "type": "session.info", "data": {"infoType": "compat-matrix", "message": "canary"}}}


def _note(params: Message) -> Message:
    return {"jsonrpc": "2.0", "method": "session.event", "params": params}


class Transcript:
    """The record of one relay. A disk that refuses it never changes what the SDK sees: the
    relay goes on, and the transcript is emptied, which the harness reads as "cut short" (a
    whole transcript always starts with the shim's own entry)."""

    def __init__(self, path: str) -> None:
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        try:
            # Unbuffered: nothing half-written waits in a buffer to land after we emptied the file.
            self._file: IO[bytes] | None = open(path, "ab", buffering=0)  # noqa: SIM115 (lives with the relay)
        except OSError:
            self._file = None

    def write(self, direction: str, frame: Frame | None, msg: Message | None, note: str = "",
              rule: str | None = None) -> None:
        """``rule``: in a batch, the one rule this entry belongs to (none: every rule's)."""
        entry: dict[str, Any] = {"t": round(time.monotonic() - self._t0, 4), "dir": direction}
        if rule is not None:
            entry["rule"] = rule
        if msg is not None:
            entry["msg"] = msg
        elif frame is not None:
            entry["raw"] = frame.body[:4000].decode("utf-8", "replace")
        if note:
            entry["note"] = note
        with self._lock:
            if self._file is None:
                return
            data = (json.dumps(entry, default=str) + "\n").encode()
            try:
                if self._file.write(data) != len(data):
                    raise OSError("short write")
            except OSError:
                with contextlib.suppress(OSError):
                    self._file.truncate(0)
                self._file = None


def _pump(src: IO[bytes], dst: IO[bytes], on_frame: Callable[[Frame], list[bytes]],
          lock: threading.Lock | None = None) -> None:
    lock = lock or threading.Lock()
    try:
        while True:
            frame = read_frame(src)
            if frame is None:
                break
            chunks = on_frame(frame)
            with lock:
                for chunk in chunks:
                    dst.write(chunk)
                dst.flush()
    except (OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.close()


def main(argv: list[str]) -> int:
    config_path, sep, *cli = argv
    if sep != "--" or not cli:
        print("usage: shim.py CONFIG.json -- CLI ARGV...", file=sys.stderr)
        return 2
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    transcript = Transcript(config["transcript"])
    mutator: Mutator | Batch = Batch(config["rules"]) if config.get("rules") else Mutator(config.get("rule"))
    transcript.write("shim", None, {"argv": cli, "rule": mutator.rule,
                                    **({"rules": mutator.rules} if isinstance(mutator, Batch) else {})})

    def owner(msg: Message | None) -> str | None:
        return mutator.owner(msg) if isinstance(mutator, Batch) and msg is not None else None

    def record_applied(before: int) -> None:
        # Written at once: the relay may be killed any time after.
        if isinstance(mutator, Batch):
            new = mutator.applied[before:]
            for rule in dict.fromkeys(r for r, _ in new):
                transcript.write("shim", None, {"applied": [t for r, t in new if r == rule]}, rule=rule)
        elif len(mutator.applied) > before:
            transcript.write("shim", None, {"applied": mutator.applied[before:]})
    # The CLI's stderr is the SDK's: it reads it to explain a failed start.
    child = subprocess.Popen(cli, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None

    def forward_signal(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward_signal)
    signal.signal(signal.SIGINT, forward_signal)

    def from_sdk(frame: Frame) -> list[bytes]:
        msg = frame.message()
        if msg is not None and mutator.is_answer_to_injected(msg):
            transcript.write("sdk->shim", frame, msg, note="answer to the injected request")
            return []
        if msg is not None:
            mutator.seen_request(msg)
        transcript.write("sdk->cli", frame, msg, rule=owner(msg))
        return [frame.raw]

    sdk_in = sys.stdin.buffer
    sdk_out = sys.stdout.buffer
    write_lock = threading.Lock()

    def send_later(msg: Message) -> None:
        transcript.write("shim->sdk", None, msg, note=mutator.rule or owner(msg) or "", rule=owner(msg))
        with write_lock, contextlib.suppress(OSError, ValueError):
            sdk_out.write(encode(msg))
            sdk_out.flush()

    def from_cli(frame: Frame) -> list[bytes]:
        msg = frame.message()
        before = len(mutator.applied)
        out = mutator.to_sdk(msg) if msg is not None else None  # first: a session.create result names its rule
        transcript.write("cli->sdk", frame, msg, rule=owner(msg))
        record_applied(before)
        for delay, later in mutator.later:
            timer = threading.Timer(delay, send_later, args=(later,))
            timer.daemon = True
            timer.start()
        mutator.later = []
        if out is None:
            return [frame.raw]
        for m in out:
            if m is not msg:
                transcript.write("shim->sdk", None, m, note=mutator.rule or owner(m) or "", rule=owner(m))
        return [encode(m) for m in out]
    up = threading.Thread(target=_pump, args=(sdk_in, child.stdin, from_sdk), daemon=True)
    down = threading.Thread(target=_pump, args=(child.stdout, sdk_out, from_cli, write_lock), daemon=True)
    up.start()
    down.start()
    code = child.wait()
    down.join(timeout=5)
    transcript.write("shim", None, {"cli_exit": code})
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
