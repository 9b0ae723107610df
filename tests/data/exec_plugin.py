"""A fake client-go exec credential plugin for the auth tests.

Usage: exec_plugin.py TOKEN [--fail] [--count FILE] [--expiring]
Prints an ExecCredential with status.token = TOKEN (suffixed with the run number when --count is given,
so a refresh is visible); --expiring sets an expirationTimestamp inside the loaders' refresh window;
--fail exits 1 with a message on stderr.
"""

import datetime
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    token, flags = argv[0], argv[1:]
    if "--fail" in flags:
        print("plugin: login required", file=sys.stderr)
        return 1
    if "--count" in flags:
        counter = Path(flags[flags.index("--count") + 1])
        runs = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(runs))
        token = f"{token}-{runs}"
    status: dict[str, str] = {"token": token}
    if "--expiring" in flags:
        soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30)
        status["expirationTimestamp"] = soon.strftime("%Y-%m-%dT%H:%M:%SZ")
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status}
    print(json.dumps(credential))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
