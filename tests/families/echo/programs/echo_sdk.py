"""echo-sdk: the SDK side of the test family. It starts echo-cli, checks the protocol the CLI
speaks against the ones it accepts, echoes, and stops the CLI. The wheel builder writes
VERSION and ACCEPTS per release."""

import json
import subprocess

VERSION = "0"
ACCEPTS: tuple[int, ...] = ()


class VersionMismatch(RuntimeError):
    pass


class Client:
    def __init__(self, cli_path: str) -> None:
        self.cli_path = cli_path
        self.process: subprocess.Popen[str] | None = None

    def _ask(self, message: dict[str, object]) -> dict[str, object]:
        assert self.process is not None and self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        answer: dict[str, object] = json.loads(self.process.stdout.readline())
        return answer

    def start(self) -> int:
        self.process = subprocess.Popen([self.cli_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        hello = self._ask({"hello": VERSION})
        protocol = int(str(hello["protocol"]))
        if protocol not in ACCEPTS:
            self.stop()
            raise VersionMismatch(f"echo-sdk {VERSION} speaks protocol {list(ACCEPTS)}, but echo-cli "
                                  f"{hello['version']} speaks {protocol}; upgrade echo-sdk")
        return protocol

    def echo(self, text: str) -> str:
        return str(self._ask({"echo": text})["echo"])

    def stop(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps({"bye": True}) + "\n")
            self.process.stdin.close()
            self.process.wait(timeout=10)
            self.process = None
