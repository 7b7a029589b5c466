"""echo-cli: the other side of the test family. It answers one JSON line with one JSON line:
``hello`` with its protocol and version, ``echo`` with the text, ``bye`` by exiting.
The wheel builder writes VERSION and PROTOCOL per release."""

import json
import sys

VERSION = "0"
PROTOCOL = 0


def main() -> int:
    for line in sys.stdin:
        msg = json.loads(line)
        if "hello" in msg:
            answer: dict[str, object] = {"protocol": PROTOCOL, "version": VERSION}
        elif "echo" in msg:
            answer = {"echo": msg["echo"]}
        else:
            return 0
        print(json.dumps(answer), flush=True)
    return 0
